/**
 * The library worker end to end through the backend contract: retries,
 * DLQ entries, effects across attempts, deadlines, cancellation, lost leases,
 * graceful stop, concurrency and batched heartbeats. Parameterised by
 * fixture so every backend runs the same cases (SQLite in worker-sqlite.test.ts).
 *
 * Time: the store runs on a ManualClock, so backoff windows and deadlines
 * pass when a test says so. Heartbeat ticks are real timers with a short
 * period; every wait is a poll with a deadline, never a fixed sleep.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend, HeartbeatResult, LeaseRef } from '../../src/backend/contract.js';
import type { ManualClock } from '../../src/core/clock.js';
import { LeaseLostError, RetryLaterError } from '../../src/core/errors.js';
import type { Job, SubmitRequest } from '../../src/core/schemas.js';
import { HandlerError, JobAbortedError } from '../../src/worker/handler-error.js';
import type { Handler, Worker, WorkerEvent, WorkerOptions } from '../../src/worker/types.js';
import { createWorker } from '../../src/worker/worker.js';
import { pollUntil } from '../support/poll.js';

export interface WorkerFixture {
  backend: Backend;
  clock: ManualClock;
  cleanup(): Promise<void>;
}

const Q = 'work';
const RETRY_WINDOW_MS = 16_000; // past the first backoff window (5–15 s)

/** A promise with its resolver, to hold a handler at a point the test chooses. */
function gate(): { open: () => void; wait: Promise<void> } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

/** Resolves when the signal aborts, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((r) => (signal.aborted ? r(signal.reason) : signal.addEventListener('abort', () => r(signal.reason), { once: true })));
}

export function runWorkerSuite(name: string, makeFixture: () => Promise<WorkerFixture>): void {
  describe(`library worker (${name})`, () => {
    let fx: WorkerFixture;
    let workers: Worker[];
    let events: WorkerEvent[];

    beforeEach(async () => {
      fx = await makeFixture();
      workers = [];
      events = [];
    });
    afterEach(async () => {
      for (const w of workers) await w.stop();
      await fx.cleanup();
    });

    const start = async (handler: Handler, opts: Partial<WorkerOptions> = {}): Promise<Worker> => {
      const w = createWorker({
        backend: fx.backend,
        clock: fx.clock,
        queue: Q,
        handler,
        leaseMs: 30_000,
        heartbeatMs: 20,
        minIdleMs: 5,
        maxIdleMs: 20,
        workerVersion: 'v-test',
        gracefulMs: 5_000,
        abortGraceMs: 5_000,
        logger: (e) => events.push(e),
        ...opts,
      });
      workers.push(w);
      await w.start();
      return w;
    };
    const submit = async (req: Partial<SubmitRequest> = {}): Promise<Job> =>
      (await fx.backend.submit({ workflow: 'test:v1', queue: Q, input: 'x', ...req })).job;
    const until = async (id: string, pred: (j: Job) => boolean, what: string): Promise<Job> =>
      pollUntil(async () => {
        const j = await fx.backend.get(id);
        return j && pred(j) ? j : null;
      }, { what });
    const inState = (id: string, state: Job['state']): Promise<Job> => until(id, (j) => j.state === state, `${id} ${state}`);
    /** The store with its claims held until `wait` resolves (a store that does not answer); `claimWaitMs` as a backend declares it. */
    const claimsHeld = (wait: Promise<void>, claimWaitMs?: number): Backend =>
      new Proxy(fx.backend, {
        get(target, prop) {
          if (prop === 'claimWaitMs' && claimWaitMs !== undefined) return claimWaitMs;
          const v = Reflect.get(target, prop, target) as unknown;
          if (typeof v !== 'function') return v;
          if (prop !== 'claim') return (v as (...a: unknown[]) => unknown).bind(target);
          return async (...args: unknown[]) => {
            await wait;
            return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });

    it('completes a job with the handler result: strings as is, other values as JSON', async () => {
      const a = await submit({ input: 'text' });
      const b = await submit({ input: 'json' });
      await start(async (job) => (job.input === 'text' ? 'plain result' : { words: 3 }));
      expect((await inState(a.job_id, 'succeeded')).result).toBe('plain result');
      const done = await inState(b.job_id, 'succeeded');
      expect(JSON.parse(done.result!)).toEqual({ words: 3 });
      expect(done.attempts).toHaveLength(1);
      expect(done.attempts[0]).toMatchObject({ worker_version: 'v-test', error_code: null });
    });

    it('retries a retryable error after the backoff window, then succeeds', async () => {
      const job = await submit({ max_attempts: 3 });
      await start(async (_job, ctx) => {
        if (ctx.attempt === 1) throw new HandlerError('PROVIDER_429', 'rate limited');
        return 'second time lucky';
      });
      const scheduled = await inState(job.job_id, 'scheduled');
      expect(scheduled.last_error).toMatchObject({ code: 'PROVIDER_429', retryable: true });
      expect(Date.parse(scheduled.run_at) - fx.clock.now()).toBeGreaterThanOrEqual(5_000);
      fx.clock.advance(RETRY_WINDOW_MS);
      const done = await inState(job.job_id, 'succeeded');
      expect(done.attempts.map((a) => a.error_code)).toEqual(['PROVIDER_429', null]);
      expect(events.filter((e) => e.kind === 'failed')).toEqual([
        expect.objectContaining({ jobId: job.job_id, code: 'PROVIDER_429', outcome: 'retry' }),
      ]);
    });

    it('sends a permanent error straight to the DLQ with code, message and worker version', async () => {
      const job = await submit({ max_attempts: 5 });
      await start(async () => {
        throw new HandlerError('VALIDATION', 'input has no title');
      });
      const dead = await inState(job.job_id, 'dead');
      expect(dead.attempts).toHaveLength(1);
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'VALIDATION', error_message: 'input has no title', worker_version: 'v-test' });
      const entry = await fx.backend.dlqGet(job.job_id);
      expect(entry).toMatchObject({ reason: 'permanent', error_code: 'VALIDATION', worker_version: 'v-test', partial: false });
    });

    it('an unexpected throw is permanent (HANDLER_FAILED); a network error is retried', async () => {
      const bug = await submit({ input: 'bug' });
      const net = await submit({ input: 'net' });
      await start(async (job) => {
        if (job.input === 'bug') throw new TypeError('cannot read properties of undefined');
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      });
      expect((await inState(bug.job_id, 'dead')).dead).toMatchObject({ error_code: 'HANDLER_FAILED' });
      expect((await inState(net.job_id, 'scheduled')).last_error).toMatchObject({ code: 'NETWORK', retryable: true });
    });

    // Regression: classifying what was thrown read its fields directly, so a throwing getter or a
    // proxy threw out of the ending write: the job stayed running, unwritten, until its lease ran out.
    it('regression: a thrown value whose properties throw when read (a proxy, a getter) fails the attempt like any other throw', async () => {
      const proxy = await submit({ input: 'proxy' });
      const getter = await submit({ input: 'getter' });
      await start(async (job) => {
        if (job.input === 'proxy') throw new Proxy({}, { get() { throw new Error('trap'); } });
        const e = new Error('unused');
        Object.defineProperty(e, 'message', { get() { throw new Error('getter'); } });
        throw e;
      });
      expect((await inState(proxy.job_id, 'dead')).dead).toMatchObject({ error_code: 'HANDLER_FAILED' });
      expect((await inState(getter.job_id, 'dead')).dead).toMatchObject({ error_code: 'HANDLER_FAILED', error_message: 'Error' });
      expect(events.filter((e) => e.kind === 'backend_error')).toEqual([]);
    });

    it('regression: a thrown code that breaks the error-code rule is not stored as the code (as the shell worker does); the message quotes it', async () => {
      const zw = await submit({ input: 'zero-width' });
      const http = await submit({ input: 'http', max_attempts: 3 });
      await start(async (job) => {
        if (job.input === 'zero-width') throw new HandlerError('PROVIDER_429\u200b', 'slow down', { retryable: false });
        throw Object.assign(new Error('quota'), { code: 'rate limit \x1b[31mexceeded', status: 429 });
      });
      const dead = (await inState(zw.job_id, 'dead')).dead!;
      expect(dead.error_code).toBe('HANDLER_FAILED');
      expect(dead.error_message).toBe('the handler threw an error with the code "PROVIDER_429\\u200b", which is not one (error codes must be 1-64 characters of A-Z, 0-9 and _ (e.g. PROVIDER_429)): slow down');
      const scheduled = await inState(http.job_id, 'scheduled');
      expect(scheduled.last_error).toMatchObject({ code: 'PROVIDER_429', retryable: true });
      expect(scheduled.last_error!.message).toContain('"rate limit \\x1b[31mexceeded"');
      expect(scheduled.last_error!.message).not.toContain('\x1b');
    });

    it('a result JSON cannot hold (BigInt, circular) fails the attempt permanently with HANDLER_FAILED, saying why', async () => {
      const big = await submit({ input: 'bigint', max_attempts: 3 });
      const loop = await submit({ input: 'circular', max_attempts: 3 });
      await start(async (job) => {
        if (job.input === 'bigint') return { tokens: 10n };
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      });
      for (const [job, why] of [[big, /BigInt/], [loop, /circular/i]] as const) {
        const dead = await inState(job.job_id, 'dead');
        expect(dead.attempts).toHaveLength(1);
        expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'HANDLER_FAILED' });
        expect(dead.dead!.error_message).toContain('result cannot be stored');
        expect(dead.dead!.error_message).toMatch(why);
      }
      expect(events.filter((e) => e.kind === 'backend_error')).toEqual([]);
    });

    // Regression: JSON.stringify gives no text for these, and the job succeeded with no result: a
    // handler returning `res.json` instead of `res.json()` lost its output without a word.
    it('regression: a returned function, Symbol or toJSON giving undefined fails the attempt (HANDLER_FAILED) rather than succeeding with no result', async () => {
      const jobs = await Promise.all(['fn', 'symbol', 'tojson'].map((input) => submit({ input, max_attempts: 3 })));
      await start(async (job) => (job.input === 'fn' ? () => 1 : job.input === 'symbol' ? Symbol('s') : { toJSON: () => undefined }));
      for (const job of jobs) {
        const dead = await inState(job.job_id, 'dead');
        expect(dead.attempts).toHaveLength(1);
        expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'HANDLER_FAILED' });
        expect(dead.dead!.error_message).toContain('result cannot be stored');
      }
    });

    // Regression: finishEffect threw a raw TypeError and the effect stayed `started`, so a retry or
    // redrive would have run the action again.
    it('an effect whose result JSON cannot hold is recorded done (result null) and fails the attempt permanently', async () => {
      const job = await submit({ max_attempts: 3 });
      let calls = 0;
      await start(async (_job, ctx) => {
        await ctx.effect('count-tokens', () => {
          calls += 1;
          return { tokens: 10n };
        });
        return 'not reached';
      });
      const dead = await inState(job.job_id, 'dead');
      expect(calls).toBe(1);
      expect(dead.attempts).toHaveLength(1);
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'HANDLER_FAILED' });
      expect(dead.dead!.error_message).toMatch(/effect "count-tokens" ran, but its result is not JSON-serialisable \(.*BigInt.*\).*recorded as done/);
      expect(dead.effects).toEqual([expect.objectContaining({ key: 'count-tokens', status: 'done', result: null })]);
      expect(events.filter((e) => e.kind === 'backend_error')).toEqual([]);
    });

    it('a checkpoint that is not JSON fails the attempt with VALIDATION and leaves the job readable', async () => {
      const job = await submit({ max_attempts: 1 });
      await start(async (_job, ctx) => {
        await ctx.checkpoint({ toJSON: () => undefined });
      });
      const dead = await inState(job.job_id, 'dead');
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'VALIDATION' });
      expect(dead.checkpoint).toBeNull();
    });

    // Regression: ctx.lastCheckpoint stayed what the claim brought, though it says "or earlier in this one".
    it('ctx.lastCheckpoint follows ctx.checkpoint within the attempt, as JSON keeps it', async () => {
      const job = await submit({ max_attempts: 2 });
      const seen: unknown[] = [];
      await start(async (_job, ctx) => {
        seen.push(ctx.lastCheckpoint);
        await ctx.checkpoint({ step: ctx.attempt, at: new Date(0) });
        seen.push(ctx.lastCheckpoint);
        if (ctx.attempt === 1) throw new HandlerError('NETWORK', 'retry me');
        return 'ok';
      });
      await inState(job.job_id, 'scheduled');
      fx.clock.advance(RETRY_WINDOW_MS);
      await inState(job.job_id, 'succeeded');
      const at = new Date(0).toISOString();
      expect(seen).toEqual([null, { step: 1, at }, { step: 1, at }, { step: 2, at }]);
    });

    it('ctx.reportUsage adds to each attempt\'s record and the queue\'s totals; a bad figure fails the attempt with VALIDATION', async () => {
      const job = await submit({ max_attempts: 2 });
      await start(async (_job, ctx) => {
        await ctx.reportUsage({ tokens: 1000, cost_usd: 0.02 });
        await ctx.reportUsage({ tokens: 500 });
        if (ctx.attempt === 1) throw new HandlerError('PROVIDER_429', 'rate limited');
        await ctx.reportUsage({ cost_usd: -1 });
        return 'never';
      });
      await inState(job.job_id, 'scheduled');
      fx.clock.advance(RETRY_WINDOW_MS);
      const dead = await inState(job.job_id, 'dead');
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'VALIDATION' });
      expect(dead.dead!.error_message).toMatch(/usage cost_usd must be a non-negative finite number, got -1/);
      expect(dead.attempts.map((a) => a.usage)).toEqual([
        { tokens: 1500, cost_usd: 0.02 },
        { tokens: 1500, cost_usd: 0.02 },
      ]);
      expect((await fx.backend.stats(Q)).usage).toEqual({ tokens: 3000, cost_usd: 0.04 });
    });

    it('a report over the job\'s budget is recorded, then throws BUDGET_EXCEEDED and aborts the signal; the job goes to the DLQ, not retried', async () => {
      const job = await submit({ max_attempts: 3, budget: { tokens: 1000, cost_usd: null } });
      let thrown: unknown;
      let reason: unknown;
      await start(async (_job, ctx) => {
        await ctx.reportUsage({ tokens: 600, cost_usd: 0.01 });
        try {
          await ctx.reportUsage({ tokens: 600, cost_usd: 0.01 });
        } catch (e) {
          thrown = e;
          reason = ctx.signal.reason;
          throw e;
        }
        return 'never';
      });
      const dead = await inState(job.job_id, 'dead');
      expect(thrown).toBeInstanceOf(HandlerError);
      expect(thrown).toMatchObject({ code: 'BUDGET_EXCEEDED', retryable: false });
      expect(reason).toBeInstanceOf(JobAbortedError);
      expect((reason as JobAbortedError).reason).toBe('budget');
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'BUDGET_EXCEEDED' });
      expect(dead.dead!.error_message).toBe(`job ${job.job_id} is over its budget: it spent 1200 tokens of its 1000`);
      expect(dead.attempts.map((a) => a.usage)).toEqual([{ tokens: 1200, cost_usd: 0.02 }]);
    });

    it('a handler that ignores the budget abort is detached after the grace and its attempt fails BUDGET_EXCEEDED', async () => {
      const job = await submit({ max_attempts: 3, budget: { tokens: null, cost_usd: 0.05 } });
      const never = gate();
      await start(async (_job, ctx) => {
        await ctx.reportUsage({ cost_usd: 0.06 }).catch(() => {});
        await never.wait;
      }, { abortGraceMs: 30 });
      const dead = await inState(job.job_id, 'dead');
      expect(dead.dead).toMatchObject({ error_code: 'BUDGET_EXCEEDED', error_message: `job ${job.job_id} is over its budget: it spent $0.06 of its $0.05` });
      expect(events).toContainEqual({ kind: 'handler_detached', jobId: job.job_id, reason: 'budget' });
      never.open();
    });

    it('a spend landing exactly on the budget finishes its attempt; the next attempt, with nothing left, fails at once without running', async () => {
      const job = await submit({ max_attempts: 3, budget: { tokens: 1000, cost_usd: 0.05 } });
      const runs: number[] = [];
      await start(async (_job, ctx) => {
        runs.push(ctx.attempt);
        await ctx.reportUsage({ tokens: 1000, cost_usd: 0.01 });
        throw new HandlerError('PROVIDER_429', 'rate limited');
      });
      await inState(job.job_id, 'scheduled');
      fx.clock.advance(RETRY_WINDOW_MS);
      const dead = await inState(job.job_id, 'dead');
      expect(runs).toEqual([1]);
      expect(dead.attempts.map((a) => a.error_code)).toEqual(['PROVIDER_429', 'BUDGET_EXCEEDED']);
      expect(dead.dead).toMatchObject({ reason: 'permanent', error_code: 'BUDGET_EXCEEDED' });
      expect(dead.dead!.error_message).toBe(`job ${job.job_id} is over its budget: it spent 1000 tokens of its 1000 before this attempt`);
    });

    it('exhausts attempts into the DLQ with attempt history, last checkpoint and effect ledger', async () => {
      const job = await submit({ max_attempts: 2, trace_id: 'trace-xyz' });
      await start(async (_job, ctx) => {
        await ctx.checkpoint({ step: ctx.attempt });
        await ctx.effect('notify', () => ({ sent: true }));
        throw new HandlerError('PROVIDER_5XX', `upstream 503 on attempt ${ctx.attempt}`);
      });
      await inState(job.job_id, 'scheduled');
      fx.clock.advance(RETRY_WINDOW_MS);
      const dead = await inState(job.job_id, 'dead');
      expect(dead.outcome).toBe('partially_completed');
      expect(dead.dead).toMatchObject({ reason: 'exhausted', error_code: 'PROVIDER_5XX', error_message: 'upstream 503 on attempt 2' });
      expect(dead.attempts.map((a) => [a.attempt, a.error_code, a.worker_version])).toEqual([
        [1, 'PROVIDER_5XX', 'v-test'],
        [2, 'PROVIDER_5XX', 'v-test'],
      ]);
      expect(dead.checkpoint).toEqual({ step: 2 });
      expect(dead.effects).toEqual([expect.objectContaining({ key: 'notify', status: 'done', result: { sent: true } })]);
      const entry = (await fx.backend.dlqGet(job.job_id))!;
      expect(entry).toMatchObject({ reason: 'exhausted', attempts: 2, partial: true, worker_version: 'v-test' });
      expect(entry.job?.trace_id).toBe('trace-xyz');
    });

    it('never runs an effect that is recorded done again: the next attempt gets the recorded result', async () => {
      const job = await submit({ max_attempts: 3 });
      const calls: string[] = [];
      const seen: unknown[] = [];
      await start(async (_job, ctx) => {
        const receipt = await ctx.effect('charge-card', (idempotencyKey) => {
          calls.push(idempotencyKey);
          return { receipt: 'r-1' };
        });
        seen.push(receipt);
        if (ctx.attempt === 1) throw new HandlerError('TIMEOUT', 'tool timed out after the charge');
        return 'ok';
      });
      await inState(job.job_id, 'scheduled');
      fx.clock.advance(RETRY_WINDOW_MS);
      await inState(job.job_id, 'succeeded');
      expect(calls).toEqual([`${job.job_id}:charge-card`]);
      expect(seen).toEqual([{ receipt: 'r-1' }, { receipt: 'r-1' }]);
    });

    // Regression: each concurrent call found the first one's `started` record, took it for a dead
    // attempt's debris and called fn again (3 charges for one key).
    it('the same effect key called concurrently in one attempt runs fn once; the other calls get its result or its error', async () => {
      const ok = await submit({ input: 'ok' });
      const bad = await submit({ input: 'bad', max_attempts: 1 });
      const calls: Record<string, number> = { ok: 0, bad: 0 };
      const results: Record<string, unknown[]> = { ok: [], bad: [] };
      await start(async (job, ctx) => {
        const input = job.input as 'ok' | 'bad';
        const release = gate();
        const all = Promise.allSettled(
          [1, 2, 3].map(() =>
            ctx.effect('charge-card', async (key) => {
              calls[input]! += 1;
              await release.wait;
              if (input === 'bad') throw new HandlerError('PROVIDER_5XX', 'card service down');
              return { charged: key };
            }),
          ),
        );
        // every call has been made before the first one's fn may finish
        await pollUntil(() => calls[input]! > 0 || null, { what: 'fn called' });
        release.open();
        for (const r of await all) results[input]!.push(r.status === 'fulfilled' ? r.value : (r.reason as Error).message);
        return 'done';
      });
      await inState(ok.job_id, 'succeeded');
      await inState(bad.job_id, 'succeeded');
      expect(calls).toEqual({ ok: 1, bad: 1 });
      expect(results.ok).toEqual([0, 1, 2].map(() => ({ charged: `${ok.job_id}:charge-card` })));
      expect(results.bad).toEqual(['card service down', 'card service down', 'card service down']);
      expect((await fx.backend.get(ok.job_id))!.effects).toEqual([expect.objectContaining({ key: 'charge-card', status: 'done' })]);
      expect((await fx.backend.get(bad.job_id))!.effects).toEqual([expect.objectContaining({ key: 'charge-card', status: 'started' })]);
    });

    it('an effect started but not done is called again with the same idempotency key', async () => {
      const job = await submit({ max_attempts: 3 });
      const keys: string[] = [];
      await start(async (_job, ctx) =>
        ctx.effect('send-email', (key) => {
          keys.push(key);
          // The external call "succeeded" but the attempt died before recording done.
          if (ctx.attempt === 1) throw new HandlerError('NETWORK', 'connection reset after send');
          return 'sent';
        }),
      );
      await inState(job.job_id, 'scheduled');
      expect((await fx.backend.get(job.job_id))!.effects[0]).toMatchObject({ status: 'started' });
      fx.clock.advance(RETRY_WINDOW_MS);
      await inState(job.job_id, 'succeeded');
      expect(keys).toEqual([`${job.job_id}:send-email`, `${job.job_id}:send-email`]);
    });

    it('aborts a running job whose deadline passes: expired, or partially_completed with effects', async () => {
      const plain = await submit({ deadline_at: new Date(fx.clock.now() + 10_000).toISOString(), input: 'plain' });
      const partial = await submit({ deadline_at: new Date(fx.clock.now() + 10_000).toISOString(), input: 'partial' });
      const reasons: unknown[] = [];
      await start(
        async (job, ctx) => {
          if (job.input === 'partial') await ctx.effect('create-order', () => 'order-1');
          const reason = await aborted(ctx.signal);
          reasons.push(reason);
          throw reason;
        },
        { concurrency: 2 },
      );
      await until(plain.job_id, (j) => j.state === 'running', 'plain running');
      await until(partial.job_id, (j) => j.effects.length === 1, 'partial effect recorded');
      fx.clock.advance(11_000);
      expect((await inState(plain.job_id, 'expired')).outcome).toBe('expired');
      expect((await inState(partial.job_id, 'expired')).outcome).toBe('partially_completed');
      expect(reasons).toHaveLength(2);
      for (const r of reasons) expect(r).toMatchObject({ name: 'JobAbortedError', reason: 'deadline' });
    });

    it('regression: a job whose lease ran out at its deadline while the handler was winding down is reported lost, not dropped without a word', async () => {
      // The lease never outlives the deadline, so a handler slow to exit after its deadline abort (a
      // shell trap cleaning up, a child that ignores SIGTERM until the kill grace) can have its job
      // ended by another worker's claim first. The worker then wrote nothing and said nothing: no
      // line, no count, the slot just came back.
      const job = await submit({ deadline_at: new Date(fx.clock.now() + 10_000).toISOString() });
      const abortSeen = gate();
      const reaped = gate();
      await start(async (_job, ctx) => {
        const reason = await aborted(ctx.signal);
        abortSeen.open();
        await reaped.wait;
        await ctx.heartbeat().catch(() => undefined);
        throw reason;
      });
      await inState(job.job_id, 'running');
      fx.clock.advance(11_000);
      await abortSeen.wait;
      await fx.backend.claim({ queue: Q, workerId: 'other', max: 1, leaseMs: 10_000 });
      expect((await fx.backend.get(job.job_id))!.state).toBe('expired');
      reaped.open();
      await pollUntil(() => events.some((e) => e.kind === 'lease_lost' && e.jobId === job.job_id), { what: 'lease_lost event' });
      expect(events.filter((e) => e.kind === 'aborted' && e.jobId === job.job_id)).toEqual([]);
    });

    it('a job claimed between heartbeats is aborted at its deadline, not at the next heartbeat', async () => {
      // The heartbeat is scheduled for a whole interval (far beyond the test) before the job is claimed.
      const job = await submit({ deadline_at: new Date(fx.clock.now() + 50).toISOString() });
      const reasons: unknown[] = [];
      await start(
        async (_job, ctx) => {
          const reason = await aborted(ctx.signal);
          reasons.push(reason);
          throw reason;
        },
        { heartbeatMs: 600_000, leaseMs: 1_200_000 },
      );
      await inState(job.job_id, 'running');
      fx.clock.advance(100);
      expect((await inState(job.job_id, 'expired')).outcome).toBe('expired');
      expect(reasons).toEqual([expect.objectContaining({ name: 'JobAbortedError', reason: 'deadline' })]);
    });

    it('cancel of a running job reaches the handler through ctx.signal at the next heartbeat', async () => {
      const job = await submit();
      const started = gate();
      let reason: unknown;
      await start(async (_job, ctx) => {
        started.open();
        reason = await aborted(ctx.signal);
        // A cancelled job starts no new tool calls.
        await expect(ctx.effect('late', () => 'never')).rejects.toBeInstanceOf(JobAbortedError);
        throw reason;
      });
      await started.wait;
      expect((await fx.backend.cancel(job.job_id, 'customer withdrew')).status).toBe('cancel_requested');
      const ended = await inState(job.job_id, 'cancelled');
      expect(ended.outcome).toBe('cancelled');
      expect(ended.effects).toEqual([]);
      expect(reason).toBeInstanceOf(JobAbortedError);
      expect((reason as JobAbortedError).reason).toBe('cancelled');
      expect(events).toContainEqual(expect.objectContaining({ kind: 'aborted', jobId: job.job_id, reason: 'cancelled' }));
    });

    it('a handler that ignores its aborted signal is detached after the abort grace; the job still ends', async () => {
      const job = await submit();
      const started = gate();
      const w = await start(
        async () => {
          started.open();
          await new Promise(() => {}); // never returns
        },
        { abortGraceMs: 50 },
      );
      await started.wait;
      await fx.backend.cancel(job.job_id, null);
      await inState(job.job_id, 'cancelled');
      await pollUntil(() => w.inFlight() === 0, { what: 'slot freed' });
      expect(events).toContainEqual({ kind: 'handler_detached', jobId: job.job_id, reason: 'cancelled' });
    });

    it('a lost lease stops every write: heartbeat reports it, the signal aborts, checkpoint and complete are refused', async () => {
      const job = await submit({ max_attempts: 5 });
      const started = gate();
      const proceed = gate();
      let heartbeatError: unknown;
      let checkpointError: unknown;
      let signalReason: unknown;
      // Heartbeats far apart so the lease can run out between them.
      await start(
        async (_job, ctx) => {
          started.open();
          await proceed.wait;
          heartbeatError = await ctx.heartbeat().catch((e: unknown) => e);
          signalReason = ctx.signal.reason;
          checkpointError = await ctx.checkpoint({ stale: true }).catch((e: unknown) => e);
          return 'stale result';
        },
        { leaseMs: 10_000, heartbeatMs: 9_999 },
      );
      await started.wait;
      fx.clock.advance(11_000);
      // Another worker's claim reclaims the expired lease (it counts as an attempt and is rescheduled).
      await fx.backend.claim({ queue: Q, workerId: 'other', max: 1, leaseMs: 10_000 });
      const reclaimed = await inState(job.job_id, 'scheduled');
      proceed.open();
      await pollUntil(() => events.some((e) => e.kind === 'lease_lost' && e.jobId === job.job_id), { what: 'lease_lost event' });
      expect(heartbeatError).toBeInstanceOf(LeaseLostError);
      expect(signalReason).toMatchObject({ reason: 'lease_lost' });
      expect(checkpointError).toBeInstanceOf(LeaseLostError);
      const after = (await fx.backend.get(job.job_id))!;
      expect(after.state).toBe('scheduled');
      expect(after.checkpoint).toBeNull();
      expect(after.result).toBeNull();
      expect(after.attempts).toEqual(reclaimed.attempts);
      expect(events.some((e) => e.kind === 'succeeded')).toBe(false);
    });

    it('a handler that returns after its lease was taken over cannot complete the job', async () => {
      const job = await submit({ max_attempts: 5 });
      const started = gate();
      const proceed = gate();
      await start(
        async () => {
          started.open();
          await proceed.wait;
          return 'too late';
        },
        { leaseMs: 10_000, heartbeatMs: 9_999 },
      );
      await started.wait;
      fx.clock.advance(11_000);
      await fx.backend.claim({ queue: Q, workerId: 'other', max: 1, leaseMs: 10_000 });
      await inState(job.job_id, 'scheduled');
      proceed.open();
      await pollUntil(() => events.some((e) => e.kind === 'lease_lost' && e.jobId === job.job_id), { what: 'lease_lost event' });
      expect((await fx.backend.get(job.job_id))!).toMatchObject({ state: 'scheduled', result: null });
    });

    it('graceful stop lets a running handler finish within the grace period', async () => {
      const job = await submit();
      const started = gate();
      const finish = gate();
      const w = await start(async () => {
        started.open();
        await finish.wait;
        return 'finished during shutdown';
      });
      await started.wait;
      const stopping = w.stop();
      finish.open();
      await stopping;
      expect((await fx.backend.get(job.job_id))!).toMatchObject({ state: 'succeeded', result: 'finished during shutdown' });
    });

    it('graceful stop past the grace period aborts the handler and releases its lease without counting the attempt', async () => {
      const job = await submit({ max_attempts: 1 });
      const started = gate();
      let reason: unknown;
      const w = await start(
        async (_job, ctx) => {
          started.open();
          reason = await aborted(ctx.signal);
          throw reason;
        },
        { gracefulMs: 30 },
      );
      await started.wait;
      await w.stop();
      expect(reason).toMatchObject({ reason: 'shutdown' });
      const released = (await fx.backend.get(job.job_id))!;
      expect(released.state).toBe('queued');
      // max_attempts 1 and still claimable: the released attempt did not count.
      const again = await fx.backend.claim({ queue: Q, workerId: 'next', max: 1, leaseMs: 10_000 });
      expect(again.map((l) => l.jobId)).toEqual([job.job_id]);
      expect(events).toContainEqual(expect.objectContaining({ kind: 'released', jobId: job.job_id }));
    });

    it('keeps at most `concurrency` jobs in flight and heartbeats all their leases in one call', async () => {
      const jobs = await Promise.all(Array.from({ length: 7 }, (_, i) => submit({ input: String(i) })));
      const heartbeatBatches: number[] = [];
      const counting: Backend = new Proxy(fx.backend, {
        get(target, prop, receiver) {
          if (prop === 'heartbeat') {
            return (leases: LeaseRef[], ms: number): Promise<HeartbeatResult[]> => {
              heartbeatBatches.push(leases.length);
              return target.heartbeat(leases, ms);
            };
          }
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      let running = 0;
      let maxRunning = 0;
      const release = gate();
      await start(
        async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await release.wait;
          running--;
          return 'ok';
        },
        { backend: counting, concurrency: 3 },
      );
      await pollUntil(() => heartbeatBatches.includes(3), { what: 'a heartbeat carrying all three leases' });
      expect(running).toBe(3);
      release.open();
      for (const j of jobs) await inState(j.job_id, 'succeeded');
      expect(maxRunning).toBe(3);
      expect(Math.max(...heartbeatBatches)).toBe(3);
    });

    it('backs off while the queue is empty (doubling up to maxIdleMs) and claims at once again after work arrives', async () => {
      await start(async () => 'ok', { minIdleMs: 2, maxIdleMs: 16 });
      const idleWaits = (): number[] => events.flatMap((e) => (e.kind === 'idle' ? [e.waitMs] : []));
      await pollUntil(() => idleWaits().length >= 6, { what: 'six idle claims' });
      expect(idleWaits().slice(0, 6)).toEqual([2, 4, 8, 16, 16, 16]);
      const job = await submit();
      await inState(job.job_id, 'succeeded');
      const afterJob = (): WorkerEvent[] => events.slice(events.findIndex((e) => e.kind === 'succeeded' && e.jobId === job.job_id));
      await pollUntil(() => afterJob().some((e) => e.kind === 'idle'), { what: 'idle again' });
      // The backoff restarted from the minimum after the job.
      expect(afterJob().find((e) => e.kind === 'idle')).toEqual({ kind: 'idle', waitMs: 2 });
    });

    /** The store, with the answer of the first `lose` call lost after the call applied (as across a Redis restart). */
    const losingAnswer = (lose: 'claim' | 'completeAndClaim'): Backend => {
      let lost = false;
      const real = fx.backend as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      return new Proxy(fx.backend, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target) as unknown;
          if (prop === lose) {
            return async (...args: unknown[]) => {
              const r = await real[lose]!.apply(target, args);
              const leased = lose === 'claim' ? (r as unknown[]).length : (r as { next: unknown[] }).next.length;
              if (!lost && leased > 0) {
                lost = true;
                throw new Error('Connection is closed.');
              }
              return r;
            };
          }
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    };

    it('a completion whose answer was lost counts as done, and the job it claimed is given back at once, not left running', async () => {
      if (!fx.backend.completeAndClaim) return;
      const a = await submit({ input: 'a' });
      const b = await submit({ input: 'b' });
      await start(async (job) => `did ${job.input}`, { backend: losingAnswer('completeAndClaim') });
      expect((await inState(a.job_id, 'succeeded')).result).toBe('did a');
      const done = await inState(b.job_id, 'succeeded');
      // claimed by the lost answer, released (not counted), claimed again
      expect(done.attempts.map((x) => x.outcome)).toEqual(['released', 'succeeded']);
      expect(done.attempt).toBe(1);
      expect(events.filter((e) => e.kind === 'lease_lost')).toEqual([]);
      expect(events).toContainEqual({ kind: 'succeeded', jobId: a.job_id, attempt: 1, durationMs: expect.any(Number) });
      expect(events).toContainEqual({ kind: 'orphan_released', jobId: b.job_id, attempt: 1 });
    });

    it('jobs leased by a claim whose answer was lost are given back at once, not left running until their leases expire', async () => {
      const jobs = [await submit({ input: 'a' }), await submit({ input: 'b' })];
      await start(async () => 'ok', { backend: losingAnswer('claim'), concurrency: 2 });
      for (const j of jobs) expect((await inState(j.job_id, 'succeeded')).attempt).toBe(1);
      expect(events.filter((e) => e.kind === 'orphan_released').map((e) => (e as { jobId: string }).jobId).sort()).toEqual(jobs.map((j) => j.job_id).sort());
    });

    it('says once when the store stops answering, and once when it answers again', async () => {
      const job = await submit();
      const held = gate();
      await start(async () => 'ok', { backend: claimsHeld(held.wait) });
      fx.clock.advance(5_000);
      await pollUntil(() => events.some((e) => e.kind === 'store_unavailable'), { what: 'store_unavailable' });
      expect(events.filter((e) => e.kind === 'store_unavailable')).toEqual([{ kind: 'store_unavailable', waiting: 1, error: null }]);
      expect(events.some((e) => e.kind === 'store_available')).toBe(false);
      held.open();
      await inState(job.job_id, 'succeeded');
      expect(events.filter((e) => e.kind === 'store_available')).toEqual([{ kind: 'store_available', downMs: 5_000 }]);
      expect(events.filter((e) => e.kind === 'store_unavailable')).toHaveLength(1);
    });

    it('a claim failing for want of the broker waits out its backoff: the orphan sweep it starts (answered by the store) does not wake it at once', async () => {
      // SQS unreachable, its job store fine: each failed claim started an orphan sweep whose list()
      // answered at once and woke the claim loop, which claimed again with no backoff (several
      // "store error during claim" lines a second, for as long as SQS was away).
      let claims = 0;
      let lists = 0;
      const brokerDown = new Proxy(fx.backend, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target) as unknown;
          if (typeof v !== 'function') return v;
          if (prop === 'claim') {
            return async () => {
              claims++;
              throw new RetryLaterError('SQS is unreachable (connect ECONNREFUSED)', 'BACKEND_UNAVAILABLE');
            };
          }
          if (prop === 'list') {
            return async (...args: unknown[]) => {
              const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              // an answer over the network, as the job store's would be: not in the same microtask run
              await new Promise((resolve) => setImmediate(resolve));
              lists++;
              return r;
            };
          }
          return (v as (...a: unknown[]) => unknown).bind(target);
        },
      });
      await start(async () => 'ok', { backend: brokerDown, minIdleMs: 60_000, maxIdleMs: 60_000 });
      await pollUntil(() => lists >= 1, { what: 'the orphan sweep' });
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      expect(claims).toBe(1);
    });

    it('a claim that waits for work by design (claimWaitMs, SQS\'s long poll) is unanswered only from the end of that wait', async () => {
      const job = await submit();
      const held = gate();
      await start(async () => 'ok', { backend: claimsHeld(held.wait, 20_000) });
      fx.clock.advance(5_000);
      fx.clock.advance(20_000);
      await pollUntil(() => events.some((e) => e.kind === 'store_unavailable'), { what: 'store_unavailable' });
      held.open();
      await inState(job.job_id, 'succeeded');
      // down from the end of the 20 s wait, not from the claim's start
      expect(events.filter((e) => e.kind === 'store_available')).toEqual([{ kind: 'store_available', downMs: 5_000 }]);
    });

    it('regression: a call that blocked before failing counts from its start: "answers again (after 10s)", not "after 2ms"', async () => {
      // better-sqlite3 waits out a held write lock synchronously (10 s): the stall check cannot run
      // meanwhile, and the outage was timed from the failure, so a worker said "the store answers
      // again (after 2ms)" after a 10 s wait.
      const job = await submit();
      let first = true;
      const blocking = new Proxy(fx.backend, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target) as unknown;
          if (typeof v !== 'function') return v;
          if (prop !== 'claim') return (v as (...a: unknown[]) => unknown).bind(target);
          return async (...args: unknown[]) => {
            if (first) {
              first = false;
              fx.clock.advance(10_000);
              throw new RetryLaterError('the SQLite database is busy', 'BACKEND_BUSY');
            }
            return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });
      await start(async () => 'ok', { backend: blocking });
      await inState(job.job_id, 'succeeded');
      expect(events.filter((e) => e.kind === 'store_available')).toEqual([{ kind: 'store_available', downMs: 10_000 }]);
    });

    it('a store whose write lock is held is not said to answer again because a read answers: only a write that goes through says so', async () => {
      // SQLite under a held write lock (an operator's open transaction): reads still answer (WAL),
      // writes wait the busy timeout and fail. The orphan sweep's list() after each failed claim
      // answered, and the worker said "the store answers again" between every two "unavailable".
      const job = await submit();
      let failing = 3;
      const locked = new Proxy(fx.backend, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target) as unknown;
          if (typeof v !== 'function') return v;
          if (prop !== 'claim') return (v as (...a: unknown[]) => unknown).bind(target);
          return async (...args: unknown[]) => {
            if (failing > 0) {
              failing--;
              fx.clock.advance(10_000);
              throw new RetryLaterError('the SQLite database is busy', 'BACKEND_BUSY');
            }
            return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });
      await start(async () => 'ok', { backend: locked, minIdleMs: 1, maxIdleMs: 1 });
      await inState(job.job_id, 'succeeded');
      expect(events.filter((e) => e.kind === 'store_unavailable')).toHaveLength(1);
      // down from the first claim's start until the claim that went through: three 10 s waits
      expect(events.filter((e) => e.kind === 'store_available')).toEqual([{ kind: 'store_available', downMs: 30_000 }]);
    });

    it('takes only the classes it was given', async () => {
      const batch = await submit({ class: 'batch' });
      const interactive = await submit({ class: 'interactive' });
      await start(async () => 'ok', { classes: ['interactive'] });
      await inState(interactive.job_id, 'succeeded');
      expect((await fx.backend.get(batch.job_id))!.state).toBe('queued');
    });
  });
}
