/**
 * The package's public entry (src/index.ts): a producer and a worker written
 * the way the README shows, each opening the store from a URL.
 */
import Database from 'better-sqlite3';
import { mkdir, mkdtemp, readFile, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClosedError, ConfigError, createClient, createWorker, HandlerError, ManualClock, NotFoundError, ValidationError, VERSION, waitForJob, type Backend, type WorkerEvent } from '../../src/index.js';
import { pollUntil } from '../support/poll.js';

let dir: string;
let client: Backend;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-lib-'));
  client = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
});
afterEach(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

it('createClient submits; a createWorker opened from the same URL processes and closes its own store', async () => {
  expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  const ok = (await client.submit({ workflow: 'lib:v1', queue: 'lib', input: 'fine' })).job;
  const bad = (await client.submit({ workflow: 'lib:v1', queue: 'lib', input: 'bad' })).job;
  const events: WorkerEvent[] = [];
  const worker = createWorker({
    url: `sqlite:${join(dir, 'store.db')}`,
    queue: 'lib',
    workerVersion: 'lib-1',
    handler: async (job) => {
      if (job.input === 'bad') throw new HandlerError('VALIDATION', 'bad input');
      return { echoed: job.input };
    },
    logger: (e) => events.push(e),
  });
  await worker.start();
  await pollUntil(async () => (await client.get(bad.job_id))?.state === 'dead', { what: 'bad job dead' });
  await pollUntil(async () => (await client.get(ok.job_id))?.state === 'succeeded', { what: 'ok job succeeded' });
  await worker.stop();
  await worker.done;
  expect(JSON.parse((await client.get(ok.job_id))!.result!)).toEqual({ echoed: 'fine' });
  expect((await client.dlqGet(bad.job_id))).toMatchObject({ error_code: 'VALIDATION', worker_version: 'lib-1' });
  expect(events.at(-1)).toEqual({ kind: 'stopped' });
});

// Regression: the library stored any size (a 20 MB result, a 70,000-character checkpoint) where
// the CLI caps them; the caps are the store's now, and the handler hears of them before a write.
it('a result over 16 MiB, a checkpoint or an effect result over 64 KiB are refused with a clear error', async () => {
  const big = (await client.submit({ workflow: 'lib:v1', queue: 'caps', input: 'result' })).job;
  const cp = (await client.submit({ workflow: 'lib:v1', queue: 'caps', input: 'checkpoint' })).job;
  const eff = (await client.submit({ workflow: 'lib:v1', queue: 'caps', input: 'effect' })).job;
  const seen: unknown[] = [];
  const worker = createWorker({
    backend: client,
    queue: 'caps',
    handler: async (job, ctx) => {
      if (job.input === 'result') return 'r'.repeat(17 * 1024 * 1024);
      if (job.input === 'checkpoint') {
        seen.push(await ctx.checkpoint({ notes: 'x'.repeat(70_000) }).then(() => null, (e: unknown) => e));
        return 'checkpoint refused';
      }
      await ctx.effect('fetch-page', () => 'y'.repeat(70_000));
      return 'unreachable';
    },
  });
  await worker.start();
  try {
    await pollUntil(async () => (await client.get(big.job_id))?.state === 'dead', { what: 'big result dead' });
    await pollUntil(async () => (await client.get(eff.job_id))?.state === 'dead', { what: 'big effect dead' });
    await pollUntil(async () => (await client.get(cp.job_id))?.state === 'succeeded', { what: 'checkpoint job done' });
  } finally {
    await worker.stop();
  }
  expect((await client.get(big.job_id))?.last_error).toMatchObject({ code: 'HANDLER_FAILED', message: expect.stringMatching(/17825792 bytes; the limit is 16777216 bytes \(16 MiB\)/) });
  expect((await client.get(big.job_id))?.result).toBeNull();
  expect(seen[0]).toBeInstanceOf(ValidationError);
  expect((seen[0] as Error).message).toMatch(/checkpoint is \d+ bytes as JSON; the limit is 65536 bytes \(64 KiB\)/);
  expect((await client.get(cp.job_id))?.checkpoint).toBeNull();
  expect((await client.get(eff.job_id))?.last_error).toMatchObject({ code: 'HANDLER_FAILED', message: expect.stringMatching(/effect "fetch-page" ran, but its result is 70000 bytes; the limit is 65536/) });
});

// Regression: leaseMs: '60000' (a string, from an env var) passed the check by coercion, and every
// claim of the worker was then refused; ctx.effect(key, notAFunction) recorded the effect started
// (the job partial for good) before failing with a bare TypeError.
it('refuses a leaseMs or heartbeatMs given as a string, and an effect without a function before recording it', async () => {
  const handler = () => null;
  expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'q', handler, leaseMs: '60000' as never })).toThrow(/leaseMs must be a number of milliseconds/);
  expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'q', handler, heartbeatMs: '1000' as never })).toThrow(/heartbeatMs must be a number of milliseconds/);
  const { job } = await client.submit({ workflow: 'lib:v1', queue: 'effect-fn' });
  let seen: unknown = null;
  const worker = createWorker({
    backend: client,
    queue: 'effect-fn',
    handler: async (_job, ctx) => {
      seen = await ctx.effect('k', 5 as never).then(() => null, (e: unknown) => e);
      return 'done';
    },
  });
  await worker.start();
  try {
    await pollUntil(async () => (await client.get(job.job_id))?.state === 'succeeded', { what: 'job done' });
  } finally {
    await worker.stop();
  }
  expect(seen).toBeInstanceOf(ValidationError);
  expect((seen as Error).message).toMatch(/effect "k": fn must be a function/);
  expect((await client.get(job.job_id))?.effects).toEqual([]);
});

it('refuses options that cannot work, naming the rule', () => {
  const handler = () => null;
  expect(() => createWorker({ queue: 'q', handler })).toThrow(/either `backend` or `url`/);
  expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'bad queue!', handler })).toThrow(/not a valid queue name/);
  expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'q', handler, concurrency: 0 })).toThrow(/concurrency must be/);
  expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'q', handler, leaseMs: 1000, heartbeatMs: 1000 })).toThrow(
    /heartbeatMs must be less than leaseMs/,
  );
});

describe('scheduling policy in the options', () => {
  it('createClient({ fairness }) caps what its claims take per tenant', async () => {
    const url = `sqlite:${join(dir, 'store.db')}`;
    for (let i = 0; i < 3; i++) await client.submit({ workflow: 'lib:v1', queue: 'caps', tenant_id: 'acme' });
    await client.submit({ workflow: 'lib:v1', queue: 'caps', tenant_id: 'beta' });
    const capped = await createClient({ url, fairness: { tenantConcurrency: 1 } });
    try {
      const leases = await capped.claim({ queue: 'caps', workerId: 'w', max: 4, leaseMs: 60_000 });
      expect(leases.map((l) => l.job.tenant_id).sort()).toEqual(['acme', 'beta']);
      // The running count is the store's: another claim, still capped, takes nothing more.
      expect(await capped.claim({ queue: 'caps', workerId: 'w2', max: 4, leaseMs: 60_000 })).toEqual([]);
    } finally {
      await capped.close();
    }
  });

  it('createWorker({ url, fairness }) runs no more than the cap of one tenant at once', async () => {
    for (let i = 0; i < 4; i++) await client.submit({ workflow: 'lib:v1', queue: 'wcaps', tenant_id: 'acme' });
    let running = 0;
    let most = 0;
    let done = 0;
    const worker = createWorker({
      url: `sqlite:${join(dir, 'store.db')}`,
      queue: 'wcaps',
      concurrency: 4,
      fairness: { tenantConcurrency: 2 },
      handler: async () => {
        most = Math.max(most, ++running);
        await pollUntil(async () => running >= 2 || done >= 3, { what: 'a second acme job, or the last one' });
        running -= 1;
        done += 1;
      },
    });
    await worker.start();
    await pollUntil(async () => done === 4, { what: 'all four jobs' });
    await worker.stop();
    expect(most).toBe(2);
  });

  it('createClient({ admission }) refuses a submit over the backlog limit (BACKLOG_FULL, retry later)', async () => {
    const limited = await createClient({ url: `sqlite:${join(dir, 'store.db')}`, admission: { batchMaxBacklogSeconds: 100 } });
    try {
      await limited.submit({ workflow: 'lib:v1', queue: 'adm', class: 'batch', estimated_seconds: 60 });
      await expect(limited.submit({ workflow: 'lib:v1', queue: 'adm', class: 'batch', estimated_seconds: 60 })).rejects.toMatchObject({ code: 'BACKLOG_FULL', exitCode: 75 });
      // Interactive work has no limit here and is still taken.
      await limited.submit({ workflow: 'lib:v1', queue: 'adm', class: 'interactive', estimated_seconds: 60 });
    } finally {
      await limited.close();
    }
  });

  // Regression: createClient('sqlite:./x.db') or { urll: … } opened the default store, and jobs went where nobody looked.
  it('createClient refuses a URL in place of the options, an unknown option and a bad url or clock', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [`sqlite:${join(dir, 'other.db')}`, /createClient takes an options object, such as \{ url: 'sqlite:.\/agentq.db' \}, got "sqlite:/],
      [null, /createClient takes an options object/],
      [{ urll: `sqlite:${join(dir, 'other.db')}` }, /createClient: unknown option "urll" \(known: url, clock, random, fairness, admission\)/],
      [{ url: 42 }, /url must be a store URL such as sqlite:.\/agentq.db, got 42/],
      [{ url: '' }, /url must be a store URL/],
      [{ url: `sqlite:${join(dir, 'other.db')}`, clock: Date.now }, /clock must be a Clock/],
      // (was taken, then every submit threw a bare TypeError "prng is not a function")
      [{ url: `sqlite:${join(dir, 'other.db')}`, random: 0.5 }, /random must be a function returning a number in \[0, 1\)/],
    ];
    // (where the options left out would send it: never the default store of whoever runs the tests)
    const saved = process.env.AGENTQ_URL;
    process.env.AGENTQ_URL = `sqlite:${join(dir, 'default.db')}`;
    try {
      for (const [opts, rule] of cases) {
        const err = await createClient(opts as never).then(async (c) => (await c.close(), null), (e: unknown) => e);
        expect(err, JSON.stringify(opts)).toBeInstanceOf(ValidationError);
        expect((err as Error).message, JSON.stringify(opts)).toMatch(rule);
      }
    } finally {
      if (saved === undefined) delete process.env.AGENTQ_URL;
      else process.env.AGENTQ_URL = saved;
    }
    for (const db of ['other.db', 'default.db']) await expect(readFile(join(dir, db)), db).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('bad settings are refused before anything opens, naming the rule', async () => {
    await expect(createClient({ url: 'sqlite::memory:', fairness: { tenantConcurrency: 0 } })).rejects.toThrow(/tenantConcurrency must be a whole number of at least 1/);
    await expect(createClient({ url: 'sqlite::memory:', admission: { batchMaxBacklog: 10 } as never })).rejects.toThrow(/unknown key "batchMaxBacklog"/);
    expect(() => createWorker({ url: 'sqlite:unopened.db', queue: 'q', handler: () => null, fairness: { classWeights: { urgent: 1 } as never } })).toThrow(/unknown class "urgent"/);
    expect(() => createWorker({ backend: client, queue: 'q', handler: () => null, fairness: { tenantConcurrency: 1 } })).toThrow(/createClient\(\{ fairness \}\)/);
  });
});

// Regression: `classes: ['interative']` claimed nothing for ever, and negative or NaN waits were taken.
it('refuses every option that cannot work: classes, waits, worker id and version, clock, logger', () => {
  const handler = () => null;
  const base = { url: 'sqlite:unopened.db', queue: 'q', handler };
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ classes: ['interative'] }, /classes: "interative" is not a job class; the classes are interactive, batch, maintenance/],
    [{ classes: [] }, /classes must be a non-empty list/],
    [{ classes: 'batch' }, /classes must be a non-empty list/],
    [{ gracefulMs: -1 }, /gracefulMs must be a number of milliseconds, at least 0, got -1/],
    [{ gracefulMs: Number.NaN }, /gracefulMs must be .* got NaN/],
    [{ abortGraceMs: -5 }, /abortGraceMs must be/],
    [{ abortGraceMs: '10' }, /abortGraceMs must be .* got "10"/],
    [{ minIdleMs: 0 }, /minIdleMs must be .* at least 1/],
    [{ maxIdleMs: Number.POSITIVE_INFINITY }, /maxIdleMs must be at most/],
    // Regression: taken, so after one wait of minIdleMs an idle worker polled every maxIdleMs (10 ms here).
    [{ minIdleMs: 5_000, maxIdleMs: 10 }, /minIdleMs must not be more than maxIdleMs \(5000 > 10\)/],
    [{ minIdleMs: 2_000 }, /minIdleMs must not be more than maxIdleMs \(2000 > 1000\)/],
    [{ leaseMs: Number.NaN }, /leaseMs must be at least/],
    [{ workerId: '' }, /workerId must be a string of 1-256 characters/],
    [{ workerVersion: 3 }, /workerVersion must be a string/],
    [{ clock: {} }, /clock must be a Clock/],
    [{ logger: 'console' }, /logger must be a function/],
    [{ url: 42 }, /url must be a store URL/],
    // Regression: an unknown option was ignored, so a typo ran with the default.
    [{ leaseMS: 300_000 }, /createWorker: unknown option "leaseMS" \(known: backend, url, .*leaseMs/],
    // Regression: the worker opened an in-memory store of its own, and idled for ever while jobs went into the client's.
    [{ url: 'sqlite::memory:' }, /url sqlite::memory: would open an in-memory store of the worker's own, which no producer can reach/],
    [{ url: 'sqlite://:memory:' }, /in-memory store of the worker's own/],
  ];
  for (const [extra, rule] of cases) {
    expect(() => createWorker({ ...base, ...extra } as never), JSON.stringify(extra)).toThrow(rule);
    try {
      createWorker({ ...base, ...extra } as never);
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
    }
  }
  // every option given as undefined is the same as left out
  const w = createWorker({ ...base, concurrency: undefined, classes: undefined, gracefulMs: undefined, workerVersion: undefined } as never);
  expect(w.inFlight()).toBe(0);
});

// A producer waits for its job as `submit --wait` does (there was no way but a hand-written poll loop).
it('waitForJob returns the job as it ended, and says why when the wait stops first', async () => {
  const ok = (await client.submit({ workflow: 'lib:v1', queue: 'wait', input: 'fine' })).job;
  const bad = (await client.submit({ workflow: 'lib:v1', queue: 'wait', input: 'bad' })).job;
  const worker = createWorker({
    backend: client,
    queue: 'wait',
    handler: (job) => {
      if (job.input === 'bad') throw new HandlerError('VALIDATION', 'bad input');
      return { echoed: job.input };
    },
  });
  await worker.start();
  try {
    const [done, dead] = await Promise.all([waitForJob(client, ok.job_id, { pollMs: 10 }), waitForJob(client, bad.job_id, { pollMs: 10 })]);
    expect(done).toMatchObject({ state: 'succeeded', result: '{"echoed":"fine"}' });
    expect(dead).toMatchObject({ state: 'dead', last_error: { code: 'VALIDATION' } });
  } finally {
    await worker.stop();
  }
  const idle = (await client.submit({ workflow: 'lib:v1', queue: 'nobody-works-here' })).job;
  await expect(waitForJob(client, idle.job_id, { timeoutMs: 30, pollMs: 5 })).rejects.toMatchObject({ code: 'WAIT_TIMEOUT' });
  const ac = new AbortController();
  ac.abort();
  await expect(waitForJob(client, idle.job_id, { signal: ac.signal })).rejects.toMatchObject({ code: 'INTERRUPTED' });
  await expect(waitForJob(client, 'job_01AAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toBeInstanceOf(NotFoundError);
  await expect(waitForJob(client, idle.job_id, { timeout: 5 } as never)).rejects.toThrow(/waitForJob: unknown option "timeout"/);
  expect((await client.get(idle.job_id))?.state).toBe('queued');
});

// Regression: a job deleted from under a wait (a store reset, a Redis FLUSHALL) was waited on for
// ever: each poll read null and kept the job as last seen, still queued.
it('waitForJob throws NotFoundError when the job vanishes from the store while it waits', async () => {
  const { job } = await client.submit({ workflow: 'lib:v1', queue: 'nobody-works-here' });
  const waiting = waitForJob(client, job.job_id, { pollMs: 5 });
  const other = new Database(join(dir, 'store.db'));
  try {
    other.pragma('foreign_keys = OFF');
    other.prepare('DELETE FROM jobs WHERE id = ?').run(job.job_id);
  } finally {
    other.close();
  }
  await expect(waiting).rejects.toBeInstanceOf(NotFoundError);
  await expect(waiting).rejects.toThrow(`stopped waiting for ${job.job_id}: it is no longer in the store`);
});

// Regression: waitForJob judged a job's deadline by the system clock, not the client's: with a
// ManualClock (a test of one's own code) a job due in an hour of the store's time was reported
// DEADLINE_MISSED at once, or never, as the two clocks happened to stand.
it('waitForJob judges the deadline by the clock the client was created with', async () => {
  const clock = new ManualClock(Date.now() - 86_400_000); // a day behind the system clock
  const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}`, clock });
  try {
    const { job } = await c.submit({ workflow: 'lib:v1', queue: 'nobody-works-here', deadline_at: new Date(clock.now() + 3_600_000).toISOString() });
    await expect(waitForJob(c, job.job_id, { timeoutMs: 30, pollMs: 5 })).rejects.toMatchObject({ code: 'WAIT_TIMEOUT' });
    clock.advance(3_600_000);
    await expect(waitForJob(c, job.job_id, { timeoutMs: 30, pollMs: 5 })).rejects.toMatchObject({ code: 'DEADLINE_MISSED' });
  } finally {
    await c.close();
  }
});

// Regression: a worker given a client made with a clock checked deadlines by the system clock, so
// with a ManualClock behind it a job an hour from its deadline was aborted at once as expired.
it('a worker given a client made with a clock checks deadlines by that clock unless given its own', async () => {
  const clock = new ManualClock(Date.now() - 86_400_000);
  const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}`, clock });
  // (a handler that takes a moment, so the worker's deadline timer has its turn)
  const handler = (_job: unknown, ctx: { signal: AbortSignal }) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('ran'), 50);
      ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)));
    });
  const w = createWorker({ backend: c, queue: 'client-clock', handler, minIdleMs: 1, maxIdleMs: 5 });
  try {
    const { job } = await c.submit({ workflow: 'lib:v1', queue: 'client-clock', deadline_at: new Date(clock.now() + 3_600_000).toISOString() });
    await w.start();
    expect(await waitForJob(c, job.job_id, { timeoutMs: 10_000, pollMs: 5 })).toMatchObject({ state: 'succeeded', result: 'ran' });
  } finally {
    await w.stop();
    await c.close();
  }
});

// Regression: a signal that is not an AbortSignal (the AbortController itself, from JavaScript)
// threw a TypeError, and the wait's poll timer then threw another one outside any promise,
// which ended the process. It is refused before anything is read or scheduled.
// Regression: waitForJob(null, id) and waitForJob(client, id, null) threw bare TypeErrors.
it('waitForJob refuses a missing client or options that are not an object with a ValidationError', async () => {
  const { job } = await client.submit({ workflow: 'lib:v1', queue: 'wait-args' });
  for (const [call, rule] of [
    [() => waitForJob(null as never, job.job_id), /waitForJob takes a client from createClient/],
    [() => waitForJob(job.job_id as never, client as never), /waitForJob takes a client from createClient/],
    [() => waitForJob(client, job.job_id, null as never), /waitForJob options must be an object/],
    // (a pollMs past the longest timer Node keeps fired every millisecond: a busy loop on the store)
    [() => waitForJob(client, job.job_id, { pollMs: 3e9 }), /pollMs must be a number of milliseconds, from 1 to 2147483647/],
    // (an empty id, as from an unset variable, was "job  not found": a NotFoundError)
    [() => waitForJob(client, ''), /job id must be 1-1024 characters, not all blank/],
  ] as const) {
    const err = await call().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(rule);
  }
});

it('waitForJob refuses a signal that is not an AbortSignal with a ValidationError', async () => {
  const idle = (await client.submit({ workflow: 'lib:v1', queue: 'nobody-works-here' })).job;
  for (const signal of [new AbortController(), {}, 'abort']) {
    const err = await waitForJob(client, idle.job_id, { signal: signal as never, timeoutMs: 20, pollMs: 5 }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ code: 'VALIDATION', message: expect.stringMatching(/^signal must be an AbortSignal/) });
  }
});

// Regression: an async logger that rejected was an unhandled rejection, which ended the process mid-job.
it('a logger that throws or rejects does not stop the worker', async () => {
  const { job } = await client.submit({ workflow: 'lib:v1', queue: 'logger' });
  const { job: second } = await client.submit({ workflow: 'lib:v1', queue: 'logger' });
  let calls = 0;
  const worker = createWorker({
    backend: client,
    queue: 'logger',
    handler: () => 'ok',
    logger: async (e) => {
      calls++;
      if (e.kind === 'claimed') throw new Error('log shipper down');
      if (e.kind === 'succeeded') return Promise.reject('a rejection that is not an Error');
    },
  });
  await worker.start();
  try {
    for (const id of [job.job_id, second.job_id]) await pollUntil(async () => (await client.get(id))?.state === 'succeeded', { what: `${id} succeeded` });
  } finally {
    await worker.stop();
  }
  expect(calls).toBeGreaterThan(4);
});

// Regression: the package's JSDoc example did `if (ctx.signal.aborted) return;`, which completes a
// cancelled job as succeeded (and a job the worker is stopping for), where the README throws.
it('the examples stop an aborted handler by throwing its signal reason, never by returning', async () => {
  for (const file of ['src/index.ts', 'README.md']) {
    const text = await readFile(join(import.meta.dirname, '../..', file), 'utf8');
    expect(text, file).toContain('if (ctx.signal.aborted) throw ctx.signal.reason;');
    expect(text, file).not.toMatch(/if \(ctx\.signal\.aborted\) return\b/);
  }
});

// Regression: the classes the library throws were not exported, so `instanceof` was impossible.
it('exports every error class the library throws, and they are what it throws', async () => {
  const api = await import('../../src/index.js');
  const errors = await import('../../src/core/errors.js');
  for (const [name, value] of Object.entries(errors)) {
    if (typeof value === 'function' && /Error$/.test(name)) expect(api, name).toHaveProperty(name, value);
  }
  await client.submit({ workflow: 'lib:v1', idempotency_key: 'k' });
  await expect(client.submit({ workflow: 'lib:v1', idempotency_key: 'k', input: 'other' })).rejects.toBeInstanceOf(api.IdempotencyConflictError);
  await expect(client.cancel('job_01AAAAAAAAAAAAAAAAAAAAAAAA', null)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND', constructor: api.NotFoundError });
  await expect(client.submit({ workflow: 'bad' })).rejects.toBeInstanceOf(api.ValidationError);
  await expect(createClient({ url: 'postgres://x' })).rejects.toBeInstanceOf(api.ConfigError);
});

// Regression: after close(), SQLite threw a bare TypeError ("The database connection is not open")
// or ended events() silently, and Redis a RetryLaterError (BACKEND_UNAVAILABLE: retry later, for ever).
describe('use after close()', () => {
  it('every call of a closed client is refused with a ClosedError; a second close() does nothing', async () => {
    const url = `sqlite:${join(dir, 'store.db')}`;
    const c = await createClient({ url });
    const { job } = await c.submit({ workflow: 'lib:v1', queue: 'closed' });
    await c.close();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['get', () => c.get(job.job_id)],
      ['submit', () => c.submit({ workflow: 'lib:v1' })],
      ['list', () => c.list({}, { limit: 1 })],
      ['cancel', () => c.cancel(job.job_id, null)],
      ['stats', () => c.stats('closed')],
      ['events', async () => {
        for await (const e of c.events({ queue: 'closed' })) void e;
      }],
    ];
    for (const [op, call] of calls) {
      const err = await call().then(() => null, (e: unknown) => e);
      expect(err, op).toBeInstanceOf(ClosedError);
      expect(err, op).toMatchObject({ code: 'CLOSED', message: expect.stringContaining(`${op}() on a client that was closed`) });
    }
    await expect(c.close()).resolves.toBeUndefined();
    // the store itself is untouched: another client reads it
    expect((await client.get(job.job_id))?.state).toBe('queued');
  });

  // Regression: closing the client while waitForJob polled gave WAIT_STORE_LOST, "The job WAS
  // submitted…" (advice for a store that failed), after up to a whole poll interval.
  it('waitForJob stops at once with a ClosedError when its client is closed while it waits', async () => {
    const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
    const { job } = await c.submit({ workflow: 'lib:v1', queue: 'closed-wait' });
    const waiting = waitForJob(c, job.job_id, { pollMs: 60_000 }).then(() => null, (e: unknown) => e);
    await c.close();
    const err = await waiting;
    expect(err).toBeInstanceOf(ClosedError);
    expect(err).toMatchObject({ code: 'CLOSED', message: expect.stringMatching(new RegExp(`waitForJob\\(${job.job_id}\\).*client was closed`)) });
    expect((err as Error).message).not.toMatch(/WAS submitted/);
    expect((await client.get(job.job_id))?.state).toBe('queued');
  });

  it('a started worker, once stopped, refuses start() instead of resolving with nothing running', async () => {
    const w = createWorker({ backend: client, queue: 'restart', handler: () => null, minIdleMs: 1 });
    await w.start();
    await w.stop();
    await expect(w.start()).rejects.toMatchObject({ code: 'CLOSED', constructor: ClosedError });
    // stop() before any start() (a signal during set-up) still wins quietly: nothing runs.
    const early = createWorker({ backend: client, queue: 'restart', handler: () => null });
    await early.stop();
    await expect(early.start()).resolves.toBeUndefined();
    expect(early.inFlight()).toBe(0);
    await early.done;
  });

  // Regression: a worker given a client that was already closed started, then logged a refused
  // claim and heartbeat for ever, with nothing run.
  it('a worker given a client that was already closed refuses start() with a ClosedError instead of running', async () => {
    const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
    await c.close();
    const events: WorkerEvent[] = [];
    const w = createWorker({ backend: c, queue: 'closed-client', handler: () => null, minIdleMs: 1, logger: (e) => events.push(e) });
    try {
      const err = await w.start().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ClosedError);
      expect(err).toMatchObject({ code: 'CLOSED', message: expect.stringMatching(/^worker .*: its client was closed \(sqlite:.*store\.db\)/) });
      expect(events.map((e) => e.kind)).not.toContain('started');
      expect(w.inFlight()).toBe(0);
    } finally {
      await w.stop();
    }
  });

  it('a worker whose client is closed while it runs stops (done resolves) instead of logging refused claims for ever', async () => {
    const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
    const events: WorkerEvent[] = [];
    const w = createWorker({ backend: c, queue: 'closed-later', handler: () => null, minIdleMs: 1, maxIdleMs: 5, logger: (e) => events.push(e) });
    await w.start();
    await pollUntil(() => events.some((e) => e.kind === 'idle'), { what: 'the worker to have claimed once' });
    await c.close();
    let stopped = false;
    void w.done.then(() => (stopped = true));
    await pollUntil(() => stopped, { what: 'the worker to stop once its client was closed' });
    // (told by close() itself now, the worker usually stops before a claim is refused)
    const refused = events.filter((e) => e.kind === 'backend_error');
    expect(refused.every((e) => e.kind === 'backend_error' && e.error instanceof ClosedError)).toBe(true);
    expect(events.at(-1)?.kind).toBe('stopped');
  });

  // Regression: with every slot busy the claim loop sleeps, and only a claim saw the ClosedError:
  // heartbeats were refused for a whole lease (logged every heartbeatMs), the handler ran on
  // unaborted, and done did not resolve (the process did not end) until the lease ran out. Then
  // the grace period was waited out for handlers that could no longer write anything.
  it('a worker whose client is closed while its slots are all busy stops: the handlers\' signals abort and done resolves', async () => {
    const c = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
    const { job } = await c.submit({ workflow: 'lib:v1', queue: 'closed-busy' });
    const events: WorkerEvent[] = [];
    let reason: unknown = null;
    const w = createWorker({
      backend: c,
      queue: 'closed-busy',
      leaseMs: 600_000, // (heartbeats every 150 s: the stop must not wait for one)
      handler: (_job, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject((reason = ctx.signal.reason)))),
      logger: (e) => events.push(e),
    });
    await w.start();
    await pollUntil(() => w.inFlight() === 1, { what: 'the job to be running' });
    await c.close();
    let stopped = false;
    void w.done.then(() => (stopped = true));
    await pollUntil(() => stopped, { what: 'the worker to stop once its client was closed' });
    expect(reason).toMatchObject({ reason: 'shutdown' });
    expect(events.at(-1)?.kind).toBe('stopped');
    // nothing could be written: the job is left to its lease, as after a crash
    const other = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
    try {
      expect(await other.get(job.job_id)).toMatchObject({ state: 'running' });
    } finally {
      await other.close();
    }
  });

  // Regression: a start() whose store failed to open left the worker marked running, so the next
  // start() resolved at once with nothing claimed (a retry loop around start() "succeeded").
  it('a start() whose store fails to open can be tried again, and the retry runs the worker', async () => {
    const path = join(dir, 'later.db');
    await mkdir(path); // a directory where the database file should be: it cannot open
    const w = createWorker({ url: `sqlite:${path}`, queue: 'retry-start', handler: () => 'ran', minIdleMs: 1, maxIdleMs: 20 });
    await expect(w.start()).rejects.toBeInstanceOf(ConfigError);
    await rmdir(path);
    await w.start();
    const other = await createClient({ url: `sqlite:${path}` });
    try {
      const { job } = await other.submit({ workflow: 'lib:v1', queue: 'retry-start' });
      await pollUntil(async () => (await other.get(job.job_id))?.state === 'succeeded', { what: 'the job run by the retried worker' });
    } finally {
      await w.stop();
      await other.close();
    }
  });
});
