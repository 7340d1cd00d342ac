/**
 * A running job whose lease ran out (its worker died; nobody claimed on the queue since, so it is
 * still `running`): `inspect` and `cancel` say no worker holds it instead of "held by … expires
 * <past>" and "the worker stops at its next heartbeat", and `stats` shows it as STALE. The job
 * comes from a real SQLite store on a manual clock; the renderings are pure.
 */
import { describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { orphanedMeaning } from '../../src/cli/commands/cancel.js';
import { renderJob } from '../../src/cli/commands/inspect.js';
import { queueColumns } from '../../src/cli/commands/stats.js';
import { ManualClock } from '../../src/core/clock.js';
import { buildStatsReport } from '../../src/core/stats.js';
import { leaseExpiredFor } from '../../src/core/states.js';

async function orphan() {
  const clock = new ManualClock();
  const backend = new SqliteBackend({ path: ':memory:', clock });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q' });
  await backend.claim({ queue: 'q', workerId: 'w-dead', max: 1, leaseMs: 5_000 });
  return { backend, clock, id: job.job_id };
}

describe('a running job whose lease expired', () => {
  it('inspect: lease expired Ns ago, worker gone, the next claim takes it back', async () => {
    const { backend, clock, id } = await orphan();
    clock.advance(2_000);
    const live = (await backend.get(id))!;
    expect(leaseExpiredFor(live, clock.now())).toBeNull();
    expect(renderJob(live, null, [], clock.now(), false)).toMatch(/lease: +held by w-dead, fence \d+, expires .*\(in 3s\)/);
    clock.advance(40_000);
    const gone = (await backend.get(id))!;
    expect(gone.state).toBe('running');
    const text = renderJob(gone, null, [], clock.now(), false);
    expect(text).toMatch(/lease: +expired 37s ago \(worker gone\? the next claim on queue q takes the job back\); was held by w-dead/);
    expect(text).not.toContain('expires');
    await backend.close();
  });

  it('cancel: says no worker holds it and that the next claim ends it cancelled; a live lease keeps the heartbeat wording', async () => {
    const { backend, clock, id } = await orphan();
    expect(orphanedMeaning((await backend.get(id))!, clock.now())).toBeUndefined();
    clock.advance(65_000);
    const r = await backend.cancel(id, null);
    expect(r.status).toBe('cancel_requested');
    expect(orphanedMeaning(r.job, clock.now())).toBe('cancel requested; no worker holds it (its lease expired 1m ago): the next claim on queue q ends it cancelled');
    await backend.close();
  });

  it('stats: STALE counts it, OLDEST counts it as waiting since the lease ended', async () => {
    const { backend, clock } = await orphan();
    clock.advance(65_000);
    const report = buildStatsReport(await backend.stats('q'));
    expect(report).toMatchObject({ running: 1, lease_expired: 1, oldest_queued_age_ms: 60_000 });
    const cols = queueColumns({ dur: (ms) => (ms == null ? null : ms / 1000), pct: (r) => r, usd: (x) => x });
    const stale = cols.find((c) => c.header === 'STALE')!;
    expect(stale.get(report)).toBe(1);
    await backend.close();
  });
});
