/**
 * The SQLite bulk redrive (src/backend/sqlite/bulk-redrive.ts) must leave the
 * store exactly as the job-by-job JavaScript path does. The same DLQ is
 * seeded once and copied; the copy applied by the bulk path and the copy
 * applied with the bulk path turned down (every entry through the JavaScript
 * path) must end with the same job rows and documents, events, counters and
 * ledger.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunRecord } from '../../src/backend/contract.js';
import { BulkRedrive } from '../../src/backend/sqlite/bulk-redrive.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { claimOne, makeDead, runRecord, type ConformanceFixture } from '../conformance/fixture.js';

const SEED_RUN = 'run_01JSEEDAAAAAAAAAAAAAAAAAAA';
const RUN = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';
const COUNTER_TABLES = ['queue_counts', 'tenant_counts', 'backlog', 'queue_totals', 'attempt_outcomes', 'activity', 'stat_samples'];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-bulk-redrive-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function open(path: string, clock: ManualClock): ConformanceFixture {
  const backend = new SqliteBackend({ path, clock, random: seededRandom(7) });
  return { backend, clock, cleanup: async () => backend.close(), injectMalformedDlqEntry: () => Promise.reject(new Error('not used')), damageDlqEntry: () => Promise.reject(new Error('not used')) };
}

/** A DLQ with every kind of entry a redrive judges: plain, exhausted, partial, redriven before, near expiry, quarantined, with an unknown key. */
async function seed(path: string, clock: ManualClock): Promise<string[]> {
  const f = open(path, clock);
  const ids: string[] = [];
  ids.push((await makeDead(f)).job_id);
  ids.push((await makeDead(f, { attempts: 2, code: 'PROVIDER_429', tenant: 'globex' })).job_id);
  ids.push((await makeDead(f, { withEffect: true })).job_id);
  ids.push((await makeDead(f, { deadlineInMs: 30_000, tenant: 'initech' })).job_id);
  ids.push((await makeDead(f, { deadlineInMs: 3_600_000 })).job_id);
  // Redriven once already (and twice for the last one), then dead again.
  const again = [(await makeDead(f)).job_id, (await makeDead(f)).job_id];
  for (let round = 0; round < 2; round++) {
    const targets = round === 0 ? again : again.slice(1);
    const run = `${SEED_RUN.slice(0, -1)}${round}`;
    await f.backend.createRun(runRecord({ run_id: run, queue: 'default', action: 'redrive' }, clock.now()), targets.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })));
    await f.backend.applyRunItems({ runId: run, jobIds: targets, now: clock.now() });
    for (const id of targets) {
      const lease = await claimOne(f.backend);
      expect(lease.jobId).toBe(id);
      await f.backend.fail(lease, { code: 'TIMEOUT', message: 'again', retryable: false, workerVersion: 'v2' });
    }
  }
  ids.push(...again);
  const future = (await makeDead(f)).job_id;
  ids.push(future);
  await f.cleanup();
  const db = new Database(path);
  // A key a newer version might write: both paths must keep it.
  const doc = JSON.parse((db.prepare('SELECT doc FROM jobs WHERE id = ?').get(future) as { doc: string }).doc) as Record<string, unknown>;
  doc.x_future = { kept: [1, 'two'] };
  db.prepare('UPDATE jobs SET doc = ? WHERE id = ?').run(JSON.stringify(doc), future);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return ids;
}

/** Everything a redrive writes, in a form two stores can be compared by. */
function snapshot(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const jobs = (db.prepare('SELECT * FROM jobs ORDER BY id').all() as Array<{ state: string; attempt: number; doc: string }>).map((r) => ({ ...r, doc: JSON.parse(r.doc) as unknown }));
    const events = db.prepare('SELECT job_id, queue, tenant, type, at, from_state, to_state, attempt, data FROM events ORDER BY seq').all();
    const counters = Object.fromEntries(COUNTER_TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2, 3`).all()]));
    const ledger = db.prepare('SELECT job_id, verdict, status, detail, updated_at FROM ledger WHERE run_id = ? ORDER BY job_id').all(RUN) as Array<{ job_id: string; detail: string | null }>;
    const counts = (JSON.parse((db.prepare('SELECT doc FROM runs WHERE run_id = ?').get(RUN) as { doc: string }).doc) as RunRecord).counts;
    return { jobs, events, counters, ledger, counts };
  } finally {
    db.close();
  }
}

async function applyBoth(options: RunRecord['options']) {
  const clock = new ManualClock();
  const seeded = join(dir, 'seed.db');
  const ids = await seed(seeded, clock);
  clock.advance(1000);
  const plannedAt = clock.now();
  clock.advance(60_000); // the 30 s deadline has passed by the apply

  const take = vi.spyOn(BulkRedrive.prototype, 'take');
  const results: Array<ReturnType<typeof snapshot>> = [];
  for (const withBulk of [true, false]) {
    const path = join(dir, withBulk ? 'bulk.db' : 'js.db');
    copyFileSync(seeded, path);
    const f = open(path, new ManualClock(clock.now()));
    const base = runRecord({ run_id: RUN, queue: 'default', action: 'redrive' }, plannedAt);
    await f.backend.createRun(
      { ...base, options: { ...options, plannedAt: new Date(plannedAt).toISOString() } },
      ids.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })),
    );
    take.mockClear();
    if (!withBulk) take.mockReturnValue(null);
    await f.backend.applyRunItems({ runId: RUN, jobIds: ids, now: clock.now() });
    const bulkTaken = take.mock.results.filter((r) => r.value !== null).length;
    // The bulk path decided every entry (none when turned down).
    expect(bulkTaken).toBe(withBulk ? ids.length : 0);
    take.mockRestore();
    await f.cleanup();
    results.push(snapshot(path));
  }
  return { bulk: results[0]!, js: results[1]! };
}

describe('sqlite bulk redrive', () => {
  it('with extra attempts: the same rows, documents, events, counters and ledger as the job-by-job path', async () => {
    const { bulk, js } = await applyBoth({ attempts: { kind: 'extra', n: 2 }, maxRedrives: 2, minRemainingMs: 0, includePartial: true });
    expect(bulk).toEqual(js);
    // The run did judge: some moved, and the near-expiry and twice-redriven entries were skipped.
    expect(bulk.counts).toEqual({ planned: 0, moved: 6, skipped: 2, failed: 0 });
    expect(bulk.ledger.map((l) => l.detail).filter(Boolean)).toEqual(expect.arrayContaining([expect.stringContaining('passed'), expect.stringContaining('redriven 2 times')]));
    const future = bulk.jobs.find((j) => (j.doc as { x_future?: unknown }).x_future !== undefined)!;
    expect(future.doc).toMatchObject({ state: 'queued', x_future: { kept: [1, 'two'] }, lineage: { redrive_count: 1, redrive_run: RUN } });
  });

  it('with reset attempts and partial entries left out: still the same as the job-by-job path', async () => {
    const { bulk, js } = await applyBoth({ attempts: { kind: 'reset' }, maxRedrives: 3, minRemainingMs: 120_000, includePartial: false });
    expect(bulk).toEqual(js);
    expect(bulk.counts.moved).toBeGreaterThan(0);
    expect(bulk.counts.skipped).toBeGreaterThanOrEqual(2); // the partial entry and the near-expiry one
    const queued = bulk.jobs.filter((j) => j.state === 'queued');
    expect(queued.length).toBe(bulk.counts.moved);
    expect(queued.every((j) => j.attempt === 0 && (j.doc as { attempt: number }).attempt === 0)).toBe(true);
  });

  it('an entry damaged after the plan (not JSON, or JSON the schema refuses, or an attempt that is text) is skipped as malformed and never moved', async () => {
    const clock = new ManualClock();
    const path = join(dir, 'bad.db');
    const f = open(path, clock);
    const good = (await makeDead(f)).job_id;
    const bad = (await makeDead(f)).job_id;
    const noWorkflow = (await makeDead(f)).job_id;
    const textAttempt = (await makeDead(f)).job_id;
    clock.advance(1000);
    const plannedAt = clock.now();
    clock.advance(1000);
    // Broken by hand after the plan, without bumping updated_at: only the bytes say it changed.
    const db = new Database(path);
    db.prepare(`UPDATE jobs SET doc = '{"job_id": ' WHERE id = ?`).run(bad);
    db.prepare(`UPDATE jobs SET doc = json_remove(doc, '$.workflow') WHERE id = ?`).run(noWorkflow);
    db.prepare(`UPDATE jobs SET doc = json_set(doc, '$.attempt', 'one') WHERE id = ?`).run(textAttempt);
    db.close();
    const base = runRecord({ run_id: RUN, queue: 'default', action: 'redrive' }, plannedAt);
    const all = [good, bad, noWorkflow, textAttempt];
    await f.backend.createRun({ ...base, options: { ...base.options, plannedAt: new Date(plannedAt).toISOString() } }, all.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })));
    const items = await f.backend.applyRunItems({ runId: RUN, jobIds: all, now: clock.now() });
    expect(items.map((i) => [i.job_id, i.status, i.verdict])).toEqual([
      [good, 'moved', 'redrive'],
      [bad, 'skipped', 'skip:malformed'],
      [noWorkflow, 'skipped', 'skip:malformed'],
      [textAttempt, 'skipped', 'skip:malformed'],
    ]);
    for (const id of [noWorkflow, textAttempt]) expect((await f.backend.dlqGet(id))!.malformed).toContain('does not match the schema');
    expect((await f.backend.get(good))!.state).toBe('queued');
    expect((await f.backend.dlqGet(bad))!.malformed).toContain('not valid JSON');
    await f.cleanup();
  });
});
