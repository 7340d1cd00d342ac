/**
 * Live completion values (`agentq __complete KIND -- WORDS...`): queue names,
 * contexts, DLQ job ids, error codes and tenants, from the configured backend.
 *
 * Two rules keep a TAB safe:
 * - it never hangs: the lookup races a deadline (~500 ms) and an answer that
 *   comes later is dropped, so a slow or unreachable backend costs half a
 *   second and no candidates;
 * - it never injects: a candidate is offered only if it is a single printable
 *   word that means itself on a shell's command line. Anything the sanitiser
 *   would change (controls, escapes, bidi), any whitespace (which the shells
 *   would split into several words) and any shell metacharacter (`$`,
 *   backticks, quotes, `;`, `|`, globs, ...) is left out: such a candidate
 *   would be inserted into the operator's line unquoted by some shells and run
 *   on Enter, and a value that cannot be typed back as-is is no use as a
 *   completion anyway. (The scripts take each line of `__complete` as a
 *   literal word as well, so this is the second of two guards.)
 */
import type { Backend } from '../../backend/contract.js';
import { isSafe } from '../output/sanitize.js';
import { DYNAMIC_SOURCES, type DynamicSource } from './spec.js';

export const COMPLETE_TIMEOUT_MS = 500;
/** At most this many candidates: a shell listing thousands of job ids helps nobody. */
export const MAX_CANDIDATES = 200;

export function isDynamicSource(s: string): s is DynamicSource {
  return (DYNAMIC_SOURCES as readonly string[]).includes(s);
}

/** Characters a shell gives a meaning to in an unquoted word (expansion, quoting, globbing, history, redirection, ...). */
const SHELL_META_RE = /[\s$`\\"'();&|<>{}*?[\]!#~^]/u;

/** A candidate the shells can offer: one printable word, nothing the sanitiser would touch, no shell metacharacter. */
export function isOfferable(candidate: string): boolean {
  return candidate.length > 0 && candidate.length <= 256 && isSafe(candidate) && !SHELL_META_RE.test(candidate);
}

/** The value of an option in the words typed so far (`--queue x`, `--queue=x`, `-q x`); the last one wins. */
export function optionFromWords(words: readonly string[], long: string, short?: string): string | undefined {
  let v: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if ((w === long || (short !== undefined && w === short)) && i + 1 < words.length) v = words[++i];
    else if (w.startsWith(`${long}=`)) v = w.slice(long.length + 1);
  }
  return v;
}

export function queueFromWords(words: readonly string[]): string | undefined {
  return optionFromWords(words, '--queue', '-q');
}

export interface CompletionSources {
  backend(): Promise<Backend>;
  contexts(): string[];
}

async function lookup(kind: DynamicSource, words: readonly string[], src: CompletionSources): Promise<string[]> {
  switch (kind) {
    case 'contexts':
      return src.contexts();
    case 'queues':
      // One bounded page: a completion lists candidates, it does not walk the store.
      return (await (await src.backend()).queues({ limit: MAX_CANDIDATES })).items;
    case 'dlq-jobs': {
      const queue = queueFromWords(words);
      const page = await (await src.backend()).dlqList(queue ? { queue } : {}, { limit: MAX_CANDIDATES });
      return page.items.map((e) => e.job_id);
    }
    case 'error-codes': {
      // The first page of the DLQ (paging is by job id: the oldest jobs). Bounded, never a walk.
      const queue = queueFromWords(words);
      const page = await (await src.backend()).dlqList(queue ? { queue } : {}, { limit: 500 });
      return page.items.map((e) => e.error_code);
    }
    case 'tenants': {
      const queue = queueFromWords(words);
      const b = await src.backend();
      const queues = queue ? [queue] : (await b.queues({ limit: 20 })).items;
      const out: string[] = [];
      // (a queue whose stats cannot be read, damaged ones among them, offers none; the others still do)
      for (const q of queues) for (const t of (await b.stats(q).catch(() => null))?.by_tenant ?? []) out.push(t.key);
      return out;
    }
  }
}

/**
 * The candidates for `kind`, safe and de-duplicated, or none when the
 * deadline passes first (or the lookup fails: a TAB never prints an error).
 */
export async function completionCandidates(
  kind: string,
  words: readonly string[],
  src: CompletionSources,
  opts: { timeoutMs?: number } = {},
): Promise<string[]> {
  if (!isDynamicSource(kind)) return [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), opts.timeoutMs ?? COMPLETE_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(kind, words, src).catch(() => [] as string[]), deadline]);
    if (found === null) return [];
    return [...new Set(found.filter(isOfferable))].slice(0, MAX_CANDIDATES);
  } finally {
    clearTimeout(timer);
  }
}
