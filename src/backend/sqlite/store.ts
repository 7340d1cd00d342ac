/**
 * The connection and the few primitives every operation is built from: load
 * and save a job (document + derived columns), append an event, run a write
 * transaction. Every write runs inside `BEGIN IMMEDIATE`, which takes the
 * database's write lock up front: a read-then-write cannot interleave with
 * another process's write, and a busy database is waited for (up to the busy
 * timeout, looking every millisecond: write-lock.ts) at BEGIN instead of
 * failing half-way with SQLITE_BUSY.
 */
import Database from 'better-sqlite3';
import { accessSync, constants as fsConstants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Clock, Random } from '../../core/clock.js';
import { toIso } from '../../core/duration.js';
import { ConfigError, PermissionError, RetryLaterError, ValidationError } from '../../core/errors.js';
import type { AttemptRecord, EventType, Job, JobState } from '../../core/schemas.js';
import { MAX_PAGE_LIMIT } from '../contract.js';
import { LIGHT_UPDATE_JOB_SQL, UPDATE_JOB_SQL, isLightUpdate, jobColumns, originOf, rememberSaved, rowToJob, type JobRow } from './codec.js';
import { COUNTER_TABLES, CounterLog, insertRows } from './counters.js';
import { DEFAULT_BUSY_TIMEOUT_MS, openSchema } from './schema.js';
import { StoreFile } from './store-file.js';
import { WalBound, WAL_LIMIT_BYTES } from './wal-bound.js';
import { takeWriteLock } from './write-lock.js';

const TRAFFIC_BUCKET_MS = 10_000;

/** An event row: the job it is about, its type, the move, when, and its data. */
export type EventTuple = [job: Job, type: EventType, from: JobState | null, to: JobState | null, at: number, data: Record<string, unknown> | null];

/** The columns a new job row is inserted with (`SqliteStore.insertJob`), in the order of its values. */
export const NEW_JOB_COLUMNS = [
  'id', 'queue', 'state', 'tenant', 'class', 'workflow', 'created_at', 'updated_at', 'run_at', 'deadline_at', 'attempt',
  'max_attempts', 'fence', 'estimated_seconds', 'idem_key', 'fingerprint', 'doc',
] as const;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** An op of a group commit threw after writing: the batch runs again with a savepoint per op. */
class WroteThenThrew extends Error {}

export class SqliteStore {
  readonly db: Database.Database;
  private readonly updateJob: Database.Statement;
  private readonly selectJob: Database.Statement;
  private readonly insertEvent: Database.Statement;
  private readonly addTraffic: Database.Statement;
  private readonly readTraffic: Database.Statement;
  private readonly pruneTraffic: Database.Statement;

  constructor(
    readonly path: string,
    readonly clock: Clock,
    readonly random: Random,
    busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
    walLimitBytes = WAL_LIMIT_BYTES,
  ) {
    try {
      this.db = new Database(path);
    } catch (e) {
      throw storeError(e, path);
    }
    try {
      openSchema(this.db, busyTimeoutMs, walLimitBytes);
    } catch (e) {
      this.db.close();
      // A migration (or WAL switch) waiting out another process's write lock is "retry later" (exit 75),
      // not a configuration problem; a file or directory this process may not write is a permission one.
      throw storeError(e, path);
    }
    // Taken now, just after the open: the path is compared with it before each write (store-file.ts).
    this.file = StoreFile.watch(path);
    // Many processes' overlapping reads keep SQLite's own checkpoints from starting the WAL over (wal-bound.ts).
    this.wal = this.file ? new WalBound(this.db, `${this.file.path}-wal`, walLimitBytes, Math.max(0, Math.floor(busyTimeoutMs))) : null;
    this.tx = this.db.transaction((fn: () => unknown) => fn());
    this.busyTimeoutMs = Math.max(0, Math.floor(busyTimeoutMs));
    this.begin = this.db.prepare('BEGIN IMMEDIATE');
    this.commit = this.db.prepare('COMMIT');
    this.rollback = this.db.prepare('ROLLBACK');
    this.noBusyWait = this.db.prepare('PRAGMA busy_timeout = 0');
    this.busyWait = this.db.prepare(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
    this.counters = new CounterLog((text) => this.sql(text));
    this.updateJob = this.db.prepare(UPDATE_JOB_SQL);
    this.selectJob = this.db.prepare('SELECT * FROM jobs WHERE id = ?');
    this.insertEvent = this.db.prepare(
      'INSERT INTO events (job_id, queue, tenant, type, at, from_state, to_state, attempt, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.addTraffic = this.db.prepare(
      `INSERT INTO traffic (queue, bucket, attempts, retries) VALUES (?, ?, ?, ?)
       ON CONFLICT (queue, bucket) DO UPDATE SET attempts = attempts + excluded.attempts, retries = retries + excluded.retries`,
    );
    this.readTraffic = this.db.prepare(
      'SELECT coalesce(sum(attempts), 0) AS attempts, coalesce(sum(retries), 0) AS retries FROM traffic WHERE queue = ? AND bucket > ?',
    );
    this.pruneTraffic = this.db.prepare('DELETE FROM traffic WHERE queue = ? AND bucket < ?');
  }

  private readonly wal: WalBound | null;

  /** The file this connection opened, watched for being removed or replaced under it (null: in memory). */
  readonly file: StoreFile | null;

  /** Counter deltas of the open write transaction, written just before it commits (counters.ts). */
  readonly counters: CounterLog;
  private readonly cache = new Map<string, Database.Statement>();
  /** Statements that read a counter table: the pending deltas are written before one is handed out. */
  private readonly counterReads = new Set<Database.Statement>();
  /**
   * One transaction function reused for every write: building one with
   * `db.transaction` costs more than a small statement. Called inside another
   * transaction it becomes a savepoint.
   */
  private readonly tx: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly busyTimeoutMs: number;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly noBusyWait: Database.Statement;
  private readonly busyWait: Database.Statement;

  /**
   * BEGIN IMMEDIATE, waiting for another process's write lock by looking for it every millisecond
   * (write-lock.ts) instead of with SQLite's busy handler, which looks only every 100 ms after the
   * first third of a second. The connection's own busy timeout stays for everything else (reads,
   * checkpoints, migrations).
   */
  private beginImmediate(): void {
    this.noBusyWait.run();
    try {
      takeWriteLock(() => this.begin.run(), this.busyTimeoutMs);
    } finally {
      this.busyWait.run();
    }
  }

  /** A prepared statement, compiled once per connection (preparing is most of the cost of a small query). */
  sql(text: string): Database.Statement {
    // A read outside a write transaction (tail --follow, stats --watch, metrics serve poll for ever)
    // looks at the path now and then; a write transaction always did, at its BEGIN (write).
    if (this.file && !this.db.inTransaction) this.file.checkSometimes();
    let s = this.cache.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.cache.set(text, s);
      if (s.reader && COUNTER_TABLES.test(text)) this.counterReads.add(s);
    }
    // A read of a counter within the transaction sees the transaction's own moves.
    if (this.counters.pending && this.counterReads.has(s)) this.counters.flush();
    return s;
  }

  /** Runs `fn` in a savepoint of the current transaction: if it throws, only its writes roll back. */
  savepoint<T>(fn: () => T): T {
    const mark = this.counters.mark();
    try {
      return this.tx(fn) as T;
    } catch (e) {
      this.counters.rollbackTo(mark);
      throw e;
    }
  }

  /**
   * Runs `fn` in the transaction already open on this connection, with no
   * savepoint (the caller decides what rolls back if it throws), or in a new
   * `BEGIN IMMEDIATE` transaction when none is open.
   */
  inWrite<T>(fn: () => T): T {
    return this.db.inTransaction ? fn() : this.write(fn);
  }

  /** Runs `fn` in one `BEGIN IMMEDIATE` transaction (nested calls become savepoints). */
  write<T>(fn: () => T): T {
    if (this.db.inTransaction) return this.savepoint(fn);
    // Not into a file that is no longer the store: what it wrote would be lost with it.
    this.file?.check();
    try {
      // (What better-sqlite3's transaction().immediate does, but with the wait of beginImmediate.)
      this.beginImmediate();
      let out: T;
      try {
        out = fn();
        this.writeNewJobs();
        // The counters of every state change in this transaction, summed, in the same commit.
        this.counters.flush();
        this.commit.run();
      } catch (e) {
        if (this.db.inTransaction) this.rollback.run();
        throw e;
      }
      this.wal?.afterCommit();
      return out;
    } catch (e) {
      throw storeError(e, this.path);
    } finally {
      this.counters.reset();
      this.newJobs = [];
      this.newEvents = [];
      this.deferInserts = false;
      this.batchEnd.clear();
    }
  }

  private pending: Array<{ fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void; inserts: boolean }> = [];

  /**
   * Group commit: writes requested in the same turn of the event loop (a
   * worker completing 50 jobs, a producer submitting with Promise.all) share
   * one BEGIN IMMEDIATE ... COMMIT. One op that throws rolls back alone and
   * the others still commit; callers are resolved only after the COMMIT, so
   * nothing is reported before it is durable. A commit costs far more than
   * the statements in it (every touched page is appended to the WAL), which
   * is why this matters.
   *
   * The ops run without a savepoint each: a savepoint copies every page its op
   * touches to the statement journal, which was about a fifth of the CPU of a
   * claim + complete. An op that throws has almost always written nothing (a
   * lost lease, a bad argument: checked before any write), which SQLite's
   * change count confirms; only when a throwing op had written something does
   * the whole transaction roll back and run again with a savepoint per op.
   */
  grouped<T>(fn: () => T, inserts = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject, inserts });
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (!this.db.open) {
      for (const op of batch) op.reject(new Error('the database is closed'));
      return;
    }
    let outcomes: Outcome[];
    try {
      try {
        outcomes = this.write(() => this.runBatch(batch, false));
      } catch (e) {
        if (!(e instanceof WroteThenThrew)) throw e;
        // Nothing of the batch was written: again, each op in a savepoint of its own.
        outcomes = this.write(() => this.runBatch(batch, true));
      }
    } catch (error) {
      // BEGIN or COMMIT failed, or a lone op threw: nothing of the batch was written.
      for (const op of batch) op.reject(error);
      return;
    }
    batch.forEach((op, i) => {
      const o = outcomes[i]!;
      if (o.ok) op.resolve(o.value);
      else op.reject(o.error);
    });
  }

  private runBatch(batch: Array<{ fn: () => unknown; inserts: boolean }>, isolate: boolean): Outcome[] {
    // A lone op needs no savepoint: if it throws, the whole transaction rolls back (the caller rejects it).
    const changes = this.sql('SELECT total_changes()').pluck();
    if (batch.length === 1) {
      const value = batch[0]!.fn();
      this.writeNewJobs();
      this.runBatchEnd(false, changes);
      return [{ ok: true, value }];
    }
    const outcomes: Outcome[] = [];
    let before = isolate ? 0 : (changes.get() as number);
    for (const op of batch) {
      if (isolate) {
        try {
          outcomes.push({ ok: true, value: this.savepoint(op.fn) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
        continue;
      }
      // A run of submits shares multi-row INSERTs; any other op first sees their rows written.
      if (!op.inserts && this.newJobs.length > 0) {
        this.writeNewJobs();
        before = changes.get() as number;
      }
      this.deferInserts = op.inserts;
      const mark = this.counters.mark();
      const jobsMark = this.newJobs.length;
      const eventsMark = this.newEvents.length;
      try {
        outcomes.push({ ok: true, value: op.fn() });
        if (!op.inserts) before = changes.get() as number;
      } catch (error) {
        if ((changes.get() as number) !== before) throw new WroteThenThrew();
        this.counters.rollbackTo(mark);
        this.newJobs.length = jobsMark;
        this.newEvents.length = eventsMark;
        outcomes.push({ ok: false, error });
      }
    }
    this.deferInserts = false;
    this.writeNewJobs();
    this.runBatchEnd(isolate, changes);
    return outcomes;
  }

  /** Work the ops of a group commit left for its end, by kind (`batchEndItems`). */
  private batchEnd = new Map<string, { items: unknown[]; run: (items: unknown[]) => void }>();

  /**
   * The list an op appends to for work done once for the whole group commit, after every op of it
   * ran (the claims of `completeAndClaim`: one claim for the next jobs of all the commit's
   * completions). `run` gets the items at the end; whatever it writes commits with the batch. If it
   * throws having written nothing, its items stay as they were (a claim then gives nothing, which
   * the contract allows); if it had written, the batch runs again, each op and each such task in a
   * savepoint of its own. The list is dropped with a transaction that does not commit.
   */
  batchEndItems<T>(kind: string, run: (items: T[]) => void): T[] {
    let task = this.batchEnd.get(kind);
    if (!task) this.batchEnd.set(kind, (task = { items: [], run: run as (items: unknown[]) => void }));
    return task.items as T[];
  }

  private runBatchEnd(isolate: boolean, changes: Database.Statement): void {
    while (this.batchEnd.size > 0) {
      const [kind, task] = this.batchEnd.entries().next().value as [string, { items: unknown[]; run: (items: unknown[]) => void }];
      this.batchEnd.delete(kind);
      if (isolate) {
        try {
          this.savepoint(() => task.run(task.items));
        } catch {
          // Rolled back alone: the ops' own writes stand, the task's items get nothing.
        }
        continue;
      }
      const before = changes.get() as number;
      try {
        task.run(task.items);
      } catch {
        if ((changes.get() as number) !== before) throw new WroteThenThrew();
      }
    }
  }

  /**
   * New job rows (and their `submitted` events) of a run of submits in one group commit, written
   * together by `writeNewJobs`, up to 64 rows per INSERT. Why: an INSERT into `jobs`, which has
   * triggers (the counters of rows agentq did not write itself, the SQS outbox), runs with a
   * statement journal: every page it touches is copied first, which cost as much as the rest of
   * the insert. One statement for 64 rows pays that once. Nothing reads `jobs` between a submit
   * and the write but the next submits' idempotency look-ups, which check these rows too.
   */
  private newJobs: unknown[][] = [];
  private newEvents: EventTuple[] = [];
  /** Set while an op that may defer its inserts runs (a submit in a group commit). */
  private deferInserts = false;

  /**
   * Inserts a new job row: `values` in the order of `NEW_JOB_COLUMNS`. Its counters are recorded
   * here (the insert triggers leave out rows with a fingerprint, i.e. rows written by submit).
   */
  insertJob(job: Job, values: unknown[], event: EventTuple, estimated: number | null): void {
    this.counters.record({
      queue: job.queue,
      cls: job.class,
      tenant: job.tenant_id,
      from: null,
      to: job.state,
      estimated,
      attempt: job.attempt,
      at: Date.parse(job.created_at),
      runAtBefore: 0,
      seq: null,
      startedAt: null,
    });
    this.newJobs.push(values);
    this.newEvents.push(event);
    if (!this.deferInserts) this.writeNewJobs();
  }

  /** A new job of this transaction not written yet, by idempotency key (`values` index of queue and idem_key). */
  pendingByIdemKey(queue: string, key: string): unknown[] | undefined {
    for (const v of this.newJobs) if (v[1] === queue && v[14] === key) return v;
    return undefined;
  }

  private writeNewJobs(): void {
    if (this.newJobs.length === 0) return;
    const rows = this.newJobs;
    const events = this.newEvents;
    this.newJobs = [];
    this.newEvents = [];
    insertRows((text) => this.sql(text), `INSERT INTO jobs (${NEW_JOB_COLUMNS.join(', ')}) VALUES`, '', NEW_JOB_COLUMNS.length, rows);
    this.events(events);
  }

  row(jobId: string): JobRow | undefined {
    // (a prepared statement of its own, so `sql()`'s read check is done here: `get` alone is what
    // `submit --wait` and `waitForJob` poll, and they polled a removed file for ever)
    if (this.file && !this.db.inTransaction) this.file.checkSometimes();
    return this.selectJob.get(jobId) as JobRow | undefined;
  }

  load(jobId: string): { job: Job; fence: number; row: JobRow } | null {
    const row = this.row(jobId);
    if (!row) return null;
    return { job: rowToJob(row), fence: row.fence, row };
  }

  /**
   * Writes a job's document and columns. The only way a job's state changes
   * (inserts and deletes aside): it records the change for the counters, and a
   * claim gets its sequence number (the execution-time sample of its end goes
   * into the same ring slot).
   */
  save(job: Job, fence: number): void {
    const cols = jobColumns(job, fence);
    const before = originOf(job) ?? this.savedColumns(job.job_id);
    // Carried from the row as read: the row's own identity columns (what the insert trigger counted),
    // its estimate, and the running attempt's start, which only a claim changes.
    const carried = {
      queue: before.queue ?? job.queue,
      class: before.class ?? job.class,
      tenant: before.tenant ?? job.tenant_id,
      estimated_seconds: before.estimated_seconds ?? null,
    };
    cols.attempt_seq = before.attempt_seq ?? null;
    cols.attempt_started_at = before.attempt_started_at ?? null;
    if (isLightUpdate(job, cols)) {
      this.sql(LIGHT_UPDATE_JOB_SQL).run(cols);
    } else if (before.state !== cols.state) {
      const seq = cols.attempt_seq;
      const startedAt = cols.attempt_started_at;
      const ending = before.state === 'running' ? job.attempts[job.attempts.length - 1] : undefined;
      if (cols.state === 'running') {
        cols.attempt_seq = this.counters.nextAttemptSeq(carried.queue);
        cols.attempt_started_at = cols.updated_at;
      }
      this.updateJob.run(cols);
      this.counters.record({
        queue: carried.queue,
        cls: carried.class,
        tenant: carried.tenant,
        from: before.state!,
        to: cols.state,
        estimated: carried.estimated_seconds,
        attempt: cols.attempt,
        at: cols.updated_at,
        runAtBefore: before.run_at!,
        // A claim's sample goes to its own slot; an attempt's end to the slot of its claim.
        seq: cols.state === 'running' ? cols.attempt_seq : seq,
        startedAt,
        // An attempt that ends here ended as its record says: a failure counts under its code, and
        // its execution time runs to the record's end (a lost lease's: when the lease ran out).
        failCode: ending?.error_code ?? null,
        endedAt: ending?.ended_at ? Date.parse(ending.ended_at) : null,
      });
    } else {
      this.updateJob.run(cols);
    }
    rememberSaved(job, Object.assign(cols, carried));
  }

  /** The stored columns a save compares against, for a job object not read through this store. */
  private savedColumns(jobId: string): Partial<JobRow> {
    const row = this.sql('SELECT queue, class, tenant, state, run_at, estimated_seconds, attempt_seq, attempt_started_at FROM jobs WHERE id = ?').get(jobId) as Partial<JobRow> | undefined;
    if (!row) throw new Error(`internal: save of job ${jobId}, which is not stored`);
    return row;
  }

  /**
   * Several events in one multi-row INSERT (a claim's `claimed` events): seq order is the array's.
   * Chunks of 16 rows, so only two statement texts per size class get prepared.
   */
  events(rows: EventTuple[]): void {
    let i = 0;
    while (i < rows.length) {
      const n = rows.length - i >= 16 ? 16 : 1;
      const stmt = n === 1 ? this.insertEvent : this.sql(`INSERT INTO events (job_id, queue, tenant, type, at, from_state, to_state, attempt, data) VALUES ${Array(16).fill('(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`);
      const args: unknown[] = [];
      for (let k = i; k < i + n; k++) {
        const [job, type, from, to, at, data] = rows[k]!;
        args.push(job.job_id, job.queue, job.tenant_id, type, at, from, to, job.attempt, data === null ? null : JSON.stringify(data));
      }
      stmt.run(...args);
      i += n;
    }
  }

  event(job: Job, type: EventType, from: JobState | null, to: JobState | null, at: number, data: Record<string, unknown> | null = null): void {
    this.insertEvent.run(job.job_id, job.queue, job.tenant_id, type, at, from, to, job.attempt, data === null ? null : JSON.stringify(data));
  }

  /** An event of a job not read into an object (a completion patched in place). */
  eventRow(jobId: string, queue: string, tenant: string, type: EventType, at: number, from: JobState | null, to: JobState | null, attempt: number, data: Record<string, unknown> | null): void {
    this.insertEvent.run(jobId, queue, tenant, type, at, from, to, attempt, data === null ? null : JSON.stringify(data));
  }

  countTraffic(queue: string, now: number, attempts: number, retries: number): void {
    if (attempts === 0 && retries === 0) return;
    this.addTraffic.run(queue, Math.floor(now / TRAFFIC_BUCKET_MS) * TRAFFIC_BUCKET_MS, attempts, retries);
  }

  recentTraffic(queue: string, now: number, windowMs: number): { attempts: number; retries: number } {
    return this.readTraffic.get(queue, now - windowMs) as { attempts: number; retries: number };
  }

  pruneTrafficBefore(queue: string, before: number): void {
    this.pruneTraffic.run(queue, before);
  }

  close(): void {
    // Writes still waiting for their group commit go in before the connection closes.
    if (this.pending.length > 0) this.flush();
    if (this.db.open) this.db.close();
  }
}

/**
 * SQLite's errors that are the store's condition, not a bug in agentq, as the errors users branch on:
 * - SQLITE_BUSY after the busy timeout means another process held the write lock for that long: a
 *   transient condition, retry-later (exit 75);
 * - SQLITE_READONLY: the file (or its -wal/-shm, or the directory they are made in) may not be
 *   written by this process: a permission error (exit 4), so a worker gives up as it does on refused
 *   credentials instead of polling on, and a submit says what to check instead of "internal error";
 *   SQLITE_READONLY_DIRECTORY (no -wal/-shm can be made there) fails reads too, and says so;
 * - SQLITE_FULL and SQLITE_IOERR (the disk is full, or failed a read or write): the store cannot be
 *   used now but may be later, so retry-later (exit 75); nothing of the transaction was written;
 * - SQLITE_CORRUPT and SQLITE_NOTADB: the file is damaged (or not a database), as a file that is
 *   not a database already is at open: exit 78, and a worker stops instead of churning on it.
 */
export function storeError(e: unknown, path: string): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return e;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new RetryLaterError(
      'the SQLite database is busy: another process holds its write lock (waited out the busy timeout)',
      'BACKEND_BUSY',
      'Retry in a few seconds; if it persists, look for a stuck process using the same database file.',
    );
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') {
    // What SQLite answers a reader too (whatever the file's own mode) when it may not make the -wal
    // and -shm in the directory: "cannot be written" misled an on-call whose `list` failed so.
    const dir = dirname(resolve(path));
    return new PermissionError(
      `the SQLite database ${path} cannot be opened (${code}: ${(e as Error).message}): this user may not write the directory ${dir}, where SQLite must create the -wal and -shm files even to read`,
      `Check the directory's owner and mode (ls -ld ${dir}), or copy the database (with its -wal, if any) to a writable directory and point --url there.`,
    );
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return new PermissionError(
      `the SQLite database ${path} cannot be written by this process (${code}: ${(e as Error).message})`,
      'Check that this user may write the file, its -wal and -shm files and their directory (ls -l).',
    );
  }
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) {
    return new RetryLaterError(
      `the SQLite database ${path} cannot be written now (${code}: ${(e as Error).message}); nothing was written`,
      'BACKEND_UNAVAILABLE',
      'Free space on the disk that holds it (df -h), or look for I/O errors in the system log; then retry.',
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN')) return cantOpenError(e as Error, code, path);
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return new ConfigError(
      `the SQLite database ${path} is damaged (${code}: ${(e as Error).message}); nothing was written`,
      'Stop every process using it and keep a copy of the file (with its -wal); `sqlite3 FILE .recover` salvages what it can, or restore a backup.',
    );
  }
  return e;
}

/**
 * SQLITE_CANTOPEN: SQLite opens (or makes) PATH-wal and PATH-shm next to the file, even to read,
 * so a store on a read-only mount, or in a directory this user may not write, fails so at open
 * with only "unable to open database file". Which of those it is, is asked of the directory: a
 * read-only file system or a directory not writable is a permission error (exit 4, as the README
 * says of such a directory); anything else (a -wal that is not a file) a configuration one (78).
 */
function cantOpenError(e: Error, code: string, path: string): unknown {
  const dir = dirname(resolve(path));
  const what = `cannot open the SQLite database ${path} or its -wal and -shm files (${code}: ${e.message})`;
  let denied: string | undefined;
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch (err) {
    denied = (err as NodeJS.ErrnoException).code;
  }
  if (denied === 'EROFS') {
    return new PermissionError(
      `${what}: ${dir} is on a read-only file system, and SQLite must create the -wal and -shm files next to the database even to read it`,
      `Copy the database (with its -wal, if any) to a writable directory and point --url there, or mount ${dir} read-write.`,
    );
  }
  if (denied === 'EACCES' || denied === 'EPERM') {
    return new PermissionError(
      `${what}: this user may not write the directory ${dir}, where SQLite must create the -wal and -shm files even to read`,
      `Check the directory's owner and mode (ls -ld ${dir}).`,
    );
  }
  return new ConfigError(what, `Check that ${path}-wal and ${path}-shm, where they exist, are files this user may read and write (ls -l ${dir}).`);
}

export function checkPage(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new ValidationError(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${limit}`);
  }
}

export { toEnvelope } from '../../core/envelope.js';

let lastMs = NaN;
let lastIso = '';
/**
 * `toIso` with a one-entry memo: an operation stamps the same `now` on several
 * fields (updated_at, the attempt's start or end, the lease), and a batch of
 * operations mostly shares one clock reading; each conversion allocates a Date.
 */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = toIso(ms);
    lastMs = ms;
  }
  return lastIso;
}

/**
 * What a reaped lease's attempt records. A lease never extends past the deadline, so one that
 * ran out there ended because the deadline came (its worker may well have been heartbeating),
 * not because the worker crashed or stalled; the Redis Lua (lua/lease.ts) says the same.
 */
export function leaseExpiredError(job: Job): { code: string; message: string } {
  const who = job.lease?.worker_id ?? 'a worker';
  const atDeadline = leaseEndedAtDeadline(job);
  return {
    code: 'LEASE_EXPIRED',
    message: atDeadline
      ? `the job's deadline passed while it was running (the lease of ${who} ended at the deadline)`
      : `lease of ${who} expired at ${job.lease?.expires_at ?? '?'} without a heartbeat`,
  };
}

/**
 * When the attempt of a reaped lease ended: when its lease ran out (past that its worker may not
 * work on the job: its writes are refused), not when a claim came to notice it, maybe an hour later.
 * Its record and its execution-time sample say so; the Redis Lua (lua/lease.ts) does the same.
 */
export function leaseEndedAt(job: Job, now: number): number {
  const expires = job.lease === null ? NaN : Date.parse(job.lease.expires_at);
  return Number.isFinite(expires) ? Math.min(now, expires) : now;
}

function leaseEndedAtDeadline(job: Job): boolean {
  return job.lease !== null && job.deadline_at !== null && Date.parse(job.lease.expires_at) >= Date.parse(job.deadline_at);
}

/**
 * The `why` of the `expired` event for a job whose lease was reaped (call before the lease is
 * cleared): as specific as the attempt's error, which it repeats (the Redis Lua says the same).
 */
export function leaseExpiredWhy(job: Job): string {
  const { message } = leaseExpiredError(job);
  return leaseEndedAtDeadline(job) ? message : `${message}, and the deadline leaves no room for a retry`;
}

/** Closes the running attempt record with how it ended. */
export function endAttempt(job: Job, now: number, outcome: string, error: { code: string; message: string } | null = null): void {
  const rec: AttemptRecord | undefined = job.attempts[job.attempts.length - 1];
  if (!rec || rec.ended_at !== null) return;
  rec.ended_at = isoAt(now);
  rec.outcome = outcome;
  rec.error_code = error?.code ?? null;
  rec.error_message = error?.message ?? null;
}

/** Moves a job to a new state and stamps it; the caller checked the transition. */
export function moveTo(job: Job, state: JobState, now: number): void {
  job.state = state;
  job.updated_at = isoAt(now);
}
