/** Bulk runs: audit record, ledger, exactly-once apply, locks; and stats. */
import { describe, expect, it } from 'vitest';
import type { LockHolder } from '../../src/backend/contract.js';
import { NotFoundError } from '../../src/core/errors.js';
import { allEvents, claimOne, eventTypes, iso, makeDead, req, runRecord, useFixture, type MakeFixture } from './fixture.js';

const RUN_A = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';
const RUN_B = 'run_01JRUNBBBBBBBBBBBBBBBBBBBB';

function holder(runId: string | null, owner = 'alice@host pid 1'): LockHolder {
  return { owner, host: 'host', pid: 1, run_id: runId, acquired_at: '2026-01-01T00:00:00.000Z' };
}

export function runCases(make: MakeFixture): void {
  describe('runs and ledger', () => {
    const fx = useFixture(make);

    it('stores the audit record and the frozen plan; lists runs newest first and the ledger in job-id order', async () => {
      const f = fx();
      const a = await makeDead(f);
      const b = await makeDead(f);
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive', reason: 'fixed 429s', filters: { errorCodes: ['X'] } }, f.clock.now()), [
        { job_id: b.job_id, verdict: 'skip:partial', detail: 'effect started' },
        { job_id: a.job_id, verdict: 'redrive', detail: null },
      ]);
      await f.backend.createRun(runRecord({ run_id: RUN_B, queue: 'other', action: 'purge' }, f.clock.now()), []);
      const run = (await f.backend.getRun(RUN_A))!;
      expect(run).toMatchObject({ run_id: RUN_A, action: 'redrive', reason: 'fixed 429s', filters: { errorCodes: ['X'] }, status: 'planned', user: 'oncall' });
      expect(run.counts).toEqual({ planned: 1, moved: 0, skipped: 1, failed: 0 });
      expect(await f.backend.getRun('run_01JNOPENOPENOPENOPENOPENOP')).toBeNull();
      const ledger = await f.backend.ledger(RUN_A, { limit: 10 });
      expect(ledger.items.map((i) => [i.job_id, i.verdict, i.status, i.detail])).toEqual(
        [
          [a.job_id, 'redrive', 'planned', null],
          [b.job_id, 'skip:partial', 'skipped', 'effect started'],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      expect((await f.backend.ledger(RUN_A, { limit: 10 }, 'skipped')).items.map((i) => i.job_id)).toEqual([b.job_id]);
      expect((await f.backend.listRuns({}, { limit: 10 })).items.map((r) => r.run_id)).toEqual([RUN_B, RUN_A]);
      expect((await f.backend.listRuns({ queue: 'default' }, { limit: 10 })).items.map((r) => r.run_id)).toEqual([RUN_A]);
      const p1 = await f.backend.listRuns({}, { limit: 1 });
      const p2 = await f.backend.listRuns({}, { limit: 1, cursor: p1.next_cursor });
      expect([...p1.items, ...p2.items].map((r) => r.run_id)).toEqual([RUN_B, RUN_A]);
      expect(p2.next_cursor).toBeNull();
      const updated = await f.backend.updateRun(RUN_A, { status: 'running', updated_at: iso(f.clock.now() + 5) });
      expect(updated).toMatchObject({ status: 'running', updated_at: iso(f.clock.now() + 5) });
      expect((await f.backend.getRun(RUN_A))!.status).toBe('running');
      await expect(f.backend.updateRun('run_01JNOPENOPENOPENOPENOPENOP', { status: 'completed' })).rejects.toBeInstanceOf(NotFoundError);
    });

    // Regression: Redis answered a run that does not exist with NOT_FOUND where SQLite said RUN_NOT_FOUND,
    // and SQLite listed its ledger as empty where Redis refused it; the README tells library users to branch on the code.
    it('a run that does not exist is RUN_NOT_FOUND on every backend: updateRun, applyRunItems and ledger', async () => {
      const f = fx();
      const missing = 'run_01JNOPENOPENOPENOPENOPENOP';
      await expect(f.backend.updateRun(missing, { status: 'completed' })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await expect(f.backend.applyRunItems({ runId: missing, jobIds: [], now: f.clock.now() })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await expect(f.backend.ledger(missing, { limit: 10 })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('redrives exactly once: moved with lineage and attempts reset; applying again changes nothing', async () => {
      const f = fx();
      const dead = await makeDead(f, { attempts: 2, code: 'PROVIDER_429' });
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive' }, f.clock.now()), [{ job_id: dead.job_id, verdict: 'redrive', detail: null }]);
      f.clock.advance(1000);
      const [item] = await f.backend.applyRunItems({ runId: RUN_A, jobIds: [dead.job_id], now: f.clock.now() });
      expect(item).toMatchObject({ job_id: dead.job_id, status: 'moved', verdict: 'redrive' });
      const job = (await f.backend.get(dead.job_id))!;
      expect(job).toMatchObject({
        state: 'queued',
        attempt: 0,
        dead: null,
        outcome: null,
        run_at: iso(f.clock.now()),
        lineage: { redrive_count: 1, redriven_at: iso(f.clock.now()), redrive_run: RUN_A },
      });
      // History is kept: the attempt records of the first life.
      expect(job.attempts).toHaveLength(2);
      expect(await f.backend.dlqGet(dead.job_id)).toBeNull();
      expect((await eventTypes(f.backend, dead.job_id)).at(-1)).toBe('redriven');
      // A resumed run re-applies the same ids: nothing is doubled.
      const [again] = await f.backend.applyRunItems({ runId: RUN_A, jobIds: [dead.job_id], now: f.clock.now() });
      expect(again).toMatchObject({ status: 'moved' });
      expect((await f.backend.get(dead.job_id))!.lineage.redrive_count).toBe(1);
      expect((await eventTypes(f.backend, dead.job_id)).filter((t) => t === 'redriven')).toHaveLength(1);
      expect((await f.backend.getRun(RUN_A))!.counts).toEqual({ planned: 0, moved: 1, skipped: 0, failed: 0 });
      // The redriven job runs again with its fresh attempts.
      const lease = await claimOne(f.backend);
      expect(lease.jobId).toBe(dead.job_id);
      expect(lease.job.attempt).toBe(1);
    });

    it('grants extra attempts instead of a reset when the run says so', async () => {
      const f = fx();
      const dead = await makeDead(f, { attempts: 2 });
      await f.backend.createRun(
        runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive', options: { attempts: { kind: 'extra', n: 3 }, maxRedrives: 3, minRemainingMs: 0, includePartial: false } }, f.clock.now()),
        [{ job_id: dead.job_id, verdict: 'redrive', detail: null }],
      );
      await f.backend.applyRunItems({ runId: RUN_A, jobIds: [dead.job_id], now: f.clock.now() });
      expect(await f.backend.get(dead.job_id)).toMatchObject({ attempt: 2, max_attempts: 5 });
    });

    it('re-checks every item at apply time: gone, expired since, partial, quarantined', async () => {
      const f = fx();
      const gone = await makeDead(f);
      const expiring = await makeDead(f, { deadlineInMs: 60_000 });
      const partial = await makeDead(f, { withEffect: true });
      const fine = await makeDead(f);
      const items = [gone, expiring, partial, fine].map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null }));
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive' }, f.clock.now()), items);
      // Between plan and apply: another run took `gone` out of the DLQ, and time passed `expiring`'s deadline.
      await f.backend.createRun(runRecord({ run_id: RUN_B, queue: 'default', action: 'redrive' }, f.clock.now()), [{ job_id: gone.job_id, verdict: 'redrive', detail: null }]);
      await f.backend.applyRunItems({ runId: RUN_B, jobIds: [gone.job_id], now: f.clock.now() });
      f.clock.advance(60_000);
      const out = await f.backend.applyRunItems({ runId: RUN_A, jobIds: items.map((i) => i.job_id), now: f.clock.now() });
      const byId = new Map(out.map((i) => [i.job_id, i]));
      expect(byId.get(gone.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:not_in_dlq' });
      expect(byId.get(expiring.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:expired' });
      expect(byId.get(partial.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:partial' });
      expect(byId.get(fine.job_id)).toMatchObject({ status: 'moved' });
      expect(byId.get(expiring.job_id)!.detail).toEqual(expect.any(String));
      expect((await f.backend.get(expiring.job_id))!.state).toBe('dead');
      expect((await f.backend.get(partial.job_id))!.state).toBe('dead');
      expect((await f.backend.get(gone.job_id))!.lineage.redrive_count).toBe(1);
      expect((await f.backend.getRun(RUN_A))!.counts).toEqual({ planned: 0, moved: 1, skipped: 3, failed: 0 });
    });

    it('an entry damaged after the plan is skip:malformed at apply and left in place: a plan that says redrive or purge, and a resumed run', async () => {
      const f = fx();
      for (const action of ['redrive', 'purge'] as const) {
        // (a queue each: the redriven job of the first round would be claimed by the second's makeDead)
        const queue = action === 'redrive' ? 'research' : 'archive';
        // An edited plan: the entry was damaged before the run was made, the plan file still says act.
        const edited = await makeDead(f, { queue });
        // A resumed run: the run was made (and partly applied) while the entry was sound.
        const first = await makeDead(f, { queue });
        const later = await makeDead(f, { queue });
        f.clock.advance(1000); // the plan reads the DLQ after the deaths (no record is written in its millisecond)
        const runId = action === 'redrive' ? RUN_A : RUN_B;
        await f.backend.createRun(runRecord({ run_id: runId, queue, action, options: { plannedAt: iso(f.clock.now()) } }, f.clock.now()), [
          { job_id: edited.job_id, verdict: action, detail: null },
          { job_id: first.job_id, verdict: action, detail: null },
          { job_id: later.job_id, verdict: action, detail: null },
        ]);
        await f.damageDlqEntry(edited.job_id);
        const [moved] = await f.backend.applyRunItems({ runId, jobIds: [first.job_id], now: f.clock.now() });
        expect(moved).toMatchObject({ status: 'moved' });
        await f.damageDlqEntry(later.job_id); // between the kill and the --resume
        const out = await f.backend.applyRunItems({ runId, jobIds: [edited.job_id, later.job_id], now: f.clock.now() });
        for (const id of [edited.job_id, later.job_id]) {
          expect(out.find((i) => i.job_id === id)).toMatchObject({ status: 'skipped', verdict: 'skip:malformed' });
          const entry = (await f.backend.dlqGet(id))!;
          expect(entry.malformed).toEqual(expect.any(String)); // still in the DLQ, still reported
        }
      }
    });

    it('a job that died again after the plan is skip:changed: the plan judged another death', async () => {
      const f = fx();
      const again = await makeDead(f, { code: 'PROVIDER_429' });
      const steady = await makeDead(f, { code: 'PROVIDER_429' });
      const plannedAt = f.clock.now();
      f.clock.advance(1000);
      // After the plan: another run redrove it, and it died again with another error.
      await f.backend.createRun(runRecord({ run_id: RUN_B, queue: 'default', action: 'redrive' }, f.clock.now()), [{ job_id: again.job_id, verdict: 'redrive', detail: null }]);
      await f.backend.applyRunItems({ runId: RUN_B, jobIds: [again.job_id], now: f.clock.now() });
      const lease = await claimOne(f.backend);
      await f.backend.fail(lease, { code: 'VALIDATION', message: 'bad input', retryable: false });
      f.clock.advance(1000);
      const items = [again, steady].map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null }));
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive', options: { plannedAt: iso(plannedAt) } }, f.clock.now()), items);
      const out = await f.backend.applyRunItems({ runId: RUN_A, jobIds: items.map((i) => i.job_id), now: f.clock.now() });
      expect(out.find((i) => i.job_id === again.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:changed', detail: expect.stringContaining('after the plan') });
      expect(out.find((i) => i.job_id === steady.job_id)).toMatchObject({ status: 'moved' });
      expect((await f.backend.get(again.job_id))!.state).toBe('dead');
    });

    it("never acts on a job of another queue, whatever the plan says (a run holds its own queue's lock only)", async () => {
      const f = fx();
      const mine = await makeDead(f);
      const theirs = await makeDead(f, { queue: 'other' });
      // A plan file edited to list another queue's dead job under this run's queue.
      const items = [mine, theirs].map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null }));
      for (const [runId, action] of [[RUN_A, 'redrive'], [RUN_B, 'purge']] as const) {
        await f.backend.createRun(runRecord({ run_id: runId, queue: 'default', action }, f.clock.now()), action === 'redrive' ? items : [{ ...items[1]!, verdict: 'purge' }]);
        const out = await f.backend.applyRunItems({ runId, jobIds: items.map((i) => i.job_id), now: f.clock.now() });
        const byId = new Map(out.map((i) => [i.job_id, i]));
        expect(byId.get(theirs.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:not_in_dlq' });
        expect(byId.get(theirs.job_id)!.detail).toEqual(expect.any(String));
        const still = (await f.backend.get(theirs.job_id))!;
        expect(still.state).toBe('dead');
        expect(still.lineage.redrive_count).toBe(0);
        expect((await f.backend.dlqGet(theirs.job_id))?.queue).toBe('other');
      }
      expect((await f.backend.get(mine.job_id))!.state).toBe('queued');
    });

    it('quarantines a job redriven too often', async () => {
      const f = fx();
      const dead = await makeDead(f);
      const opts = { attempts: { kind: 'reset' as const }, maxRedrives: 1, minRemainingMs: 0, includePartial: false };
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive', options: opts }, f.clock.now()), [{ job_id: dead.job_id, verdict: 'redrive', detail: null }]);
      await f.backend.applyRunItems({ runId: RUN_A, jobIds: [dead.job_id], now: f.clock.now() });
      // It fails again and goes back to the DLQ.
      const lease = await claimOne(f.backend);
      await f.backend.fail(lease, { code: 'VALIDATION', message: 'still bad', retryable: false });
      await f.backend.createRun(runRecord({ run_id: RUN_B, queue: 'default', action: 'redrive', options: opts }, f.clock.now()), [{ job_id: dead.job_id, verdict: 'redrive', detail: null }]);
      const [item] = await f.backend.applyRunItems({ runId: RUN_B, jobIds: [dead.job_id], now: f.clock.now() });
      expect(item).toMatchObject({ status: 'skipped', verdict: 'skip:quarantined' });
      expect((await f.backend.dlqGet(dead.job_id))!.redrive_count).toBe(1);
    });

    it('skips a job whose budget is used up (a redrive would fail it again at once); one with budget left is redriven', async () => {
      const f = fx();
      const spent = await makeDead(f, { budget: { tokens: 1000, cost_usd: null }, spend: { tokens: 1000, cost_usd: 0.5 } });
      const left = await makeDead(f, { budget: { tokens: 1000, cost_usd: 1 }, spend: { tokens: 999, cost_usd: 0.5 } });
      const items = [spent, left].map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null }));
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive' }, f.clock.now()), items);
      const out = await f.backend.applyRunItems({ runId: RUN_A, jobIds: items.map((i) => i.job_id), now: f.clock.now() });
      const byId = new Map(out.map((i) => [i.job_id, i]));
      expect(byId.get(spent.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:over_budget', detail: 'its budget is used up (it spent 1000 tokens of its 1000): it would fail again at once' });
      expect(byId.get(left.job_id)).toMatchObject({ status: 'moved', verdict: 'redrive' });
      expect((await f.backend.get(spent.job_id))!.state).toBe('dead');
      expect((await f.backend.get(left.job_id))!.state).toBe('queued');
    });

    it('purges: the job is gone, with a purged event; expire: dead becomes expired, out of the DLQ', async () => {
      const f = fx();
      // three attempts: claims and retries interleaved in the history
      const p = await makeDead(f, { attempts: 3 });
      const e = await makeDead(f, { deadlineInMs: 10_000 });
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'purge' }, f.clock.now()), [{ job_id: p.job_id, verdict: 'purge', detail: null }]);
      expect((await f.backend.applyRunItems({ runId: RUN_A, jobIds: [p.job_id], now: f.clock.now() }))[0]).toMatchObject({ status: 'moved' });
      expect(await f.backend.get(p.job_id)).toBeNull();
      expect(await f.backend.dlqGet(p.job_id)).toBeNull();
      // the job's history outlives it, whole and in order: the job's events of the queue's stream
      const history = await allEvents(f.backend, { jobId: p.job_id });
      expect(history.map((ev) => ev.type)).toEqual([
        'submitted', 'claimed', 'retry_scheduled', 'claimed', 'retry_scheduled', 'claimed', 'dead', 'purged',
      ]);
      const streamed = (await allEvents(f.backend, { queue: 'default' })).filter((ev) => ev.job_id === p.job_id);
      expect(history.map((ev) => ev.seq)).toEqual(streamed.map((ev) => ev.seq));

      f.clock.advance(10_000);
      await f.backend.createRun(runRecord({ run_id: RUN_B, queue: 'default', action: 'expire' }, f.clock.now()), [{ job_id: e.job_id, verdict: 'expire', detail: null }]);
      expect((await f.backend.applyRunItems({ runId: RUN_B, jobIds: [e.job_id], now: f.clock.now() }))[0]).toMatchObject({ status: 'moved' });
      expect(await f.backend.get(e.job_id)).toMatchObject({ state: 'expired', outcome: 'expired' });
      expect(await f.backend.dlqGet(e.job_id)).toBeNull();
    });

    // Regression: Redis kept the purged job's idempotency key, so a resubmit with it was refused as
    // not found for ever (SQLite freed it with the row).
    it('a purge frees the idempotency key of the job: a resubmit with it creates a new job', async () => {
      const f = fx();
      const body = req({ idempotency_key: 'order-1', tenant_id: 'acme', max_attempts: 1 });
      const { job } = await f.backend.submit(body);
      const lease = await claimOne(f.backend);
      expect((await f.backend.fail(lease, { code: 'VALIDATION', message: 'bad', retryable: false })).kind).toBe('dead');
      // still held while the job is in the DLQ
      expect(await f.backend.submit(body)).toMatchObject({ created: false, job: { job_id: job.job_id } });
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'purge' }, f.clock.now()), [{ job_id: job.job_id, verdict: 'purge', detail: null }]);
      expect((await f.backend.applyRunItems({ runId: RUN_A, jobIds: [job.job_id], now: f.clock.now() }))[0]).toMatchObject({ status: 'moved' });
      const again = await f.backend.submit({ ...body, input: 'a different body is fine: the key is free' });
      expect(again.created).toBe(true);
      expect(again.job.job_id).not.toBe(job.job_id);
      expect(again.job).toMatchObject({ state: 'queued', idempotency_key: 'order-1' });
      // and it is the new job's now
      expect(await f.backend.submit({ ...body, input: 'a different body is fine: the key is free' })).toMatchObject({ created: false, job: { job_id: again.job.job_id } });
    });

    it('leaves ids that are not in the run alone', async () => {
      const f = fx();
      const inRun = await makeDead(f);
      const outside = await makeDead(f);
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'purge' }, f.clock.now()), [{ job_id: inRun.job_id, verdict: 'purge', detail: null }]);
      const out = await f.backend.applyRunItems({ runId: RUN_A, jobIds: [outside.job_id, inRun.job_id], now: f.clock.now() });
      expect(out.map((i) => i.job_id)).toEqual([inRun.job_id]);
      expect((await f.backend.get(outside.job_id))!.state).toBe('dead');
      await expect(f.backend.applyRunItems({ runId: 'run_01JNOPENOPENOPENOPENOPENOP', jobIds: [], now: 0 })).rejects.toBeInstanceOf(NotFoundError);
    });

    it('pages the ledger', async () => {
      const f = fx();
      const items = [];
      for (let i = 0; i < 7; i++) items.push({ job_id: (await makeDead(f)).job_id, verdict: 'redrive' as const, detail: null });
      await f.backend.createRun(runRecord({ run_id: RUN_A, queue: 'default', action: 'redrive' }, f.clock.now()), items);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await f.backend.ledger(RUN_A, { limit: 3, cursor });
        seen.push(...page.items.map((i) => i.job_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual(items.map((i) => i.job_id).sort());
    });
  });

  describe('locks', () => {
    const fx = useFixture(make);

    it('holds one lock per queue, names the holder, releases only for its run, and can be broken', async () => {
      const { backend } = fx();
      expect(await backend.readLock('q')).toBeNull();
      expect(await backend.acquireLock('q', holder(RUN_A))).toEqual({ acquired: true });
      expect(await backend.acquireLock('q', holder(RUN_B, 'bob@host pid 2'))).toEqual({ acquired: false, holder: holder(RUN_A) });
      expect(await backend.acquireLock('other', holder(RUN_B))).toEqual({ acquired: true });
      expect(await backend.readLock('q')).toEqual(holder(RUN_A));
      await backend.releaseLock('q', RUN_B);
      expect(await backend.readLock('q')).toEqual(holder(RUN_A));
      await backend.releaseLock('q', RUN_A);
      expect(await backend.readLock('q')).toBeNull();
      await backend.acquireLock('q', holder(RUN_A));
      expect(await backend.breakLock('q')).toEqual(holder(RUN_A));
      expect(await backend.breakLock('q')).toBeNull();
      expect(await backend.acquireLock('q', holder(null))).toEqual({ acquired: true });
      await backend.releaseLock('q', null);
      expect(await backend.readLock('q')).toBeNull();
    });

    it('breaks a lock only while the holder it was judged by still holds it (two operators breaking one dead lock at once)', async () => {
      const { backend } = fx();
      // Both saw the dead holder A; the first broke its lock and took the queue as B.
      await backend.acquireLock('q', holder(RUN_B, 'bob@host pid 2'));
      expect(await backend.breakLock('q', holder(RUN_A))).toBeNull();
      expect(await backend.readLock('q')).toEqual(holder(RUN_B, 'bob@host pid 2'));
      // the same run id taken again later is another holder too (acquired at another time)
      expect(await backend.breakLock('q', { ...holder(RUN_B, 'bob@host pid 2'), acquired_at: '2026-01-01T00:00:01.000Z' })).toBeNull();
      expect(await backend.breakLock('q', holder(RUN_B, 'bob@host pid 2'))).toEqual(holder(RUN_B, 'bob@host pid 2'));
      expect(await backend.readLock('q')).toBeNull();
      expect(await backend.breakLock('q', holder(RUN_B, 'bob@host pid 2'))).toBeNull();
    });
  });

  describe('stats', () => {
    const fx = useFixture(make);

    it('counts jobs per state, the DLQ and running jobs, and the age of the oldest claimable job', async () => {
      const f = fx();
      const { backend, clock } = f;
      expect(await backend.stats('q')).toEqual({
        queue: 'q',
        counts: { queued: 0, scheduled: 0, running: 0, succeeded: 0, dead: 0, cancelled: 0, expired: 0 },
        dlq_size: 0,
        oldest_queued_age_ms: null,
        running: 0,
      });
      await makeDead(f, { queue: 'q' });
      const t0 = clock.now();
      await backend.submit(req({ queue: 'q' }));
      await backend.submit(req({ queue: 'q' }));
      await backend.submit(req({ queue: 'q', run_at: iso(clock.now() + 3_600_000) }));
      const c = (await backend.submit(req({ queue: 'q' }))).job;
      await backend.cancel(c.job_id, null);
      await backend.submit(req({ queue: 'elsewhere' }));
      const lease = await claimOne(backend, 'q');
      clock.advance(5000);
      const s = await backend.stats('q');
      expect(s.counts).toEqual({ queued: 1, scheduled: 1, running: 1, succeeded: 0, dead: 1, cancelled: 1, expired: 0 });
      expect(s.dlq_size).toBe(1);
      expect(s.running).toBe(1);
      expect(s.oldest_queued_age_ms).toBe(clock.now() - t0);
      await backend.complete(lease, null);
      expect((await backend.stats('q')).counts).toMatchObject({ running: 0, succeeded: 1 });
    });
  });
}
