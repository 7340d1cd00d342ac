/**
 * The backend contract: the one interface every store implements (SQLite,
 * Redis, SQS). The CLI, the worker runtime and the redrive engine talk only
 * to this; a feature exists for a backend when the shared conformance suite
 * (`test/conformance/`) passes on it.
 *
 * Rules every implementation keeps:
 * - Every state change is atomic and checks the state machine (`core/states`).
 * - Every write made on behalf of a worker checks the lease's fence token and
 *   throws `LeaseLostError` when it does not match. An ending write (complete,
 *   fail, abort, release) re-sent after it applied (its answer lost) finds the
 *   job ended by the same fence with the same outcome: it is answered as done
 *   with the job as the first write left it, not as a lost lease.
 * - Every state change appends a `JobEvent`.
 * - Reads are bounded: lists are pages of at most `MAX_PAGE_LIMIT`.
 * - Time comes from the injected `Clock`, never from `Date.now()` directly.
 */
import type {
  DeadReason,
  DlqEntry,
  Effect,
  Job,
  JobClass,
  JobEnvelope,
  JobEvent,
  JobState,
  SubmitRequest,
} from '../core/schemas.js';
import type { ValidationError } from '../core/errors.js';
import type { QueueStats, StatsOptions } from '../core/queue-stats.js';
import type { Usage, UsageReport } from '../core/usage.js';
import type { Action, Verdict } from '../core/verdict.js';
import type { PrunableState } from '../core/prune.js';

export type BackendKind = 'sqlite' | 'redis' | 'sqs';

export const MAX_PAGE_LIMIT = 1000;

export interface PageRequest {
  /** 1..MAX_PAGE_LIMIT. */
  limit: number;
  /** Opaque cursor from the previous page's `next_cursor`. */
  cursor?: string | null | undefined;
}

export interface Page<T> {
  items: T[];
  /** Null on the last page. Paging is by job id (a ULID), so jobs added meanwhile never cause duplicates or gaps. */
  next_cursor: string | null;
}

/**
 * A page of `list`. A job whose stored record cannot be read is not in `items` (it has no `Job`
 * to show) but in `unreadable`, so a listing reports it instead of failing on it.
 */
export interface JobPage extends Page<Job> {
  unreadable?: Array<{ job_id: string; why: string }>;
}

export interface SubmitResult {
  job: Job;
  /** False when the idempotency key matched an existing job with the same body. */
  created: boolean;
  /**
   * A backend with a broker apart from its store (SQS): why the job, stored, could not be
   * published yet; its outbox row waits for the relay (workers, `agentq outbox relay`).
   * Absent when it was published (and on every other backend).
   */
  unpublished?: string;
}

export interface JobFilter {
  queue?: string | undefined;
  states?: JobState[] | undefined;
  tenant?: string | undefined;
  class?: JobClass | undefined;
  workflow?: string | undefined;
  /** created_at >= since (epoch ms). */
  since?: number | undefined;
  /** created_at < until (epoch ms). */
  until?: number | undefined;
}

export type CancelResult =
  /** A queued/scheduled job ended at once. */
  | { status: 'cancelled'; job: Job }
  /** A running job was flagged; its worker sees it at the next heartbeat. */
  | { status: 'cancel_requested'; job: Job }
  /** Already terminal: nothing changed. */
  | { status: 'already_terminal'; job: Job };

export interface EventQuery {
  queue?: string | undefined;
  jobId?: string | undefined;
  /** Start after this `seq` (exclusive). */
  afterSeq?: string | undefined;
  /** Only events at or after this time (epoch ms). */
  since?: number | undefined;
  /**
   * Only the newest `last` of the matching events that exist now (still oldest first), read
   * without walking the history before them; 0: none of them. With `follow`, the new events
   * after them follow as usual (`last: 0` follows from now on).
   */
  last?: number | undefined;
  /** Keep waiting for new events until `signal` aborts. */
  follow?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Told of events the store dropped before this reading got to them (a capped Redis stream
   * trimmed past a reader that fell behind, or past a cursor resumed late), just before the
   * first event after them is yielded: the loss is reported, never silent.
   */
  onGap?: ((gap: EventGap) => void) | undefined;
  /** Told of a stored event that cannot be read (damaged by another program or a hand edit): it is skipped. */
  onDamaged?: ((damaged: DamagedEvent) => void) | undefined;
  /**
   * Where this reading has got to in each of the store's event streams, kept up to date as events
   * are yielded; given to a later reading (a tail going on after an outage, or from its history to
   * following) it goes on from exactly there, each stream from its own position. One `afterSeq`
   * cannot say that on a store of several streams (Redis: one per queue shard, whose ids come
   * from different clocks in a Cluster, or jump ahead after a clock step): the streams behind
   * the last seq shown lost their events. A store of one sequence (SQLite) goes by `afterSeq`.
   */
  position?: EventPosition | undefined;
}

/** A stored event that cannot be read, skipped. */
export interface DamagedEvent {
  /** The queue (and shard) whose stream, or the job whose history, holds it. */
  where: string;
  seq: string;
  /** What is wrong with it (`not JSON`). */
  problem: string;
}

/** Per event stream of the store, the seq read last (null: none yet, from its start). Opaque to callers. */
export interface EventPosition {
  streams: Map<string, string | null>;
}

/** Events trimmed from the store before they were read: those after `afterSeq` (null: from the start) and before `resumedSeq`. */
export interface EventGap {
  /** Where: the queue (and shard) whose events they were, or the job whose earliest events they were. */
  where: string;
  /** The queue and shard whose stream the events were trimmed from (a job's history: the job's queue and shard). */
  queue: string;
  shard: number;
  /** The job whose earliest events were trimmed from its own history; null for a queue's stream. */
  jobId: string | null;
  afterSeq: string | null;
  resumedSeq: string;
  /** How many; null when the store cannot tell (a cursor from an earlier reading): some may be missing. */
  lost: number | null;
}

// ---------------------------------------------------------------- worker

export interface ClaimRequest {
  queue: string;
  workerId: string;
  workerVersion?: string | null | undefined;
  /** How many jobs to claim at most. */
  max: number;
  /** Lease length; capped at the job's deadline. */
  leaseMs: number;
  /** Classes this worker takes; all when absent. */
  classes?: readonly JobClass[] | undefined;
  /**
   * Told of a part of the store the claim could not reach while others leased jobs (a shard of a
   * sharded Redis queue on a node that is down): the claim returns those leases, never dropping
   * them with the error. A claim that leased nothing throws the error instead. Also told of a
   * waiting job whose stored record could not be handed out as that job (a MalformedJobError:
   * another job's envelope, a damaged field), which the store moved aside instead of stalling on it.
   */
  onPartialFailure?: ((error: Error) => void) | undefined;
}

/** What the backend needs to check a worker's write: the job and its fence token. */
export interface LeaseRef {
  jobId: string;
  fence: number;
}

export interface Lease extends LeaseRef {
  job: Job;
  envelope: JobEnvelope;
  /** Epoch ms. Never after the job's deadline. */
  expiresAt: number;
}

export type HeartbeatResult =
  | { jobId: string; status: 'ok'; expiresAt: number; cancelRequested: boolean; deadlineReached: boolean }
  /** The fence no longer matches (expired and reclaimed, or ended): stop working on it. */
  | { jobId: string; status: 'lost' };

/** An error from a handler, classified by `core/retry.classifyError`. */
export interface Failure {
  code: string;
  message: string;
  /**
   * The caller's decision, and the backend keeps it: `fail` retries a retryable failure (while
   * attempts, budget and deadline allow) and sends any other to the DLQ, whatever the code. The
   * code table (`core/retry.ERROR_CODE_TABLE`) is the default the worker applies when a handler
   * says nothing (`toFailure`, command handlers' exit codes); a handler that knows better (a
   * `PERMISSION` that a token refresh will cure) marks the error explicitly, and a backend that
   * re-classified by code would silently undo that.
   */
  retryable: boolean;
  workerVersion?: string | null;
}

/**
 * What `fail` decided, computed by the backend from `core/retry` (it owns the
 * retry budget counters). Returned so the worker can log it.
 */
export type FailureOutcome =
  | { kind: 'retry'; runAt: number; job: Job }
  /**
   * `warning`: the job is in the store's DLQ, but something about it went wrong on the way that
   * an operator should hear (SQS: its DLQ is missing, so no copy was sent to it). Said once.
   */
  | { kind: 'dead'; reason: DeadReason; job: Job; warning?: string }
  | { kind: 'expired'; job: Job }
  /** The job's cancel was requested before it failed: it ends cancelled, never retried or buried. */
  | { kind: 'cancelled'; job: Job };

/** How a job is ended when its handler stopped because of cancel or deadline. */
export type AbortOutcome = 'cancelled' | 'expired';

// ---------------------------------------------------------------- DLQ

export interface DlqFilter {
  queue?: string | undefined;
  tenant?: string | undefined;
  workflow?: string | undefined;
  errorCodes?: string[] | undefined;
  reason?: DeadReason | undefined;
  /** dead_at >= since (epoch ms). */
  since?: number | undefined;
  /** dead_at < until (epoch ms). */
  until?: number | undefined;
  minAttempts?: number | undefined;
  maxAttempts?: number | undefined;
  /** true: only entries whose deadline passed (or has less than minRemainingMs left); false: only the others. */
  expired?: boolean | undefined;
  minRemainingMs?: number | undefined;
  partial?: boolean | undefined;
  /** Case-insensitive substring of error code, error message, workflow, tenant or job id. */
  grep?: string | undefined;
  /** Evaluate `expired` against this time (epoch ms); defaults to the backend clock. */
  now?: number | undefined;
}

/**
 * A DLQ entry as a list shows it (`dlqRows`): the entry's own columns and
 * none of the job document (attempts, effects, checkpoint, payload). A
 * listing of 100,000 entries in full parses and validates 100,000 job
 * documents only to drop them; these rows cost a fraction of that, in CPU
 * and in garbage (the TUI's load, issue 6). `dlqGet` has the full entry.
 */
export interface DlqRow {
  job_id: string;
  queue: string;
  tenant_id: string;
  workflow: string;
  reason: DeadReason;
  error_code: string;
  /** The start of the error message: at most `DLQ_ROW_MESSAGE_CHARS` code points. */
  error_message: string;
  attempts: number;
  max_attempts: number;
  /** Epoch ms (the `DlqEntry` has it as ISO text). */
  dead_at_ms: number;
  /** Epoch ms, null when the job has no deadline. */
  deadline_at_ms: number | null;
  partial: boolean;
  redrive_count: number;
  /**
   * The stored record cannot be read as a job at all (not JSON, no envelope).
   * A record that reads but fails the schema check shows only in the full
   * entry (`DlqEntry.malformed`), which is what plans use: such a job is still
   * planned as `skip:malformed`.
   */
  malformed: boolean;
}

/** How much of the error message a `DlqRow` carries: enough to find a row by text, never a whole stack trace. */
export const DLQ_ROW_MESSAGE_CHARS = 160;

/** The longest `grep` (UTF-16 units): `--grep` refuses more, and the TUI's `/` filter stops typing there. */
export const DLQ_GREP_MAX_CHARS = 200;

export type BulkAction = Action;

/** The attempts policy of a redrive. */
export type AttemptsPolicy = { kind: 'reset' } | { kind: 'extra'; n: number };

/** A plan item's verdict; the rules live in `core/verdict`. */
export type PlanVerdict = Verdict;

export const LEDGER_STATUSES = ['planned', 'moved', 'skipped', 'failed'] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

export interface LedgerItem {
  run_id: string;
  job_id: string;
  verdict: PlanVerdict;
  status: LedgerStatus;
  /** Why it was skipped or failed. */
  detail: string | null;
  updated_at: string;
}

export interface RunRecord {
  run_id: string;
  queue: string;
  action: BulkAction;
  /** OS user and context name of the operator. */
  user: string;
  context: string | null;
  reason: string | null;
  /** The selector as given, for the audit. */
  filters: Record<string, unknown>;
  options: {
    attempts?: AttemptsPolicy;
    maxRedrives?: number;
    minRemainingMs?: number;
    includePartial?: boolean;
    rate?: number | null;
    batchSize?: number;
    /** A prune run's rule (core/prune `PruneRule`, `before` as ISO text): apply deletes a job only while it still falls under it. */
    prune?: { states: PrunableState[]; before: string };
    /**
     * When the plan read the DLQ (its `created_at`). An entry that died after it is another death
     * than the one the plan judged, and apply skips it (`skip:changed`). Every apply checks each
     * entry in full (as `dlq list` / `dlq show` do) whatever this says. Absent on runs written
     * before this field (and, before it was always written, only on runs whose plan was built by
     * the process that applied it).
     */
    plannedAt?: string;
  };
  created_at: string;
  updated_at: string;
  /**
   * `creating`: its ledger is still being written (a backend that cannot write the record and the
   * whole ledger in one transaction marks the run so until the last ledger item is in). A run left
   * `creating` by a killed process moved nothing and cannot be resumed: `dlq runs` shows it as
   * `incomplete`, and the plan is made again.
   */
  status: 'creating' | 'planned' | 'running' | 'interrupted' | 'completed' | 'completed_with_failures';
  counts: Record<LedgerStatus, number>;
}

export interface LockHolder {
  /** Who: `user@host pid N`. */
  owner: string;
  host: string;
  pid: number;
  /** When that process started (dlq/lock.ts processStartTime): the same pid started at another time is another process. Absent where it cannot be read. */
  pid_start?: string;
  run_id: string | null;
  acquired_at: string;
}

/** Whether a stored lock is still the one `expected` (breakLock): the same holder, taking it at the same time. */
export function sameLockHolder(held: Pick<LockHolder, 'owner' | 'run_id' | 'acquired_at'>, expected: Pick<LockHolder, 'owner' | 'run_id' | 'acquired_at'>): boolean {
  return held.owner === expected.owner && (held.run_id ?? null) === (expected.run_id ?? null) && held.acquired_at === expected.acquired_at;
}

export type LockResult = { acquired: true } | { acquired: false; holder: LockHolder };

/** Applying one ledger item: atomic per job, and only if the ledger item is still `planned`. */
export interface ApplyRequest {
  runId: string;
  jobIds: string[];
  /** Re-checked at apply time, inside the same atomic step as the move. */
  now: number;
}

// ---------------------------------------------------------------- stats

export type { Usage, UsageReport };

export type { AttemptOutcomes, FailureCount, JobEnds, OutcomeTotals, QueueStats, RecentActivity, StatsBreakdown, StatsOptions } from '../core/queue-stats.js';
export { FAILURE_CODE_OTHER, STATS_ENDS_MAX_WINDOW_MS, STATS_MAX_FAILURE_CODES, endsFromMinute } from '../core/queue-stats.js';

/** How many recent timing samples a backend keeps per queue (a ring, not a scan). */
export const STATS_SAMPLE_LIMIT = 1000;
/** How many tenants `by_tenant` lists at most. */
export const STATS_MAX_TENANTS = 50;
/** What `Backend.unpublished` reports. */
export interface Unpublished {
  count: number;
  /** When the next try to publish is due (store clock, ms); null when none failed yet. */
  nextTryAt: number | null;
  /** Why the latest try failed; null when none failed yet. */
  lastError: string | null;
}

/** Window of `QueueStats.recent`. */
export const STATS_RECENT_WINDOW_MS = 5 * 60_000;

// ---------------------------------------------------------------- the interface

export interface Backend {
  readonly kind: BackendKind;
  /** Where it points, with credentials redacted: safe to print. */
  readonly description: string;
  /**
   * The store the jobs live in, named the same however the URL was written (no credentials, no
   * tuning parameters, a SQLite file by its absolute path): a plan records it, and `--plan`
   * refuses a plan made against another store.
   */
  readonly storeId: string;
  /**
   * Optional: an identity kept in the store itself (Redis: a random id created once under the key
   * prefix), the same however the store is reached (another seed list of the same Cluster,
   * `localhost` for `127.0.0.1`). A plan records it next to `storeId` (`store-id.ts`). Null when the
   * store has none that this user may create. Not for hot paths: it may cost a round trip.
   */
  storeIdentity?(): Promise<string | null>;

  /**
   * Optional: how long a claim may wait for work by design before it answers (SQS: the long poll of
   * `wait=`). A worker does not count that wait as a store that does not answer. Absent: none.
   */
  readonly claimWaitMs?: number;

  /**
   * Optional: the broker that delivers the jobs, where it is not the store (SQS): its name for
   * messages ("SQS at ENDPOINT", "SQS in REGION") and how many of its calls it has answered so far
   * (a refusal is an answer; a call that never reached it is not). A worker tells an outage of the
   * broker (`BrokerUnavailableError`) from the store's by it, and says the broker is back only once
   * that count moves, not when the store answers. `silentMs`: how long the broker's most overdue
   * call in flight has gone unanswered past when its answer was due (0: none), so a worker whose
   * calls stall on a silent broker does not say its store is not answering. Absent where the
   * store is the broker.
   */
  readonly broker?: { readonly name: string; readonly answered: number; readonly silentMs?: number };
  /**
   * Optional, with `broker`: the broker's work that jobs' ends (and heartbeats) left going on
   * behind once the store answered (SQS: a message's delete, a dead job's DLQ copy then its
   * message's delete): for how many jobs, and a promise settled (never rejected) once it is all
   * over. A stopping worker waits for it within its grace, then says what it left; nothing is lost
   * by leaving it (the store holds every job's end).
   */
  brokerWorkBehind?(): { jobs: number; settled: Promise<void> };

  // ---- producers and operators
  /** Idempotent on `idempotency_key`: same key and body → same job, `created: false`; same key, other body → `IdempotencyConflictError`. */
  submit(req: SubmitRequest): Promise<SubmitResult>;
  /**
   * Optional: a rule of this backend's own that `submit` would refuse the request for (SQS: `run_at`
   * within 13 days), without I/O; null when it breaks none. `submit --file` asks it for every line
   * before submitting any, so a file with such a line submits nothing rather than stopping half way.
   */
  refusesSubmit?(req: SubmitRequest): ValidationError | null;
  get(jobId: string): Promise<Job | null>;
  list(filter: JobFilter, page: PageRequest): Promise<JobPage>;
  /** `reason`: 1-500 characters, kept as the job's `cancel_reason`; none when left out or null. */
  cancel(jobId: string, reason?: string | null): Promise<CancelResult>;
  /** Events in `seq` order. With `follow`, waits for new ones until `signal` aborts. */
  events(query: EventQuery): AsyncIterable<JobEvent>;
  /**
   * Names of queues that have (or had) jobs, in name order, a page at a time (`limit`
   * 1..MAX_PAGE_LIMIT; the cursor is the last name of the previous page). A store may know more
   * queues than one read should hold, so there is no "all queues" call: a caller that needs every
   * queue walks the pages (backend/queue-walk.ts).
   */
  queues(page: PageRequest): Promise<Page<string>>;

  // ---- workers
  /** Claims up to `max` claimable jobs with fairness across classes and tenants; reclaims expired leases first. */
  claim(req: ClaimRequest): Promise<Lease[]>;
  /** Extends leases (never past the deadline) and reports cancel requests. */
  heartbeat(leases: LeaseRef[], leaseMs: number): Promise<HeartbeatResult[]>;
  checkpoint(lease: LeaseRef, data: unknown): Promise<void>;
  /**
   * Adds what the attempt spent (checked by `core/usage.checkUsage`: a `ValidationError` for figures that are not non-negative and finite) to its attempt record and to
   * its queue's usage totals, in one write, fenced like `checkpoint`.
   */
  addUsage(lease: LeaseRef, usage: UsageReport): Promise<void>;
  /** Records an effect as started, or returns the existing record (which may be `done`). */
  beginEffect(lease: LeaseRef, key: string): Promise<Effect>;
  finishEffect(lease: LeaseRef, key: string, result: unknown): Promise<Effect>;
  complete(lease: LeaseRef, result: string | null): Promise<Job>;
  /**
   * Optional: completes `lease` and claims up to `next.max` more jobs in the
   * same step (one round trip per job for a busy worker, as BullMQ's
   * moveToFinished does). A backend without it is driven with `complete` then
   * `claim`. Claims may come back empty even when work exists elsewhere (e.g.
   * on another shard): the worker's own claim loop still finds it.
   */
  completeAndClaim?(lease: LeaseRef, result: string | null, next: ClaimRequest): Promise<{ next: Lease[] }>;
  /** Retry (scheduled), DLQ (dead) or expired, per `core/retry`. */
  fail(lease: LeaseRef, failure: Failure): Promise<FailureOutcome>;
  /** Ends a running job after its handler stopped for a cancel request or a passed deadline. */
  abort(lease: LeaseRef, outcome: AbortOutcome): Promise<Job>;
  /** Gives a job back without counting the attempt (graceful shutdown). */
  release(lease: LeaseRef): Promise<void>;

  // ---- DLQ
  dlqList(filter: DlqFilter, page: PageRequest): Promise<Page<DlqEntry>>;
  /** The same entries, filters and paging as `dlqList`, as light rows (no job document): for listings of the whole DLQ. */
  dlqRows(filter: DlqFilter, page: PageRequest): Promise<Page<DlqRow>>;
  dlqGet(jobId: string): Promise<DlqEntry | null>;
  /** The exact stored bytes of an entry (for `dlq show --raw`). */
  dlqRaw(jobId: string): Promise<Uint8Array | null>;

  // ---- bulk runs: plan, ledger, lock, audit
  /** Persists the audit record and the frozen plan as ledger items (`planned` or `skipped`). */
  createRun(run: RunRecord, items: Array<{ job_id: string; verdict: PlanVerdict; detail: string | null }>): Promise<void>;
  getRun(runId: string): Promise<RunRecord | null>;
  listRuns(filter: { queue?: string }, page: PageRequest): Promise<Page<RunRecord>>;
  updateRun(runId: string, patch: Partial<Pick<RunRecord, 'status' | 'updated_at'>>): Promise<RunRecord>;
  /** Ledger items in job-id order, optionally only one status. */
  ledger(runId: string, page: PageRequest, status?: LedgerStatus): Promise<Page<LedgerItem>>;
  /**
   * Applies the run's action to these planned items. Atomic per job: the
   * move and its ledger update commit together, and an item whose ledger
   * status is no longer `planned` is left alone, so a killed run resumes
   * with nothing doubled. Re-checks each job (still dead, not expired since,
   * not partial unless allowed, under the redrive cap); a job that fails a
   * check is marked `skipped` with its reason.
   */
  applyRunItems(req: ApplyRequest): Promise<LedgerItem[]>;
  /** One lock per queue for bulk DLQ actions. */
  acquireLock(queue: string, holder: LockHolder): Promise<LockResult>;
  releaseLock(queue: string, runId: string | null): Promise<void>;
  readLock(queue: string): Promise<LockHolder | null>;
  /**
   * Removes a lock (an operator breaking a dead process's lock) and returns the holder removed, or
   * null when none was. With `expected`, only while that holder still holds it (the same `owner`,
   * `run_id` and `acquired_at`): the holder was judged dead, and between that judgement and the
   * break another operator may have broken it and taken the queue; their fresh lock must stay.
   */
  breakLock(queue: string, expected?: LockHolder): Promise<LockHolder | null>;

  // ---- stats
  /** `opts.endsWindowMs`: also the job ends over that window (`QueueStats.ends`). */
  stats(queue: string, opts?: StatsOptions): Promise<QueueStats>;

  /**
   * Settings of the server that put jobs at risk (Redis: a `maxmemory-policy` that evicts keys),
   * one sentence each; empty when all is well or when they cannot be read. Said by
   * `agentq worker` when it starts, as Sidekiq does. A backend without a server has none.
   */
  serverWarnings?(): Promise<string[]>;

  /**
   * Jobs of `queue` committed to the store but not yet handed to the broker that delivers them
   * (SQS: outbox rows waiting for the relay, e.g. in backoff after a failed publish). They become
   * claimable once published, so `agentq worker --drain` is not done while there are any.
   * Absent where the store is the broker (SQLite, Redis): nothing waits between the two.
   */
  unpublished?(queue: string): Promise<Unpublished>;

  /**
   * Before a worker of `queue` starts: whether this backend can deliver its jobs (of `classes`,
   * default all) at all. Throws what no wait mends (SQS: a queue that does not exist → ConfigError,
   * refused credentials → PermissionError), so the worker stops with that exit code instead of
   * idling; returns warnings (a sentence each) about what works only in part. Absent where the
   * store is the broker.
   */
  workerPreflight?(queue: string, classes?: readonly JobClass[]): Promise<string[]>;

  /**
   * Ends the client. By default what was sent is answered first (Redis: QUIT, up to 2 s).
   * `now`: the caller is stopping on a signal and has had every answer it waits for, so nothing
   * still unanswered is waited for (Redis: the sockets are dropped, no QUIT): a store that stopped
   * answering (a frozen server) must not hold a Ctrl-C'd command. Backends with nothing to wait
   * for (SQLite) ignore it.
   */
  close(opts?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  now?: boolean;
}
