/**
 * Retention for finished jobs (`agentq prune`): the plan read through `list`, a run per queue
 * through the bulk engine, and the backend's apply step deleting each job only while it still
 * falls under the rule.
 */
import { describe, expect, it } from 'vitest';
import { applyRun, startRun, type EngineDeps } from '../../src/dlq/engine.js';
import { buildPrunePlan } from '../../src/dlq/prune-plan.js';
import type { PruneRule } from '../../src/core/prune.js';
import { claimOne, iso, makeDead, req, runRecord, useFixture, type ConformanceFixture, type MakeFixture } from './fixture.js';

const RUN_P = 'run_01JRUNPPPPPPPPPPPPPPPPPPPP';

function engine(f: ConformanceFixture): EngineDeps {
  let n = 0;
  return {
    backend: f.backend,
    clock: f.clock,
    sleep: async () => undefined,
    newRunId: () => `run_01JPRVNE${String(++n).padStart(18, '0')}`,
    identity: { user: 'oncall', host: 'host', pid: process.pid, context: null },
  };
}

/** A job that succeeded now, with an idempotency key of its own. */
async function succeeded(f: ConformanceFixture, key: string, queue = 'default') {
  const { job } = await f.backend.submit(req({ queue, idempotency_key: key }));
  const lease = await claimOne(f.backend, queue);
  expect(lease.jobId).toBe(job.job_id);
  await f.backend.complete(lease, 'ok');
  return job;
}

export function pruneCases(make: MakeFixture): void {
  describe('prune (retention for finished jobs)', () => {
    const fx = useFixture(make);

    it('plans and deletes only finished jobs that ended before the cut-off: never dead, waiting or running ones; the key is freed, the counts drop, the totals stay', async () => {
      const f = fx();
      // Ended at t0: a success, a cancel, an expiry, and a DLQ entry (dead: never pruned).
      const ok = await succeeded(f, 'order-1');
      const { job: cancelled } = await f.backend.submit(req({ idempotency_key: 'c-1' }));
      await f.backend.cancel(cancelled.job_id, 'withdrawn');
      const { job: expiring } = await f.backend.submit(req({ deadline_at: iso(f.clock.now() + 5_000) }));
      f.clock.advance(5_000);
      // (a claim expires a waiting job past its deadline instead of starting it)
      expect(await f.backend.claim({ queue: 'default', workerId: 'w', max: 1, leaseMs: 30_000 })).toEqual([]);
      expect((await f.backend.get(expiring.job_id))!.state).toBe('expired');
      const dead = await makeDead(f);
      // Still live: one waiting, one running.
      const { job: waiting } = await f.backend.submit(req({ tenant_id: 'other', run_at: iso(f.clock.now() + 86_400_000) }));
      const { job: running } = await f.backend.submit(req({ tenant_id: 'busy' }));
      expect((await claimOne(f.backend)).jobId).toBe(running.job_id);
      // Another success exactly at the cut-off: it is not older than it, so it stays.
      f.clock.advance(60_000);
      const atCutoff = await succeeded(f, 'order-2');
      const cutoff = Date.parse((await f.backend.get(atCutoff.job_id))!.ended_at!);
      f.clock.advance(7 * 86_400_000);
      const before = await f.backend.stats('default');

      const rule: PruneRule = { states: ['succeeded', 'cancelled', 'expired'], before: cutoff };
      const plan = await buildPrunePlan({ backend: f.backend, clock: f.clock }, { rule, filters: {}, pageSize: 2 });
      expect(plan.total).toBe(3);
      expect(plan.groups.map((g) => [g.queue, g.state, g.count])).toEqual([
        ['default', 'succeeded', 1],
        ['default', 'cancelled', 1],
        ['default', 'expired', 1],
      ]);
      expect(plan.plans).toHaveLength(1);
      expect(plan.plans[0]!.items.map((i) => i.job_id).sort()).toEqual([ok.job_id, cancelled.job_id, expiring.job_id].sort());
      // planning changed nothing
      expect((await f.backend.get(ok.job_id))!.state).toBe('succeeded');

      const deps = engine(f);
      const run = await startRun(deps, plan.plans[0]!, { reason: 'retention', rate: null, batchSize: 2 });
      const result = await applyRun(deps, run.run_id);
      expect(result.run).toMatchObject({ action: 'prune', status: 'completed', counts: { planned: 0, moved: 3, skipped: 0, failed: 0 } });
      for (const gone of [ok, cancelled, expiring]) expect(await f.backend.get(gone.job_id)).toBeNull();
      expect((await f.backend.get(atCutoff.job_id))!.state).toBe('succeeded');
      expect((await f.backend.get(dead.job_id))!.state).toBe('dead');
      expect(await f.backend.dlqGet(dead.job_id)).not.toBeNull();
      expect((await f.backend.get(waiting.job_id))!.state).toBe('scheduled');
      // (its lease ran out in the week that passed: back to waiting for a retry, and still never pruned)
      expect(['running', 'scheduled', 'queued']).toContain((await f.backend.get(running.job_id))!.state);
      // the ledger is the record of what went
      expect((await f.backend.ledger(run.run_id, { limit: 10 })).items.map((i) => [i.job_id, i.verdict, i.status]).sort()).toEqual(
        [ok.job_id, cancelled.job_id, expiring.job_id].sort().map((id) => [id, 'prune', 'moved']),
      );

      const after = await f.backend.stats('default');
      expect(after.counts).toEqual({ ...before.counts, succeeded: before.counts.succeeded - 1, cancelled: before.counts.cancelled - 1, expired: before.counts.expired - 1 });
      expect(after.dlq_size).toBe(before.dlq_size);
      if (before.totals !== undefined) expect(after.totals).toEqual(before.totals);

      // the idempotency key is free: a submit with it makes a new job
      const again = await f.backend.submit(req({ idempotency_key: 'order-1', input: 'another body is fine: the key is free' }));
      expect(again.created).toBe(true);
      expect(again.job.job_id).not.toBe(ok.job_id);
      // and a job that was kept keeps its key
      expect((await f.backend.submit(req({ idempotency_key: 'order-2' }))).job.job_id).toBe(atCutoff.job_id);
    });

    it('re-checks each job when it applies: one no longer under the rule (live, dead, ended after the cut-off, gone) is skipped and kept', async () => {
      const f = fx();
      const old = await succeeded(f, 'old');
      const cutoff = f.clock.now() + 1;
      f.clock.advance(10_000);
      const late = await succeeded(f, 'late');
      const dead = await makeDead(f, { tenant: 'd' });
      const { job: waiting } = await f.backend.submit(req({ tenant_id: 'w' }));
      const missing = 'job_01JM1SS1NGM1SS1NGM1SS1NGM1';
      // A plan that (wrongly, or gone stale) lists them all, as an edited or stale ledger could.
      const items = [old, late, waiting, dead].map((j) => ({ job_id: j.job_id, verdict: 'prune' as const, detail: null }));
      items.push({ job_id: missing, verdict: 'prune', detail: null });
      await f.backend.createRun(
        runRecord({ run_id: RUN_P, queue: 'default', action: 'prune', options: { prune: { states: ['succeeded', 'cancelled', 'expired'], before: iso(cutoff) } } }, f.clock.now()),
        items,
      );
      const out = new Map((await f.backend.applyRunItems({ runId: RUN_P, jobIds: items.map((i) => i.job_id), now: f.clock.now() })).map((i) => [i.job_id, i]));
      expect(out.get(old.job_id)).toMatchObject({ status: 'moved', verdict: 'prune' });
      for (const kept of [late, waiting, dead]) expect(out.get(kept.job_id)).toMatchObject({ status: 'skipped', verdict: 'skip:not_prunable' });
      expect(await f.backend.get(old.job_id)).toBeNull();
      expect((await f.backend.get(late.job_id))!.state).toBe('succeeded');
      expect((await f.backend.get(waiting.job_id))!.state).toBe('queued');
      expect((await f.backend.get(dead.job_id))!.state).toBe('dead');
      // applied again (a resumed run): nothing is doubled
      const again = await f.backend.applyRunItems({ runId: RUN_P, jobIds: [old.job_id], now: f.clock.now() });
      expect(again[0]).toMatchObject({ status: 'moved' });
      expect((await f.backend.getRun(RUN_P))!.counts.moved).toBe(1);
    });

    it('a state not asked for is not planned: --state succeeded leaves cancelled jobs', async () => {
      const f = fx();
      const ok = await succeeded(f, 'k');
      const { job: cancelled } = await f.backend.submit(req({ tenant_id: 'c' }));
      await f.backend.cancel(cancelled.job_id);
      f.clock.advance(60_000);
      const plan = await buildPrunePlan({ backend: f.backend, clock: f.clock }, { rule: { states: ['succeeded'], before: f.clock.now() - 1000 }, queue: 'default', filters: {} });
      expect(plan.plans.flatMap((p) => p.items.map((i) => i.job_id))).toEqual([ok.job_id]);
      expect(plan.groups.map((g) => g.state)).toEqual(['succeeded']);
    });
  });
}
