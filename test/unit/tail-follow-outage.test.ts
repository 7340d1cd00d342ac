/**
 * `agentq tail --follow` when the store goes away for a while (a Redis restart
 * or failover longer than the client's own retries): it warns once, reads again
 * from after the last event shown until the store answers, and goes on
 * following, as `stats --watch` does; Ctrl-C still ends it with exit 0.
 * Run in-process through `main`, over a real SQLite store whose follow reads
 * fail as an unreachable Redis fails them (exit 75).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import type { EventQuery } from '../../src/backend/contract.js';
import { main } from '../../src/cli/main.js';
import { RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { pollUntil } from '../support/poll.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function pipes() {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = { isTTY: false, write: (s: string) => (out.push(s), true) };
  const stderr = { isTTY: false, write: (s: string) => (err.push(s), true) };
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  return { io: { stdout, stderr, stdin }, out, err };
}

/** The real store, with its next `failures` follow reads failing with `error`. */
function flaky(real: SqliteBackend, failures: { n: number; error: Error; seen?: number }) {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'events') {
        return (q: EventQuery) => {
          if (q.follow && failures.n > 0) {
            failures.n--;
            failures.seen = (failures.seen ?? 0) + 1;
            return (async function* () {
              throw failures.error;
            })();
          }
          return target.events(q);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('tail --follow when the store goes away', () => {
  it('warns once, resumes after the last event shown once the store answers, and Ctrl-C exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tail-'));
    dirs.push(dir);
    const real = new SqliteBackend({ path: join(dir, 'q.db') });
    const first = await real.submit({ workflow: 'w:v1', queue: 'research' });
    const failures = { n: 2, error: new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE') };
    const { io, out, err } = pipes();
    const ctl = new AbortController();
    const run = main(['tail', '--queue', 'research', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: dir, signal: ctl.signal, openBackend: async () => flaky(real, failures) });
    await pollUntil(() => failures.n === 0 || undefined, { what: 'the follow reads to fail twice' });
    const second = await real.submit({ workflow: 'w:v1', queue: 'research' });
    await pollUntil(() => out.join('').includes(second.job.job_id) || undefined, { what: 'the event of a job submitted during the outage' });
    ctl.abort();
    expect(await run).toBe(0);
    const ids = out.join('').trim().split('\n').map((l) => (JSON.parse(l) as { job_id: string }).job_id);
    expect(ids).toEqual([first.job.job_id, second.job.job_id]); // nothing shown twice, nothing missed
    const warnings = err.join('').split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: tail: lost the store, retrying every 1s until it answers \(Ctrl-C to stop\): Redis at 127\.0\.0\.1:1 is unavailable/);
    expect(err.join('')).toMatch(/tail: the store answers again; following on from the last event shown/);
    await real.close();
  });

  it('--events 0: an event written while the store was away is shown once it answers (following started from the end as it was, not from the reconnect)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tail-'));
    dirs.push(dir);
    const real = new SqliteBackend({ path: join(dir, 'q.db') });
    const before = await real.submit({ workflow: 'w:v1', queue: 'research' });
    const failures: { n: number; error: Error; seen?: number } = { n: 1_000_000, error: new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE') };
    const { io, out } = pipes();
    const ctl = new AbortController();
    const run = main(['tail', '--queue', 'research', '--events', '0', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: dir, signal: ctl.signal, openBackend: async () => flaky(real, failures) });
    await pollUntil(() => (failures.seen ?? 0) >= 1 || undefined, { what: 'a follow read to fail' });
    const during = await real.submit({ workflow: 'w:v1', queue: 'research' });
    failures.n = 0; // the store answers again
    await pollUntil(() => out.join('').includes(during.job.job_id) || undefined, { what: 'the event of the job submitted during the outage' });
    ctl.abort();
    expect(await run).toBe(0);
    const ids = out.join('').trim().split('\n').map((l) => (JSON.parse(l) as { job_id: string }).job_id);
    expect(ids).toEqual([during.job.job_id]); // not the one from before --follow started
    expect(ids).not.toContain(before.job.job_id);
    await real.close();
  });

  // Regression: a Ctrl-C while the retry's read waited on the store (a Redis refusing connections:
  // ioredis retries a call about 10 s; a frozen one: 15 s) was seen only once that read failed.
  it('Ctrl-C ends it at once also while a read of the store is unanswered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tail-'));
    dirs.push(dir);
    const real = new SqliteBackend({ path: join(dir, 'q.db') });
    await real.submit({ workflow: 'w:v1', queue: 'research' });
    let reads = 0;
    const unanswered = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'events') {
          return (q: EventQuery) => {
            if (!q.follow) return target.events(q);
            // the first follow read fails as a lost store; the retry's read is never answered
            if (reads++ === 0) return (async function* () { throw new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE'); })();
            return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => {}) }) };
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const { io, err } = pipes();
    const ctl = new AbortController();
    const run = main(['tail', '--queue', 'research', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: dir, signal: ctl.signal, openBackend: async () => unanswered });
    await pollUntil(() => reads >= 2 || undefined, { what: 'the retry read to be under way' });
    ctl.abort(new Error('SIGINT'));
    expect(await run).toBe(0);
    expect(err.join('')).toMatch(/^warning: tail: lost the store/);
    await real.close();
  });

  it('still ends at once on an error that is not transient', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tail-'));
    dirs.push(dir);
    const real = new SqliteBackend({ path: join(dir, 'q.db') });
    await real.submit({ workflow: 'w:v1', queue: 'research' });
    const { io } = pipes();
    const failures = { n: 1, error: new ValidationError('the store refused the read') };
    const code = await main(['tail', '--queue', 'research', '--follow'], { io, env: {}, cwd: dir, openBackend: async () => flaky(real, failures) });
    expect(code).toBe(2);
    await real.close();
  });
});
