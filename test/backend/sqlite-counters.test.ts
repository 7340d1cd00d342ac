/**
 * The SQLite counters of state changes are summed in JS and written once per
 * transaction (src/backend/sqlite/counters.ts). These cases drive every kind of
 * state change through group commits (ops that share one transaction, some of
 * which throw after earlier moves in the same op, so their savepoint rolls
 * back) and then compare every counter table with a recount from the jobs and
 * events tables, which is what the per-row triggers used to keep them equal to.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { runRecord } from '../conformance/fixture.js';
import { expectStateCountersMatchRecount, sorted, withDb as withDbAt, type Rows } from '../support/sqlite-db.js';

const Q = 'cq';
let dir: string;
let path: string;
let clock: ManualClock;
let backend: SqliteBackend;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-counters-'));
  path = join(dir, 'agentq.db');
  clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  backend = new SqliteBackend({ path, clock, random: seededRandom(11), retryPolicy: undefined });
});
afterEach(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Database.Database) => T): T => withDbAt(path, fn);

/** Every counter table against a recount of the rows and events it summarises (failures by code: while no job was purged). */
function expectCountersMatchRecount({ failures = true } = {}): void {
  withDb((db) => {
    expectStateCountersMatchRecount(db);
    const all = (sql: string) => db.prepare(sql).all() as Rows;
    // Outcome totals from the event log: each counted move writes exactly one event.
    const fromEvents = all(`SELECT name, count(*) AS n FROM (
        SELECT CASE
          WHEN type = 'submitted' THEN 'submitted'
          WHEN type = 'claimed' THEN 'attempts'
          WHEN type = 'retry_scheduled' THEN 'retried'
          WHEN type IN ('succeeded', 'dead', 'expired', 'cancelled') THEN type
        END AS name FROM events WHERE queue = '${Q}'
      ) WHERE name IS NOT NULL GROUP BY name`);
    expect(sorted(all(`SELECT name, n FROM queue_totals WHERE queue = '${Q}'`))).toEqual(sorted(fromEvents));
    // How each attempt ended, by attempt number: the events that end a running attempt.
    expect(sorted(all(`SELECT attempt, succeeded, failed FROM attempt_outcomes WHERE queue = '${Q}'`))).toEqual(
      sorted(
        all(`SELECT attempt, sum(to_state = 'succeeded') AS succeeded, sum(to_state <> 'succeeded') AS failed FROM events
             WHERE queue = '${Q}' AND from_state = 'running' AND to_state IS NOT NULL AND to_state NOT IN ('running', 'queued')
             GROUP BY attempt`),
      ),
    );
    const claims = (db.prepare(`SELECT count(*) AS n FROM events WHERE type = 'claimed'`).get() as { n: number }).n;
    expect((db.prepare(`SELECT count(*) AS n FROM stat_samples WHERE kind = 'wait'`).get() as { n: number }).n).toBe(claims);
    // Failed attempts by code: every attempt record of the queue's jobs that ended with an error code.
    if (failures) {
      expect(sorted(all(`SELECT code, n FROM attempt_failures WHERE queue = '${Q}'`))).toEqual(
        sorted(
          all(`SELECT json_extract(a.value, '$.error_code') AS code, count(*) AS n FROM jobs, json_each(jobs.doc, '$.attempts') AS a
               WHERE jobs.queue = '${Q}' AND json_extract(a.value, '$.error_code') IS NOT NULL GROUP BY code`),
        ),
      );
    }
  });
}

/** Makes the third claim of `workerId` fail at its event insert: after three jobs' rows (and counter deltas) were written. */
function failThirdClaimOf(workerId: string): void {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    db.exec(`CREATE TRIGGER boom BEFORE INSERT ON events
      WHEN NEW.type = 'claimed' AND json_extract(NEW.data, '$.worker_id') = '${workerId}'
        AND (SELECT count(*) FROM events WHERE type = 'claimed' AND json_extract(data, '$.worker_id') = '${workerId}') >= 2
      BEGIN SELECT RAISE(ABORT, 'boom on purpose'); END;`);
  } finally {
    db.close();
  }
}
function stopFailing(): void {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    db.exec(`DROP TRIGGER boom`);
  } finally {
    db.close();
  }
}

const settle = (p: Promise<unknown>) => p.then(() => 'ok' as const, () => 'threw' as const);

describe('SQLite counters kept per transaction', () => {
  it('equal a recount after every kind of move, in shared group commits with ops that roll back', async () => {
    const classes = ['interactive', 'batch', 'maintenance'] as const;
    // Submitted in one group commit: a mix of tenants, classes, estimates, delays and deadlines.
    const submitted = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        backend.submit({
          workflow: 'c:v1',
          queue: Q,
          tenant_id: `t${i % 4}`,
          class: classes[i % 3],
          estimated_seconds: i % 5 === 0 ? undefined : 10 + (i % 7),
          max_attempts: 1 + (i % 3),
          run_at: i % 11 === 0 ? new Date(clock.now() + 5_000).toISOString() : null,
          // (a delayed one gets its deadline after its start: a start past the deadline is refused)
          deadline_at: i % 13 === 0 ? new Date(clock.now() + (i % 11 === 0 ? 6_000 : 1_000)).toISOString() : null,
        }),
      ),
    );
    expectCountersMatchRecount();

    // Claims and completions of one event-loop turn share a transaction.
    const first = await backend.claim({ queue: Q, workerId: 'w1', max: 30, leaseMs: 60_000 });
    expect(first.length).toBe(30);
    const [done, , , , ...rest] = first;
    await Promise.all([
      backend.complete(done!, 'ok'),
      backend.complete(done!, 'twice'), // the second one throws: lease lost
      backend.fail(first[1]!, { code: 'PROVIDER_429', message: 'slow down', retryable: true }),
      backend.fail(first[2]!, { code: 'VALIDATION', message: 'bad input', retryable: false }),
      backend.release(first[3]!),
      backend.claim({ queue: Q, workerId: 'w2', max: 10, leaseMs: 60_000 }),
      backend.cancel(submitted[119]!.job.job_id, 'not needed'),
      ...rest.slice(0, 10).map((l) => backend.complete(l, null)),
    ].map(settle));
    expectCountersMatchRecount();

    // A claim that moves three jobs and then throws, in a commit shared with completions:
    // its savepoint rolls back, and so must its counter deltas.
    failThirdClaimOf('w3');
    const outcomes = await Promise.all([
      settle(backend.claim({ queue: Q, workerId: 'w3', max: 20, leaseMs: 60_000 })),
      ...rest.slice(10, 16).map((l) => settle(backend.complete(l, null))),
    ]);
    expect(outcomes[0]).toBe('threw');
    stopFailing();
    expect(outcomes.slice(1)).toEqual(Array(6).fill('ok'));
    expectCountersMatchRecount();

    // Leases run out and deadlines pass: the next claim reaps and expires.
    clock.advance(120_000);
    let held: Lease[] = [];
    for (let round = 0; round < 20; round++) {
      const got = await backend.claim({ queue: Q, workerId: `w${round}`, max: 25, leaseMs: 30_000 });
      held.push(...got);
      if (got.length === 0) break;
      const now = held.splice(0, 25);
      await Promise.all(
        now.map((l, i) =>
          settle(
            i % 4 === 0
              ? backend.fail(l, { code: 'TIMEOUT', message: 'too slow', retryable: true })
              : i % 9 === 0
                ? backend.abort(l, 'cancelled')
                : i % 7 === 0
                  ? backend.heartbeat([l], 30_000)
                  : backend.complete(l, null),
          ),
        ),
      );
      clock.advance(40_000);
      expectCountersMatchRecount();
    }
    held = [];

    // Redrive the DLQ back to queued, then expire what is left of it, through the ledger.
    const dead = (await backend.dlqList({ queue: Q }, { limit: 1000 })).items.map((e) => e.job_id);
    expect(dead.length).toBeGreaterThan(0);
    const half = dead.slice(0, Math.ceil(dead.length / 2));
    await backend.createRun(runRecord({ run_id: 'run_01JCOUNTERSAAAAAAAAAAAAAAA', queue: Q, action: 'redrive' }, clock.now()), half.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })));
    await backend.applyRunItems({ runId: 'run_01JCOUNTERSAAAAAAAAAAAAAAA', jobIds: half, now: clock.now() });
    const others = dead.slice(half.length);
    if (others.length > 0) {
      await backend.createRun(runRecord({ run_id: 'run_01JCOUNTERSBBBBBBBBBBBBBBB', queue: Q, action: 'purge' }, clock.now()), others.map((job_id) => ({ job_id, verdict: 'purge' as const, detail: null })));
      await backend.applyRunItems({ runId: 'run_01JCOUNTERSBBBBBBBBBBBBBBB', jobIds: others, now: clock.now() });
    }
    // (a purged job takes its attempt records along; the counts keep its failures)
    expectCountersMatchRecount({ failures: others.length === 0 });

    // And the stats a reader sees agree with the recount.
    const stats = await backend.stats(Q);
    const byState = withDb((db) => db.prepare(`SELECT state, count(*) AS n FROM jobs WHERE queue = ? GROUP BY state`).all(Q) as Array<{ state: string; n: number }>);
    for (const r of byState) expect(stats.counts[r.state as keyof typeof stats.counts]).toBe(r.n);
  });

  it('gives each claim its own ring slot, also when claims share a transaction', async () => {
    await Promise.all(Array.from({ length: 30 }, (_, i) => backend.submit({ workflow: 'c:v1', queue: Q, tenant_id: `t${i % 3}` })));
    clock.advance(1_000);
    const claims = await Promise.all([1, 2, 3].map((n) => backend.claim({ queue: Q, workerId: `w${n}`, max: 10, leaseMs: 60_000 })));
    clock.advance(2_000);
    await Promise.all(claims.flat().map((l) => backend.complete(l, null)));
    const s = await backend.stats(Q);
    expect(s.totals).toMatchObject({ submitted: 30, attempts: 30, succeeded: 30 });
    expect(s.time_in_queue_ms).toEqual(Array(30).fill(1_000));
    expect(s.execution_ms).toEqual(Array(30).fill(2_000));
    const seqs = withDb((db) => db.prepare(`SELECT kind, seq FROM stat_samples ORDER BY kind, seq`).all() as Array<{ kind: string; seq: number }>);
    const range = Array.from({ length: 30 }, (_, i) => i + 1);
    expect(seqs.filter((r) => r.kind === 'wait').map((r) => r.seq)).toEqual(range);
    expect(seqs.filter((r) => r.kind === 'exec').map((r) => r.seq)).toEqual(range);
    expectCountersMatchRecount();
  });
});
