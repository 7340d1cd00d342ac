/**
 * Job-lifecycle rules of the design (DESIGN §2) the other case files do not pin down on their own:
 * `partially_completed` on every way a job can end without success once its effect ledger shows a
 * started effect, the fence on the writes not covered elsewhere (heartbeat, usage), the backoff
 * past the table's first two windows and the attempt cap, what the DLQ entry carries of the effect
 * ledger, and what an idempotency key returns once its job has ended.
 */
import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError, LeaseLostError } from '../../src/core/errors.js';
import type { Job } from '../../src/core/schemas.js';
import { claimOne, iso, makeDead, req, runRecord, useFixture, type MakeFixture } from './fixture.js';

const RUN_MIN = 'run_01JRUNM1NREMA1N1NGAAAAAAAA';
const RUN_FORCE = 'run_01JRUNF0RCEAAAAAAAAAAAAAAA';

export function lifecycleCases(make: MakeFixture): void {
  describe('partially_completed on every non-success ending', () => {
    const fx = useFixture(make);

    it('dead after its attempts ran out, with an effect started on an earlier attempt', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 2 }));
      const l1 = await claimOne(backend);
      await backend.beginEffect(l1, 'send-email');
      const o1 = await backend.fail(l1, { code: 'NETWORK', message: 'reset', retryable: true });
      clock.set((o1 as { runAt: number }).runAt);
      const l2 = await claimOne(backend);
      expect(await backend.fail(l2, { code: 'NETWORK', message: 'reset', retryable: true })).toMatchObject({ kind: 'dead', reason: 'exhausted' });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'dead', outcome: 'partially_completed' });
      expect((await backend.dlqGet(job.job_id))!.partial).toBe(true);
    });

    it('dead because its last lease ran out, with an effect started', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 1 }));
      const lease = await claimOne(backend, 'default', { leaseMs: 5_000 });
      await backend.beginEffect(lease, 'send-email');
      clock.advance(6_000);
      await backend.claim({ queue: 'default', workerId: 'w2', max: 1, leaseMs: 1000 });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'dead', outcome: 'partially_completed', dead: { reason: 'lease_lost' } });
      expect((await backend.dlqGet(job.job_id))!.partial).toBe(true);
    });

    it('cancelled while running: aborted, failed or released after the cancel request', async () => {
      const { backend } = fx();
      const end: Record<string, (l: { jobId: string; fence: number }) => Promise<unknown>> = {
        abort: (l) => backend.abort(l, 'cancelled'),
        fail: (l) => backend.fail(l, { code: 'PROVIDER_429', message: 'slow down', retryable: true }),
        release: (l) => backend.release(l),
      };
      for (const [how, ending] of Object.entries(end)) {
        const { job } = await backend.submit(req({ max_attempts: 3 }));
        const lease = await claimOne(backend);
        await backend.beginEffect(lease, 'send-email');
        await backend.cancel(job.job_id, 'customer withdrew');
        await ending(lease);
        expect(await backend.get(job.job_id), how).toMatchObject({ state: 'cancelled', outcome: 'partially_completed' });
      }
    });

    it('cancelled at once while waiting for a retry after an attempt that started an effect', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'charged');
      await backend.finishEffect(lease, 'charged', { receipt: 'r-1' });
      expect((await backend.fail(lease, { code: 'NETWORK', message: 'reset', retryable: true })).kind).toBe('retry');
      const r = await backend.cancel(job.job_id, 'stop');
      expect(r).toMatchObject({ status: 'cancelled', job: { state: 'cancelled', outcome: 'partially_completed' } });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'cancelled', outcome: 'partially_completed' });
    });

    it('cancelled by the next claim after its lease ran out (no worker left), with an effect started', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const lease = await claimOne(backend, 'default', { leaseMs: 5_000 });
      await backend.beginEffect(lease, 'send-email');
      clock.advance(6_000);
      expect((await backend.cancel(job.job_id, 'worker gone')).status).toBe('cancel_requested');
      await backend.claim({ queue: 'default', workerId: 'w2', max: 1, leaseMs: 1000 });
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'cancelled', outcome: 'partially_completed' });
    });

    it('expired: a retry that would start past the deadline, a deadline passed while waiting, a lease that ran out at the deadline', async () => {
      const { backend, clock } = fx();
      const expectPartialExpired = async (jobId: string, how: string) =>
        expect(await backend.get(jobId), how).toMatchObject({ state: 'expired', outcome: 'partially_completed' });

      // A retryable failure too near the deadline for a retry.
      const near = (await backend.submit(req({ queue: 'near', max_attempts: 5, deadline_at: iso(clock.now() + 4_000) }))).job;
      const l1 = await claimOne(backend, 'near');
      await backend.beginEffect(l1, 'send-email');
      expect((await backend.fail(l1, { code: 'NETWORK', message: 'reset', retryable: true })).kind).toBe('expired');
      await expectPartialExpired(near.job_id, 'no room for a retry');

      // Scheduled for a retry, and the deadline passed before it was claimed again.
      const waiting = (await backend.submit(req({ queue: 'waiting', max_attempts: 5, deadline_at: iso(clock.now() + 16_000) }))).job;
      const l2 = await claimOne(backend, 'waiting');
      await backend.beginEffect(l2, 'send-email');
      const o2 = await backend.fail(l2, { code: 'NETWORK', message: 'reset', retryable: true });
      expect(o2.kind).toBe('retry');
      clock.set(Date.parse(waiting.deadline_at!));
      expect(await backend.claim({ queue: 'waiting', workerId: 'w', max: 1, leaseMs: 1000 })).toEqual([]);
      await expectPartialExpired(waiting.job_id, 'deadline passed while scheduled');

      // The lease, capped at the deadline, ran out there.
      const running = (await backend.submit(req({ queue: 'running', max_attempts: 3, deadline_at: iso(clock.now() + 30_000) }))).job;
      const l3 = await claimOne(backend, 'running', { leaseMs: 60_000 });
      await backend.beginEffect(l3, 'send-email');
      clock.set(Date.parse(running.deadline_at!) + 1);
      await backend.claim({ queue: 'running', workerId: 'w', max: 1, leaseMs: 1000 });
      await expectPartialExpired(running.job_id, 'lease ran out at the deadline');
    });

    it('an effect recorded done counts too: the external system was touched', async () => {
      const { backend } = fx();
      await backend.submit(req({ max_attempts: 1 }));
      const lease = await claimOne(backend);
      await backend.beginEffect(lease, 'charged');
      await backend.finishEffect(lease, 'charged', { receipt: 'r-1' });
      expect(await backend.fail(lease, { code: 'VALIDATION', message: 'bad', retryable: false })).toMatchObject({ kind: 'dead', job: { outcome: 'partially_completed' } });
    });

    it('without an effect, each ending keeps its own outcome: failed, cancelled, expired', async () => {
      const { backend, clock } = fx();
      const failed = (await backend.submit(req({ max_attempts: 1 }))).job;
      await backend.fail(await claimOne(backend), { code: 'VALIDATION', message: 'bad', retryable: false });
      const cancelled = (await backend.submit(req())).job;
      await backend.cancel(cancelled.job_id, null);
      const expired = (await backend.submit(req({ deadline_at: iso(clock.now() + 1000) }))).job;
      clock.advance(1000);
      await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 });
      const outcome = async (j: Job) => (await backend.get(j.job_id))!.outcome;
      expect([await outcome(failed), await outcome(cancelled), await outcome(expired)]).toEqual(['failed', 'cancelled', 'expired']);
    });
  });

  describe('fences on heartbeats and usage', () => {
    const fx = useFixture(make);

    it('a heartbeat or a usage report under an old fence is refused and changes nothing', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 3 }));
      const first = await claimOne(backend, 'default', { leaseMs: 5_000, workerId: 'w-a' });
      clock.advance(5_001);
      await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 1000 });
      clock.set(Date.parse((await backend.get(job.job_id))!.run_at));
      const second = await claimOne(backend, 'default', { leaseMs: 60_000, workerId: 'w-b' });
      const expiresAt = (await backend.get(job.job_id))!.lease!.expires_at;

      expect(await backend.heartbeat([first], 600_000)).toEqual([{ jobId: job.job_id, status: 'lost' }]);
      await expect(backend.addUsage(first, { tokens: 100, cost_usd: 1 })).rejects.toBeInstanceOf(LeaseLostError);
      const after = (await backend.get(job.job_id))!;
      expect(after.lease).toMatchObject({ worker_id: 'w-b', fence: second.fence, expires_at: expiresAt });
      expect(after.attempts.map((a) => a.usage ?? null)).toEqual([null, null]);
      // The holder's own report counts.
      await backend.addUsage(second, { tokens: 100, cost_usd: 1 });
      expect((await backend.get(job.job_id))!.attempts[1]!.usage).toMatchObject({ tokens: 100, cost_usd: 1 });
    });
  });

  describe('backoff past the first two retries, and the attempt cap', () => {
    const fx = useFixture(make);

    it('waits 180-540 s before attempt 4, longer before attempt 5, and sends the job to the DLQ after max_attempts', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ max_attempts: 5 }));
      const windows: Array<[number, number]> = [
        [5_000, 15_000],
        [30_000, 90_000],
        [180_000, 540_000],
        [540_000, 1_620_000],
      ];
      for (const [i, [min, max]] of windows.entries()) {
        const lease = await claimOne(backend);
        expect(lease.job.attempt).toBe(i + 1);
        const at = clock.now();
        const out = await backend.fail(lease, { code: 'PROVIDER_5XX', message: '503', retryable: true });
        expect(out.kind).toBe('retry');
        const delay = (out as { runAt: number }).runAt - at;
        expect(delay, `before attempt ${i + 2}`).toBeGreaterThanOrEqual(min);
        expect(delay, `before attempt ${i + 2}`).toBeLessThanOrEqual(max);
        clock.set((out as { runAt: number }).runAt);
      }
      const last = await claimOne(backend);
      expect(last.job.attempt).toBe(5);
      expect(await backend.fail(last, { code: 'PROVIDER_5XX', message: '503', retryable: true })).toMatchObject({ kind: 'dead', reason: 'exhausted' });
      expect((await backend.dlqGet(job.job_id))!).toMatchObject({ attempts: 5, max_attempts: 5, reason: 'exhausted' });
      clock.advance(3_600_000);
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 1000 })).toEqual([]);
    });
  });

  describe('the DLQ entry carries the effect ledger', () => {
    const fx = useFixture(make);

    it('with each effect, its status, idempotency key and result, and the last checkpoint and trace id', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ max_attempts: 1, trace_id: 'trace-7' }));
      const lease = await claimOne(backend);
      const charged = await backend.beginEffect(lease, 'charged');
      await backend.finishEffect(lease, 'charged', { receipt: 'r-1' });
      const mailed = await backend.beginEffect(lease, 'mailed');
      await backend.checkpoint(lease, { step: 4 });
      await backend.fail(lease, { code: 'PERMISSION', message: '403 from mail provider', retryable: false, workerVersion: 'v9' });
      const entry = (await backend.dlqGet(job.job_id))!;
      expect(entry).toMatchObject({ partial: true, error_code: 'PERMISSION', error_message: '403 from mail provider', worker_version: 'v9' });
      expect(entry.job).toMatchObject({ trace_id: 'trace-7', checkpoint: { step: 4 } });
      const effects = Object.fromEntries(entry.job!.effects.map((e) => [e.key, e]));
      expect(effects.charged).toMatchObject({ status: 'done', idempotency_key: charged.idempotency_key, result: { receipt: 'r-1' } });
      expect(effects.mailed).toMatchObject({ status: 'started', idempotency_key: mailed.idempotency_key });
      expect(Object.keys(effects).sort()).toEqual(['charged', 'mailed']);
    });
  });

  describe('an idempotency key after its job ended', () => {
    const fx = useFixture(make);

    it('returns the ended job (succeeded, dead or cancelled), never a second run; a different body is still refused', async () => {
      const { backend } = fx();
      const done = await backend.submit(req({ idempotency_key: 'k-done', input: 'x' }));
      await backend.complete(await claimOne(backend), 'ok');
      const dead = await backend.submit(req({ idempotency_key: 'k-dead', input: 'x', max_attempts: 1 }));
      await backend.fail(await claimOne(backend), { code: 'VALIDATION', message: 'bad', retryable: false });
      const cancelled = await backend.submit(req({ idempotency_key: 'k-cancelled', input: 'x' }));
      await backend.cancel(cancelled.job.job_id, null);
      for (const [first, state] of [[done, 'succeeded'], [dead, 'dead'], [cancelled, 'cancelled']] as const) {
        const again = await backend.submit(req({ idempotency_key: first.job.idempotency_key!, input: 'x', ...(state === 'dead' ? { max_attempts: 1 } : {}) }));
        expect(again, state).toMatchObject({ created: false, job: { job_id: first.job.job_id, state } });
        const other = await backend.submit(req({ idempotency_key: first.job.idempotency_key!, input: 'y' })).catch((e: unknown) => e);
        expect(other, state).toBeInstanceOf(IdempotencyConflictError);
      }
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 5, leaseMs: 1000 })).toEqual([]);
    });

    it('refuses the same key with another tenant, workflow, class or attempt cap, as with another input', async () => {
      const { backend } = fx();
      const first = await backend.submit(req({ idempotency_key: 'k', tenant_id: 'acme', class: 'batch', max_attempts: 3 }));
      for (const over of [{ tenant_id: 'globex' }, { workflow: 'other_flow:v1' }, { class: 'interactive' as const }, { max_attempts: 7 }]) {
        const err = await backend.submit(req({ idempotency_key: 'k', tenant_id: 'acme', class: 'batch', max_attempts: 3, ...over })).catch((e: unknown) => e);
        expect(err, JSON.stringify(over)).toBeInstanceOf(IdempotencyConflictError);
        expect((err as IdempotencyConflictError).existingJobId).toBe(first.job.job_id);
      }
    });
  });

  describe('redrive drops what cannot finish before its deadline, and partial jobs unless forced', () => {
    const fx = useFixture(make);

    it('re-checked at apply: less than the run\'s min-remaining left is skip:expired; a partial job moves only with includePartial', async () => {
      const f = fx();
      const tight = await makeDead(f, { deadlineInMs: 20 * 60_000 });
      const roomy = await makeDead(f, { deadlineInMs: 60 * 60_000 });
      const partial = await makeDead(f, { withEffect: true });
      const ids = [tight, roomy, partial].map((j) => j.job_id);
      const items = ids.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null }));
      const options = { attempts: { kind: 'reset' as const }, maxRedrives: 3, minRemainingMs: 15 * 60_000, includePartial: false };
      await f.backend.createRun(runRecord({ run_id: RUN_MIN, queue: 'default', action: 'redrive', options }, f.clock.now()), items);
      // 10 minutes later `tight` has 10 minutes left, under the run's 15: it could not finish.
      f.clock.advance(10 * 60_000);
      const out = new Map((await f.backend.applyRunItems({ runId: RUN_MIN, jobIds: ids, now: f.clock.now() })).map((i) => [i.job_id, i]));
      expect(out.get(tight.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:expired' });
      expect(out.get(roomy.job_id)).toMatchObject({ status: 'moved' });
      expect(out.get(partial.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:partial' });
      expect((await f.backend.get(tight.job_id))!.state).toBe('dead');
      expect((await f.backend.get(partial.job_id))!.state).toBe('dead');

      await f.backend.createRun(
        runRecord({ run_id: RUN_FORCE, queue: 'default', action: 'redrive', options: { ...options, minRemainingMs: 0, includePartial: true } }, f.clock.now()),
        [{ job_id: partial.job_id, verdict: 'redrive', detail: null }],
      );
      const [forced] = await f.backend.applyRunItems({ runId: RUN_FORCE, jobIds: [partial.job_id], now: f.clock.now() });
      expect(forced).toMatchObject({ status: 'moved' });
      expect((await f.backend.get(partial.job_id))!).toMatchObject({ state: 'queued', lineage: { redrive_count: 1 } });
    });
  });

  describe('a cost ceiling outlives the attempt that spent it', () => {
    const fx = useFixture(make);

    it('the lease of a later attempt (a retry, a reclaimed lease, a redrive) carries the budget and what earlier attempts spent', async () => {
      const f = fx();
      const { backend, clock } = f;
      const budget = { tokens: 1000, cost_usd: 1 };
      const { job } = await backend.submit(req({ class: 'interactive', max_attempts: 3, budget }));
      const first = await claimOne(backend, 'default', { leaseMs: 10_000 });
      await backend.addUsage(first, { tokens: 600, cost_usd: 0.75 });
      const out = await backend.fail(first, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      clock.set((out as { runAt: number }).runAt);
      const second = await claimOne(backend, 'default', { leaseMs: 10_000 });
      expect(second.envelope.budget).toEqual(budget);
      expect(second.job.attempts.map((a) => a.usage ?? null)).toEqual([{ tokens: 600, cost_usd: 0.75 }, null]);
      await backend.addUsage(second, { tokens: 400, cost_usd: 0.25 });
      clock.advance(10_001);
      await backend.claim({ queue: 'default', workerId: 'w-b', max: 1, leaseMs: 10_000 });
      clock.set(Date.parse((await backend.get(job.job_id))!.run_at));
      const third = await claimOne(backend);
      expect(third.job.attempts.map((a) => a.usage ?? null)).toEqual([{ tokens: 600, cost_usd: 0.75 }, { tokens: 400, cost_usd: 0.25 }, null]);

      const dead = await makeDead(f, { budget, spend: { tokens: 900, cost_usd: 0.5 }, code: 'NETWORK' });
      await backend.createRun(runRecord({ run_id: RUN_FORCE, queue: 'default', action: 'redrive' }, clock.now()), [{ job_id: dead.job_id, verdict: 'redrive', detail: null }]);
      expect((await backend.applyRunItems({ runId: RUN_FORCE, jobIds: [dead.job_id], now: clock.now() }))[0]).toMatchObject({ status: 'moved' });
      const redriven = await claimOne(backend);
      expect(redriven.jobId).toBe(dead.job_id);
      expect(redriven.envelope.budget).toEqual(budget);
      expect(redriven.job.attempts[0]!.usage).toEqual({ tokens: 900, cost_usd: 0.5 });
    });
  });

  describe('the retry budget is per queue; an idempotency key holds under concurrent submits', () => {
    const fx = useFixture(make);

    it("one queue's retry storm does not push another queue's retries later", async () => {
      const { backend, clock } = fx();
      for (let i = 0; i < 12; i++) await backend.submit(req({ queue: 'stormy', max_attempts: 5 }));
      const storm = await backend.claim({ queue: 'stormy', workerId: 'w', max: 12, leaseMs: 60_000 });
      const t = clock.now();
      const delays: number[] = [];
      for (const l of storm) delays.push(((await backend.fail(l, { code: 'PROVIDER_429', message: 'slow down', retryable: true })) as { runAt: number }).runAt - t);
      expect(delays.filter((d) => d >= 65_000).length).toBeGreaterThan(0); // over its budget
      await backend.submit(req({ queue: 'calm', max_attempts: 5 }));
      const calm = await claimOne(backend, 'calm');
      const out = await backend.fail(calm, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      expect((out as { runAt: number }).runAt - clock.now()).toBeLessThanOrEqual(15_000);
    });

    it('concurrent submits with one key make one job: one created, the others get it', async () => {
      const { backend } = fx();
      const results = await Promise.all(Array.from({ length: 8 }, () => backend.submit(req({ idempotency_key: 'race', input: 'same' }))));
      expect(new Set(results.map((r) => r.job.job_id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect((await backend.list({}, { limit: 10 })).items).toHaveLength(1);
    });
  });
}
