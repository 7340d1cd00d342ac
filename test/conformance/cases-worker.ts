/** Workers: claim, leases and fences, heartbeats, retries, deadlines, cancellation, effects, release. */
import { describe, expect, it } from 'vitest';
import { JobStoppingError, LeaseLostError, RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { MAX_LEASE_MS } from '../../src/backend/checks.js';
import { JobEnvelope } from '../../src/core/schemas.js';
import { allEvents, claimOne, eventTypes, iso, req, useFixture, type MakeFixture } from './fixture.js';

export function workerCases(make: MakeFixture): void {
  describe('claim and leases', () => {
    const fx = useFixture(make);

    it('claims a queued job: running, attempt 1, a fence, a lease, an attempt record and the envelope', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ trace_id: 't-1' }));
      const lease = await claimOne(backend, 'default', { leaseMs: 30_000, workerId: 'w-a', workerVersion: 'v2' });
      expect(lease.jobId).toBe(job.job_id);
      expect(lease.expiresAt).toBe(clock.now() + 30_000);
      expect(lease.job).toMatchObject({ state: 'running', attempt: 1, lease: { worker_id: 'w-a', fence: lease.fence, expires_at: iso(clock.now() + 30_000) } });
      expect(lease.job.attempts).toEqual([
        { attempt: 1, worker_id: 'w-a', worker_version: 'v2', started_at: iso(clock.now()), ended_at: null, outcome: null, error_code: null, error_message: null },
      ]);
      expect(JobEnvelope.parse(lease.envelope)).toMatchObject({ job_id: job.job_id, attempt: 1, trace_id: 't-1' });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'running', attempt: 1 });
      // Hidden while leased.
      expect(await backend.claim({ queue: 'default', workerId: 'w-b', max: 5, leaseMs: 1000 })).toEqual([]);
    });

    it('claims at most max jobs, only from the named queue and classes, oldest first', async () => {
      const { backend } = fx();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await backend.submit(req({ queue: 'q' }))).job.job_id);
      await backend.submit(req({ queue: 'other' }));
      const maint = (await backend.submit(req({ queue: 'q', class: 'maintenance' }))).job;
      const got = await backend.claim({ queue: 'q', workerId: 'w', max: 3, leaseMs: 1000, classes: ['batch'] });
      expect(got.map((l) => l.jobId)).toEqual(ids.slice(0, 3));
      const rest = await backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 1000, classes: ['batch'] });
      expect(rest.map((l) => l.jobId)).toEqual(ids.slice(3));
      const m = await backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 1000 });
      expect(m.map((l) => l.jobId)).toEqual([maint.job_id]);
    });

    // Regression: a lease of 1e15 ms (a unit mixed up) was taken: the job looked leased for millennia.
    it('refuses a lease that is not positive or longer than MAX_LEASE_MS, on claim and heartbeat, and a class that does not exist', async () => {
      const { backend } = fx();
      await backend.submit(req());
      for (const leaseMs of [0, -1, Number.NaN, MAX_LEASE_MS + 1, 1e15, Number.POSITIVE_INFINITY]) {
        await expect(backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs }), String(leaseMs)).rejects.toBeInstanceOf(ValidationError);
      }
      await expect(backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000, classes: ['interative' as never] })).rejects.toBeInstanceOf(ValidationError);
      const lease = await claimOne(backend, 'default', { leaseMs: MAX_LEASE_MS });
      await expect(backend.heartbeat([lease], 1e15)).rejects.toBeInstanceOf(ValidationError);
      expect((await backend.heartbeat([lease], 1000))[0]).toMatchObject({ status: 'ok' });
    });

    it('does not claim a scheduled job before its run_at', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ run_at: iso(clock.now() + 60_000) }));
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 })).toEqual([]);
      clock.advance(60_000);
      expect((await claimOne(backend)).jobId).toBe(job.job_id);
    });

    it('caps the lease at the deadline, and heartbeats never extend past it', async () => {
      const { backend, clock } = fx();
      const deadline = clock.now() + 30_000;
      await backend.submit(req({ deadline_at: iso(deadline) }));
      const lease = await claimOne(backend, 'default', { leaseMs: 60_000 });
      expect(lease.expiresAt).toBe(deadline);
      clock.advance(10_000);
      const [hb] = await backend.heartbeat([lease], 60_000);
      expect(hb).toEqual({ jobId: lease.jobId, status: 'ok', expiresAt: deadline, cancelRequested: false, deadlineReached: false });
      clock.set(deadline);
      const [late] = await backend.heartbeat([lease], 60_000);
      expect(late).toMatchObject({ status: 'ok', deadlineReached: true });
      expect((late as { expiresAt: number }).expiresAt).toBeLessThanOrEqual(deadline);
    });

    it('extends a lease by heartbeat', async () => {
      const { backend, clock } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend, 'default', { leaseMs: 10_000 });
      clock.advance(8_000);
      const [hb] = await backend.heartbeat([lease], 10_000);
      expect(hb).toMatchObject({ status: 'ok', expiresAt: clock.now() + 10_000 });
      expect((await backend.get(lease.jobId))!.lease!.expires_at).toBe(iso(clock.now() + 10_000));
      // Past the original expiry but within the extended lease: not reclaimed.
      clock.advance(5_000);
      expect(await backend.claim({ queue: 'default', workerId: 'w2', max: 1, leaseMs: 1000 })).toEqual([]);
    });

    it('reclaims an expired lease: the attempt counts, the old fence is dead, the job is retried', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const first = await claimOne(backend, 'default', { leaseMs: 10_000, workerId: 'w-a' });
      clock.advance(10_001);
      // Reaped inside claim; retried after backoff like a transient failure.
      expect(await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 10_000 })).toEqual([]);
      const reaped = (await backend.get(job.job_id))!;
      expect(reaped.state).toBe('scheduled');
      expect(reaped.attempts[0]).toMatchObject({ outcome: 'lease_lost', error_code: 'LEASE_EXPIRED' });
      expect(reaped.last_error).toMatchObject({ code: 'LEASE_EXPIRED', retryable: true });
      expect(reaped.attempts[0]!.error_message).toMatch(/lease of w-a expired .*without a heartbeat/);
      const types = await eventTypes(backend, job.job_id);
      expect(types).toEqual(['submitted', 'claimed', 'lease_expired', 'retry_scheduled']);
      clock.set(Date.parse(reaped.run_at));
      const second = await claimOne(backend, 'default', { workerId: 'w-b' });
      expect(second.jobId).toBe(job.job_id);
      expect(second.job.attempt).toBe(2);
      expect(second.fence).toBeGreaterThan(first.fence);
      expect(await backend.heartbeat([first], 10_000)).toEqual([{ jobId: job.job_id, status: 'lost' }]);
      await expect(backend.complete(first, 'late')).rejects.toBeInstanceOf(LeaseLostError);
      expect((await backend.complete(second, 'ok')).state).toBe('succeeded');
    });

    it('a cancel requested after the lease expired (no worker left) is carried out by the next claim: the job ends cancelled', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      await claimOne(backend, 'default', { leaseMs: 5_000 });
      clock.advance(6_000);
      expect((await backend.cancel(job.job_id, 'worker gone')).status).toBe('cancel_requested');
      await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'cancelled', outcome: 'cancelled', lease: null });
    });

    it('sends a job whose lease expired on its last attempt to the DLQ with reason lease_lost', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 1 }));
      await claimOne(backend, 'default', { leaseMs: 5_000 });
      clock.advance(6_000);
      await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 });
      const dead = (await backend.get(job.job_id))!;
      expect(dead.state).toBe('dead');
      expect(dead.dead).toMatchObject({ reason: 'lease_lost', error_code: 'LEASE_EXPIRED' });
      expect((await backend.dlqGet(job.job_id))!.reason).toBe('lease_lost');
    });

    // Regression: a lease capped at the deadline ran out there while its worker was alive and
    // heartbeating, and the attempt said the lease "expired without a heartbeat" (a crash).
    it('a lease that ran out at the deadline says the deadline passed while the job was running, not that the worker stopped heartbeating', async () => {
      const { backend, clock } = fx();
      const deadline = clock.now() + 30_000;
      const { job } = await backend.submit(req({ max_attempts: 3, deadline_at: iso(deadline) }));
      const lease = await claimOne(backend, 'default', { leaseMs: 60_000, workerId: 'w-a' });
      clock.advance(20_000);
      expect((await backend.heartbeat([lease], 60_000))[0]).toMatchObject({ status: 'ok', expiresAt: deadline });
      clock.set(deadline + 1);
      await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 1000 });
      const ended = (await backend.get(job.job_id))!;
      expect(ended).toMatchObject({ state: 'expired', outcome: 'expired' });
      expect(ended.attempts[0]).toMatchObject({ outcome: 'lease_lost', error_code: 'LEASE_EXPIRED' });
      for (const message of [ended.attempts[0]!.error_message, ended.last_error!.message]) {
        expect(message).toMatch(/the job's deadline passed while it was running \(the lease of w-a ended at the deadline\)/);
        expect(message).not.toMatch(/without a heartbeat/);
      }
      // Regression: the `expired` event said only "lease expired and the deadline leaves no room
      // for a retry", less than the job's own error says.
      const expired = (await allEvents(backend, { jobId: job.job_id })).find((e) => e.type === 'expired');
      expect(expired?.data).toMatchObject({ why: "the job's deadline passed while it was running (the lease of w-a ended at the deadline)" });
    });

    it('a lease that ran out without a heartbeat too near the deadline for a retry: the expired event says both, naming the worker', async () => {
      const { backend, clock } = fx();
      const deadline = clock.now() + 30_000;
      const { job } = await backend.submit(req({ max_attempts: 3, deadline_at: iso(deadline) }));
      await claimOne(backend, 'default', { leaseMs: 5_000, workerId: 'w-a' });
      clock.set(deadline - 10);
      await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 1000 });
      const ended = (await backend.get(job.job_id))!;
      expect(ended).toMatchObject({ state: 'expired', outcome: 'expired' });
      expect(ended.last_error!.message).toMatch(/^lease of w-a expired .*without a heartbeat$/);
      const expired = (await allEvents(backend, { jobId: job.job_id })).find((e) => e.type === 'expired');
      expect(expired?.data).toMatchObject({ why: `${ended.last_error!.message}, and the deadline leaves no room for a retry` });
    });

    it('checks the fence on complete, fail, checkpoint, effects, abort and release', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend);
      const stale = { jobId: lease.jobId, fence: lease.fence - 1 };
      await expect(backend.complete(stale, null)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.fail(stale, { code: 'NETWORK', message: 'x', retryable: true })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.checkpoint(stale, { step: 1 })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.beginEffect(stale, 'e')).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.finishEffect(stale, 'e', 1)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.abort(stale, 'cancelled')).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.release(stale)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.complete({ jobId: 'job_01JZZZZZZZZZZZZZZZZZZZZZZZ', fence: 1 }, null)).rejects.toBeInstanceOf(LeaseLostError);
      // Nothing the stale writes tried is visible.
      const job = (await backend.get(lease.jobId))!;
      expect(job).toMatchObject({ state: 'running', checkpoint: null, effects: [] });
      // A finished job refuses further writes even with its last fence (a re-sent ending write aside: below).
      await backend.complete(lease, 'done');
      await expect(backend.checkpoint(lease, 1)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.fail(lease, { code: 'NETWORK', message: 'x', retryable: true })).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.abort(lease, 'cancelled')).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.release(lease)).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('answers an ending write re-sent with the same fence (its first reply lost) as done, not as a lost lease', async () => {
      const { backend, clock } = fx();
      const lease = async () => {
        await backend.submit(req());
        return claimOne(backend);
      };
      const completed = await lease();
      await backend.complete(completed, 'done');
      expect(await backend.complete(completed, 'done')).toMatchObject({ job_id: completed.jobId, state: 'succeeded', result: 'done' });

      const retried = await lease();
      const first = await backend.fail(retried, { code: 'NETWORK', message: 'x', retryable: true });
      expect(first.kind).toBe('retry');
      expect(await backend.fail(retried, { code: 'NETWORK', message: 'x', retryable: true })).toMatchObject({ kind: 'retry', job: { job_id: retried.jobId, state: 'scheduled' } });

      const buried = await lease();
      await backend.fail(buried, { code: 'VALIDATION', message: 'no', retryable: false });
      expect(await backend.fail(buried, { code: 'VALIDATION', message: 'no', retryable: false })).toMatchObject({ kind: 'dead', reason: 'permanent' });

      const aborted = await lease();
      await backend.abort(aborted, 'cancelled');
      expect(await backend.abort(aborted, 'cancelled')).toMatchObject({ state: 'cancelled' });
      // another outcome than the one that applied is not the same write
      await expect(backend.abort(aborted, 'expired')).rejects.toBeInstanceOf(LeaseLostError);
      await expect(backend.complete(aborted, null)).rejects.toBeInstanceOf(LeaseLostError);

      const released = await lease();
      await backend.release(released);
      await backend.release(released);
      expect((await backend.get(released.jobId))!).toMatchObject({ state: 'queued', attempt: 0 });

      // once another claim took the job (a new fence), the old lease's re-sent write is lost
      clock.advance(1);
      const again = await claimOne(backend);
      expect(again.jobId).toBe(released.jobId);
      await expect(backend.release(released)).rejects.toBeInstanceOf(LeaseLostError);
      // each job ended once: one event per ending
      for (const [id, type] of [[completed.jobId, 'succeeded'], [buried.jobId, 'dead'], [aborted.jobId, 'cancelled']] as const) {
        expect((await eventTypes(backend, id)).filter((t) => t === type)).toHaveLength(1);
      }
    });

    it('completes a job with its result and closes the attempt record', async () => {
      const { backend, clock } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend);
      clock.advance(1234);
      const done = await backend.complete(lease, '{"answer":42}');
      expect(done).toMatchObject({ state: 'succeeded', outcome: 'succeeded', result: '{"answer":42}', lease: null, ended_at: iso(clock.now()) });
      expect(done.attempts[0]).toMatchObject({ outcome: 'succeeded', ended_at: iso(clock.now()) });
      expect(await backend.get(lease.jobId)).toEqual(done);
    });

    it('stores checkpoints', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend);
      await backend.checkpoint(lease, { step: 3, notes: ['a'] });
      expect((await backend.get(lease.jobId))!.checkpoint).toEqual({ step: 3, notes: ['a'] });
      expect(await eventTypes(backend, lease.jobId)).toContain('checkpoint');
    });

    // Regression: Redis stored an empty string for a checkpoint with no JSON text (and the job
    // could never be read again); SQLite dropped it silently.
    it('refuses a checkpoint that is not JSON-serialisable with a ValidationError, before anything is written', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend);
      await backend.checkpoint(lease, { step: 1 });
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const bad: unknown[] = [() => 1, Symbol('s'), { toJSON: () => undefined }, { tokens: 10n }, circular];
      for (const data of bad) {
        const err = await backend.checkpoint(lease, data).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as Error).message).toMatch(/checkpoint is not JSON-serialisable/);
      }
      const job = (await backend.get(lease.jobId))!;
      expect(job.checkpoint).toEqual({ step: 1 });
      expect((await eventTypes(backend, lease.jobId)).filter((t) => t === 'checkpoint')).toHaveLength(1);
      await backend.complete(lease, null);
    });
  });

  describe('failures and retries', () => {
    const fx = useFixture(make);

    it('schedules a retryable failure after a jittered backoff (5-15 s, then 30-90 s) and claims it again after', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 5 }));
      const l1 = await claimOne(backend);
      const t1 = clock.now();
      const o1 = await backend.fail(l1, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      expect(o1.kind).toBe('retry');
      const run1 = (o1 as { runAt: number }).runAt;
      expect(run1).toBeGreaterThanOrEqual(t1 + 5_000);
      expect(run1).toBeLessThanOrEqual(t1 + 15_000);
      expect(o1.job).toMatchObject({ state: 'scheduled', run_at: iso(run1), last_error: { code: 'PROVIDER_429', message: 'slow down', retryable: true } });
      expect(o1.job.attempts[0]).toMatchObject({ outcome: 'failed', error_code: 'PROVIDER_429', error_message: 'slow down' });
      clock.set(run1 - 1);
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 })).toEqual([]);
      clock.set(run1);
      const l2 = await claimOne(backend);
      expect(l2.job.attempt).toBe(2);
      const t2 = clock.now();
      const o2 = await backend.fail(l2, { code: 'NETWORK', message: 'reset', retryable: true });
      const run2 = (o2 as { runAt: number }).runAt;
      expect(run2).toBeGreaterThanOrEqual(t2 + 30_000);
      expect(run2).toBeLessThanOrEqual(t2 + 90_000);
      expect(await eventTypes(backend, job.job_id)).toEqual(['submitted', 'claimed', 'retry_scheduled', 'claimed', 'retry_scheduled']);
    });

    it('keeps retries within the queue\'s retry budget: past it, retries are pushed later instead of storming', async () => {
      const { backend, clock } = fx();
      for (let i = 0; i < 12; i++) await backend.submit(req({ max_attempts: 5 }));
      const leases = await backend.claim({ queue: 'default', workerId: 'w', max: 12, leaseMs: 60_000 });
      expect(leases).toHaveLength(12);
      const t = clock.now();
      const delays: number[] = [];
      for (const l of leases) {
        const out = await backend.fail(l, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
        expect(out.kind).toBe('retry');
        delays.push((out as { runAt: number }).runAt - t);
      }
      // Default policy: the first 10 retries in a window are always allowed (5-15 s); 11 retries out of
      // 12 attempts is over 20 % of the traffic, so the rest wait an extra minute.
      for (const d of delays.slice(0, 10)) expect(d).toBeLessThanOrEqual(15_000);
      for (const d of delays.slice(10)) expect(d).toBeGreaterThanOrEqual(65_000);
    });

    it('sends a job that runs out of attempts to the DLQ with full triage information', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 2, trace_id: 'trace-9', tenant_id: 'acme' }));
      const l1 = await claimOne(backend, 'default', { workerVersion: 'v1' });
      await backend.checkpoint(l1, { step: 1 });
      const o1 = await backend.fail(l1, { code: 'TIMEOUT', message: 'tool timed out', retryable: true, workerVersion: 'v1' });
      clock.set((o1 as { runAt: number }).runAt);
      const l2 = await claimOne(backend, 'default', { workerVersion: 'v2' });
      await backend.checkpoint(l2, { step: 2 });
      const o2 = await backend.fail(l2, { code: 'TIMEOUT', message: 'tool timed out again', retryable: true, workerVersion: 'v2' });
      expect(o2).toMatchObject({ kind: 'dead', reason: 'exhausted' });
      const dead = (await backend.get(job.job_id))!;
      expect(dead).toMatchObject({
        state: 'dead',
        outcome: 'failed',
        checkpoint: { step: 2 },
        trace_id: 'trace-9',
        dead: { reason: 'exhausted', dead_at: iso(clock.now()), error_code: 'TIMEOUT', error_message: 'tool timed out again', worker_version: 'v2' },
      });
      expect(dead.attempts.map((a) => [a.attempt, a.worker_version, a.outcome, a.error_code])).toEqual([
        [1, 'v1', 'failed', 'TIMEOUT'],
        [2, 'v2', 'failed', 'TIMEOUT'],
      ]);
      const entry = (await backend.dlqGet(job.job_id))!;
      expect(entry).toMatchObject({
        job_id: job.job_id,
        tenant_id: 'acme',
        reason: 'exhausted',
        error_code: 'TIMEOUT',
        error_message: 'tool timed out again',
        worker_version: 'v2',
        attempts: 2,
        max_attempts: 2,
        partial: false,
        redrive_count: 0,
        malformed: null,
      });
      expect(entry.job).toEqual(dead);
      expect((await eventTypes(backend, job.job_id)).at(-1)).toBe('dead');
    });

    it('sends a permanent failure to the DLQ at once, and marks it partial when an effect started', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ max_attempts: 5 }));
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'create-order');
      const out = await backend.fail(lease, { code: 'PERMISSION', message: '403', retryable: false });
      expect(out).toMatchObject({ kind: 'dead', reason: 'permanent' });
      expect(out.job.outcome).toBe('partially_completed');
      expect((await backend.dlqGet(job.job_id))!.partial).toBe(true);
    });

    it('ends a job expired instead of scheduling a retry past its deadline', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 5, deadline_at: iso(clock.now() + 4_000) }));
      const lease = await claimOne(backend);
      // The first retry waits at least 5 s: it cannot start before the deadline.
      const out = await backend.fail(lease, { code: 'NETWORK', message: 'reset', retryable: true });
      expect(out.kind).toBe('expired');
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'expired', outcome: 'expired' });
    });

    it('never claims a job past its deadline: it ends expired', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ deadline_at: iso(clock.now() + 10_000) }));
      const other = (await backend.submit(req())).job;
      clock.advance(10_000);
      const got = await backend.claim({ queue: 'default', workerId: 'w', max: 5, leaseMs: 1000 });
      expect(got.map((l) => l.jobId)).toEqual([other.job_id]);
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'expired', outcome: 'expired', attempt: 0 });
      expect(await eventTypes(backend, job.job_id)).toEqual(['submitted', 'expired']);
    });
  });

  describe('cancellation, abort and release', () => {
    const fx = useFixture(make);

    it('delivers a cancel request to the running worker through its heartbeat, then ends cancelled', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      expect((await backend.heartbeat([lease], 60_000))[0]).toMatchObject({ cancelRequested: false });
      await backend.cancel(job.job_id, 'customer withdrew');
      expect((await backend.heartbeat([lease], 60_000))[0]).toMatchObject({ status: 'ok', cancelRequested: true });
      const ended = await backend.abort(lease, 'cancelled');
      expect(ended).toMatchObject({ state: 'cancelled', outcome: 'cancelled', lease: null });
      expect(ended.attempts[0]!.outcome).toBe('cancelled');
      expect(await eventTypes(backend, job.job_id)).toEqual(['submitted', 'claimed', 'cancel_requested', 'cancelled']);
    });

    it('reports partially_completed when an aborted job had started an effect', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ deadline_at: iso(clock.now() + 60_000) }));
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'send-email');
      clock.advance(60_000);
      expect((await backend.heartbeat([lease], 60_000))[0]).toMatchObject({ deadlineReached: true });
      expect(await backend.abort(lease, 'expired')).toMatchObject({ state: 'expired', outcome: 'partially_completed' });
    });

    it('ends an aborted job without effects as expired; its expired event says why', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend, 'default', { workerId: 'w-a' });
      expect(await backend.abort(lease, 'expired')).toMatchObject({ state: 'expired', outcome: 'expired' });
      // Regression: the event had no data at all, where every other expired event says why.
      const expired = (await allEvents(backend, { jobId: job.job_id })).find((e) => e.type === 'expired');
      expect(expired?.data).toMatchObject({ why: "the job's deadline passed while it was running; worker w-a stopped its handler" });
    });

    it('a job whose cancel was requested starts no effect, new or retried; a done effect still answers', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'charged');
      await backend.finishEffect(lease, 'charged', { receipt: 'r-1' });
      await backend.beginEffect(lease, 'half-sent');
      await backend.cancel(job.job_id, 'customer withdrew');
      for (const key of ['new-call', 'half-sent']) {
        const err = await backend.beginEffect(lease, key).catch((e: unknown) => e);
        expect(err, key).toBeInstanceOf(JobStoppingError);
        expect((err as JobStoppingError).code).toBe('CANCEL_REQUESTED');
      }
      expect(await backend.beginEffect(lease, 'charged')).toMatchObject({ status: 'done', result: { receipt: 'r-1' } });
      const after = (await backend.get(job.job_id))!;
      expect(after.effects.map((e) => e.key).sort()).toEqual(['charged', 'half-sent']);
    });

    it('a job past its deadline starts no new effect', async () => {
      const { backend, clock } = fx();
      await backend.submit(req({ deadline_at: iso(clock.now() + 60_000) }));
      const lease = await claimOne(backend);
      clock.advance(60_000);
      const err = await backend.beginEffect(lease, 'send-email').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JobStoppingError);
      expect((err as JobStoppingError).code).toBe('DEADLINE_PASSED');
    });

    it('a failure after a cancel request ends the job cancelled: never retried, never in the DLQ', async () => {
      const { backend } = fx();
      for (const retryable of [true, false]) {
        const { job } = await backend.submit(req({ max_attempts: 3 }));
        const lease = await claimOne(backend);
        await backend.cancel(job.job_id, 'stop');
        const out = await backend.fail(lease, { code: retryable ? 'PROVIDER_429' : 'VALIDATION', message: 'failed anyway', retryable });
        expect(out.kind).toBe('cancelled');
        const after = (await backend.get(job.job_id))!;
        expect(after).toMatchObject({ state: 'cancelled', outcome: 'cancelled', lease: null, dead: null });
        expect(after.attempts.at(-1)).toMatchObject({ outcome: 'failed', error_code: retryable ? 'PROVIDER_429' : 'VALIDATION' });
        expect(await backend.dlqGet(job.job_id)).toBeNull();
      }
    });

    it('releases a job without counting the attempt', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ max_attempts: 1 }));
      const lease = await claimOne(backend);
      await backend.release(lease);
      const back = (await backend.get(job.job_id))!;
      expect(back).toMatchObject({ state: 'queued', attempt: 0, lease: null });
      expect(back.attempts[0]!.outcome).toBe('released');
      const again = await claimOne(backend);
      expect(again.job.attempt).toBe(1);
      expect(again.fence).toBeGreaterThan(lease.fence);
      expect(await eventTypes(backend, job.job_id)).toEqual(['submitted', 'claimed', 'released', 'claimed']);
    });
  });

  describe('release after a cancel request', () => {
    const fx = useFixture(make);

    it('ends the job cancelled instead of queueing it again, and the attempt counts', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      await backend.cancel(job.job_id, 'stop');
      await backend.release(lease);
      const ended = (await backend.get(job.job_id))!;
      expect(ended).toMatchObject({ state: 'cancelled', outcome: 'cancelled', attempt: 1, lease: null });
      expect(ended.attempts.map((a) => a.outcome)).toEqual(['cancelled']);
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 })).toEqual([]);
    });
  });

  describe('effects', () => {
    const fx = useFixture(make);

    it('records started, then done with its result, with a stable idempotency key; begin again returns the record', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      const started = await backend.beginEffect(lease, 'charge-card');
      expect(started).toEqual({
        key: 'charge-card',
        status: 'started',
        idempotency_key: `${job.job_id}:charge-card`,
        attempt: 1,
        started_at: iso(clock.now()),
        done_at: null,
        result: null,
      });
      expect(await backend.beginEffect(lease, 'charge-card')).toEqual(started);
      clock.advance(500);
      const done = await backend.finishEffect(lease, 'charge-card', { charge_id: 'ch_1' });
      expect(done).toMatchObject({ status: 'done', done_at: iso(clock.now()), result: { charge_id: 'ch_1' }, idempotency_key: `${job.job_id}:charge-card` });
      expect(await backend.beginEffect(lease, 'charge-card')).toEqual(done);
      // Finishing twice keeps the first result.
      expect(await backend.finishEffect(lease, 'charge-card', { charge_id: 'other' })).toEqual(done);
      expect((await backend.get(job.job_id))!.effects).toEqual([done]);
      const types = await eventTypes(backend, job.job_id);
      expect(types.filter((t) => t === 'effect_started')).toHaveLength(1);
      expect(types.filter((t) => t === 'effect_done')).toHaveLength(1);
    });

    it('refuses an effect result that is not JSON-serialisable with a ValidationError; the effect stays started', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'count-tokens');
      for (const result of [{ tokens: 10n }, () => 1, Symbol('s')]) {
        await expect(backend.finishEffect(lease, 'count-tokens', result)).rejects.toBeInstanceOf(ValidationError);
      }
      expect((await backend.get(job.job_id))!.effects).toEqual([expect.objectContaining({ key: 'count-tokens', status: 'started' })]);
      expect(await backend.finishEffect(lease, 'count-tokens', null)).toMatchObject({ status: 'done', result: null });
    });

    // Regression: Redis checked only the length, so 42 was recorded as the key "42" and null threw a TypeError.
    it('refuses an effect key that is not a string of 1-256 characters with a ValidationError, recording nothing', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      for (const key of ['', 'k'.repeat(257), 42, null, undefined, { key: 'x' }] as unknown as string[]) {
        await expect(backend.beginEffect(lease, key), JSON.stringify(key)).rejects.toThrow(ValidationError);
        await expect(backend.finishEffect(lease, key, 'r'), JSON.stringify(key)).rejects.toThrow(/effect key must be a string of 1-256 characters/);
      }
      expect((await backend.get(job.job_id))!.effects).toEqual([]);
    });

    // Regression: a blank key (a variable holding a space) or one with a control character was
    // recorded, and its idempotency key (job id + ':' + key) went to the external system, a line
    // break and all, as an HTTP header or an argument.
    it('refuses to begin an effect whose key is blank or holds a control character, recording nothing', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const lease = await claimOne(backend);
      for (const key of [' ', '\t\n', 'send\r\nX-Injected: 1', 'key\u0000', 'key\u009b']) {
        await expect(backend.beginEffect(lease, key), JSON.stringify(key)).rejects.toThrow(/effect key must be a string of 1-256 characters, not all blank, without control characters/);
      }
      expect((await backend.get(job.job_id))!.effects).toEqual([]);
      // (spaces and any other text within it are keys as before)
      expect(await backend.beginEffect(lease, 'send invoice #7 → ACME')).toMatchObject({ status: 'started' });
    });

    it('carries effects across attempts: a started effect of a dead attempt is returned to the next one', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const l1 = await claimOne(backend);
      await backend.beginEffect(l1, 'send-email');
      await backend.beginEffect(l1, 'create-order');
      await backend.finishEffect(l1, 'create-order', 'order-1');
      const o = await backend.fail(l1, { code: 'NETWORK', message: 'x', retryable: true });
      clock.set((o as { runAt: number }).runAt);
      const l2 = await claimOne(backend);
      const email = await backend.beginEffect(l2, 'send-email');
      expect(email).toMatchObject({ status: 'started', attempt: 1, idempotency_key: `${job.job_id}:send-email` });
      expect(await backend.beginEffect(l2, 'create-order')).toMatchObject({ status: 'done', result: 'order-1' });
    });
  });

  describe('usage (cost per job)', () => {
    const fx = useFixture(make);
    const usageOf = (a: { usage?: unknown } | undefined) => a?.usage ?? null;

    it('adds reported usage to the attempt record, per attempt, kept when the attempt ends (retried, then succeeded)', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const first = await claimOne(backend);
      await backend.addUsage(first, { tokens: 1200, cost_usd: 0.25 });
      await backend.addUsage(first, { tokens: 800, cost_usd: 0.125 });
      expect(usageOf((await backend.get(job.job_id))!.attempts[0])).toEqual({ tokens: 2000, cost_usd: 0.375 });
      const retry = await backend.fail(first, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      expect(retry.kind).toBe('retry');
      clock.set(Date.parse((await backend.get(job.job_id))!.run_at));
      const second = await claimOne(backend);
      // Either figure alone; tokens only, then dollars only.
      await backend.addUsage(second, { tokens: 300 });
      await backend.addUsage(second, { cost_usd: 0.1 });
      // The stale fence of the first attempt is refused, and adds nothing anywhere.
      await expect(backend.addUsage(first, { tokens: 5, cost_usd: 5 })).rejects.toBeInstanceOf(LeaseLostError);
      await backend.complete(second, 'ok');
      const done = (await backend.get(job.job_id))!;
      expect(done.attempts.map((a) => [a.outcome, usageOf(a)])).toEqual([
        ['failed', { tokens: 2000, cost_usd: 0.375 }],
        ['succeeded', { tokens: 300, cost_usd: 0.1 }],
      ]);
      expect(done.attempts[0]).toMatchObject({ error_code: 'PROVIDER_429', ended_at: expect.any(String) });
      // A finished job refuses usage even under its last fence.
      await expect(backend.addUsage(second, { tokens: 1 })).rejects.toBeInstanceOf(LeaseLostError);
    });

    it('keeps usage on an attempt whose lease expired, and an attempt that reported none has none', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const first = await claimOne(backend, 'default', { leaseMs: 10_000 });
      await backend.addUsage(first, { tokens: 7, cost_usd: 0.5 });
      clock.advance(10_001);
      await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 10_000 });
      const reaped = (await backend.get(job.job_id))!;
      expect(reaped.attempts[0]).toMatchObject({ outcome: 'lease_lost', error_code: 'LEASE_EXPIRED' });
      expect(usageOf(reaped.attempts[0])).toEqual({ tokens: 7, cost_usd: 0.5 });
      clock.set(Date.parse(reaped.run_at));
      const second = await claimOne(backend);
      await backend.complete(second, null);
      const done = (await backend.get(job.job_id))!;
      expect(usageOf(done.attempts[1])).toBeNull();
      expect(usageOf(done.attempts[0])).toEqual({ tokens: 7, cost_usd: 0.5 });
    });

    it('refuses usage that is not non-negative finite figures (tokens whole) with a ValidationError, writing nothing', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const lease = await claimOne(backend);
      const bad: unknown[] = [
        {},
        { tokens: -1 },
        { cost_usd: -0.01 },
        { tokens: Number.NaN },
        { cost_usd: Number.POSITIVE_INFINITY },
        { tokens: 1.5 },
        { tokens: '12' },
        { cost: 1 },
        null,
      ];
      for (const u of bad) await expect(backend.addUsage(lease, u as never), JSON.stringify(u)).rejects.toBeInstanceOf(ValidationError);
      expect(usageOf((await backend.get(lease.jobId))!.attempts[0])).toBeNull();
      // Zero is a figure: recorded as such.
      await backend.addUsage(lease, { tokens: 0 });
      expect(usageOf((await backend.get(lease.jobId))!.attempts[0])).toEqual({ tokens: 0, cost_usd: 0 });
    });
  });

  describe('admission control', () => {
    const fx = useFixture(make, { admission: { batchMaxBacklogSeconds: 300, interactiveMaxBacklogSeconds: 600, tenantMaxBacklogSeconds: 800 } });

    it('refuses batch work over its backlog (exit 75, says why and when) while interactive work is still admitted', async () => {
      const { backend, clock } = fx();
      for (let i = 0; i < 3; i++) await backend.submit(req({ estimated_seconds: 100, tenant_id: `t${i}` }));
      const err = await backend.submit(req({ estimated_seconds: 100, tenant_id: 'tx' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryLaterError);
      expect((err as RetryLaterError).exitCode).toBe(75);
      expect((err as RetryLaterError).message).toMatch(/batch backlog/);
      expect((err as RetryLaterError).message).toMatch(/retry in/);
      // retryAfterMs is a wait (what setTimeout takes), retryAt the time it ends.
      const { retryAfterMs, retryAt } = err as RetryLaterError;
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(300_000);
      expect(retryAt).toBe(clock.now() + retryAfterMs!);
      await expect(backend.submit(req({ estimated_seconds: 100, class: 'interactive', tenant_id: 'ty' }))).resolves.toMatchObject({ created: true });
      // Nothing was stored for the refused submit.
      expect((await backend.list({ class: 'batch' }, { limit: 100 })).items).toHaveLength(3);
    });

    it('admits again once workers drain the backlog', async () => {
      const { backend } = fx();
      for (let i = 0; i < 3; i++) await backend.submit(req({ estimated_seconds: 100, tenant_id: `t${i}` }));
      await expect(backend.submit(req({ estimated_seconds: 100 }))).rejects.toBeInstanceOf(RetryLaterError);
      await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 60_000 });
      await expect(backend.submit(req({ estimated_seconds: 100 }))).resolves.toMatchObject({ created: true });
    });

    it('counts a job without an estimate as 60 s, and limits one tenant across classes', async () => {
      const { backend } = fx();
      for (let i = 0; i < 5; i++) await backend.submit(req({ class: 'interactive', tenant_id: 'big', estimated_seconds: 90 }));
      // Tenant big: 450 s interactive + 60 s (no estimate) + 200 s batch = 710 s; batch backlog 260 s.
      await backend.submit(req({ tenant_id: 'big' }));
      await backend.submit(req({ tenant_id: 'big', estimated_seconds: 200 }));
      // 100 s more fits the interactive class (550 <= 600) but not the tenant (810 > 800).
      const err = await backend.submit(req({ class: 'interactive', tenant_id: 'big', estimated_seconds: 100 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryLaterError);
      expect((err as RetryLaterError).message).toMatch(/tenant big/);
      await expect(backend.submit(req({ class: 'interactive', tenant_id: 'small', estimated_seconds: 50 }))).resolves.toMatchObject({ created: true });
    });

    it('refuses a job over a limit by itself as invalid (exit 2), not as "retry later": it could never be admitted', async () => {
      const { backend } = fx();
      const err = await backend.submit(req({ estimated_seconds: 301 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect(err).toMatchObject({ code: 'ESTIMATE_OVER_LIMIT', exitCode: 2 });
      expect((err as ValidationError).message).toMatch(/this job alone is 301s .* batch backlog limit of queue default \(300s\): it can never be admitted/);
      expect((await backend.list({}, { limit: 10 })).items).toHaveLength(0);
    });

    it('does not refuse a duplicate submit that returns the existing job', async () => {
      const { backend } = fx();
      const first = await backend.submit(req({ estimated_seconds: 300, idempotency_key: 'k' }));
      const again = await backend.submit(req({ estimated_seconds: 300, idempotency_key: 'k' }));
      expect(again).toMatchObject({ created: false, job: { job_id: first.job.job_id } });
    });
  });

  describe('concurrent calls', () => {
    const fx = useFixture(make);

    it('keeps concurrent calls independent: a refused write does not undo the others', async () => {
      const { backend } = fx();
      for (let i = 0; i < 4; i++) await backend.submit(req());
      const leases = await backend.claim({ queue: 'default', workerId: 'w', max: 4, leaseMs: 60_000 });
      const stale = { jobId: leases[0]!.jobId, fence: leases[0]!.fence + 100 };
      const results = await Promise.allSettled([
        backend.complete(leases[1]!, 'a'),
        backend.complete(stale, 'stale'),
        backend.submit(req({ input: 'new' })),
        backend.checkpoint(leases[2]!, { step: 1 }),
        backend.submit(req({ workflow: 'bad' })),
        backend.fail(leases[3]!, { code: 'VALIDATION', message: 'no', retryable: false }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      expect((await backend.get(leases[0]!.jobId))!.state).toBe('running');
      expect((await backend.get(leases[1]!.jobId))!.state).toBe('succeeded');
      expect((await backend.get(leases[2]!.jobId))!.checkpoint).toEqual({ step: 1 });
      expect((await backend.get(leases[3]!.jobId))!.state).toBe('dead');
      expect((await backend.list({ states: ['queued'] }, { limit: 10 })).items.map((j) => j.input)).toEqual(['new']);
    });
  });

  describe('events of worker transitions', () => {
    const fx = useFixture(make);

    it('records claimed with the worker, fence and lease expiry', async () => {
      const { backend } = fx();
      await backend.submit(req());
      // (a worker id JSON must escape)
      const workerId = 'w-7 "east" \\';
      const lease = await claimOne(backend, 'default', { workerId });
      const claimed = (await allEvents(backend, { jobId: lease.jobId })).find((e) => e.type === 'claimed')!;
      expect(claimed.data).toEqual({ worker_id: workerId, fence: lease.fence, lease_expires_at: new Date(lease.expiresAt).toISOString() });
    });
  });
}
