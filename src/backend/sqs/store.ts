/**
 * What the SQS backend needs from its job store beyond the ordinary Backend
 * operations: the transactional outbox, the record of which SQS message
 * carries each job (its delivery), "judge this received message and claim
 * this exact job id", and custody of messages taken out of an SQS DLQ.
 *
 * SqliteSqsStore (src/backend/sqlite/outbox.ts) implements it today. Results
 * may be plain values or promises (`Awaitable`): the SQLite store is
 * synchronous (better-sqlite3), a networked store is not, and every caller
 * awaits either way.
 *
 * The guarantees an implementation owes (docs/architecture.md, "SQS backend
 * (outbox and custody)"):
 * - every path that makes a job claimable without a live SQS message (submit,
 *   redrive) writes its outbox entry atomically with that state change;
 * - `consider` decides and takes the lease in one atomic step, so two
 *   consumers holding copies of one message cannot both win;
 * - `takeCustody` is idempotent on the SQS message id.
 */
import type { Job, JobState } from '../../core/schemas.js';
import type { ClaimRequest } from '../contract.js';
import type { CustodyRecord, Decision, Delivery, OutboxRow, ReceivedRef, RepublishOutcome } from '../sqlite/outbox.js';

export type { CustodyKind, CustodyRecord, Decision, Delivery, OutboxRow, ReceivedRef, RepublishOutcome } from '../sqlite/outbox.js';

export type Awaitable<T> = T | Promise<T>;

/** Why a message of a job of `jobQueue` received from `receivedIn`'s SQS queue is deleted (both job stores). */
export function misroutedWhy(jobQueue: string, receivedIn: string): string {
  return `a message of a job of queue ${jobQueue}, received from queue ${receivedIn}: the job's own message carries it`;
}

export interface OutboxCounts {
  pending: number;
  published: number;
  oldest_pending_at: number | null;
  /** When the relay next tries the earliest pending row that failed to publish (null: none failed). */
  next_try_at: number | null;
  /** Why the latest failed publish of a pending row failed (null: none failed, or not recorded). */
  last_error: string | null;
}

/** One message found in an SQS DLQ, as custody records it. */
export interface CustodyInput {
  kind: 'agentq' | 'foreign' | 'malformed';
  jobId: string | null;
  messageId: string;
  sourceQueue: string;
  queue: string;
  body: string;
  attributes: Record<string, unknown>;
  receiveCount: number | null;
  why: string;
}

/** A job's state as the DLQ sweep judges it: its state, or `purged` (gone from the store by a purge). */
export type StoreState = JobState | 'purged';

export interface CustodyOutcome {
  /**
   * `already_kept`: this SQS message was taken into custody before (a repeated sweep; a sweep killed
   * before its delete). `requeued`: the job is running under a live lease (its worker alive, its
   * message merely received too often): left running, its delivery forgotten, so the sweep puts the
   * message back in the source queue, where its next receive makes it the job's delivery again.
   */
  recorded: 'job_dead' | 'already_ended' | 'kept' | 'already_kept' | 'requeued';
  jobId: string;
}

export interface SqsStore {
  /** The store's clock (ms). */
  readonly now: number;

  // outbox
  /**
   * Unpublished entries due for a (re)try, oldest first; with `jobIds`, those jobs' pending entries.
   * `background` (a catch-up beside a claim or a redrive batch): a store whose search is costly may
   * return nothing when one ran moments ago anywhere (the Redis store: one scan per 5 s per fleet).
   */
  pendingOutbox(limit: number, jobIds?: string[], background?: boolean): Awaitable<OutboxRow[]>;
  /** What the outbox holds (with `queue`: that agentq queue's rows only). */
  outboxCounts(queue?: string): Awaitable<OutboxCounts>;
  /**
   * Makes every pending row due now, its backoff after a failed publish waived (`agentq outbox
   * relay` by hand: the operator mended something and wants it tried now, not in 5 minutes). A
   * row that fails again backs off from where it was.
   */
  retryOutboxNow(): Awaitable<void>;
  /**
   * The jobs as they are now, for building the message bodies at publish time: one entry per id,
   * in order, null when gone. Batched: the relay reads a whole publish round at once.
   */
  jobsForPublish(jobIds: string[]): Awaitable<Array<Job | null>>;
  markPublished(items: Array<{ id: number; messageId: string | null }>): Awaitable<void>;
  markPublishFailed(items: Array<{ id: number; error: string }>, retryAt: (tries: number) => number): Awaitable<void>;

  // deliveries
  delivery(jobId: string): Awaitable<Delivery | null>;
  markDlqSent(jobId: string): Awaitable<void>;
  /**
   * Forgets the message recorded for the job. `keepPublished`: the job still has a message in
   * SQS (one replacing this one), so the outbox must not take it for unpublished.
   */
  forgetDelivery(jobId: string, keepPublished?: boolean): Awaitable<void>;

  /**
   * `agentq sqs republish`: each waiting job (queued, scheduled) whose message was published
   * forgets that message (its delivery) and gets a pending outbox entry, atomically per job, so a
   * new message can run it when SQS lost the old one, and whichever of the two is received first
   * carries the job while the other is deleted as a duplicate. Jobs already pending in the outbox,
   * not waiting, or unknown are reported and left alone.
   */
  republish(jobIds: string[]): Awaitable<RepublishOutcome[]>;

  // consumers
  /** Judges one received message against the store (state, fence, cancel flag) and claims it when it may run. */
  consider(ref: ReceivedRef, req: ClaimRequest): Awaitable<Decision>;
  /** Jobs per class of a queue that a receive may deliver (queued, scheduled, running). */
  pendingByClass(queue: string): Awaitable<Map<string, number>>;

  // custody
  custody(jobId: string): Awaitable<CustodyRecord | null>;
  /** Custody records in job-id order after `after`; with `sourceQueue`, only those taken from that SQS DLQ. */
  listCustody(limit: number, after: string | null, sourceQueue?: string): Awaitable<CustodyRecord[]>;
  takeCustody(msg: CustodyInput): Awaitable<CustodyOutcome>;
  /**
   * The states of these jobs, one entry per id, in order; the DLQ sweep checks a received batch at
   * once. `purged`: the store had the job and a purge removed it (its SQS DLQ copy may go); null: the
   * store never had it (a copy of it is the only record of the job here, kept by custody).
   */
  statesOf(jobIds: string[]): Awaitable<Array<StoreState | null>>;

  close(): Awaitable<void>;
}
