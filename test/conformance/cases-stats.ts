/**
 * Stats for `agentq stats` and `/metrics` (issue 8), through the contract.
 *
 * The fields beyond counts are optional in the contract type (the CLI shows
 * "n/a" for a missing one), but every backend must provide each of them for
 * a queue that has jobs: these cases require them, so a new backend inherits
 * the obligation. Only a queue that never had a job may leave them out.
 */
import { describe, expect, it } from 'vitest';
import { FAILURE_CODE_OTHER, STATS_ENDS_MAX_WINDOW_MS, STATS_MAX_FAILURE_CODES, STATS_MAX_TENANTS, STATS_SAMPLE_LIMIT, type Backend, type QueueStats } from '../../src/backend/contract.js';
import { claimOne, iso, makeDead, req, runRecord, useFixture, type MakeFixture } from './fixture.js';

function breakdown(s: QueueStats, dim: 'class' | 'tenant', key: string) {
  return (dim === 'class' ? s.by_class : s.by_tenant)?.find((b) => b.key === key);
}

/** The stats of a queue that has jobs: every optional figure must be there. */
async function fullStats(backend: Backend, queue: string): Promise<Required<QueueStats>> {
  const s = await backend.stats(queue);
  for (const k of ['at', 'backlog_seconds', 'by_class', 'by_tenant', 'totals', 'by_attempt', 'time_in_queue_ms', 'execution_ms', 'recent', 'lease_expired', 'tenants_total', 'failures_by_code', 'usage'] as const) {
    expect(s[k], `stats.${k}`).toBeDefined();
  }
  return s as Required<QueueStats>;
}

/** Depth and DLQ per class and per tenant (up to the tenant cap) add up to the queue's counts. */
export function expectBreakdownsAddUp(s: QueueStats): void {
  for (const dim of ['by_class', 'by_tenant'] as const) {
    const rows = s[dim]!;
    const sum = (f: 'queued' | 'scheduled' | 'running' | 'dlq_size') => rows.reduce((n, b) => n + b[f], 0);
    expect({ queued: sum('queued'), scheduled: sum('scheduled'), running: sum('running'), dead: sum('dlq_size') }, dim).toEqual({
      queued: s.counts.queued,
      scheduled: s.counts.scheduled,
      running: s.counts.running,
      dead: s.counts.dead,
    });
  }
}

export function statsCases(make: MakeFixture): void {
  describe('stats figures', () => {
    const fx = useFixture(make);

    it('counts the tenants with jobs or DLQ entries, also past the ones by_tenant lists', async () => {
      const { backend } = fx();
      const n = STATS_MAX_TENANTS + 3;
      for (let i = 0; i < n; i++) await backend.submit(req({ queue: 'many', tenant_id: `t${i}` }));
      const s = await fullStats(backend, 'many');
      expect(s.by_tenant).toHaveLength(STATS_MAX_TENANTS);
      expect(s.tenants_total).toBe(n);
      await backend.submit(req({ queue: 'few', tenant_id: 'a' }));
      await backend.submit(req({ queue: 'few', tenant_id: 'b' }));
      const few = await fullStats(backend, 'few');
      expect(few.tenants_total).toBe(2);
    });

    it('counts a running job whose lease expired (its worker died) as lease_expired, and as waiting in the oldest age', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ queue: 'orphan', class: 'interactive', tenant_id: 'acme' }));
      await backend.submit(req({ queue: 'orphan', class: 'batch', tenant_id: 'globex', run_at: iso(clock.now() + 3_600_000) }));
      await claimOne(backend, 'orphan', { leaseMs: 5_000 });
      clock.advance(4_000);
      const held = await fullStats(backend, 'orphan');
      expect({ running: held.running, lease_expired: held.lease_expired, oldest: held.oldest_queued_age_ms }).toEqual({ running: 1, lease_expired: 0, oldest: null });
      // No claim on the queue since: the job stays running (reaping is lazy), but nobody runs it.
      clock.advance(7_000);
      const s = await fullStats(backend, 'orphan');
      expect(s.running).toBe(1);
      expect(s.lease_expired).toBe(1);
      expect(s.oldest_queued_age_ms).toBe(6_000);
      expect(breakdown(s, 'class', 'interactive')!.oldest_queued_age_ms).toBe(6_000);
      expect(breakdown(s, 'class', 'batch')!.oldest_queued_age_ms).toBeNull();
      // and in its tenant's (stats --by tenant once showed no oldest job for a tenant whose worker died)
      expect(breakdown(s, 'tenant', 'acme')!.oldest_queued_age_ms).toBe(6_000);
      expect(breakdown(s, 'tenant', 'globex')!.oldest_queued_age_ms).toBeNull();
    });

    it("a lost lease's attempt ends when its lease ran out, not at the claim that reaps it: its execution sample and record say so", async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ queue: 'orphan', max_attempts: 2 }));
      const started = clock.now();
      const lease = await claimOne(backend, 'orphan', { leaseMs: 5_000 });
      clock.advance(2_000);
      await backend.heartbeat([lease], 5_000);
      // The worker is gone for an hour before the next claim on the queue reaps its lease.
      clock.advance(3_600_000);
      expect(await backend.claim({ queue: 'orphan', workerId: 'w2', max: 1, leaseMs: 5_000 })).toEqual([]);
      const s = await fullStats(backend, 'orphan');
      expect(s.counts).toMatchObject({ running: 0, scheduled: 1 });
      expect(s.execution_ms).toEqual([7_000]);
      expect((await backend.get(job.job_id))!.attempts[0]).toMatchObject({ outcome: 'lease_lost', error_code: 'LEASE_EXPIRED', started_at: iso(started), ended_at: iso(started + 7_000) });
    });

    it("a queue's backlog is the sum of its classes', fractions of a second included", async () => {
      const { backend } = fx();
      for (let i = 0; i < 3; i++) await backend.submit(req({ queue: 'q', class: 'batch', estimated_seconds: 0.5 }));
      await backend.submit(req({ queue: 'q', class: 'interactive', estimated_seconds: 0.25 }));
      const s = await fullStats(backend, 'q');
      expect(s.backlog_seconds).toBeCloseTo(1.75, 6);
      expect(s.backlog_seconds).toBeCloseTo(s.by_class.reduce((n, b) => n + b.backlog_seconds, 0), 6);
      expect(breakdown(s, 'class', 'batch')!.backlog_seconds).toBeCloseTo(1.5, 6);
    });

    it('keeps backlog seconds to the millisecond: no float residue (0.1 + 0.2), and 0 once the queue is drained', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'q', class: 'batch', tenant_id: 'acme', estimated_seconds: 0.1 }));
      await backend.submit(req({ queue: 'q', class: 'batch', tenant_id: 'acme', estimated_seconds: 0.2 }));
      const full = await fullStats(backend, 'q');
      expect([full.backlog_seconds, breakdown(full, 'class', 'batch')!.backlog_seconds, breakdown(full, 'tenant', 'acme')!.backlog_seconds]).toEqual([0.3, 0.3, 0.3]);
      await claimOne(backend, 'q');
      await claimOne(backend, 'q');
      // (an alert on agentq_backlog_seconds > 0 must not stay firing on 2.8e-17 s of nothing)
      const drained = await fullStats(backend, 'q');
      expect([drained.backlog_seconds, breakdown(drained, 'class', 'batch')!.backlog_seconds, breakdown(drained, 'tenant', 'acme')!.backlog_seconds]).toEqual([0, 0, 0]);
    });

    it('breaks depth, DLQ, oldest age and backlog down by class and tenant', async () => {
      const f = fx();
      const { backend, clock } = f;
      // The DLQ entry first: makeDead claims the only ready job of the queue.
      await makeDead(f, { queue: 'q', tenant: 'initech' });
      const t0 = clock.now();
      await backend.submit(req({ queue: 'q', class: 'interactive', tenant_id: 'acme', estimated_seconds: 30 }));
      clock.advance(1000);
      await backend.submit(req({ queue: 'q', class: 'batch', tenant_id: 'acme', estimated_seconds: 100 }));
      await backend.submit(req({ queue: 'q', class: 'batch', tenant_id: 'globex', estimated_seconds: 50 }));
      await backend.submit(req({ queue: 'q', class: 'batch', tenant_id: 'globex', estimated_seconds: 20, run_at: iso(clock.now() + 3_600_000) }));
      clock.advance(4000);
      const s = await fullStats(backend, 'q');
      expect(s.counts).toMatchObject({ queued: 3, scheduled: 1, dead: 1 });
      expect(s.oldest_queued_age_ms).toBe(clock.now() - t0);
      expect(s.backlog_seconds).toBeCloseTo(200);
      expectBreakdownsAddUp(s);
      {
        expect(s.by_class.map((b) => b.key).sort()).toEqual(['batch', 'interactive', 'maintenance']);
        expect(breakdown(s, 'class', 'interactive')).toEqual({ key: 'interactive', queued: 1, scheduled: 0, running: 0, dlq_size: 0, oldest_queued_age_ms: 5000, backlog_seconds: 30 });
        expect(breakdown(s, 'class', 'batch')).toMatchObject({ queued: 2, scheduled: 1, dlq_size: 1, oldest_queued_age_ms: 4000 });
        expect(breakdown(s, 'class', 'batch')!.backlog_seconds).toBeCloseTo(170);
        expect(breakdown(s, 'class', 'maintenance')).toMatchObject({ queued: 0, oldest_queued_age_ms: null, backlog_seconds: 0 });
      }
      {
        // Deepest first; a tenant with only DLQ entries is still listed.
        expect(s.by_tenant.map((b) => b.key)).toEqual(['acme', 'globex', 'initech']);
        expect(breakdown(s, 'tenant', 'acme')).toMatchObject({ queued: 2, oldest_queued_age_ms: 5000, backlog_seconds: 130 });
        expect(breakdown(s, 'tenant', 'globex')).toMatchObject({ queued: 1, scheduled: 1, oldest_queued_age_ms: 4000, backlog_seconds: 70 });
        expect(breakdown(s, 'tenant', 'initech')).toMatchObject({ queued: 0, dlq_size: 1, oldest_queued_age_ms: null });
      }
    });

    it('counts outcomes, retries and how each attempt ended', async () => {
      const f = fx();
      const { backend, clock } = f;
      // a: succeeds on attempt 1. b: fails retryably, succeeds on attempt 2. c: permanent failure. d: cancelled while queued.
      const a = (await backend.submit(req({ queue: 'q' }))).job;
      await backend.complete(await claimOne(backend, 'q'), null);
      const b = (await backend.submit(req({ queue: 'q', max_attempts: 3 }))).job;
      const out = await backend.fail(await claimOne(backend, 'q'), { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      expect(out.kind).toBe('retry');
      if (out.kind === 'retry') clock.set(out.runAt);
      await backend.complete(await claimOne(backend, 'q'), null);
      await makeDead(f, { queue: 'q' });
      const d = (await backend.submit(req({ queue: 'q' }))).job;
      await backend.cancel(d.job_id, 'not needed');
      expect([a, b, d].every((j) => j.queue === 'q')).toBe(true);

      const s = await fullStats(backend, 'q');
      expect(s.counts).toMatchObject({ succeeded: 2, dead: 1, cancelled: 1, queued: 0, scheduled: 0, running: 0 });
      expect(s.totals).toEqual({ submitted: 4, attempts: 4, succeeded: 2, retried: 1, dead: 1, expired: 0, cancelled: 1 });
      expect(s.by_attempt).toEqual([
        { attempt: 1, succeeded: 1, failed: 2 },
        { attempt: 2, succeeded: 1, failed: 0 },
      ]);
      // Ended attempts this minute: 2 succeeded, 2 did not (the retried one and the dead one); the cancel ended no attempt.
      expect(s.recent).toMatchObject({ submitted: 4, succeeded: 2, failed: 2 });
      expectBreakdownsAddUp(s);
    });

    it('counts failed attempts by their error code: retried 429s, timeouts, lost leases and permanent failures; successes and releases add none', async () => {
      const f = fx();
      const { backend, clock } = f;
      const retryAt = async (out: Awaited<ReturnType<Backend['fail']>>) => {
        expect(out.kind).toBe('retry');
        if (out.kind === 'retry') clock.set(out.runAt);
      };
      // a: rate-limited twice, retried each time, then succeeds (an on-call engineer must see both 429s).
      await backend.submit(req({ queue: 'q', max_attempts: 3 }));
      await retryAt(await backend.fail(await claimOne(backend, 'q'), { code: 'PROVIDER_429', message: 'slow down', retryable: true }));
      await retryAt(await backend.fail(await claimOne(backend, 'q'), { code: 'PROVIDER_429', message: 'slow down', retryable: true }));
      await backend.complete(await claimOne(backend, 'q'), null);
      // b: times out (retried), is given back by a stopping worker (not a failure), then its worker dies on the last attempt.
      await backend.submit(req({ queue: 'q', max_attempts: 2 }));
      await retryAt(await backend.fail(await claimOne(backend, 'q'), { code: 'TIMEOUT', message: 'took too long', retryable: true }));
      await backend.release(await claimOne(backend, 'q'));
      await claimOne(backend, 'q', { leaseMs: 5_000 });
      clock.advance(6_000);
      expect(await backend.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 1000 })).toEqual([]);
      // c: rejected for good.
      await makeDead(f, { queue: 'q', code: 'VALIDATION' });
      // A queue whose jobs only succeed has no failure to count.
      await backend.submit(req({ queue: 'calm' }));
      await backend.complete(await claimOne(backend, 'calm'), null);

      const s = await fullStats(backend, 'q');
      expect(s.counts).toMatchObject({ succeeded: 1, dead: 2 });
      expect(s.failures_by_code).toEqual([
        { code: 'PROVIDER_429', count: 2 },
        { code: 'LEASE_EXPIRED', count: 1 },
        { code: 'TIMEOUT', count: 1 },
        { code: 'VALIDATION', count: 1 },
      ]);
      // Every failed attempt here ended with a code: the counts add up to the failed attempts.
      const failed = s.by_attempt.reduce((n, a) => n + a.failed, 0);
      expect(s.failures_by_code.reduce((n, c) => n + c.count, 0)).toBe(failed);
      expect((await fullStats(backend, 'calm')).failures_by_code).toEqual([]);
      expect((await backend.stats('never')).failures_by_code ?? []).toEqual([]);
    });

    it(`keeps at most ${STATS_MAX_FAILURE_CODES} error codes per queue, counting later codes under ${FAILURE_CODE_OTHER}`, async () => {
      const { backend } = fx();
      const n = STATS_MAX_FAILURE_CODES + 3;
      const code = (i: number) => `E${String(i).padStart(3, '0')}`;
      for (let i = 0; i < n + 2; i++) await backend.submit(req({ queue: 'q' }));
      const leases = [];
      while (leases.length < n + 2) {
        const got = await backend.claim({ queue: 'q', workerId: 'w', max: 50, leaseMs: 60_000 });
        expect(got.length).toBeGreaterThan(0);
        leases.push(...got);
      }
      // One failure per code, in order: the first STATS_MAX_FAILURE_CODES codes are kept.
      for (let i = 0; i < n; i++) await backend.fail(leases[i]!, { code: code(i), message: 'x', retryable: false });
      // A kept code still counts under its name once the cap is reached; a new one goes to OTHER.
      await backend.fail(leases[n]!, { code: code(0), message: 'x', retryable: false });
      await backend.fail(leases[n + 1]!, { code: 'NEVER_SEEN_BEFORE', message: 'x', retryable: false });

      const s = await fullStats(backend, 'q');
      expect(s.failures_by_code).toHaveLength(STATS_MAX_FAILURE_CODES + 1);
      expect(s.failures_by_code.slice(0, 2)).toEqual([
        { code: FAILURE_CODE_OTHER, count: 4 },
        { code: code(0), count: 2 },
      ]);
      const kept = s.failures_by_code.slice(2).map((c) => c.code);
      expect(kept).toEqual(Array.from({ length: STATS_MAX_FAILURE_CODES - 1 }, (_v, i) => code(i + 1)));
      expect(s.failures_by_code.reduce((t, c) => t + c.count, 0)).toBe(n + 2);
    });

    it('sums reported dollars without float residue, the same on every backend (0.1 + 0.2 is 0.3)', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'q' }));
      const lease = await claimOne(backend, 'q');
      await backend.addUsage(lease, { cost_usd: 0.1 });
      await backend.addUsage(lease, { cost_usd: 0.2 });
      await backend.complete(lease, null);
      expect((await fullStats(backend, 'q')).usage).toEqual({ tokens: 0, cost_usd: 0.3 });
    });

    it('sums reported usage per queue (every attempt, released ones too), zero for a queue without reports', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ queue: 'q', max_attempts: 3 }));
      const first = await claimOne(backend, 'q');
      await backend.addUsage(first, { tokens: 1000, cost_usd: 0.5 });
      await backend.fail(first, { code: 'PROVIDER_429', message: 'x', retryable: true });
      clock.set(Date.parse((await backend.get(job.job_id))!.run_at));
      const second = await claimOne(backend, 'q');
      await backend.addUsage(second, { tokens: 250, cost_usd: 0.25 });
      // A stale fence adds nothing to the totals either.
      await expect(backend.addUsage(first, { tokens: 1e6, cost_usd: 100 })).rejects.toThrow();
      await backend.complete(second, null);
      // Spent then given back (graceful shutdown): the money is spent all the same.
      await backend.submit(req({ queue: 'q' }));
      const released = await claimOne(backend, 'q');
      await backend.addUsage(released, { cost_usd: 0.125 });
      await backend.release(released);
      await backend.submit(req({ queue: 'calm' }));
      await backend.complete(await claimOne(backend, 'calm'), null);

      const s = await fullStats(backend, 'q');
      expect(s.usage).toEqual({ tokens: 1250, cost_usd: 0.875 });
      expect((await fullStats(backend, 'calm')).usage).toEqual({ tokens: 0, cost_usd: 0 });
    });

    it('a DLQ entry expired by a bulk expire is not a second end: the totals and the DLQ rate stay as they were', async () => {
      const f = fx();
      const { backend, clock } = f;
      const dead = await makeDead(f, { queue: 'q', deadlineInMs: 10_000 });
      const before = (await fullStats(backend, 'q')).totals;
      expect(before).toMatchObject({ dead: 1, expired: 0 });
      clock.advance(10_000);
      await backend.createRun(runRecord({ run_id: 'run_01JEXP1REEEEEEEEEEEEEEEEEE', queue: 'q', action: 'expire' }, clock.now()), [{ job_id: dead.job_id, verdict: 'expire', detail: null }]);
      expect((await backend.applyRunItems({ runId: 'run_01JEXP1REEEEEEEEEEEEEEEEEE', jobIds: [dead.job_id], now: clock.now() }))[0]).toMatchObject({ status: 'moved' });
      const s = await fullStats(backend, 'q');
      expect(s.counts).toMatchObject({ dead: 0, expired: 1 });
      expect(s.totals).toEqual(before);
    });

    it('samples time in queue (claimable to claimed) and execution time (claimed to ended)', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ queue: 'q' }));
      clock.advance(3000);
      const lease = await claimOne(backend, 'q');
      clock.advance(7000);
      await backend.complete(lease, null);
      // A retry's wait counts from when it became claimable again, not from submission.
      await backend.submit(req({ queue: 'q', max_attempts: 2 }));
      clock.advance(1000);
      const out = await backend.fail(await claimOne(backend, 'q'), { code: 'NET', message: 'reset', retryable: true });
      if (out.kind !== 'retry') throw new Error('expected a retry');
      clock.set(out.runAt + 500);
      await backend.complete(await claimOne(backend, 'q'), null);

      const s = await fullStats(backend, 'q');
      expect([...s.time_in_queue_ms].sort((x, y) => x - y)).toEqual([500, 1000, 3000]);
      expect([...s.execution_ms].sort((x, y) => x - y)).toEqual([0, 0, 7000]);
    });

    it('a release (a worker stopping) ends no attempt: no execution sample, and the wait counts from the release', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ queue: 'q' }));
      clock.advance(1000);
      const held = await claimOne(backend, 'q');
      clock.advance(5000);
      await backend.release(held);
      clock.advance(2000);
      const lease = await claimOne(backend, 'q');
      clock.advance(3000);
      await backend.complete(lease, null);
      const s = await fullStats(backend, 'q');
      // (SQLite, Redis and SQS gave 3000 here and Redis also the 5000 of the released claim)
      expect(s.execution_ms).toEqual([3000]);
      expect([...s.time_in_queue_ms].sort((x, y) => x - y)).toEqual([1000, 2000]);
    });

    it('a clock stepped back between claim and end (NTP) gives a 0 ms execution sample, never a negative one', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ queue: 'q' }));
      const lease = await claimOne(backend, 'q');
      clock.advance(-8000);
      await backend.complete(lease, null);
      const s = await fullStats(backend, 'q');
      expect(s.execution_ms).toEqual([0]);
    });

    it(`keeps at most ${STATS_SAMPLE_LIMIT} samples, the most recent ones`, async () => {
      const { backend, clock } = fx();
      const n = STATS_SAMPLE_LIMIT + 5;
      for (let i = 0; i < n; i++) await backend.submit(req({ queue: 'q' }));
      clock.advance(1);
      // The wait of every claim, in claim order (each batch is claimed 1 ms later than the one before).
      const waits: number[] = [];
      while (waits.length < n) {
        const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 250, leaseMs: 60_000 });
        expect(leases.length).toBeGreaterThan(0);
        const wait = clock.now() - Date.parse(leases[0]!.job.created_at);
        for (let i = 0; i < leases.length; i++) waits.push(wait);
        clock.advance(1);
      }
      const s = await fullStats(backend, 'q');
      {
        expect(s.time_in_queue_ms).toHaveLength(STATS_SAMPLE_LIMIT);
        // The oldest samples were dropped: what is left is the last STATS_SAMPLE_LIMIT claims.
        const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
        expect(sorted(s.time_in_queue_ms)).toEqual(sorted(waits.slice(-STATS_SAMPLE_LIMIT)));
        expect(sorted(s.time_in_queue_ms)).not.toEqual(sorted(waits.slice(0, STATS_SAMPLE_LIMIT)));
      }
    });

    it('reports recent activity over a window that moves with the clock', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ queue: 'q' }));
      await backend.submit(req({ queue: 'q' }));
      await backend.complete(await claimOne(backend, 'q'), null);
      const s = await fullStats(backend, 'q');
      {
        expect(s.recent).toMatchObject({ submitted: 2, succeeded: 1, failed: 0 });
        expect(s.recent.window_ms).toBeGreaterThanOrEqual(5 * 60_000);
        clock.advance(60 * 60_000);
        expect((await backend.stats('q')).recent).toMatchObject({ submitted: 0, succeeded: 0, failed: 0 });
        // Cumulative totals do not age out.
        expect((await backend.stats('q')).totals).toMatchObject({ submitted: 2, succeeded: 1 });
      }
    });

    it("counts in the recent activity the attempts a worker whose clock runs ahead recorded (as the job ends of dlq check do)", async () => {
      const { backend, clock } = fx();
      const reader = clock.now();
      await backend.submit(req({ queue: 'q' }));
      await backend.submit(req({ queue: 'q', max_attempts: 1 }));
      const [a, b] = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 600_000 });
      // The worker's clock is three minutes ahead of the one reading the stats.
      clock.advance(3 * 60_000);
      await backend.complete(a!, null);
      await backend.fail(b!, { code: 'X', message: 'x', retryable: false });
      clock.set(reader);
      const s = await fullStats(backend, 'q');
      expect(s.recent).toMatchObject({ submitted: 2, succeeded: 1, failed: 1 });
      expect((await backend.stats('q', { endsWindowMs: 3_600_000 })).ends).toMatchObject({ ended: 2, dead: 1 });
    });

    it('counts the jobs that ended, and those that went to the DLQ, over a window that moves with the clock (dlq check --window)', async () => {
      const f = fx();
      const { backend, clock } = f;
      const ends = async (windowMs: number) => {
        const e = (await backend.stats('q', { endsWindowMs: windowMs })).ends;
        expect(e, 'stats.ends').toBeDefined();
        // Whole minutes covering at least the window asked for, and less than a minute more.
        expect(e!.window_ms).toBeGreaterThanOrEqual(windowMs);
        expect(e!.window_ms).toBeLessThan(windowMs + 60_000);
        return { ended: e!.ended, dead: e!.dead };
      };
      // Two hours ago: a job died and one succeeded.
      const old = await makeDead(f, { queue: 'q', deadlineInMs: 60_000 });
      await backend.submit(req({ queue: 'q' }));
      await backend.complete(await claimOne(backend, 'q'), null);
      clock.advance(2 * 3_600_000);
      // Now: one succeeds, one dies after a retry (the retry is no end), one queued job is
      // cancelled, one expires past its deadline (at the next claim), one is still queued.
      await backend.submit(req({ queue: 'q' }));
      await backend.complete(await claimOne(backend, 'q'), null);
      await makeDead(f, { queue: 'q', attempts: 2 });
      const c = (await backend.submit(req({ queue: 'q' }))).job;
      await backend.cancel(c.job_id, null);
      await backend.submit(req({ queue: 'q', deadline_at: iso(clock.now() + 1000) }));
      clock.advance(2000);
      expect(await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
      await backend.submit(req({ queue: 'q' }));
      expect(await ends(15 * 60_000)).toEqual({ ended: 4, dead: 1 });
      expect(await ends(3 * 3_600_000)).toEqual({ ended: 6, dead: 2 });
      // Cleaning the DLQ up is no end: the old entry expired by a bulk run changes nothing.
      const runId = 'run_01JENDSAAAAAAAAAAAAAAAAAAA';
      await backend.createRun(runRecord({ run_id: runId, queue: 'q', action: 'expire' }, clock.now()), [{ job_id: old.job_id, verdict: 'expire', detail: null }]);
      expect((await backend.applyRunItems({ runId, jobIds: [old.job_id], now: clock.now() }))[0]).toMatchObject({ status: 'moved' });
      expect(await ends(3 * 3_600_000)).toEqual({ ended: 6, dead: 2 });
      // An hour later the recent ones are out of a 15-minute window, still in a 24-hour one.
      clock.advance(3_600_000);
      expect(await ends(15 * 60_000)).toEqual({ ended: 0, dead: 0 });
      expect(await ends(STATS_ENDS_MAX_WINDOW_MS)).toEqual({ ended: 6, dead: 2 });
      // Past the longest window, nothing is left; the cumulative totals are untouched.
      clock.advance(STATS_ENDS_MAX_WINDOW_MS);
      await backend.submit(req({ queue: 'q' }));
      await backend.complete(await claimOne(backend, 'q'), null);
      expect(await ends(STATS_ENDS_MAX_WINDOW_MS)).toEqual({ ended: 1, dead: 0 });
      expect((await fullStats(backend, 'q')).totals).toMatchObject({ succeeded: 3, dead: 2, cancelled: 1, expired: 1 });
    });

    it('has nothing but zeros for a queue that never had a job', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'busy' }));
      const s = await backend.stats('never-used');
      expect(s.counts).toEqual({ queued: 0, scheduled: 0, running: 0, succeeded: 0, dead: 0, cancelled: 0, expired: 0 });
      expect(s.oldest_queued_age_ms).toBeNull();
      if (s.totals !== undefined) expect(s.totals.submitted).toBe(0);
    });

    it('keeps the breakdowns right through retries, releases, cancels, redrives, expiry and purges', async () => {
      const f = fx();
      const { backend, clock } = f;
      const check = async (expected: { queued: number; scheduled: number; running: number; dead: number }) => {
        const s = await fullStats(backend, 'q');
        expect(s.counts).toMatchObject(expected);
        expectBreakdownsAddUp(s);
        return s;
      };
      // Three DLQ entries of tenant acme (batch), then live work of globex in two classes.
      const dead = [];
      // (the second with a deadline, so it can be expired once that passes)
      for (let i = 0; i < 3; i++) dead.push(await makeDead(f, { queue: 'q', tenant: 'acme', deadlineInMs: i === 1 ? 60_000 : undefined }));
      await backend.submit(req({ queue: 'q', class: 'interactive', tenant_id: 'globex', max_attempts: 3 }));
      await backend.submit(req({ queue: 'q', class: 'maintenance', tenant_id: 'globex' }));
      const c = (await backend.submit(req({ queue: 'q', class: 'maintenance', tenant_id: 'globex' }))).job;
      await backend.cancel(c.job_id, null);
      await check({ queued: 2, scheduled: 0, running: 0, dead: 3 });

      // A retry (running → scheduled), a release (running → queued), a claim again.
      const first = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 });
      expect(first).toHaveLength(2);
      const interactive = first.find((l) => l.job.class === 'interactive')!;
      const maintenance = first.find((l) => l.job.class === 'maintenance')!;
      await check({ queued: 0, scheduled: 0, running: 2, dead: 3 });
      const out = await backend.fail(interactive, { code: 'NET', message: 'reset', retryable: true });
      expect(out.kind).toBe('retry');
      await backend.release(maintenance);
      let s = await check({ queued: 1, scheduled: 1, running: 0, dead: 3 });
      expect(breakdown(s, 'tenant', 'globex')).toMatchObject({ queued: 1, scheduled: 1, running: 0, dlq_size: 0 });
      expect(breakdown(s, 'class', 'interactive')).toMatchObject({ queued: 0, scheduled: 1 });
      if (out.kind === 'retry') clock.set(out.runAt);
      const again = await backend.claim({ queue: 'q', workerId: 'w', max: 5, leaseMs: 60_000 });
      expect(again).toHaveLength(2);
      s = await check({ queued: 0, scheduled: 0, running: 2, dead: 3 });
      expect(breakdown(s, 'tenant', 'globex')).toMatchObject({ queued: 0, scheduled: 0, running: 2 });
      for (const l of again) await backend.complete(l, null);

      // Bulk runs on the DLQ: redrive one, expire one, purge one.
      clock.advance(120_000);
      const RUNS = { redrive: 'run_01JRUNAAAAAAAAAAAAAAAAAAAA', expire: 'run_01JRUNBBBBBBBBBBBBBBBBBBBB', purge: 'run_01JRUNCCCCCCCCCCCCCCCCCCCC' } as const;
      for (const [i, action] of (['redrive', 'expire', 'purge'] as const).entries()) {
        const runId = RUNS[action];
        await backend.createRun(runRecord({ run_id: runId, queue: 'q', action }, clock.now()), [{ job_id: dead[i]!.job_id, verdict: action, detail: null }]);
        const [item] = await backend.applyRunItems({ runId, jobIds: [dead[i]!.job_id], now: clock.now() });
        expect(item, action).toMatchObject({ status: 'moved' });
      }
      s = await check({ queued: 1, scheduled: 0, running: 0, dead: 0 });
      expect(s.by_tenant.map((b) => [b.key, b.queued, b.dlq_size])).toEqual([['acme', 1, 0]]);
      expect(breakdown(s, 'class', 'batch')).toMatchObject({ queued: 1, dlq_size: 0 });

      // The redriven job runs to success: nothing is left, and no tenant is listed.
      await backend.complete(await claimOne(backend, 'q'), null);
      s = await check({ queued: 0, scheduled: 0, running: 0, dead: 0 });
      expect(s.by_tenant).toEqual([]);
    });
  });
}
