/**
 * The SQLite store's SQS extension: the transactional outbox, the record of
 * which SQS message currently carries each job (its delivery), "claim this
 * exact job id", and custody of messages taken out of an SQS DLQ.
 *
 * Kept apart from the SQLite adapter on purpose: it adds tables and triggers
 * (created only when a store is opened for SQS) and builds on the store's
 * public primitives (load/save/event/write), so the adapter itself is
 * unchanged. It shares the adapter's connection (`SqliteBackend.connection`):
 * with a connection of its own, every commit on one connection emptied the
 * other's page cache, so a redrive's publish and sweep read every job page
 * from the file again (and the adapter did, after each outbox write).
 * better-sqlite3 is synchronous, so its transactions and the adapter's never
 * interleave in one process, and BEGIN IMMEDIATE orders them across processes.
 *
 * Why triggers write the outbox: every path that makes a job claimable
 * without a live SQS message — submit (insert) and redrive (dead → queued /
 * scheduled, done by the shared `applyRunItems`) — then gets its outbox row
 * in the same transaction as the state change, whoever wrote it. A crash
 * after commit and before the publish loses nothing: the relay finds the row.
 */
import type Database from 'better-sqlite3';
import type { Clock, Random } from '../../core/clock.js';
import { toIso } from '../../core/duration.js';
import { tenantCap, type FairnessOptions } from '../../core/fairness.js';
import { createIdFactory, JOB_ID_PREFIX } from '../../core/ids.js';
import { decideFailure, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../core/retry.js';
import type { Job, JobState } from '../../core/schemas.js';
import { assertTransition, isPartial, isTerminal, outcomeFor } from '../../core/states.js';
import type { ClaimRequest, Lease } from '../contract.js';
import { rowToJob } from './codec.js';
import { endAttempt, leaseEndedAt, leaseExpiredError, leaseExpiredWhy, moveTo, SqliteStore } from './store.js';
import { startAttempt } from './worker.js';
import { misroutedWhy, type OutboxCounts, type SqsStore, type StoreState } from '../sqs/store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sqs_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  queue TEXT NOT NULL,
  class TEXT NOT NULL,
  why TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  published_at INTEGER,
  message_id TEXT,
  tries INTEGER NOT NULL DEFAULT 0,
  next_try_at INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS sqs_outbox_pending ON sqs_outbox(next_try_at, id) WHERE published_at IS NULL;
CREATE INDEX IF NOT EXISTS sqs_outbox_job ON sqs_outbox(job_id);
-- Published rows, oldest first, for pruning them past SQS's deduplication window (markPublished).
CREATE INDEX IF NOT EXISTS sqs_outbox_published ON sqs_outbox(published_at) WHERE published_at IS NOT NULL;
-- How many published rows each queue had pruned: outbox status still counts every publish.
CREATE TABLE IF NOT EXISTS sqs_outbox_pruned (
  queue TEXT PRIMARY KEY,
  published INTEGER NOT NULL
) STRICT;

-- Which SQS message currently carries a job, and the receipt handle of its latest receive.
CREATE TABLE IF NOT EXISTS sqs_deliveries (
  job_id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  receipt TEXT NOT NULL,
  queue_url TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  dlq_sent_at INTEGER
) STRICT;

-- Messages taken out of an SQS DLQ: byte-exact body and every attribute, kept before the SQS copy is deleted.
CREATE TABLE IF NOT EXISTS sqs_custody (
  job_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  message_id TEXT NOT NULL UNIQUE,
  source_queue TEXT NOT NULL,
  body TEXT NOT NULL,
  attributes TEXT NOT NULL,
  receive_count INTEGER,
  taken_at INTEGER NOT NULL
) STRICT;

CREATE TRIGGER IF NOT EXISTS sqs_outbox_on_submit AFTER INSERT ON jobs WHEN NEW.state IN ('queued','scheduled') BEGIN
  INSERT INTO sqs_outbox (job_id, queue, class, why, created_at) VALUES (NEW.id, NEW.queue, NEW.class, 'submit', NEW.updated_at);
END;
CREATE TRIGGER IF NOT EXISTS sqs_outbox_on_redrive AFTER UPDATE OF state ON jobs
  WHEN OLD.state = 'dead' AND NEW.state IN ('queued','scheduled') BEGIN
  INSERT INTO sqs_outbox (job_id, queue, class, why, created_at) VALUES (NEW.id, NEW.queue, NEW.class, 'redrive', NEW.updated_at);
END;
-- A purge (the only delete of a job) takes the job's delivery and outbox rows with it, in its
-- transaction: left, they grew for ever. Custody records stay (what was taken out of the SQS DLQ),
-- and so does the job's purged event, which tells a sweep its copy may go (statesOf).
CREATE TRIGGER IF NOT EXISTS sqs_forget_on_purge AFTER DELETE ON jobs BEGIN
  DELETE FROM sqs_deliveries WHERE job_id = OLD.id;
  DELETE FROM sqs_outbox WHERE job_id = OLD.id;
END;
`;

/**
 * How long a published row is kept: SQS's FIFO deduplication window (5 minutes). A published row
 * is never published again (only rows with no published_at are), and its deduplication id (its row
 * id: AUTOINCREMENT, never reused after a delete) means nothing to SQS past the window, so after it
 * the row only grew the table, one row per publish, for ever. Kept that long, a row still shows
 * what was published lately to anyone looking at the table.
 */
export const PUBLISHED_KEEP_MS = 5 * 60_000;
/** At most this many more published rows are pruned per publish than the publish marked: a backlog drains, no write grows large. */
const PRUNE_SLACK = 100;

export interface OutboxRow {
  id: number;
  job_id: string;
  queue: string;
  class: string;
  why: 'submit' | 'redrive' | 'republish';
  created_at: number;
  tries: number;
  /**
   * What the FIFO deduplication id is made from when not the row id: a store whose row ids
   * are not stable across processes gives a key that is, one per publish intent (the Redis
   * store: the generation and the job's republish count).
   */
  dedup?: string;
}

export interface Delivery {
  job_id: string;
  message_id: string;
  receipt: string;
  queue_url: string;
  received_at: number;
  dlq_sent_at: number | null;
}

/** One received message, as the store needs to judge it. */
export interface ReceivedRef {
  jobId: string;
  messageId: string;
  receipt: string;
  queueUrl: string;
}

/** What the consumer does with a received message, decided against the store in one transaction. */
export type Decision =
  | { kind: 'claimed'; lease: Lease }
  /** Not now (retry not due, a live lease holds it, the tenant is at its cap): hide it until then. */
  | { kind: 'hide'; untilMs: number; why: string }
  /** Nothing left to deliver (terminal job, or a duplicate of the message that carries it). */
  | { kind: 'delete'; why: string }
  /** The job is dead in the store but its SQS DLQ copy was not sent yet: send, then delete. */
  | { kind: 'bury'; job: Job }
  /** The store has no such job: never dropped; left for the native backstop and custody. */
  | { kind: 'unknown' };

/** What `republish` did with one job: `pending` (its row waits in the outbox already), `not_waiting` (not queued or scheduled). */
export interface RepublishOutcome {
  job_id: string;
  result: 'republished' | 'pending' | 'not_waiting' | 'unknown';
  state?: JobState;
}

export type CustodyKind = 'backstop' | 'foreign' | 'malformed' | 'orphan';

export interface CustodyRecord {
  job_id: string;
  kind: CustodyKind;
  message_id: string;
  source_queue: string;
  body: string;
  attributes: Record<string, unknown>;
  receive_count: number | null;
  taken_at: string;
}

export interface SqsStoreOptions {
  retryPolicy?: RetryPolicy;
  fairness?: FairnessOptions;
}

/** The SQLite implementation of the SQS backend's store interface (src/backend/sqs/store.ts). */
export class SqliteSqsStore implements SqsStore {
  readonly store: SqliteStore;
  private readonly retryPolicy: RetryPolicy;
  private readonly fairness: FairnessOptions;
  private readonly newId: (prefix: string) => string;

  /** `store`: the adapter's connection to the same file (see the top of this file). */
  constructor(store: SqliteStore, clock: Clock, random: Random, opts: SqsStoreOptions = {}) {
    this.store = store;
    this.retryPolicy = opts.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.fairness = opts.fairness ?? {};
    this.newId = createIdFactory(clock, random);
    this.store.write(() => this.store.db.exec(SCHEMA));
  }

  /** The store's statement cache: a read of a counter table there first writes the transaction's pending counter sums (counters.ts). */
  private q(text: string): Database.Statement {
    return this.store.sql(text);
  }

  get now(): number {
    return this.store.clock.now();
  }

  // ------------------------------------------------------------ outbox

  /** Unpublished rows due for a (re)try, oldest first. */
  pendingOutbox(limit: number, jobIds?: string[]): OutboxRow[] {
    const now = this.now;
    if (jobIds) {
      if (jobIds.length === 0) return [];
      // One query for the whole list (a redrive batch publishes up to 1,000 jobs), not one per job.
      return this.q('SELECT * FROM sqs_outbox WHERE job_id IN (SELECT value FROM json_each(?)) AND published_at IS NULL ORDER BY id').all(JSON.stringify(jobIds)) as OutboxRow[];
    }
    return this.q('SELECT * FROM sqs_outbox WHERE published_at IS NULL AND next_try_at <= ? ORDER BY id LIMIT ?').all(now, limit) as OutboxRow[];
  }

  outboxCounts(queue?: string): OutboxCounts {
    const where = queue === undefined ? '' : 'WHERE queue = ?';
    const args = queue === undefined ? [] : [queue];
    const r = this.q(
      `SELECT sum(published_at IS NULL) AS pending, sum(published_at IS NOT NULL) AS published,
              min(CASE WHEN published_at IS NULL THEN created_at END) AS oldest,
              min(CASE WHEN published_at IS NULL AND tries > 0 THEN next_try_at END) AS next_try FROM sqs_outbox ${where}`,
    ).get(...args) as { pending: number | null; published: number | null; oldest: number | null; next_try: number | null };
    const pruned = this.q(`SELECT coalesce(sum(published), 0) AS n FROM sqs_outbox_pruned ${where}`).pluck().get(...args) as number;
    // The latest failure is the one whose retry is furthest ahead (its backoff started last, or is the longest).
    const failed = r.next_try === null ? undefined : (this.q(
      `SELECT last_error FROM sqs_outbox WHERE published_at IS NULL AND last_error IS NOT NULL ${queue === undefined ? '' : 'AND queue = ?'} ORDER BY next_try_at DESC, id DESC LIMIT 1`,
    ).get(...args) as { last_error: string } | undefined);
    return { pending: r.pending ?? 0, published: (r.published ?? 0) + pruned, oldest_pending_at: r.oldest, next_try_at: r.next_try, last_error: failed?.last_error ?? null };
  }

  retryOutboxNow(): void {
    this.store.write(() => this.q('UPDATE sqs_outbox SET next_try_at = 0 WHERE published_at IS NULL AND next_try_at > 0').run());
  }

  /** The jobs as they are now, for building the message bodies at publish time (null when gone), in one query. */
  jobsForPublish(jobIds: string[]): Array<Job | null> {
    if (jobIds.length === 0) return [];
    const rows = this.q('SELECT id, doc FROM jobs WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(jobIds)) as Array<{ id: string; doc: string }>;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return jobIds.map((id) => {
      const r = byId.get(id);
      return r ? rowToJob(r) : null;
    });
  }

  markPublished(items: Array<{ id: number; messageId: string | null }>): void {
    const now = this.now;
    const upd = this.q('UPDATE sqs_outbox SET published_at = ?, message_id = ?, tries = tries + 1 WHERE id = ? AND published_at IS NULL');
    this.store.write(() => {
      for (const it of items) upd.run(now, it.messageId, it.id);
      this.prunePublished(now, items.length + PRUNE_SLACK);
    });
  }

  /**
   * Deletes up to `limit` rows published before SQS's deduplication window (PUBLISHED_KEEP_MS),
   * oldest first, counting them per queue in `sqs_outbox_pruned` (outbox status adds them back).
   * Run with each publish, in its transaction: the table holds about the last 5 minutes of
   * publishes, and a backlog left by an older version drains a little faster than rows are added.
   */
  private prunePublished(now: number, limit: number): void {
    const old = this.q('SELECT id, queue FROM sqs_outbox WHERE published_at IS NOT NULL AND published_at < ? ORDER BY published_at LIMIT ?').all(now - PUBLISHED_KEEP_MS, limit) as Array<{ id: number; queue: string }>;
    if (old.length === 0) return;
    const perQueue = new Map<string, number>();
    for (const r of old) perQueue.set(r.queue, (perQueue.get(r.queue) ?? 0) + 1);
    const count = this.q('INSERT INTO sqs_outbox_pruned (queue, published) VALUES (?, ?) ON CONFLICT (queue) DO UPDATE SET published = published + excluded.published');
    for (const [queue, n] of perQueue) count.run(queue, n);
    this.q('DELETE FROM sqs_outbox WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(old.map((r) => r.id)));
  }

  markPublishFailed(items: Array<{ id: number; error: string }>, retryAt: (tries: number) => number): void {
    const sel = this.q('SELECT tries FROM sqs_outbox WHERE id = ?');
    const upd = this.q('UPDATE sqs_outbox SET tries = tries + 1, next_try_at = ?, last_error = ? WHERE id = ? AND published_at IS NULL');
    this.store.write(() => {
      for (const it of items) {
        const row = sel.get(it.id) as { tries: number } | undefined;
        if (row) upd.run(retryAt(row.tries + 1), it.error.slice(0, 500), it.id);
      }
    });
  }

  // ------------------------------------------------------------ deliveries

  delivery(jobId: string): Delivery | null {
    return (this.q('SELECT * FROM sqs_deliveries WHERE job_id = ?').get(jobId) as Delivery | undefined) ?? null;
  }

  /**
   * The message now carries the job (waiting, running, or its death to bury): no DLQ copy of it is
   * sent yet. Not even when it is the message that was recorded, copy sent: a redrive's job run
   * again by its old message (whose delete had failed) kept that mark of its earlier death, and the
   * message of its next death, coming back unburied, was deleted as one whose copy was sent.
   */
  private recordDelivery(ref: ReceivedRef, now: number): void {
    this.q(
      `INSERT INTO sqs_deliveries (job_id, message_id, receipt, queue_url, received_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (job_id) DO UPDATE SET message_id = excluded.message_id, receipt = excluded.receipt,
         queue_url = excluded.queue_url, received_at = excluded.received_at, dlq_sent_at = NULL`,
    ).run(ref.jobId, ref.messageId, ref.receipt, ref.queueUrl, now);
  }

  /** A later receive of the current message gets a new receipt handle; keep the newest. */
  private refreshReceipt(ref: ReceivedRef, now: number): void {
    this.q('UPDATE sqs_deliveries SET receipt = ?, received_at = ? WHERE job_id = ? AND message_id = ?').run(ref.receipt, now, ref.jobId, ref.messageId);
  }

  markDlqSent(jobId: string): void {
    this.q('UPDATE sqs_deliveries SET dlq_sent_at = ? WHERE job_id = ?').run(this.now, jobId);
  }

  forgetDelivery(jobId: string): void {
    this.q('DELETE FROM sqs_deliveries WHERE job_id = ?').run(jobId);
  }

  /**
   * `agentq sqs republish`: for each job still waiting (queued, scheduled) whose message is
   * published, forgets the message recorded as its delivery and writes a new outbox row, in one
   * transaction per call. Forgetting is what lets the new message run the job when the old one was
   * lost (SQS restarted empty, a purge); when the old one was not lost, whichever of the two is
   * received first becomes the delivery and the other is deleted as a duplicate (`consider`).
   * A job whose row is still unpublished is left alone (`pending`): the relay publishes it. A
   * running job whose lease has expired counts as waiting (its worker is gone, its message lost).
   */
  republish(jobIds: string[]): RepublishOutcome[] {
    const now = this.now;
    const pending = this.q('SELECT 1 FROM sqs_outbox WHERE job_id = ? AND published_at IS NULL LIMIT 1');
    const ins = this.q(`INSERT INTO sqs_outbox (job_id, queue, class, why, created_at) VALUES (?, ?, ?, 'republish', ?)`);
    return this.store.write(() =>
      jobIds.map((id): RepublishOutcome => {
        const found = this.store.load(id);
        if (!found) return { job_id: id, result: 'unknown' };
        const { job } = found;
        // A running job whose lease ran out is waiting too: its worker is gone, and only its message
        // coming back would reap the lease (consider); the new message does that when received.
        const lapsed = job.state === 'running' && (job.lease === null || Date.parse(job.lease.expires_at) <= now);
        if (job.state !== 'queued' && job.state !== 'scheduled' && !lapsed) return { job_id: id, result: 'not_waiting', state: job.state };
        if (pending.get(id)) return { job_id: id, result: 'pending', state: job.state };
        this.forgetDelivery(id);
        ins.run(id, job.queue, job.class, now);
        return { job_id: id, result: 'republished', state: job.state };
      }),
    );
  }

  // ------------------------------------------------------------ claim this job id

  /**
   * Judges one received message against the store and, when the job is
   * claimable, takes the store lease for that exact job id — all in one
   * transaction, so two consumers holding copies of the same message cannot
   * both win (the second sees `running` and a different fence).
   */
  consider(ref: ReceivedRef, req: ClaimRequest, now = this.now): Decision {
    return this.store.write((): Decision => {
      const found = this.store.load(ref.jobId);
      if (!found) return { kind: 'unknown' };
      let { job, fence } = found;
      // Found in another queue's SQS queue (moved there, or sent with this job's id): never run by
      // that queue's workers, nor allowed to reap the lease. The job's own message carries it.
      if (job.queue !== req.queue) return { kind: 'delete', why: misroutedWhy(job.queue, req.queue) };
      const current = this.delivery(ref.jobId);

      if (job.state === 'running') {
        const expires = job.lease ? Date.parse(job.lease.expires_at) : 0;
        if (expires > now) {
          if (current && current.message_id !== ref.messageId) return { kind: 'delete', why: 'a duplicate of the message that carries this running job' };
          // No message on record (the DLQ sweep put it back, `requeued`): this one carries the job now.
          if (current === null) this.recordDelivery(ref, now);
          else this.refreshReceipt(ref, now);
          return { kind: 'hide', untilMs: expires, why: 'a live lease holds the job' };
        }
        // The message came back because the lease ran out: the worker crashed or stalled.
        this.reapLease(job, fence, now);
        ({ job, fence } = this.store.load(ref.jobId)!);
      }

      if (job.state === 'dead') {
        // Dead with no message on record: the one that carried it was replaced (renewed near the
        // backstop, put back by a DLQ sweep, or forgotten by `republish` when SQS lost it) and the
        // job died before the new one was received, so its burial found nothing to copy. This
        // message carries the death to the SQS DLQ, as the job's own message does. (Not a death by
        // custody: SQS itself moved that job's message to the DLQ, and the sweep took it in.)
        if (current === null && job.dead?.reason !== 'custody') {
          this.recordDelivery(ref, now);
          return { kind: 'bury', job };
        }
        if (current && current.message_id === ref.messageId && current.dlq_sent_at === null) {
          this.refreshReceipt(ref, now);
          return { kind: 'bury', job };
        }
        return { kind: 'delete', why: 'the job is in the DLQ (store)' };
      }
      if (isTerminal(job.state)) return { kind: 'delete', why: `the job is ${job.state}` };

      // queued or scheduled
      if (current && current.message_id !== ref.messageId && mayStillArrive(current)) {
        return { kind: 'delete', why: 'a duplicate of the message that carries this job' };
      }
      const runAt = Date.parse(job.run_at);
      if (runAt > now) {
        this.recordDelivery(ref, now);
        return { kind: 'hide', untilMs: runAt, why: 'not due yet' };
      }
      if (job.deadline_at !== null && Date.parse(job.deadline_at) <= now) {
        this.endPending(job, fence, now);
        return { kind: 'delete', why: 'the deadline passed before it was claimed' };
      }
      if (req.classes && req.classes.length > 0 && !req.classes.includes(job.class)) {
        return { kind: 'hide', untilMs: now, why: `class ${job.class} is not taken by this worker` };
      }
      if (this.atTenantCap(job)) {
        this.recordDelivery(ref, now);
        return { kind: 'hide', untilMs: now + 1000, why: `tenant ${job.tenant_id} is at its concurrency cap` };
      }
      this.recordDelivery(ref, now);
      return { kind: 'claimed', lease: this.startAttempt(job, fence, req, now) };
    });
  }

  private atTenantCap(job: Job): boolean {
    if (this.fairness.tenantConcurrency === undefined && this.fairness.tenantConcurrencyOverrides === undefined) return false;
    const row = this.q(`SELECT coalesce(sum(n), 0) AS n FROM tenant_counts WHERE queue = ? AND tenant = ? AND state = 'running'`).get(job.queue, job.tenant_id) as { n: number };
    return row.n >= tenantCap(job.tenant_id, this.fairness);
  }

  /**
   * Jobs per class of a queue that a receive may deliver: queued, scheduled, and
   * running (a running job's message comes back when its lease runs out).
   * Which class queues are worth a receive.
   */
  pendingByClass(queue: string): Map<string, number> {
    const rows = this.q(`SELECT class, sum(n) AS n FROM tenant_counts WHERE queue = ? AND state IN ('queued','scheduled','running') GROUP BY class`).all(queue) as Array<{ class: string; n: number }>;
    return new Map(rows.map((r) => [r.class, r.n]));
  }

  private startAttempt(job: Job, fence: number, req: ClaimRequest, now: number): Lease {
    const lease = startAttempt(this.store, job, fence, req, now);
    this.store.countTraffic(job.queue, now, 1, 0);
    return lease;
  }


  private endPending(job: Job, fence: number, now: number): void {
    const from = job.state;
    assertTransition(job.job_id, from, 'expired');
    moveTo(job, 'expired', now);
    job.outcome = outcomeFor('expired', isPartial(job));
    job.ended_at = toIso(now);
    this.store.save(job, fence);
    this.store.event(job, 'expired', from, 'expired', now, { why: 'deadline passed before it was claimed' });
  }

  /**
   * Same rules as the SQLite adapter's lease reaping: the attempt counts and
   * the job is retried like a transient failure (LEASE_EXPIRED), or goes dead
   * with reason `lease_lost` when it has no attempts left.
   */
  private reapLease(job: Job, fence: number, now: number): void {
    const lost = leaseExpiredError(job);
    const expiredWhy = leaseExpiredWhy(job);
    endAttempt(job, leaseEndedAt(job, now), 'lease_lost', lost);
    job.last_error = { ...lost, retryable: true };
    this.store.event(job, 'lease_expired', 'running', null, now, { worker_id: job.lease?.worker_id ?? null, fence });
    job.lease = null;
    if (job.cancel_requested_at !== null) return this.endRunning(job, fence, 'cancelled', now, { why: 'cancel requested before the lease expired' });
    const decision = decideFailure(
      { retryable: true, attempt: job.attempt, maxAttempts: job.max_attempts, deadlineAt: job.deadline_at === null ? null : Date.parse(job.deadline_at) },
      now,
      this.store.random,
      this.store.recentTraffic(job.queue, now, this.retryPolicy.retryBudgetWindowMs),
      this.retryPolicy,
    );
    if (decision.kind === 'retry') {
      assertTransition(job.job_id, 'running', 'scheduled');
      moveTo(job, 'scheduled', now);
      job.run_at = toIso(decision.runAt);
      this.store.save(job, fence);
      this.store.event(job, 'retry_scheduled', 'running', 'scheduled', now, { run_at: job.run_at, error_code: lost.code, over_budget: decision.overBudget });
      this.store.countTraffic(job.queue, now, 0, 1);
    } else if (decision.kind === 'expired') {
      this.endRunning(job, fence, 'expired', now, { why: expiredWhy });
    } else {
      this.bury(job, fence, 'lease_lost', lost.code, lost.message, now);
    }
  }

  private endRunning(job: Job, fence: number, to: 'cancelled' | 'expired', now: number, data: Record<string, unknown>): void {
    assertTransition(job.job_id, 'running', to);
    moveTo(job, to, now);
    job.outcome = outcomeFor(to, isPartial(job));
    job.ended_at = toIso(now);
    job.lease = null;
    this.store.save(job, fence);
    this.store.event(job, to, 'running', to, now, data);
  }

  private bury(job: Job, fence: number, reason: 'lease_lost' | 'custody', code: string, message: string, now: number): void {
    const from = job.state;
    assertTransition(job.job_id, from, 'dead');
    moveTo(job, 'dead', now);
    job.outcome = outcomeFor('dead', isPartial(job));
    job.ended_at = toIso(now);
    job.lease = null;
    const version = job.attempts[job.attempts.length - 1]?.worker_version ?? null;
    job.dead = { reason, dead_at: toIso(now), error_code: code, error_message: message, worker_version: version };
    this.store.save(job, fence);
    this.store.event(job, 'dead', from, 'dead', now, { reason, error_code: code });
  }

  // ------------------------------------------------------------ custody

  custodyByMessage(messageId: string): CustodyRecord | null {
    const r = this.q('SELECT * FROM sqs_custody WHERE message_id = ?').get(messageId) as CustodyRow | undefined;
    return r ? fromCustodyRow(r) : null;
  }

  custody(jobId: string): CustodyRecord | null {
    const r = this.q('SELECT * FROM sqs_custody WHERE job_id = ?').get(jobId) as CustodyRow | undefined;
    return r ? fromCustodyRow(r) : null;
  }

  listCustody(limit: number, after: string | null, sourceQueue?: string): CustodyRecord[] {
    const rows = (
      sourceQueue === undefined
        ? this.q('SELECT * FROM sqs_custody WHERE job_id > ? ORDER BY job_id LIMIT ?').all(after ?? '', limit)
        : this.q('SELECT * FROM sqs_custody WHERE source_queue = ? AND job_id > ? ORDER BY job_id LIMIT ?').all(sourceQueue, after ?? '', limit)
    ) as CustodyRow[];
    return rows.map(fromCustodyRow);
  }

  /**
   * Takes one message out of an SQS DLQ into the store, before the caller
   * deletes it from SQS. Idempotent on the message id, so a sweep killed
   * between this commit and the delete simply finds it again and deletes it.
   *
   * - an agentq envelope for a job the store still has live (the native
   *   backstop moved it after maxReceiveCount receives): the job goes dead
   *   with reason `custody` and the receive count as its error — unless it
   *   is running under a live lease (`requeued`: left running, see CustodyOutcome);
   * - an agentq envelope for a job that already ended: nothing to keep;
   * - anything else (foreign, malformed, or a job the store never knew):
   *   kept byte-exact as a DLQ entry that is listed as malformed, so it is
   *   never redriven or purged by the bulk engine.
   */
  takeCustody(msg: {
    kind: 'agentq' | 'foreign' | 'malformed';
    jobId: string | null;
    messageId: string;
    sourceQueue: string;
    queue: string;
    body: string;
    attributes: Record<string, unknown>;
    receiveCount: number | null;
    why: string;
  }): { recorded: 'job_dead' | 'already_ended' | 'kept' | 'already_kept' | 'requeued'; jobId: string } {
    return this.store.write(() => {
      const now = this.now;
      const existing = this.custodyByMessage(msg.messageId);
      if (existing) return { recorded: 'already_kept', jobId: existing.job_id };
      if (msg.kind === 'agentq' && msg.jobId !== null) {
        const found = this.store.load(msg.jobId);
        if (found && found.job.state === 'running' && found.job.lease !== null && Date.parse(found.job.lease.expires_at) > now) {
          // A live lease: the worker is alive and heartbeating the store; only the message was
          // received too often (its visibility could not be extended). Not ended: the sweep puts the
          // message back (`requeued`), and its next receive records it as the delivery (consider).
          this.forgetDelivery(found.job.job_id);
          return { recorded: 'requeued', jobId: found.job.job_id };
        }
        if (found && !isTerminal(found.job.state)) {
          const { job, fence } = found;
          if (job.state === 'running') endAttempt(job, now, 'lease_lost', { code: 'SQS_MAX_RECEIVES', message: msg.why });
          this.bury(job, fence, 'custody', 'SQS_MAX_RECEIVES', msg.why, now);
          this.insertCustody(job.job_id, 'backstop', msg, now);
          this.forgetDelivery(job.job_id);
          return { recorded: 'job_dead', jobId: job.job_id };
        }
        if (found) return { recorded: 'already_ended', jobId: msg.jobId };
      }
      const kind: CustodyKind = msg.kind === 'agentq' ? 'orphan' : msg.kind;
      const id = this.newId(JOB_ID_PREFIX);
      const code = kind === 'foreign' ? 'SQS_FOREIGN' : kind === 'malformed' ? 'SQS_MALFORMED' : 'SQS_ORPHAN';
      // The row's document is the message body itself, so `dlq show --raw` prints the exact bytes
      // and the entry is listed as malformed (never moved) by every DLQ reader.
      this.q(
        `INSERT INTO jobs (id, queue, state, tenant, class, workflow, created_at, updated_at, run_at, max_attempts, dead_at, dead_reason, error_code, error_message, doc)
         VALUES (?, ?, 'dead', ?, 'batch', ?, ?, ?, ?, 0, ?, 'custody', ?, ?, ?)`,
      ).run(id, msg.queue, 'unknown', 'unknown:v0', now, now, now, now, code, msg.why, msg.body);
      // (not counted as submitted: the insert trigger leaves out a row inserted dead, migration 8)
      this.insertCustody(id, kind, msg, now);
      return { recorded: 'kept', jobId: id };
    });
  }

  private insertCustody(jobId: string, kind: CustodyKind, msg: { messageId: string; sourceQueue: string; body: string; attributes: Record<string, unknown>; receiveCount: number | null }, now: number): void {
    this.q(
      'INSERT INTO sqs_custody (job_id, kind, message_id, source_queue, body, attributes, receive_count, taken_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(jobId, kind, msg.messageId, msg.sourceQueue, msg.body, JSON.stringify(msg.attributes), msg.receiveCount, now);
  }

  /**
   * The states of these jobs, in one query (the DLQ sweep checks a received batch at once); a job
   * a purge removed is `purged` (its `purged` event stays: only a prune deletes events, those of a job row it deletes, and a purged job has none), one the store
   * never had null.
   */
  statesOf(jobIds: string[]): Array<StoreState | null> {
    if (jobIds.length === 0) return [];
    const rows = this.q('SELECT id, state FROM jobs WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(jobIds)) as Array<{ id: string; state: JobState }>;
    const byId = new Map<string, StoreState>(rows.map((r) => [r.id, r.state]));
    const gone = jobIds.filter((id) => !byId.has(id));
    if (gone.length > 0) {
      const purged = this.q(`SELECT DISTINCT job_id FROM events WHERE job_id IN (SELECT value FROM json_each(?)) AND type = 'purged'`).all(JSON.stringify(gone)) as Array<{ job_id: string }>;
      for (const p of purged) byId.set(p.job_id, 'purged');
    }
    return jobIds.map((id) => byId.get(id) ?? null);
  }

  close(): void {
    this.store.close();
  }
}

/**
 * Whether the message recorded as a job's delivery may still come back. Once
 * its DLQ copy was sent it was deleted (a redriven job gets a new message);
 * otherwise it is live, and any other message for the job is a duplicate.
 */
function mayStillArrive(d: Delivery): boolean {
  return d.dlq_sent_at === null;
}

interface CustodyRow {
  job_id: string;
  kind: CustodyKind;
  message_id: string;
  source_queue: string;
  body: string;
  attributes: string;
  receive_count: number | null;
  taken_at: number;
}

function fromCustodyRow(r: CustodyRow): CustodyRecord {
  return {
    job_id: r.job_id,
    kind: r.kind,
    message_id: r.message_id,
    source_queue: r.source_queue,
    body: r.body,
    attributes: JSON.parse(r.attributes) as Record<string, unknown>,
    receive_count: r.receive_count,
    taken_at: toIso(r.taken_at),
  };
}
