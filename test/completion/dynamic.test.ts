/**
 * Live completion values: only single printable words are ever offered, the
 * lookup gives up at its deadline, and a failing backend yields nothing
 * rather than an error on the operator's prompt line.
 */
import { describe, expect, it } from 'vitest';
import type { Backend, Page } from '../../src/backend/contract.js';
import type { DlqEntry } from '../../src/core/schemas.js';
import { completionCandidates, isOfferable, queueFromWords, type CompletionSources } from '../../src/cli/completion/dynamic.js';
import { BENIGN_STRINGS, HOSTILE_STRINGS, findUnsafe } from '../support/hostile.js';

/** The two Backend methods completion reads; everything else is never called. */
function sources(queues: () => Promise<string[]>, dlq: (filter: unknown) => Page<Pick<DlqEntry, 'job_id' | 'error_code'>> = () => ({ items: [], next_cursor: null })): CompletionSources {
  const backend = { queues: async () => ({ items: await queues(), next_cursor: null }), dlqList: async (f: unknown) => dlq(f) } as unknown as Backend;
  return { backend: async () => backend, contexts: () => ['prod', 'staging'] };
}

describe('completion candidates', () => {
  it('never offer a hostile string, whatever the store holds', async () => {
    const hostile = HOSTILE_STRINGS.map((h) => h.value);
    const got = await completionCandidates('queues', [], sources(async () => [...hostile, 'research', 'two words', 'research']));
    expect(got).toEqual(['research']);
    for (const c of got) expect(findUnsafe(c)).toEqual([]);
  });

  it('keep printable non-ASCII names', () => {
    expect(isOfferable('東京')).toBe(true);
    expect(BENIGN_STRINGS.filter(isOfferable)).toEqual(['東京']);
    expect(['prod-eu', 'a.b_c', 'team:x', 'k=v', 'a@b', '50%', 'a,b', 'a+b', 'a/b'].filter(isOfferable)).toHaveLength(9);
  });

  it('never offer a word a shell would expand, run or glob (inserted unquoted, it would run on Enter)', () => {
    for (const w of ['$(touch${IFS}/tmp/x)', '`id`', '$HOME', 'a;b', 'a|b', 'a&b', 'a>b', 'a<b', "it's", 'say"x"', 'C:\\x', 'a*', 'a?', '[ab]', '{a,b}', '!!', '#x', '~root', 'a(b)', '^x']) {
      expect(isOfferable(w), w).toBe(false);
    }
  });

  it('come back empty when the backend is slower than the deadline', async () => {
    const never = new Promise<string[]>(() => {});
    expect(await completionCandidates('queues', [], sources(() => never), { timeoutMs: 20 })).toEqual([]);
  });

  it('come back empty when the backend fails', async () => {
    expect(await completionCandidates('queues', [], sources(async () => Promise.reject(new Error('ECONNREFUSED'))))).toEqual([]);
  });

  it('scope DLQ job ids to the --queue on the command line', async () => {
    let seen: unknown;
    const got = await completionCandidates(
      'dlq-jobs',
      ['dlq', 'show', '--queue', 'research'],
      sources(
        async () => [],
        (f) => {
          seen = f;
          return { items: [{ job_id: 'job_01A', error_code: 'X' }], next_cursor: null };
        },
      ),
    );
    expect(got).toEqual(['job_01A']);
    expect(seen).toEqual({ queue: 'research' });
  });

  it('list contexts from the configuration and ignore unknown kinds', async () => {
    expect(await completionCandidates('contexts', [], sources(async () => []))).toEqual(['prod', 'staging']);
    expect(await completionCandidates('nonsense', [], sources(async () => ['x']))).toEqual([]);
  });
});

describe('queueFromWords', () => {
  it('reads --queue, --queue= and -q, the last one winning', () => {
    expect(queueFromWords(['dlq', 'list', '--queue', 'a'])).toBe('a');
    expect(queueFromWords(['--queue=b'])).toBe('b');
    expect(queueFromWords(['-q', 'a', '-q', 'c'])).toBe('c');
    expect(queueFromWords(['--queue'])).toBeUndefined();
  });
});
