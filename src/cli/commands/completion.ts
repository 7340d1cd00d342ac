/**
 * `agentq completion bash|zsh|fish` prints the completion script generated
 * from the live command tree (byte-identical to the committed `completions/`
 * files, which the drift test checks), and the hidden `agentq __complete
 * KIND` prints live candidates for those scripts, one per line.
 */
import type { Command } from 'commander';
import { ValidationError } from '../../core/errors.js';
import type { Backend } from '../../backend/contract.js';
import { completionCandidates, optionFromWords } from '../completion/dynamic.js';
import { renderCompletion, SHELLS, type Shell } from '../completion/index.js';
import type { CommandContext } from '../context.js';

export async function run(opts: { shell: string; program: Command }, ctx: CommandContext): Promise<void> {
  if (!(SHELLS as readonly string[]).includes(opts.shell)) {
    throw new ValidationError(`shell ${JSON.stringify(opts.shell)} is not one of ${SHELLS.join(', ')}`, 'See `agentq completion --help` for how to install each.');
  }
  ctx.io.stdout.write(renderCompletion(opts.shell as Shell, rootOf(opts.program)));
}

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

/** How long a completion's SQLite connection waits for another process's lock (a TAB must not hang). */
export const COMPLETE_BUSY_TIMEOUT_MS = 100;

export async function complete(opts: { kind: string; words?: string[] }, ctx: CommandContext): Promise<void> {
  const words = opts.words ?? [];
  // `agentq --context prod dlq show <TAB>` completes against prod: the --url/--context typed on the
  // line being completed choose the backend, as they will when the command runs.
  const url = optionFromWords(words, '--url');
  const context = optionFromWords(words, '--context');
  // The backend is opened here, not through ctx.openBackend(): when the deadline passes while it
  // is still connecting, nothing may wait for that connection on the way out (main closes what
  // ctx opened, and would wait for a connection that never comes).
  let own: Backend | undefined;
  const backend = async (): Promise<Backend> => {
    const { defaultDataUrl, openBackend } = await import('../../backend/open.js');
    let target: string;
    if (url === undefined && context === undefined) target = await ctx.backendUrl();
    else {
      const { resolveConfig } = await import('../config.js');
      target = resolveConfig({ flags: { url, context }, env: { ...ctx.env }, cwd: ctx.cwd }).url ?? defaultDataUrl({ ...ctx.env });
    }
    // better-sqlite3 is synchronous: a busy wait inside it blocks the event loop, so the ~500 ms race
    // below could not interrupt it. A short busy timeout keeps a locked database from holding a TAB.
    own = await openBackend(target, { busyTimeoutMs: COMPLETE_BUSY_TIMEOUT_MS, create: target === defaultDataUrl({ ...ctx.env }) });
    return own;
  };
  try {
    // AGENTQ_COMPLETE_TIMEOUT_MS: for a backend known to be slow (and for tests on a loaded machine).
    const timeoutMs = Number(ctx.env.AGENTQ_COMPLETE_TIMEOUT_MS) > 0 ? Number(ctx.env.AGENTQ_COMPLETE_TIMEOUT_MS) : undefined;
    const candidates = await completionCandidates(opts.kind, words, { backend, contexts: () => [...ctx.config({ unknownContextOk: true }).contexts.keys()] }, { timeoutMs });
    if (candidates.length) ctx.io.stdout.write(candidates.join('\n') + '\n');
  } finally {
    // A backend that stopped answering may not answer a close either: give it a moment, no more.
    if (own) await closeWithin(own, 200);
  }
}

function closeWithin(backend: Backend, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    backend.close().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
