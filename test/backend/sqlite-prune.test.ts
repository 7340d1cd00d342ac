/**
 * What `agentq prune` does to an SQLite store, row by row: a pruned job's row, effects and events
 * go; the counters still match a recount of the rows; and the events table's `seq` (max + 1) is
 * never handed out twice, even when the newest event of the store was the pruned job's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { runRecord } from '../conformance/fixture.js';
import { expectStateCountersMatchRecount, withDb } from '../support/sqlite-db.js';

let dir: string;
let path: string;
let clock: ManualClock;
let backend: SqliteBackend;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-prune-'));
  path = join(dir, 'agentq.db');
  clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  backend = new SqliteBackend({ path, clock, random: seededRandom(3) });
});
afterEach(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

it("deletes a pruned job's row, effects and events, keeps the counters exact, and never reuses an event seq", async () => {
  const { job: kept } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a' });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'b', idempotency_key: 'k' });
  const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  expect(lease!.jobId).toBe(kept.job_id);
  await backend.complete(lease!, 'ok');
  const [mine] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  expect(mine!.jobId).toBe(job.job_id);
  await backend.beginEffect(mine!, 'send');
  await backend.finishEffect(mine!, 'send', { ok: true });
  await backend.complete(mine!, 'ok');
  clock.advance(1000);
  const maxSeq = () => withDb(path, (db) => (db.prepare('SELECT max(seq) AS s FROM events').get() as { s: number }).s);
  const newest = maxSeq();
  // the newest event of the store is the pruned job's (its completion)
  expect(withDb(path, (db) => (db.prepare('SELECT job_id FROM events WHERE seq = ?').get(newest) as { job_id: string }).job_id)).toBe(job.job_id);

  const runId = 'run_01JPRVNE000000000000000002';
  await backend.createRun(
    runRecord({ run_id: runId, queue: 'q', action: 'prune', options: { prune: { states: ['succeeded'], before: new Date(clock.now()).toISOString() } } }, clock.now()),
    [{ job_id: job.job_id, verdict: 'prune', detail: null }],
  );
  expect((await backend.applyRunItems({ runId, jobIds: [job.job_id], now: clock.now() }))[0]).toMatchObject({ status: 'moved' });

  withDb(path, (db) => {
    expect(db.prepare('SELECT count(*) AS n FROM jobs WHERE id = ?').get(job.job_id)).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM effects WHERE job_id = ?').get(job.job_id)).toEqual({ n: 0 });
    // all its events but the store's newest, kept so that seq goes on from it
    expect(db.prepare('SELECT seq FROM events WHERE job_id = ?').all(job.job_id)).toEqual([{ seq: newest }]);
    expect(db.prepare('SELECT count(*) AS n FROM events WHERE job_id = ?').get(kept.job_id)).not.toEqual({ n: 0 });
    expectStateCountersMatchRecount(db);
  });
  await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'b', idempotency_key: 'k' });
  expect(maxSeq()).toBeGreaterThan(newest);
});
