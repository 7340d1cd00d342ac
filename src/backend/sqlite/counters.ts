/**
 * The counters a state change of a job moves (per-state and per-tenant counts,
 * backlog seconds, outcome totals, attempt outcomes, per-minute activity, the
 * time-in-queue and execution-time sample rings), kept in JS while a write
 * transaction runs and written once, summed, just before it commits.
 *
 * Why: as per-row triggers these were ~10 upserts per state change, about 40%
 * of the CPU of a claim + complete. Summed per transaction, a group commit of
 * 50 completions writes a handful of counter rows instead of 500.
 *
 * Exactness, also with several processes on one file: every write runs in
 * BEGIN IMMEDIATE, the deltas are added (`n = n + delta`) inside that same
 * transaction, and nothing of it is visible to anyone before the COMMIT. Within
 * the transaction, a read of a counter table through `SqliteStore.sql` writes
 * the pending deltas first (`readsCounters`), so a claim or an admission check
 * sees its own transaction's moves. A savepoint that rolls back takes its deltas
 * with it (`mark` / `rollbackTo`).
 *
 * UPDATEs (the worker's and redrive's hot path) and submit's INSERTs are counted
 * here: every UPDATE of `jobs.state` must go through `SqliteStore.save`, and
 * submit inserts through `SqliteStore.insertJob`. Other inserts (rows without a
 * request fingerprint: SQS custody rows, rows written by other tools) and all
 * deletes still go through the triggers of the schema (migration 4).
 */
import type Database from 'better-sqlite3';
import { DEFAULT_ESTIMATED_SECONDS } from '../../core/admission.js';
import { FAILURE_CODE_OTHER, STATS_ENDS_MAX_WINDOW_MS, STATS_MAX_FAILURE_CODES, STATS_SAMPLE_LIMIT } from '../contract.js';

/** One change of `jobs.state`, with what the counters need from the row before and after it. */
export interface StateChange {
  queue: string;
  cls: string;
  tenant: string;
  /** null: the row is new (an insert), counted as entering `to`. */
  from: string | null;
  to: string;
  /** The row's estimated_seconds column (null: the default). */
  estimated: number | null;
  /** The job's attempt number after the change. */
  attempt: number;
  /** updated_at after the change (epoch ms). */
  at: number;
  /** run_at before the change: a claim's time in queue is measured from it. */
  runAtBefore: number;
  /** The claim sequence number of the attempt that ends or starts (null when unknown: no sample). */
  seq: number | null;
  /** When the attempt that ends started. */
  startedAt: number | null;
  /** When the attempt that ends ended, as its record says (a lost lease: when it ran out); absent or null: `at`. */
  endedAt?: number | null;
  /** The error code the ending attempt's record got (a failure, or LEASE_EXPIRED); absent or null: no failure to count. */
  failCode?: string | null;
}

export interface Mark {
  len: number;
  flushed: number;
}

/** Statements that read a counter kept here: before one runs, the pending deltas are written. */
export const COUNTER_TABLES = /\b(queue_counts|tenant_counts|backlog|queue_totals|attempt_outcomes|activity|stat_samples|attempt_failures|job_ends)\b/;

const isPending = (s: string) => s === 'queued' || s === 'scheduled';
/** Per-minute activity kept (the recent window is shorter; the rest is slack). */
const ACTIVITY_KEEP_MINUTES = 15;
/** Per-minute job ends kept: the longest `dlq check --window`, and a minute of slack. */
const ENDS_KEEP_MINUTES = STATS_ENDS_MAX_WINDOW_MS / 60_000 + 1;

type Prepare = (text: string) => Database.Statement;

export class CounterLog {
  private log: StateChange[] = [];
  /** log[0 .. flushed) is already written to the counter tables of the open transaction. */
  private flushed = 0;
  /** queue → attempts counted so far in this transaction (written + pending): the next claim's sequence number is one more. */
  private attempts = new Map<string, number>();

  constructor(private readonly sql: Prepare) {}

  get pending(): boolean {
    return this.flushed < this.log.length;
  }

  record(change: StateChange): void {
    this.log.push(change);
  }

  /** The sequence number of a claim about to be recorded on `queue` (the queue's attempt count after it). */
  nextAttemptSeq(queue: string): number {
    let n = this.attempts.get(queue);
    if (n === undefined) {
      const row = this.sql(`SELECT n FROM queue_totals WHERE queue = ? AND name = 'attempts'`).get(queue) as { n: number } | undefined;
      n = row?.n ?? 0;
      for (let i = this.flushed; i < this.log.length; i++) {
        const c = this.log[i]!;
        if (c.queue === queue && isClaim(c)) n++;
      }
    }
    this.attempts.set(queue, n + 1);
    return n + 1;
  }

  /** Where a savepoint starts. */
  mark(): Mark {
    return { len: this.log.length, flushed: this.flushed };
  }

  /** The savepoint rolled back: SQLite undid every counter write made inside it, so the log goes back to how it was. */
  rollbackTo(m: Mark): void {
    this.log.length = m.len;
    this.flushed = m.flushed;
    this.attempts.clear();
  }

  /** The transaction ended (committed after `flush`, or rolled back): nothing is pending and nothing is cached. */
  reset(): void {
    this.log = [];
    this.flushed = 0;
    this.attempts.clear();
  }

  /** Writes the pending deltas, summed, into the counter tables (inside the open transaction). */
  flush(): void {
    if (!this.pending) return;
    const counts = new Map<string, [string, string, number]>();
    const tenants = new Map<string, [string, string, string, string, number]>();
    const backlog = new Map<string, [string, string, string, number]>();
    const totals = new Map<string, [string, string, number]>();
    const outcomes = new Map<string, [string, number, number, number]>();
    const activity = new Map<string, [string, number, number, number, number]>();
    const samples = new Map<string, [string, string, number, number, number]>();
    const failures = new Map<string, [string, string, number]>();
    const ends = new Map<string, [string, number, number, number]>();
    // A job ended (succeeded, dead, expired, cancelled) this minute: the windowed DLQ rate.
    const jobEnded = (c: StateChange) => {
      const minute = Math.floor(c.at / 60000);
      const k = `${c.queue}\u0000${minute}`;
      const dead = c.to === 'dead' ? 1 : 0;
      const e = ends.get(k);
      if (e) {
        e[2] += 1;
        e[3] += dead;
      } else ends.set(k, [c.queue, minute, 1, dead]);
    };
    const prune = new Map<string, number>();
    const add3 = (m: Map<string, [string, string, number]>, a: string, b: string, d: number) => {
      const k = `${a}\u0000${b}`;
      const e = m.get(k);
      if (e) e[2] += d;
      else m.set(k, [a, b, d]);
    };
    const tenant = (c: StateChange, state: string, d: number) => {
      const k = `${c.queue}\u0000${c.cls}\u0000${c.tenant}\u0000${state}`;
      const e = tenants.get(k);
      if (e) e[4] += d;
      else tenants.set(k, [c.queue, c.cls, c.tenant, state, d]);
    };
    const seconds = (c: StateChange, d: number) => {
      const s = d * (c.estimated ?? DEFAULT_ESTIMATED_SECONDS);
      for (const [dim, name] of [['class', c.cls], ['tenant', c.tenant]] as const) {
        const k = `${c.queue}\u0000${dim}\u0000${name}`;
        const e = backlog.get(k);
        if (e) e[3] += s;
        else backlog.set(k, [c.queue, dim, name, s]);
      }
    };
    const sample = (queue: string, kind: string, seq: number, ms: number) => {
      const slot = seq % STATS_SAMPLE_LIMIT;
      // A later sample in the same slot replaces an earlier one, as in the ring itself.
      samples.set(`${queue}\u0000${kind}\u0000${slot}`, [queue, kind, slot, seq, Math.max(0, ms)]);
    };

    for (let i = this.flushed; i < this.log.length; i++) {
      const c = this.log[i]!;
      if (c.from === null) {
        // A new row (submit): what the insert triggers count for rows agentq did not write itself.
        add3(counts, c.queue, c.to, +1);
        tenant(c, c.to, +1);
        if (isPending(c.to)) seconds(c, +1);
        add3(totals, c.queue, 'submitted', 1);
        const minute = Math.floor(c.at / 60000);
        const ka = `${c.queue}\u0000${minute}`;
        const a = activity.get(ka);
        if (a) a[2] += 1;
        else activity.set(ka, [c.queue, minute, 1, 0, 0]);
        continue;
      }
      add3(counts, c.queue, c.from, -1);
      add3(counts, c.queue, c.to, +1);
      tenant(c, c.from, -1);
      tenant(c, c.to, +1);
      if (isPending(c.from) && !isPending(c.to)) seconds(c, -1);
      if (!isPending(c.from) && isPending(c.to)) seconds(c, +1);
      if (isClaim(c)) {
        add3(totals, c.queue, 'attempts', 1);
        if (c.seq !== null) sample(c.queue, 'wait', c.seq, c.at - c.runAtBefore);
      } else if (c.from === 'running' && c.to !== 'queued') {
        // An attempt ended (a release back to queued does not count the attempt).
        add3(totals, c.queue, c.to === 'scheduled' ? 'retried' : c.to, 1);
        if (c.to !== 'scheduled') jobEnded(c);
        const ok = c.to === 'succeeded' ? 1 : 0;
        const ko = `${c.queue}\u0000${c.attempt}`;
        const o = outcomes.get(ko);
        if (o) {
          o[2] += ok;
          o[3] += 1 - ok;
        } else outcomes.set(ko, [c.queue, c.attempt, ok, 1 - ok]);
        const minute = Math.floor(c.at / 60000);
        const ka = `${c.queue}\u0000${minute}`;
        const a = activity.get(ka);
        if (a) {
          a[3] += ok;
          a[4] += 1 - ok;
        } else activity.set(ka, [c.queue, minute, 0, ok, 1 - ok]);
        if (c.seq !== null && c.startedAt !== null) sample(c.queue, 'exec', c.seq, (c.endedAt ?? c.at) - c.startedAt);
        if (c.failCode) add3(failures, c.queue, c.failCode, 1);
      } else if (c.from !== 'running' && c.from !== 'dead' && (c.to === 'succeeded' || c.to === 'dead' || c.to === 'expired' || c.to === 'cancelled')) {
        // Ends that are not attempts: a queued job cancelled or expired. A DLQ entry expired by
        // `dlq expire` is not a second end: it ended when it died, and counting it again would
        // lower the DLQ rate (dead / ended) each time the DLQ is cleaned up.
        add3(totals, c.queue, c.to, 1);
        jobEnded(c);
      }
      // Per-minute activity rows are tiny, so pruning now and then is enough: on changes in the
      // first half second of a minute (a busy queue has some; an idle one adds no rows to prune).
      if (c.at % 60000 < 500) prune.set(c.queue, Math.max(prune.get(c.queue) ?? 0, Math.floor(c.at / 60000)));
    }
    this.flushed = this.log.length;

    const upCount = this.sql(`INSERT INTO queue_counts (queue, state, n) VALUES (?, ?, ?) ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`);
    for (const [q, s, d] of counts.values()) if (d !== 0) upCount.run(q, s, d);
    const upTenant = this.sql(
      `INSERT INTO tenant_counts (queue, class, tenant, state, n) VALUES (?, ?, ?, ?, ?) ON CONFLICT (queue, state, class, tenant) DO UPDATE SET n = n + excluded.n`,
    );
    // Only non-zero rows are kept, so candidate tenants are read without a scan of idle ones.
    const dropTenant = this.sql(`DELETE FROM tenant_counts WHERE queue = ? AND class = ? AND tenant = ? AND state = ? AND n = 0`);
    for (const [q, cl, t, s, d] of tenants.values()) {
      if (d === 0) continue;
      upTenant.run(q, cl, t, s, d);
      if (d < 0) dropTenant.run(q, cl, t, s);
    }
    const upBacklog = this.sql(
      `INSERT INTO backlog (queue, dim, name, seconds) VALUES (?, ?, ?, ?) ON CONFLICT (queue, dim, name) DO UPDATE SET seconds = max(0, seconds + excluded.seconds)`,
    );
    for (const [q, dim, name, s] of backlog.values()) if (s !== 0) upBacklog.run(q, dim, name, s);
    const upTotal = this.sql(`INSERT INTO queue_totals (queue, name, n) VALUES (?, ?, ?) ON CONFLICT (queue, name) DO UPDATE SET n = n + excluded.n`);
    for (const [q, name, d] of totals.values()) upTotal.run(q, name, d);
    const upOutcome = this.sql(
      `INSERT INTO attempt_outcomes (queue, attempt, succeeded, failed) VALUES (?, ?, ?, ?)
       ON CONFLICT (queue, attempt) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed`,
    );
    for (const o of outcomes.values()) upOutcome.run(...o);
    const upActivity = this.sql(
      `INSERT INTO activity (queue, minute, submitted, succeeded, failed) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (queue, minute) DO UPDATE SET submitted = submitted + excluded.submitted, succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed`,
    );
    for (const a of activity.values()) upActivity.run(...a);
    if (ends.size > 0) {
      const upEnds = this.sql(
        `INSERT INTO job_ends (queue, minute, ended, dead) VALUES (?, ?, ?, ?)
         ON CONFLICT (queue, minute) DO UPDATE SET ended = ended + excluded.ended, dead = dead + excluded.dead`,
      );
      for (const e of ends.values()) upEnds.run(...e);
    }
    // Two samples per job (its wait and its execution): written many rows per statement.
    insertRows(
      this.sql,
      `INSERT INTO stat_samples (queue, kind, slot, seq, ms) VALUES`,
      `ON CONFLICT (queue, kind, slot) DO UPDATE SET seq = excluded.seq, ms = excluded.ms`,
      5,
      [...samples.values()],
    );
    if (failures.size > 0) this.writeFailures(failures.values());
    const pruneActivity = this.sql(`DELETE FROM activity WHERE queue = ? AND minute < ?`);
    const pruneEnds = this.sql(`DELETE FROM job_ends WHERE queue = ? AND minute < ?`);
    for (const [q, minute] of prune) {
      pruneActivity.run(q, minute - ACTIVITY_KEEP_MINUTES);
      pruneEnds.run(q, minute - ENDS_KEEP_MINUTES);
    }
  }

  /**
   * Failed attempts per (queue, error code). Codes are the callers' strings, so a queue keeps its
   * first STATS_MAX_FAILURE_CODES codes and counts the attempts of any later one under OTHER:
   * the table stays bounded whatever codes handlers invent. Only transactions that end an attempt
   * in failure get here (a success writes nothing).
   */
  private writeFailures(rows: Iterable<[string, string, number]>): void {
    const bump = this.sql(`UPDATE attempt_failures SET n = n + ? WHERE queue = ? AND code = ?`);
    const kept = this.sql(`SELECT count(*) AS n FROM attempt_failures WHERE queue = ? AND code <> '${FAILURE_CODE_OTHER}'`);
    const add = this.sql(`INSERT INTO attempt_failures (queue, code, n) VALUES (?, ?, ?) ON CONFLICT (queue, code) DO UPDATE SET n = n + excluded.n`);
    for (const [q, code, d] of rows) {
      if (bump.run(d, q, code).changes > 0) continue;
      const full = code !== FAILURE_CODE_OTHER && (kept.get(q) as { n: number }).n >= STATS_MAX_FAILURE_CODES;
      add.run(q, full ? FAILURE_CODE_OTHER : code, d);
    }
  }
}

/** Row counts of the multi-row statements: a batch of n rows runs as few statements as these sizes allow. */
const CHUNKS = [64, 16, 4, 1];

/** Runs `head (?, ...), (?, ...) tail` over `rows`, up to 64 rows per statement. Rows must not repeat a key. */
export function insertRows(sql: Prepare, head: string, tail: string, width: number, rows: unknown[][]): void {
  const tuple = `(${Array(width).fill('?').join(', ')})`;
  let i = 0;
  for (const size of CHUNKS) {
    if (rows.length - i < size) continue;
    const st = sql(`${head} ${Array(size).fill(tuple).join(', ')} ${tail}`);
    while (rows.length - i >= size) {
      st.run(rows.slice(i, i + size).flat());
      i += size;
    }
  }
}

function isClaim(c: StateChange): boolean {
  return c.to === 'running' && c.from !== 'running' && c.from !== null;
}
