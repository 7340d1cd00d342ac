/**
 * SQLite submits of one group commit are written together (multi-row INSERTs, at the end of the
 * run of submits) and counted by the store, not by the insert triggers (migration 4). These cases
 * check what that must not change: idempotency keys inside one commit, an op that reads the jobs
 * right after submits in the same commit, admission control counting the commit's own submits,
 * and rows written by something else (no fingerprint) still counted by the triggers.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { IdempotencyConflictError, RetryLaterError } from '../../src/core/errors.js';
import { expectStateCountersMatchRecount, sorted, withDb as withDbAt, type Rows } from '../support/sqlite-db.js';

const Q = 'sb';
let dir: string;
let path: string;
let clock: ManualClock;
let backend: SqliteBackend;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-submit-batch-'));
  path = join(dir, 'agentq.db');
  clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  backend = new SqliteBackend({ path, clock, random: seededRandom(7) });
});
afterEach(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Database.Database) => T): T => withDbAt(path, fn);

/** The counters submit moves, against a recount of the jobs table. */
function expectCountersMatchRecount(): void {
  withDb((db) => {
    expectStateCountersMatchRecount(db);
    const all = (sql: string) => db.prepare(sql).all() as Rows;
    expect(sorted(all(`SELECT queue, n FROM queue_totals WHERE name = 'submitted'`))).toEqual(sorted(all(`SELECT queue, count(*) AS n FROM jobs GROUP BY queue`)));
    expect(sorted(all(`SELECT queue, minute, submitted FROM activity WHERE submitted > 0`))).toEqual(
      sorted(all(`SELECT queue, created_at / 60000 AS minute, count(*) AS submitted FROM jobs GROUP BY queue, created_at / 60000`)),
    );
    // One `submitted` event per job row agentq wrote, in the order of the ids (submit order).
    const events = all(`SELECT job_id FROM events WHERE type = 'submitted' ORDER BY seq`).map((r) => r.job_id);
    expect(events).toEqual(all(`SELECT id FROM jobs WHERE fingerprint IS NOT NULL ORDER BY id`).map((r) => r.id));
  });
}

const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

describe('SQLite submits in one group commit', () => {
  it('writes them all, one event each, counted as the triggers would (more than one multi-row INSERT)', async () => {
    const classes = ['interactive', 'batch', 'maintenance'] as const;
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        backend.submit({
          workflow: 'b:v1',
          queue: i % 10 === 0 ? 'other' : Q,
          tenant_id: `t${i % 5}`,
          class: classes[i % 3],
          estimated_seconds: i % 4 === 0 ? undefined : 5 + (i % 9),
          run_at: i % 7 === 0 ? new Date(clock.now() + 60_000).toISOString() : null,
        }),
      ),
    );
    expect(results.every((r) => r.created)).toBe(true);
    for (const r of results) expect(await backend.get(r.job.job_id)).toEqual(r.job);
    expectCountersMatchRecount();
  });

  it('keeps idempotency keys inside one commit: the same request once, a different one refused', async () => {
    const req = { workflow: 'b:v1', queue: Q, tenant_id: 'acme', idempotency_key: 'k1', input: 'same' };
    const [a, b, c, d] = await Promise.all([
      settle(backend.submit(req)),
      settle(backend.submit(req)),
      settle(backend.submit({ ...req, input: 'different' })),
      settle(backend.submit({ ...req, idempotency_key: 'k2' })),
    ]);
    expect(a.ok && a.value.created).toBe(true);
    expect(b.ok && !b.value.created && b.value.job.job_id === (a.ok ? a.value.job.job_id : '')).toBe(true);
    expect(!c.ok && c.error instanceof IdempotencyConflictError).toBe(true);
    expect(d.ok && d.value.created).toBe(true);
    // And in a later commit, against the stored rows.
    const again = await backend.submit(req);
    expect(again).toMatchObject({ created: false, job: { job_id: a.ok ? a.value.job.job_id : '' } });
    expectCountersMatchRecount();
  });

  it('lets an op queued after the submits of the same commit see their rows (a claim)', async () => {
    // A first submit loads the submit module, so the next ones join the commit in call order.
    await backend.submit({ workflow: 'b:v1', queue: 'warm', tenant_id: 'w' });
    const submits = Array.from({ length: 20 }, (_, i) => backend.submit({ workflow: 'b:v1', queue: Q, tenant_id: `t${i % 2}` }));
    const claim = backend.claim({ queue: Q, workerId: 'w', max: 50, leaseMs: 60_000 });
    const more = backend.submit({ workflow: 'b:v1', queue: Q, tenant_id: 't9' });
    const ids = (await Promise.all(submits)).map((r) => r.job.job_id);
    const leases = await claim;
    expect(leases.map((l) => l.jobId).sort()).toEqual(ids.sort());
    expect((await more).created).toBe(true);
    expect((await backend.stats(Q)).counts).toMatchObject({ running: 20, queued: 1 });
    expectCountersMatchRecount();
  });

  it('counts the earlier submits of the same commit against the backlog limit', async () => {
    await backend.close();
    backend = new SqliteBackend({ path, clock, random: seededRandom(7), admission: { tenantMaxBacklogSeconds: 100 } });
    const out = await Promise.all(Array.from({ length: 8 }, () => settle(backend.submit({ workflow: 'b:v1', queue: Q, tenant_id: 'acme', estimated_seconds: 30 }))));
    expect(out.filter((o) => o.ok)).toHaveLength(3);
    for (const o of out.filter((o) => !o.ok)) expect((o as { error: unknown }).error).toBeInstanceOf(RetryLaterError);
    expectCountersMatchRecount();
  });

  it('still counts a row written by something else (no fingerprint) through the insert triggers', async () => {
    await Promise.all(Array.from({ length: 5 }, () => backend.submit({ workflow: 'b:v1', queue: Q, tenant_id: 'acme' })));
    withDb((db) =>
      db
        .prepare(
          `INSERT INTO jobs (id, queue, state, tenant, class, workflow, created_at, updated_at, run_at, max_attempts, doc)
           VALUES ('job_01JFOREIGN0000000000000000', ?, 'queued', 'acme', 'batch', 'x:v1', ?, ?, ?, 3, '{}')`,
        )
        .run(Q, clock.now(), clock.now(), clock.now()),
    );
    expect((await backend.stats(Q)).counts.queued).toBe(6);
    expectCountersMatchRecount();
  });
});
