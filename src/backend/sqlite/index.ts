/**
 * The embedded SQLite backend: the default store, a single file shared
 * safely by several processes on one host (WAL, busy_timeout, every write in
 * BEGIN IMMEDIATE). See docs/architecture.md, "SQLite backend".
 */
import { resolve } from 'node:path';
import { DEFAULT_ESTIMATED_SECONDS, admissionDecision, refusalError, type AdmissionLimits } from '../../core/admission.js';
import { systemClock, systemRandom, type Clock, type Random } from '../../core/clock.js';
import { toIso } from '../../core/duration.js';
import { IdempotencyConflictError, MalformedJobError, NotFoundError, ValidationError } from '../../core/errors.js';
import type { FairnessOptions } from '../../core/fairness.js';
import { encodeTime } from 'ulid';
import { JOB_ID_PREFIX, createIdFactory } from '../../core/ids.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../core/retry.js';
// zod (schemas.ts, submit.ts) is loaded only by what validates: submit, and DLQ reads (stored documents).
import { JOB_STATES, loadSchemas } from '../../core/model.js';
import type { DlqEntry, Effect, Job, JobEvent, JobState, SubmitRequest } from '../../core/schemas.js';
import { isPartial, isTerminal, outcomeFor } from '../../core/states.js';
import { checkUsage, type UsageReport } from '../../core/usage.js';
import type {
  AbortOutcome,
  ApplyRequest,
  Backend,
  CancelResult,
  ClaimRequest,
  DlqFilter,
  DlqRow,
  EventQuery,
  Failure,
  FailureOutcome,
  HeartbeatResult,
  JobFilter,
  Lease,
  LeaseRef,
  LedgerItem,
  LedgerStatus,
  LockHolder,
  LockResult,
  JobPage,
  Page,
  PageRequest,
  PlanVerdict,
  QueueStats,
  StatsOptions,
  RunRecord,
  SubmitResult,
} from '../contract.js';
import { checkApplyRequest, checkCancelReason, checkCursor, checkDlqFilter, checkEventQuery, checkFailure, checkJobFilter, checkJobIdArg, checkJobResult, checkLeaseRef, checkLeaseRefs, checkLedgerStatus, checkLockHolder, checkPageArg, checkQueueArg, checkQueuePage, checkRunFilter, checkRunRecord, checkRunIdArg, checkStatsOptions } from '../checks.js';
import { decodeEventRow, rowToJob, type EventRow, type JobRow } from './codec.js';
import { dlqGet, dlqList, dlqRaw } from './dlq.js';
import { dlqRows } from './dlq-rows.js';
import { ItemThrew, SqliteRuns } from './runs.js';
import { foldExpiredLeases } from '../../core/queue-stats.js';
import { expiredLeases, oldestClaimableRunAt, readExtendedStats } from './stats.js';
import { SqliteStore, checkPage, isoAt, moveTo } from './store.js';
import { SqliteWorkerOps } from './worker.js';
import { abortableSleep } from '../../util/sleep.js';

export interface SqliteBackendOptions {
  /** A file path, or `:memory:` (one connection only: for tests). */
  path: string;
  clock?: Clock;
  random?: Random;
  /** Backlog limits for admission control; none when absent. */
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
  retryPolicy?: RetryPolicy;
  /** How often `events({ follow: true })` looks for new rows. */
  followPollMs?: number;
  /** How long a write waits for another process's write lock before failing with RetryLaterError (default 10 s). */
  busyTimeoutMs?: number;
  /** The -wal size past which a writer checkpoints and truncates it (default 64 MiB; wal-bound.ts). */
  walLimitBytes?: number;
}

/** core/submit (and zod with it), loaded by the first submit. */
let submitModule: typeof import('../../core/submit.js') | undefined;

const EVENT_BATCH = 500;
/**
 * How far event times may run out of seq order. Each write reads its time under the write lock
 * (BEGIN IMMEDIATE), and the processes of one host share one clock, so times follow seq unless the
 * clock steps back between two writes (NTP, a resumed VM): this allows a step of up to a minute.
 */
const CLOCK_SKEW_MARGIN_MS = 60_000;

export class SqliteBackend implements Backend {
  readonly kind = 'sqlite' as const;
  readonly description: string;
  readonly storeId: string;
  private readonly store: SqliteStore;
  private readonly worker: SqliteWorkerOps;
  private readonly runs: SqliteRuns;
  private readonly newId: (prefix: string) => string;
  private readonly admission: AdmissionLimits | undefined;
  private readonly followPollMs: number;

  constructor(opts: SqliteBackendOptions) {
    const clock = opts.clock ?? systemClock;
    const random = opts.random ?? systemRandom;
    // Absolute, so the description names one file wherever it is read.
    this.description = `sqlite:${opts.path === ':memory:' ? opts.path : resolve(opts.path)}`;
    this.storeId = this.description;
    this.store = new SqliteStore(opts.path, clock, random, opts.busyTimeoutMs, opts.walLimitBytes);
    this.worker = new SqliteWorkerOps(this.store, { fairness: opts.fairness ?? {}, retryPolicy: opts.retryPolicy ?? DEFAULT_RETRY_POLICY });
    this.runs = new SqliteRuns(this.store);
    this.newId = createIdFactory(clock, random);
    this.admission = opts.admission;
    this.followPollMs = opts.followPollMs ?? 150;
  }

  private get db() {
    return this.store.db;
  }

  /** The connection, for an extension of the store over the same file (the SQS outbox): one page cache for both. */
  get connection(): SqliteStore {
    return this.store;
  }

  // ------------------------------------------------------------ producers and operators

  async submit(req: SubmitRequest): Promise<SubmitResult> {
    const { normalizeSubmit, requestFingerprint, sameRequest } = submitModule ?? (submitModule = await import('../../core/submit.js'));
    const n = normalizeSubmit(req, this.store.clock.now());
    const fingerprint = requestFingerprint(n);
    return this.store.grouped(() => {
      const now = this.store.clock.now();
      if (n.idempotency_key !== null) {
        const existing = this.store.sql('SELECT * FROM jobs WHERE queue = ? AND idem_key = ?').get(n.queue, n.idempotency_key) as (JobRow & { fingerprint: string }) | undefined;
        if (existing) {
          if (!sameRequest(existing.fingerprint, n, fingerprint)) throw new IdempotencyConflictError(n.idempotency_key, existing.id);
          return { job: rowToJob(existing), created: false };
        }
        // A submit earlier in this group commit, whose row is not written yet.
        const mine = this.store.pendingByIdemKey(n.queue, n.idempotency_key);
        if (mine) {
          if (!sameRequest(mine[15] as string, n, fingerprint)) throw new IdempotencyConflictError(n.idempotency_key, mine[0] as string);
          return { job: rowToJob({ id: mine[0] as string, doc: mine[16] as string }), created: false };
        }
      }
      const estimated = n.estimated_seconds ?? DEFAULT_ESTIMATED_SECONDS;
      if (this.admission) this.admit(n.queue, n.class, n.tenant_id, estimated, now);

      const runAt = n.run_at === null ? now : Math.max(Date.parse(n.run_at), now);
      const state: JobState = runAt > now ? 'scheduled' : 'queued';
      const job: Job = {
        job_id: this.newId(JOB_ID_PREFIX),
        tenant_id: n.tenant_id,
        queue: n.queue,
        workflow: n.workflow,
        operation: n.operation,
        class: n.class,
        input: n.input,
        input_ref: n.input_ref,
        input_sha256: n.input_sha256,
        deadline_at: n.deadline_at,
        idempotency_key: n.idempotency_key,
        attempt: 0,
        max_attempts: n.max_attempts,
        trace_id: n.trace_id,
        budget: n.budget,
        allowed_tools: n.allowed_tools,
        estimated_seconds: n.estimated_seconds,
        created_at: isoAt(now),
        state,
        outcome: null,
        updated_at: isoAt(now),
        run_at: isoAt(runAt),
        ended_at: null,
        lease: null,
        cancel_requested_at: null,
        cancel_reason: null,
        checkpoint: null,
        effects: [],
        last_error: null,
        attempts: [],
        result: null,
        dead: null,
        lineage: { redrive_count: 0, redriven_at: null, redrive_run: null },
      };
      // Columns in the order of NEW_JOB_COLUMNS; written with the other submits of this group commit.
      this.store.insertJob(
        job,
        [
          job.job_id, job.queue, state, job.tenant_id, job.class, job.workflow, now, now, runAt,
          job.deadline_at === null ? null : Date.parse(job.deadline_at), 0, job.max_attempts, 0, n.estimated_seconds,
          n.idempotency_key, fingerprint, JSON.stringify(job),
        ],
        [job, 'submitted', null, state, now, state === 'scheduled' ? { run_at: job.run_at } : null],
        n.estimated_seconds,
      );
      return { job, created: true };
    }, true);
  }

  /** Refuses work over the backlog limit of its class or tenant (read from the trigger-kept counters). */
  private admit(queue: string, cls: Job['class'], tenant: string, estimated: number, now: number): void {
    const backlog = this.store.sql('SELECT seconds FROM backlog WHERE queue = ? AND dim = ? AND name = ?');
    const classRow = backlog.get(queue, 'class', cls) as { seconds: number } | undefined;
    const tenantRow = backlog.get(queue, 'tenant', tenant) as { seconds: number } | undefined;
    const decision = admissionDecision(
      { queue, class: cls, tenant, estimatedSeconds: estimated, classBacklogSeconds: classRow?.seconds ?? 0, tenantBacklogSeconds: tenantRow?.seconds ?? 0 },
      this.admission!,
    );
    if (!decision.admit) throw refusalError(decision, now);
  }

  async get(jobId: string): Promise<Job | null> {
    checkJobIdArg(jobId);
    const row = this.store.row(jobId);
    return row ? rowToJob(row, row.queue) : null;
  }

  async list(filter: JobFilter, page: PageRequest): Promise<JobPage> {
    checkJobFilter(filter);
    checkPageArg(page);
    checkPage(page.limit);
    checkCursor(page.cursor);
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (filter.queue !== undefined) {
      where.push('queue = @queue');
      params.queue = filter.queue;
    }
    if (filter.states !== undefined && filter.states.length > 0) {
      const names = filter.states.map((s, i) => {
        params[`s${i}`] = s;
        return `@s${i}`;
      });
      where.push(`state IN (${names.join(', ')})`);
    }
    if (filter.tenant !== undefined) {
      where.push('tenant = @tenant');
      params.tenant = filter.tenant;
    }
    if (filter.class !== undefined) {
      where.push('class = @class');
      params.class = filter.class;
    }
    if (filter.workflow !== undefined) {
      where.push('workflow = @workflow');
      params.workflow = filter.workflow;
    }
    // Ids are job_ + ULID, whose first 10 characters encode the creation time: a
    // time window is an id range, which the primary key serves without an index of its own.
    if (filter.since !== undefined) {
      where.push('id >= @sinceId AND created_at >= @since');
      params.since = filter.since;
      params.sinceId = idAtTime(filter.since);
    }
    if (filter.until !== undefined) {
      where.push('id < @untilId AND created_at < @until');
      params.until = filter.until;
      params.untilId = idAtTime(filter.until);
    }
    if (page.cursor) {
      where.push('id > @cursor');
      params.cursor = page.cursor;
    }
    params.pageLimit = page.limit + 1;
    // Keyset paging by id (a ULID): rows added meanwhile sort after the cursor, so no duplicates and no gaps.
    const rows = this.store.sql(`SELECT id, queue, doc FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT @pageLimit`)
      .all(params) as Array<Pick<JobRow, 'id' | 'queue' | 'doc'>>;
    const more = rows.length > page.limit;
    const taken = more ? rows.slice(0, page.limit) : rows;
    const items: Job[] = [];
    const unreadable: NonNullable<JobPage['unreadable']> = [];
    for (const row of taken) {
      try {
        items.push(rowToJob(row, row.queue));
      } catch (e) {
        if (!(e instanceof MalformedJobError)) throw e;
        unreadable.push({ job_id: row.id, why: e.message });
      }
    }
    const page_: JobPage = { items, next_cursor: more ? taken[taken.length - 1]!.id : null };
    if (unreadable.length > 0) page_.unreadable = unreadable;
    return page_;
  }

  async cancel(jobId: string, reason: string | null = null): Promise<CancelResult> {
    checkJobIdArg(jobId);
    checkCancelReason(reason);
    reason ??= null; // undefined given explicitly: none, as on every backend
    return this.store.grouped(() => {
      const now = this.store.clock.now();
      const found = this.store.load(jobId);
      if (!found) throw new NotFoundError(`job ${jobId} not found`, 'JOB_NOT_FOUND');
      const { job, fence } = found;
      if (isTerminal(job.state)) return { status: 'already_terminal', job };
      if (job.state === 'running') {
        if (job.cancel_requested_at === null) {
          job.cancel_requested_at = toIso(now);
          job.cancel_reason = reason;
          job.updated_at = toIso(now);
          this.store.save(job, fence);
          this.store.event(job, 'cancel_requested', 'running', 'running', now, reason === null ? null : { reason });
        }
        return { status: 'cancel_requested', job };
      }
      const from = job.state;
      moveTo(job, 'cancelled', now);
      job.cancel_requested_at = toIso(now);
      job.cancel_reason = reason;
      job.outcome = outcomeFor('cancelled', isPartial(job));
      job.ended_at = toIso(now);
      this.store.save(job, fence);
      this.store.event(job, 'cancelled', from, 'cancelled', now, reason === null ? null : { reason });
      return { status: 'cancelled', job };
    });
  }

  async *events(query: EventQuery): AsyncIterable<JobEvent> {
    checkEventQuery(query);
    let after = 0;
    if (query.afterSeq !== undefined && query.afterSeq !== null) {
      // (digits only: Number() took '' as 0, listing from the start, and ' 5' or '1e3' as numbers)
      after = /^\d{1,16}$/.test(query.afterSeq) ? Number(query.afterSeq) : NaN;
      if (!Number.isSafeInteger(after) || after < 0) throw new ValidationError(`event cursor ${JSON.stringify(query.afterSeq)} is not a sequence number of this backend`);
    }
    const where = ['seq > @after'];
    const params: Record<string, unknown> = {};
    if (query.queue !== undefined) {
      where.push('queue = @queue');
      params.queue = query.queue;
    }
    if (query.jobId !== undefined) {
      where.push('job_id = @jobId');
      params.jobId = query.jobId;
    }
    if (query.since !== undefined) {
      where.push('at >= @since');
      params.since = query.since;
      // Start near the first event of that time instead of walking the whole log from seq 1.
      after = Math.max(after, this.seqBefore(query.since - CLOCK_SKEW_MARGIN_MS));
    }
    if (query.last !== undefined) after = Math.max(after, this.seqBeforeLast(where, { ...params, after }, query.last));
    const sql = `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${EVENT_BATCH}`;
    for (;;) {
      if (query.signal?.aborted || !this.db.open) return;
      const rows = this.store.sql(sql).all({ ...params, after }) as EventRow[];
      for (const r of rows) {
        after = r.seq;
        const ev = decodeEventRow(r);
        if ('problem' in ev) query.onDamaged?.({ where: `queue ${r.queue}`, seq: String(r.seq), problem: ev.problem });
        else yield ev;
        if (query.signal?.aborted) return;
      }
      if (rows.length === EVENT_BATCH) continue;
      if (!query.follow) return;
      await abortableSleep(this.followPollMs, query.signal);
    }
  }

  /**
   * Where a read of the newest `n` matching events starts: just before the n-th newest, found
   * from the newest end of the index (the history before it is never read). With fewer than n
   * matching, where the caller was (all of them); n = 0: the newest event of all (from now on).
   */
  private seqBeforeLast(where: string[], params: Record<string, unknown>, n: number): number {
    if (n === 0) return (this.store.sql('SELECT max(seq) AS seq FROM events').get() as { seq: number | null }).seq ?? 0;
    const r = this.store.sql(`SELECT seq FROM events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT 1 OFFSET ${n - 1}`).get(params) as { seq: number } | undefined;
    return r ? r.seq - 1 : 0;
  }

  /**
   * The last seq whose event is older than `t`, by binary search over seq. Seqs
   * have gaps where `agentq prune` deleted a finished job's events: a probe in a gap
   * reads the next event after it, so the answer stays a lower bound. Event times
   * follow seq order but for a clock stepped back, hence the margin the caller
   * subtracts (CLOCK_SKEW_MARGIN_MS).
   */
  private seqBefore(t: number): number {
    const bounds = this.store.sql('SELECT min(seq) AS lo, max(seq) AS hi FROM events').get() as { lo: number | null; hi: number | null };
    if (bounds.lo === null || bounds.hi === null) return 0;
    const at = this.store.sql('SELECT at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1');
    let lo = bounds.lo - 1; // invariant: events at seq <= lo are older than t (lo may be "none")
    let hi = bounds.hi; // candidates for the first event at or after t lie in (lo, hi]
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      const r = at.get(mid) as { at: number } | undefined;
      if (r && r.at < t) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(lo, 0);
  }

  async queues(page: PageRequest): Promise<Page<string>> {
    const limit = checkQueuePage(page);
    // (queue_counts' key starts with the queue: a range from the cursor on, never the whole table)
    const rows = this.store
      .sql(`SELECT DISTINCT queue FROM queue_counts WHERE queue > ? ORDER BY queue LIMIT ?`)
      .all(page.cursor ?? '', limit + 1) as Array<{ queue: string }>;
    const items = rows.slice(0, limit).map((r) => r.queue);
    return { items, next_cursor: rows.length > limit ? items[items.length - 1]! : null };
  }

  // ------------------------------------------------------------ workers

  async claim(req: ClaimRequest): Promise<Lease[]> {
    return this.store.grouped(() => this.worker.claim(req));
  }
  async heartbeat(leases: LeaseRef[], leaseMs: number): Promise<HeartbeatResult[]> {
    checkLeaseRefs(leases);
    return this.store.grouped(() => this.worker.heartbeat(leases, leaseMs));
  }
  async checkpoint(lease: LeaseRef, data: unknown): Promise<void> {
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.checkpoint(lease, data));
  }
  async addUsage(lease: LeaseRef, usage: UsageReport): Promise<void> {
    checkLeaseRef(lease);
    const checked = checkUsage(usage);
    return this.store.grouped(() => this.worker.addUsage(lease, checked));
  }
  async beginEffect(lease: LeaseRef, key: string): Promise<Effect> {
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.beginEffect(lease, key));
  }
  async finishEffect(lease: LeaseRef, key: string, result: unknown): Promise<Effect> {
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.finishEffect(lease, key, result));
  }
  async complete(lease: LeaseRef, result: string | null): Promise<Job> {
    checkLeaseRef(lease);
    checkJobResult(result);
    return this.store.grouped(() => this.worker.complete(lease, result));
  }
  async completeAndClaim(lease: LeaseRef, result: string | null, next: ClaimRequest): Promise<{ next: Lease[] }> {
    checkLeaseRef(lease);
    checkJobResult(result);
    return this.store.grouped(() => this.worker.completeAndClaim(lease, result, next));
  }
  async fail(lease: LeaseRef, failure: Failure): Promise<FailureOutcome> {
    checkFailure(failure);
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.fail(lease, failure));
  }
  async abort(lease: LeaseRef, outcome: AbortOutcome): Promise<Job> {
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.abort(lease, outcome));
  }
  async release(lease: LeaseRef): Promise<void> {
    checkLeaseRef(lease);
    return this.store.grouped(() => this.worker.release(lease));
  }

  // ------------------------------------------------------------ DLQ

  async dlqList(filter: DlqFilter, page: PageRequest): Promise<Page<DlqEntry>> {
    checkDlqFilter(filter);
    checkPageArg(page);
    checkCursor(page.cursor);
    await loadSchemas(); // checkDlqRow validates each stored document
    return dlqList(this.store, filter, page);
  }
  async dlqRows(filter: DlqFilter, page: PageRequest): Promise<Page<DlqRow>> {
    checkDlqFilter(filter);
    checkPageArg(page);
    checkCursor(page.cursor);
    return dlqRows(this.store, filter, page);
  }
  async dlqGet(jobId: string): Promise<DlqEntry | null> {
    checkJobIdArg(jobId);
    await loadSchemas();
    return dlqGet(this.store, jobId);
  }
  async dlqRaw(jobId: string): Promise<Uint8Array | null> {
    checkJobIdArg(jobId);
    return dlqRaw(this.store, jobId);
  }

  // ------------------------------------------------------------ runs, ledger, locks

  async createRun(run: RunRecord, items: Array<{ job_id: string; verdict: PlanVerdict; detail: string | null }>): Promise<void> {
    checkRunRecord(run, items);
    await this.runs.createRun(run, items);
  }
  async getRun(runId: string): Promise<RunRecord | null> {
    checkRunIdArg(runId);
    return this.runs.getRun(runId);
  }
  async listRuns(filter: { queue?: string }, page: PageRequest): Promise<Page<RunRecord>> {
    checkRunFilter(filter);
    checkPageArg(page);
    checkCursor(page.cursor, 'run');
    return this.runs.listRuns(filter, page);
  }
  async updateRun(runId: string, patch: Partial<Pick<RunRecord, 'status' | 'updated_at'>>): Promise<RunRecord> {
    checkRunIdArg(runId);
    return this.runs.updateRun(runId, patch);
  }
  async ledger(runId: string, page: PageRequest, status?: LedgerStatus): Promise<Page<LedgerItem>> {
    checkLedgerStatus(status);
    checkRunIdArg(runId);
    checkPageArg(page);
    checkCursor(page.cursor);
    return this.runs.ledger(runId, page, status);
  }
  async applyRunItems(req: ApplyRequest): Promise<LedgerItem[]> {
    checkApplyRequest(req);
    await loadSchemas();
    try {
      return await this.store.grouped(() => this.runs.applyRunItems(req, false));
    } catch (e) {
      // A job's move threw and nothing of the batch was written: again, with a savepoint per job.
      if (!(e instanceof ItemThrew)) throw e;
      return this.store.grouped(() => this.runs.applyRunItems(req, true));
    }
  }
  async acquireLock(queue: string, holder: LockHolder): Promise<LockResult> {
    checkLockHolder(holder);
    checkQueueArg(queue);
    return this.runs.acquireLock(queue, holder);
  }
  async releaseLock(queue: string, runId: string | null): Promise<void> {
    checkQueueArg(queue);
    this.runs.releaseLock(queue, runId);
  }
  async readLock(queue: string): Promise<LockHolder | null> {
    checkQueueArg(queue);
    return this.runs.readLock(queue);
  }
  async breakLock(queue: string, expected?: LockHolder): Promise<LockHolder | null> {
    checkQueueArg(queue);
    if (expected !== undefined) checkLockHolder(expected);
    return this.runs.breakLock(queue, expected);
  }

  // ------------------------------------------------------------ stats

  async stats(queue: string, opts: StatsOptions = {}): Promise<QueueStats> {
    checkQueueArg(queue);
    checkStatsOptions(opts);
    const now = this.store.clock.now();
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    const rows = this.store.sql('SELECT state, n FROM queue_counts WHERE queue = ?').all(queue) as Array<{ state: JobState; n: number }>;
    for (const r of rows) if (r.state in counts) counts[r.state] = r.n;
    // One index seek per class (jobs_class_oldest), not a scan.
    const oldest = { t: oldestClaimableRunAt((text) => this.store.sql(text), queue, now) };
    const expired = expiredLeases((text) => this.store.sql(text), queue, now);
    return foldExpiredLeases(
      {
        queue,
        counts,
        dlq_size: counts.dead,
        oldest_queued_age_ms: oldest.t === null ? null : now - oldest.t,
        running: counts.running,
        ...readExtendedStats((text) => this.store.sql(text), queue, now, opts),
      },
      expired,
      now,
    );
  }

  async close(): Promise<void> {
    this.store.close();
  }
}

/** The smallest job id created at `ms` (ULID time prefix, random part all zeros). */
function idAtTime(ms: number): string {
  const t = Math.min(Math.max(Math.floor(ms), 0), 2 ** 48 - 1);
  return JOB_ID_PREFIX + encodeTime(t, 10) + '0'.repeat(16);
}

