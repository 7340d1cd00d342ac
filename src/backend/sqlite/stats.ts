/**
 * The figures behind `agentq stats` and `/metrics` for SQLite (issue 8).
 *
 * Everything is kept as the jobs move, in the same transaction as the move,
 * so a read never scans the jobs table: by the triggers below on insert and
 * delete, and for state changes by `SqliteStore.save`, which sums them per
 * transaction (counters.ts; schema migration 3 dropped the update triggers
 * below, kept here as the history of the schema):
 * - `queue_totals`: cumulative outcome counters per queue;
 * - `attempt_outcomes`: how attempt N ended (success rate by attempt);
 * - `stat_samples`: a ring of the last STATS_SAMPLE_LIMIT time-in-queue and
 *   execution-time samples per queue (slot = the claim's sequence number mod
 *   the limit; the sequence is the queue's attempt count);
 * - `activity`: per-minute buckets of submissions and ended attempts, pruned
 *   to the last 15 minutes, for recent throughput;
 * - the start of the running attempt and its claim's sequence number
 *   (`jobs.attempt_started_at`, `jobs.attempt_seq` since migration 3; the
 *   `attempt_started` table before), so execution time needs no parse of the job document;
 * - `attempt_failures` (migration 5): failed attempts per error code, the
 *   codes capped per queue (counters.ts `writeFailures`);
 * - `job_ends` (migration 7): jobs that ended, and went to the DLQ, per minute, kept for
 *   STATS_ENDS_MAX_WINDOW_MS (the DLQ rate over `dlq check --window`);
 * - `queue_usage` (migration 6): tokens and dollars the queue's attempts reported, added by
 *   `addUsage` (worker.ts) in the same transaction as the attempt record;
 * - an index on (queue, class, run_at) of pending jobs, so the oldest job of a
 *   class is one seek.
 * Per-class and per-tenant depth and backlog come from the counters the
 * schema already keeps (`tenant_counts`, `backlog`).
 */
import type Database from 'better-sqlite3';
import { JOB_CLASSES } from '../../core/model.js';
import type { JobState } from '../../core/schemas.js';
import { usageFigure, type Usage } from '../../core/usage.js';
import { backlogFigure, endsFromMinute, failureCounts, type ExpiredLeases, type JobEnds, type StatsOptions } from '../../core/queue-stats.js';
import {
  STATS_MAX_TENANTS,
  STATS_RECENT_WINDOW_MS,
  STATS_SAMPLE_LIMIT,
  type AttemptOutcomes,
  type OutcomeTotals,
  type QueueStats,
  type StatsBreakdown,
} from '../contract.js';

const PENDING = `('queued','scheduled')`;
/** Migration: appended to the schema's list (it runs once per database, in its own transaction). */
export const STATS_MIGRATION = `
  CREATE INDEX jobs_class_oldest ON jobs(queue, class, run_at) WHERE state IN ${PENDING};

  CREATE TABLE queue_totals (
    queue TEXT NOT NULL,
    name TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (queue, name)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE attempt_outcomes (
    queue TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    succeeded INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    PRIMARY KEY (queue, attempt)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE stat_samples (
    queue TEXT NOT NULL,
    kind TEXT NOT NULL,
    slot INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    ms INTEGER NOT NULL,
    PRIMARY KEY (queue, kind, slot)
  ) STRICT, WITHOUT ROWID;

  -- When the running attempt of a job started, and its claim's sequence number (one row per
  -- running job): execution time without parsing the job document, in the ring slot of its claim.
  CREATE TABLE attempt_started (
    job_id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    seq INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE activity (
    queue TEXT NOT NULL,
    minute INTEGER NOT NULL,
    submitted INTEGER NOT NULL,
    succeeded INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    PRIMARY KEY (queue, minute)
  ) STRICT, WITHOUT ROWID;

  CREATE TRIGGER jobs_stats_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, 'submitted', 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
    INSERT INTO activity(queue, minute, submitted, succeeded, failed) VALUES (NEW.queue, NEW.created_at / 60000, 1, 0, 0)
      ON CONFLICT(queue, minute) DO UPDATE SET submitted = submitted + 1;
  END;

  -- The triggers are split by transition (WHEN), so a state change runs only the statements that concern it.

  -- A claim: an attempt starts. Its sequence number (the queue's attempt count) picks the ring slot.
  CREATE TRIGGER jobs_stats_claim AFTER UPDATE OF state ON jobs WHEN NEW.state = 'running' AND OLD.state IS NOT 'running' BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, 'attempts', 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
    INSERT INTO stat_samples(queue, kind, slot, seq, ms)
      SELECT NEW.queue, 'wait', n % ${STATS_SAMPLE_LIMIT}, n, max(0, NEW.updated_at - OLD.run_at) FROM queue_totals WHERE queue = NEW.queue AND name = 'attempts'
      ON CONFLICT(queue, kind, slot) DO UPDATE SET seq = excluded.seq, ms = excluded.ms;
    INSERT INTO attempt_started(job_id, at, seq)
      SELECT NEW.id, NEW.updated_at, n FROM queue_totals WHERE queue = NEW.queue AND name = 'attempts'
      ON CONFLICT(job_id) DO UPDATE SET at = excluded.at, seq = excluded.seq;
  END;

  -- An attempt ends (not a release back to queued, which does not count the attempt).
  CREATE TRIGGER jobs_stats_attempt_end AFTER UPDATE OF state ON jobs
  WHEN OLD.state = 'running' AND NEW.state NOT IN ('running', 'queued') BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, CASE NEW.state WHEN 'scheduled' THEN 'retried' ELSE NEW.state END, 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
    INSERT INTO attempt_outcomes(queue, attempt, succeeded, failed) VALUES (NEW.queue, NEW.attempt, NEW.state = 'succeeded', NEW.state <> 'succeeded')
      ON CONFLICT(queue, attempt) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
    INSERT INTO activity(queue, minute, submitted, succeeded, failed) VALUES (NEW.queue, NEW.updated_at / 60000, 0, NEW.state = 'succeeded', NEW.state <> 'succeeded')
      ON CONFLICT(queue, minute) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
    INSERT INTO stat_samples(queue, kind, slot, seq, ms)
      SELECT NEW.queue, 'exec', seq % ${STATS_SAMPLE_LIMIT}, seq, max(0, NEW.updated_at - at) FROM attempt_started WHERE job_id = NEW.id
      ON CONFLICT(queue, kind, slot) DO UPDATE SET seq = excluded.seq, ms = excluded.ms;
    DELETE FROM attempt_started WHERE job_id = NEW.id;
  END;

  CREATE TRIGGER jobs_stats_release AFTER UPDATE OF state ON jobs WHEN OLD.state = 'running' AND NEW.state = 'queued' BEGIN
    DELETE FROM attempt_started WHERE job_id = NEW.id;
  END;

  -- Ends that are not attempts: a queued job cancelled or expired, a DLQ entry expired.
  CREATE TRIGGER jobs_stats_end AFTER UPDATE OF state ON jobs
  WHEN OLD.state <> 'running' AND OLD.state IS NOT NEW.state AND NEW.state IN ('succeeded', 'dead', 'expired', 'cancelled') BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, NEW.state, 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
  END;

  -- Per-minute activity rows are tiny, so pruning now and then is enough: on changes in the first
  -- half second of a minute (a busy queue has some; an idle one adds no rows to prune).
  CREATE TRIGGER jobs_stats_prune AFTER UPDATE OF state ON jobs WHEN NEW.updated_at % 60000 < 500 BEGIN
    DELETE FROM activity WHERE queue = NEW.queue AND minute < NEW.updated_at / 60000 - 15;
  END;

  -- A purged running job (never normally) must not leave its start time behind.
  CREATE TRIGGER jobs_stats_delete AFTER DELETE ON jobs WHEN OLD.state = 'running' BEGIN
    DELETE FROM attempt_started WHERE job_id = OLD.id;
  END;
`;

interface CountRow {
  key: string;
  state: JobState;
  n: number;
}

function emptyBreakdown(key: string): StatsBreakdown {
  return { key, queued: 0, scheduled: 0, running: 0, dlq_size: 0, oldest_queued_age_ms: null, backlog_seconds: 0 };
}

function addCount(b: StatsBreakdown, state: JobState, n: number): void {
  if (state === 'queued' || state === 'scheduled' || state === 'running') b[state] += n;
  else if (state === 'dead') b.dlq_size += n;
}

/** The optional `QueueStats` fields, read from the counters above: index seeks and bounded reads only. */
/** Prepares (and caches) a statement: the store's `sql`. */
export type Sql = (text: string) => Database.Statement;

const CLASS_OLDEST = `SELECT min(run_at) AS t FROM jobs WHERE queue = ? AND class = ? AND state IN ${PENDING} AND run_at <= ?`;

/** run_at of the oldest claimable job of the queue: one seek per class on jobs_class_oldest. */
export function oldestClaimableRunAt(st: Sql, queue: string, now: number): number | null {
  let oldest: number | null = null;
  for (const c of JOB_CLASSES) {
    const t = (st(CLASS_OLDEST).get(queue, c, now) as { t: number | null }).t;
    if (t !== null && (oldest === null || t < oldest)) oldest = t;
  }
  return oldest;
}

/** Running jobs whose lease ran out, per class and tenant: a range of the jobs_leases index (only the expired part). */
export function expiredLeases(st: Sql, queue: string, now: number): ExpiredLeases[] {
  const rows = st(
    `SELECT class, tenant, count(*) AS n, min(lease_expires_at) AS t FROM jobs WHERE queue = ? AND state = 'running' AND lease_expires_at <= ? GROUP BY class, tenant`,
  ).all(queue, now) as Array<{ class: string; tenant: string; n: number; t: number }>;
  return rows.map((r) => ({ class: r.class, tenant: r.tenant, count: r.n, oldest_expires_at: r.t }));
}

export function readExtendedStats(st: Sql, queue: string, now: number, opts: StatsOptions = {}): Partial<QueueStats> {
  // A queue that never had a job has nothing to report beyond zeros.
  const known = st(`SELECT 1 FROM queue_totals WHERE queue = ? UNION ALL SELECT 1 FROM queue_counts WHERE queue = ? LIMIT 1`).get(queue, queue);
  if (!known) return {};

  const backlogRows = st(`SELECT dim, name, seconds FROM backlog WHERE queue = ?`).all(queue) as Array<{ dim: string; name: string; seconds: number }>;
  const backlogOf = (dim: string, name: string) => backlogFigure(backlogRows.find((r) => r.dim === dim && r.name === name)?.seconds ?? 0);

  // Per class: every class, zeros included, so a dashboard always has the series.
  const classOldest = st(CLASS_OLDEST);
  const byClass = JOB_CLASSES.map((c) => {
    const b = emptyBreakdown(c);
    const t = (classOldest.get(queue, c, now) as { t: number | null }).t;
    b.oldest_queued_age_ms = t === null ? null : now - t;
    b.backlog_seconds = backlogOf('class', c);
    return b;
  });
  for (const r of st(`SELECT class AS key, state, sum(n) AS n FROM tenant_counts WHERE queue = ? GROUP BY class, state`).all(queue) as CountRow[]) {
    const b = byClass.find((x) => x.key === r.key);
    if (b) addCount(b, r.state, r.n);
  }

  // Per tenant: the deepest STATS_MAX_TENANTS (counter rows only: bounded by tenants x classes x states).
  const tenantRows = st(`SELECT tenant AS key, state, sum(n) AS n FROM tenant_counts WHERE queue = ? GROUP BY tenant, state`).all(queue) as CountRow[];
  const tenants = new Map<string, StatsBreakdown>();
  for (const r of tenantRows) {
    let b = tenants.get(r.key);
    if (!b) tenants.set(r.key, (b = emptyBreakdown(r.key)));
    addCount(b, r.state, r.n);
  }
  const depth = (b: StatsBreakdown) => b.queued + b.scheduled + b.running;
  const withJobs = [...tenants.values()].filter((b) => depth(b) + b.dlq_size > 0);
  const byTenant = withJobs
    .sort((a, b) => depth(b) - depth(a) || b.dlq_size - a.dlq_size || a.key.localeCompare(b.key))
    .slice(0, STATS_MAX_TENANTS);
  // Oldest per tenant: one seek per (class, tenant) on the claim index.
  const tenantOldest = st(`SELECT min(run_at) AS t FROM jobs WHERE queue = ? AND class = ? AND tenant = ? AND state IN ${PENDING} AND run_at <= ?`);
  for (const b of byTenant) {
    let oldest: number | null = null;
    for (const c of JOB_CLASSES) {
      const t = (tenantOldest.get(queue, c, b.key, now) as { t: number | null }).t;
      if (t !== null && (oldest === null || t < oldest)) oldest = t;
    }
    b.oldest_queued_age_ms = oldest === null ? null : now - oldest;
    b.backlog_seconds = backlogOf('tenant', b.key);
  }

  const totals: OutcomeTotals = { submitted: 0, attempts: 0, succeeded: 0, retried: 0, dead: 0, expired: 0, cancelled: 0 };
  for (const r of st(`SELECT name, n FROM queue_totals WHERE queue = ?`).all(queue) as Array<{ name: keyof OutcomeTotals; n: number }>) {
    if (r.name in totals) totals[r.name] = r.n;
  }

  const byAttempt = st(`SELECT attempt, succeeded, failed FROM attempt_outcomes WHERE queue = ? ORDER BY attempt LIMIT 1000`).all(queue) as AttemptOutcomes[];
  const samples = (kind: string) =>
    (st(`SELECT ms FROM stat_samples WHERE queue = ? AND kind = ? ORDER BY seq`).all(queue, kind) as Array<{ ms: number }>).map((r) => r.ms);

  // Whole minutes covering the window; window_ms says exactly what was covered.
  const fromMinute = Math.floor((now - STATS_RECENT_WINDOW_MS) / 60000);
  const recent = st(
    `SELECT coalesce(sum(submitted), 0) AS submitted, coalesce(sum(succeeded), 0) AS succeeded, coalesce(sum(failed), 0) AS failed FROM activity WHERE queue = ? AND minute >= ?`,
  ).get(queue, fromMinute) as { submitted: number; succeeded: number; failed: number };

  // At most STATS_MAX_FAILURE_CODES + 1 rows per queue (counters.ts writeFailures).
  const failures = st(`SELECT code, n FROM attempt_failures WHERE queue = ?`).all(queue) as Array<{ code: string; n: number }>;

  const usage = st(`SELECT tokens, cost_usd FROM queue_usage WHERE queue = ?`).get(queue) as Usage | undefined;

  // Job ends over a window (dlq check --window): at most STATS_ENDS_MAX_WINDOW_MS / 1 min rows, on the primary key.
  let ends: JobEnds | undefined;
  if (opts.endsWindowMs !== undefined) {
    const from = endsFromMinute(now, opts.endsWindowMs);
    const r = st(`SELECT coalesce(sum(ended), 0) AS ended, coalesce(sum(dead), 0) AS dead FROM job_ends WHERE queue = ? AND minute >= ?`).get(queue, from) as {
      ended: number;
      dead: number;
    };
    ends = { window_ms: now - from * 60000, ended: r.ended, dead: r.dead };
  }

  return {
    ...(ends ? { ends } : {}),
    at: now,
    backlog_seconds: backlogFigure(byClass.reduce((s, b) => s + b.backlog_seconds, 0)),
    by_class: byClass,
    by_tenant: byTenant,
    tenants_total: withJobs.length,
    totals,
    by_attempt: byAttempt,
    time_in_queue_ms: samples('wait'),
    execution_ms: samples('exec'),
    recent: { window_ms: now - fromMinute * 60000, ...recent },
    failures_by_code: failureCounts(new Map(failures.map((r) => [r.code, r.n]))),
    usage: usageFigure(usage ?? { tokens: 0, cost_usd: 0 }),
  };
}
