/**
 * SQLite `applyRunItems` applies a batch without a savepoint per job and falls
 * back to one per job when a job's move throws. These cases prove the fallback:
 * the job that throws rolls back alone and is marked failed, the others in the
 * same batch still move with their events and counters, and an entry whose
 * document is JSON but not a valid job is never moved.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { eventTypes, makeDead, runRecord, type ConformanceFixture } from '../conformance/fixture.js';
import { withDb as withDbAt } from '../support/sqlite-db.js';

const RUN = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';

let dir: string;
let path: string;
let f: ConformanceFixture;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-apply-'));
  path = join(dir, 'agentq.db');
  const clock = new ManualClock();
  const backend = new SqliteBackend({ path, clock, random: seededRandom(7) });
  f = {
    backend,
    clock,
    cleanup: async () => backend.close(),
    injectMalformedDlqEntry: () => Promise.reject(new Error('not used here')),
    damageDlqEntry: () => Promise.reject(new Error('not used here')),
  };
});
afterEach(async () => {
  await f.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Database.Database) => T): T => withDbAt(path, fn);

function count(state: string): number {
  return withDb((db) => (db.prepare(`SELECT coalesce(sum(n), 0) AS n FROM queue_counts WHERE queue = 'default' AND state = ?`).get(state) as { n: number }).n);
}

describe('sqlite applyRunItems batch', () => {
  it('a job whose move throws rolls back alone; the rest of the batch moves, with events and counters', async () => {
    const jobs = [await makeDead(f), await makeDead(f), await makeDead(f), await makeDead(f)];
    const [a, boom, c, bad] = jobs.map((j) => j.job_id) as [string, string, string, string];
    withDb((db) => {
      // A real SQLite error on one job's UPDATE, as a full disk or a constraint would raise.
      db.exec(`CREATE TRIGGER boom BEFORE UPDATE ON jobs WHEN NEW.id = '${boom}' BEGIN SELECT RAISE(ABORT, 'boom on purpose'); END;`);
      // Valid JSON, still marked dead, but not a valid job: the verdict must see it as malformed.
      const doc = JSON.parse((db.prepare('SELECT doc FROM jobs WHERE id = ?').get(bad) as { doc: string }).doc) as Record<string, unknown>;
      doc.attempts = 'two';
      db.prepare('UPDATE jobs SET doc = ? WHERE id = ?').run(JSON.stringify(doc), bad);
    });
    await f.backend.createRun(
      runRecord({ run_id: RUN, queue: 'default', action: 'redrive' }, f.clock.now()),
      jobs.map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null })),
    );
    expect(count('dead')).toBe(4);

    const items = await f.backend.applyRunItems({ runId: RUN, jobIds: [a, boom, c, bad], now: f.clock.now() });
    const byId = new Map(items.map((i) => [i.job_id, i]));
    expect(byId.get(a)).toMatchObject({ status: 'moved', verdict: 'redrive' });
    expect(byId.get(c)).toMatchObject({ status: 'moved', verdict: 'redrive' });
    expect(byId.get(boom)).toMatchObject({ status: 'failed', verdict: 'redrive' });
    expect(byId.get(boom)!.detail).toContain('boom on purpose');
    expect(byId.get(bad)).toMatchObject({ status: 'skipped', verdict: 'skip:malformed' });

    expect((await f.backend.get(a))!.state).toBe('queued');
    expect((await f.backend.get(c))!.state).toBe('queued');
    expect(await f.backend.dlqGet(boom)).toMatchObject({ malformed: null });
    expect((await f.backend.dlqGet(bad))!.malformed).toContain('does not match the schema');
    expect((await eventTypes(f.backend, a)).filter((t) => t === 'redriven')).toHaveLength(1);
    expect((await eventTypes(f.backend, c)).filter((t) => t === 'redriven')).toHaveLength(1);
    expect(await eventTypes(f.backend, boom)).not.toContain('redriven');
    expect(await eventTypes(f.backend, bad)).not.toContain('redriven');
    expect(count('dead')).toBe(2);
    expect(count('queued')).toBe(2);
    expect((await f.backend.getRun(RUN))!.counts).toEqual({ planned: 0, moved: 2, skipped: 1, failed: 1 });

    // Ledger rows say the same as the returned items, and applying again changes nothing.
    const ledger = await f.backend.ledger(RUN, { limit: 10 });
    expect(new Map(ledger.items.map((i) => [i.job_id, i.status]))).toEqual(new Map([[a, 'moved'], [boom, 'failed'], [c, 'moved'], [bad, 'skipped']]));
    await f.backend.applyRunItems({ runId: RUN, jobIds: [a, boom, c, bad], now: f.clock.now() });
    expect((await f.backend.getRun(RUN))!.counts).toEqual({ planned: 0, moved: 2, skipped: 1, failed: 1 });
    expect((await f.backend.get(a))!.lineage.redrive_count).toBe(1);
  });

  it('a whole batch without errors moves every job and keeps unknown document keys', async () => {
    const jobs = [await makeDead(f), await makeDead(f), await makeDead(f)];
    withDb((db) => {
      // A key a newer version might write: the move must not drop it (the schema's parsed copy would).
      const doc = JSON.parse((db.prepare('SELECT doc FROM jobs WHERE id = ?').get(jobs[0]!.job_id) as { doc: string }).doc) as Record<string, unknown>;
      doc.x_future = { kept: true };
      db.prepare('UPDATE jobs SET doc = ? WHERE id = ?').run(JSON.stringify(doc), jobs[0]!.job_id);
    });
    await f.backend.createRun(
      runRecord({ run_id: RUN, queue: 'default', action: 'redrive' }, f.clock.now()),
      jobs.map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null })),
    );
    const items = await f.backend.applyRunItems({ runId: RUN, jobIds: jobs.map((j) => j.job_id), now: f.clock.now() });
    expect(items.map((i) => i.status)).toEqual(['moved', 'moved', 'moved']);
    expect(count('dead')).toBe(0);
    expect(count('queued')).toBe(3);
    const stored = withDb((db) => JSON.parse((db.prepare('SELECT doc FROM jobs WHERE id = ?').get(jobs[0]!.job_id) as { doc: string }).doc) as Record<string, unknown>);
    expect(stored).toMatchObject({ state: 'queued', x_future: { kept: true } });
  });

  it('checks every entry again in full, changed or not: one damaged after the plan without a new updated_at is caught (skip:malformed, left in place)', async () => {
    const jobs = [await makeDead(f), await makeDead(f), await makeDead(f), await makeDead(f)];
    const [same, changed, gone, stamp] = jobs.map((j) => j.job_id) as [string, string, string, string];
    f.clock.advance(1000);
    const plannedAt = f.clock.now(); // the plan read (and validated) the DLQ here
    f.clock.advance(1000);
    withDb((db) => {
      // After the plan: one entry rewritten with a new updated_at into a record that is not a valid
      // job, one rewritten so without touching updated_at (a write outside agentq), one gone.
      const rewrite = (id: string, at: number | null) => {
        const doc = JSON.parse((db.prepare('SELECT doc FROM jobs WHERE id = ?').get(id) as { doc: string }).doc) as Record<string, unknown>;
        doc.attempts = 'two';
        if (at === null) db.prepare('UPDATE jobs SET doc = ? WHERE id = ?').run(JSON.stringify(doc), id);
        else db.prepare('UPDATE jobs SET doc = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(doc), at, id);
      };
      rewrite(changed, plannedAt + 500);
      rewrite(stamp, null);
      db.prepare('DELETE FROM jobs WHERE id = ?').run(gone);
    });
    const base = runRecord({ run_id: RUN, queue: 'default', action: 'redrive' }, f.clock.now());
    await f.backend.createRun(
      { ...base, options: { ...base.options, plannedAt: new Date(plannedAt).toISOString() } },
      jobs.map((j) => ({ job_id: j.job_id, verdict: 'redrive' as const, detail: null })),
    );
    const items = await f.backend.applyRunItems({ runId: RUN, jobIds: [same, changed, gone, stamp], now: f.clock.now() });
    const byId = new Map(items.map((i) => [i.job_id, i]));
    expect(byId.get(same)).toMatchObject({ status: 'moved', verdict: 'redrive' });
    expect(byId.get(changed)).toMatchObject({ status: 'skipped', verdict: 'skip:malformed' });
    expect(byId.get(stamp)).toMatchObject({ status: 'skipped', verdict: 'skip:malformed' });
    expect(byId.get(gone)).toMatchObject({ status: 'skipped' });
    expect((await f.backend.get(same))!.state).toBe('queued');
    expect((await f.backend.dlqGet(changed))!.malformed).toContain('does not match the schema');
    expect((await f.backend.dlqGet(stamp))!.malformed).toContain('does not match the schema');
    expect((await f.backend.getRun(RUN))!.counts).toEqual({ planned: 0, moved: 1, skipped: 3, failed: 0 });
  });
});
