/**
 * The SQS backend: SQS is the broker (delivery, leases as visibility
 * timeouts), a job store is the source of truth (records, idempotency,
 * cancel flags, effects, the DLQ, runs/ledger/locks, stats) and an outbox in
 * that store bridges the two. See docs/architecture.md, "SQS backend (outbox
 * and custody)".
 *
 * Every received message is judged against the store before anything runs
 * (`SqsStore.consider`, src/backend/sqs/store.ts): SQS delivers at least once, so duplicates,
 * stale copies and early arrivals are expected and handled there.
 */
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { AdmissionLimits } from '../../core/admission.js';
import { systemClock, systemRandom, type Clock, type Random } from '../../core/clock.js';
import { initialFairnessState, nextPick, type Candidates, type FairnessOptions } from '../../core/fairness.js';
import { BrokerUnavailableError, ConfigError, fromBroker, RetryLaterError, ValidationError, wasNotSent } from '../../core/errors.js';
import type { RetryPolicy } from '../../core/retry.js';
import { JOB_CLASSES, type DlqEntry, type Effect, type Job, type JobClass, type JobEvent, type SubmitRequest } from '../../core/schemas.js';
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
  Unpublished,
  UsageReport,
} from '../contract.js';
import { checkApplyRequest, checkClaim } from '../checks.js';
import { sendBatch, type OutgoingMessage } from './batch-send.js';
import { countingAnswers, createDataPlane, LazySqsSdk, toAgentqError, UnansweredCalls, watchCall } from './client.js';
import { SdkDataPlane, type SqsDataPlane } from './data-plane.js';
import { sweepDlq, type SweepOptions, type SweepReport } from './custody.js';
import { dlqAttributes, messageBody, parseMessage } from './envelope.js';
import { dlqDedupId, dlqGroupId, firstOfEachGroup, renewalDedupId } from './fifo.js';
import { SqsQueues, type SetupAction } from './queues.js';
import { GroupPublisher } from './publisher.js';
import { openSqsStore } from './open-store.js';
import { MAX_DELAY_SECONDS, OutboxRelay, type RelayResult } from './relay.js';
import type { Decision, OutboxCounts, RepublishOutcome, SqsStore } from './store.js';
import { redactStoreCredentials, type SqsUrl } from './url.js';

/** SQS caps a message's visibility timeout at 12 hours. */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 3600;
/** How far ahead a job may be scheduled: inside the 14-day retention of its message, with a day to spare. */
export const MAX_SCHEDULE_AHEAD_MS = 13 * 24 * 3600_000;
/**
 * A redrive batch is applied in up to this many parts of at least APPLY_PART_MIN jobs
 * (applyRunItems): enough overlap of sends and store work, few extra store transactions.
 * (8 measured ~5% less wall than 4 on the 5,000-entry bench, in two alternating A/B runs:
 * the last part's sends, which nothing overlaps, are half as many.)
 */
const APPLY_PARTS = 8;
const APPLY_PART_MIN = 100;
/** Receive rounds per class queue in one claim call: bounded work per call. */
const MAX_ROUNDS = 8;
/**
 * How often (store clock) a worker with nothing waiting in the store still receives from its class
 * queues (`claimLeasing`): messages ended jobs left there are dealt with only when received.
 */
export const IDLE_RECEIVE_EVERY_MS = 60_000;
/**
 * How long a submit waits for SQS to publish its job (publisher.ts): the job is stored with its
 * outbox row by then, so a silent SQS must not hold the caller for the transport's time-outs.
 */
export const SUBMIT_PUBLISH_WAIT_MS = 5000;
/**
 * How long an SQS call of an operator's command (setup, sweep, a redrive's publish and DLQ sweep,
 * republish) may go unanswered before the command gives up on SQS (exit 75): an endpoint that
 * accepts connections and never answers held each for the transport's time-outs (3 × 30 s).
 */
export const BROKER_STALL_MS = 5000;

/**
 * How long a heartbeat, or a job's end (complete, fail, abort, release), waits for SQS after the
 * store answered before it answers with the store's result anyway: the SQS work (a visibility
 * change, a message delete, a DLQ copy) goes on behind (see `behind`).
 */
const SQS_BEHIND_WAIT_MS = 1000;
/** How long close() still waits for a publish round it gave up on, once it closed the SQS clients under it. */
const ABANDONED_ROUND_WAIT_MS = 1000;

export interface SqsBackendOptions {
  url: SqsUrl;
  /** As typed by the user, credentials redacted. */
  shown: string;
  clock?: Clock;
  random?: Random;
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
  retryPolicy?: RetryPolicy;
  /**
   * Injected for tests; built from the URL otherwise. An injected client carries
   * every call, the data plane's too (a test that wraps `send` sees them all),
   * unless `dataPlane` is injected as well.
   */
  client?: SQSClient;
  /** Injected for tests: the client of the hot calls (data-plane.ts); from the URL's `client=` otherwise. */
  dataPlane?: SqsDataPlane;
  /**
   * The longest visibility timeout or delay agentq asks SQS for (default and
   * maximum 12 h). The store is the authority on time (run_at, lease expiry);
   * SQS visibility only mirrors it so messages come back about when they are
   * due. A test that drives the store with a manual clock sets 0: every
   * message comes straight back and the store alone decides — slower, and
   * exactly as correct.
   */
  maxVisibilitySeconds?: number;
  /** How long a submit waits for its job to be published (default SUBMIT_PUBLISH_WAIT_MS). */
  publishWaitMs?: number;
  /** How long an operator's command waits on an unanswered SQS call (default BROKER_STALL_MS). */
  stallMs?: number;
}

/** Whether a claim may have leased jobs so far (see SqsBackend.claim). */
interface Leasing {
  unsure: boolean;
}

export class SqsBackend implements Backend {
  readonly kind = 'sqs' as const;
  readonly description: string;
  readonly storeId: string;
  /** The job store's ordinary operations (the SQLite adapter today). */
  readonly store: Backend;
  /** The store's SQS side: outbox, deliveries, claim-by-id, custody. */
  readonly ext: SqsStore;
  readonly sqsQueues: SqsQueues;
  readonly relay: OutboxRelay;
  private readonly publisher: GroupPublisher;
  /** The AWS SDK client, loaded only when needed (setup, auto-create, `client=sdk`, no `endpoint=`). */
  readonly sdk: LazySqsSdk;
  /** Sends, receives, deletes, visibility changes and queue look-ups; `sdk` does the rest. */
  private readonly data: SqsDataPlane;
  private readonly ownsClient: boolean;
  private readonly ownsData: boolean;
  private readonly url: SqsUrl;
  private readonly clock: Clock;
  private readonly fairness: FairnessOptions;
  private readonly maxVisibility: number;
  private readonly publishWaitMs: number;
  private readonly stallMs: number;
  private fair = initialFairnessState();
  /** When a claim that finds nothing waiting in the store next receives anyway (IDLE_RECEIVE_EVERY_MS); not at once: a worker's start looked its queues up. */
  private nextIdleReceiveAt: number;
  /** Told the jobs of every committed redrive batch: the sweep beside the moves (sweepRedrivenCopies). */
  private readonly movedListeners = new Set<(jobIds: string[]) => void>();
  /** Calls SQS answered (`broker`). */
  private answered = 0;
  /** Calls SQS has not answered yet (`broker.silentMs`). */
  private readonly unanswered = new UnansweredCalls();
  /**
   * Per job, the SQS work still going on behind its last heartbeat or its end (`behind`): a
   * visibility change, a message delete, a DLQ copy then its message's delete. One call at a time
   * per job, however long SQS is silent.
   */
  private readonly sqsWork = new Map<string, Promise<void>>();
  /** Queues whose missing SQS DLQ (or a failed send of a copy to it) was reported (buryInSqs): once each. */
  private readonly dlqMissingSaid = new Set<string>();

  constructor(opts: SqsBackendOptions) {
    this.url = opts.url;
    this.clock = opts.clock ?? systemClock;
    const random = opts.random ?? systemRandom;
    this.description = redactStoreCredentials(opts.shown);
    this.fairness = opts.fairness ?? {};
    this.maxVisibility = Math.max(0, Math.min(SQS_MAX_VISIBILITY_SECONDS, opts.maxVisibilitySeconds ?? SQS_MAX_VISIBILITY_SECONDS));
    this.publishWaitMs = opts.publishWaitMs ?? SUBMIT_PUBLISH_WAIT_MS;
    this.stallMs = opts.stallMs ?? BROKER_STALL_MS;
    const opened = openSqsStore(opts.url, { clock: this.clock, random, admission: opts.admission, fairness: opts.fairness, retryPolicy: opts.retryPolicy });
    this.store = opened.backend;
    // The jobs, plans and ledgers live in the job store; the SQS queues only deliver.
    this.storeId = this.store.storeId;
    this.ext = opened.ext;
    this.ownsClient = !opts.client;
    this.sdk = new LazySqsSdk(opts.url, opts.client);
    this.ownsData = !opts.dataPlane;
    const data = opts.dataPlane ?? (opts.client ? new SdkDataPlane(opts.client) : createDataPlane(this.sdk, opts.url));
    this.data = countingAnswers(data, () => this.answered++, this.unanswered);
    this.sqsQueues = new SqsQueues(this.data, this.sdk, opts.url.prefix, opts.url.maxReceiveCount, opts.url.autoCreate, opts.url.fifo !== null, (call) =>
      watchCall(call, () => this.answered++, this.unanswered),
    );
    this.relay = new OutboxRelay(this.ext, this.sqsQueues, this.data, this.maxVisibility, opts.url.fifo);
    this.publisher = new GroupPublisher(this.relay);
    this.nextIdleReceiveAt = this.clock.now() + IDLE_RECEIVE_EVERY_MS;
  }

  /** Seconds of visibility that hide a message until `untilMs` (store clock), within SQS limits. */
  private visibilityUntil(untilMs: number): number {
    return Math.max(0, Math.min(this.maxVisibility, Math.ceil((untilMs - this.clock.now()) / 1000)));
  }

  /**
   * `work`, given up on (BrokerUnavailableError, exit 75) once one of this backend's SQS calls has
   * gone unanswered for stallMs past when its answer was due: an endpoint that accepts and never
   * answers. What `work` left running goes on unwatched (its errors are dropped); every step of
   * these commands is safe to interrupt and to run again.
   */
  private async answering<T>(what: string, work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        if (this.unanswered.silentMs() < this.stallMs) return;
        reject(
          fromBroker(
            new BrokerUnavailableError(
              `${this.broker.name} did not answer within ${this.stallMs / 1000} s (${what})`,
              'BACKEND_UNAVAILABLE',
              'It accepts connections but does not answer: check the endpoint (endpoint= in the URL), a proxy or firewall between, then try again.',
            ),
          ),
        );
      }, Math.min(250, this.stallMs));
    });
    try {
      return await Promise.race([work, stalled]);
    } finally {
      clearInterval(timer);
    }
  }

  // ------------------------------------------------------------ SQS-only operations

  /** The RedrivePolicy's maxReceiveCount this backend sets up (the URL's `max_receive_count`). */
  get maxReceiveCount(): number {
    return this.url.maxReceiveCount;
  }

  /** Creates or checks the SQS queues of these agentq queues. */
  async setup(queues: string[]): Promise<SetupAction[]> {
    // One look-up through the data plane first (any answer will do): an endpoint silent from the
    // start is told before the SDK client is even loaded.
    if (queues.length > 0) await this.answering('looking up its queues', this.data.getQueueUrl({ QueueName: this.sqsQueues.dlqName(queues[0]!) }).catch((e: unknown) => {
      if (e instanceof BrokerUnavailableError) throw e;
    }));
    // Setup's own calls go through the SDK client, which answers for a silent endpoint only after
    // its time-outs (3 x 30 s): each is watched as the data plane's are (SqsQueues `watch`), so an
    // endpoint that goes silent after the look-up is given up on after stallMs too.
    return this.answering('setting up its queues', this.sqsQueues.setup(queues));
  }

  /**
   * Publishes every pending outbox row (crash recovery). `now`: rows backing off after a failed
   * publish are tried now too (an operator's `agentq outbox relay`: whatever failed may be mended).
   */
  async relayOutbox(opts: { now?: boolean } = {}): Promise<RelayResult & { pending_after: number; next_try_at: number | null; last_error: string | null }> {
    if (opts.now) await this.ext.retryOutboxNow();
    // (a silent SQS: given up on after stallMs, the rows still pending for the next try)
    const r = await this.answering('publishing the outbox', this.relay.catchUp());
    const after = await this.ext.outboxCounts();
    return { ...r, pending_after: after.pending, next_try_at: after.next_try_at, last_error: after.last_error };
  }

  /**
   * `agentq sqs republish`: the store forgets the message of each waiting job and writes it a new
   * outbox row (SqsStore.republish), then those rows are published now. A publish that fails leaves
   * the row pending for the relay, as after a submit; a job runs once either way (`consider`).
   */
  async republish(jobIds: string[]): Promise<{ outcomes: RepublishOutcome[]; relay: RelayResult }> {
    const outcomes = await this.ext.republish(jobIds);
    const ids = outcomes.filter((o) => o.result === 'republished').map((o) => o.job_id);
    let relay: RelayResult = { published: 0, skipped: 0, failed: [] };
    if (ids.length > 0) {
      try {
        relay = await this.answering('publishing', this.relay.publishJobs(ids));
      } catch (e) {
        // SQS silent: the rows are committed and wait in the outbox, as after a failed publish
        if (!(e instanceof BrokerUnavailableError)) throw e;
        relay = { published: 0, skipped: 0, failed: ids.map((job_id) => ({ job_id, error: e.message, code: e.code })) };
      }
    }
    return { outcomes, relay };
  }

  async unpublished(queue: string): Promise<Unpublished> {
    const c = await this.ext.outboxCounts(queue);
    return { count: c.pending, nextTryAt: c.next_try_at, lastError: c.last_error };
  }

  async outboxStatus(): Promise<OutboxCounts> {
    return this.ext.outboxCounts();
  }

  /**
   * The SQS DLQ of `queue`, to sweep. One that does not exist is a ConfigError: "received 0" for a
   * misspelt queue read as an empty DLQ.
   */
  async dlqToSweep(queue: string): Promise<{ url: string; name: string }> {
    const url = await this.answering('looking up the DLQ', this.sqsQueues.dlqUrl(queue));
    const name = this.sqsQueues.dlqName(queue);
    if (url === null) throw new ConfigError(`the SQS DLQ ${name} does not exist, so there is nothing to sweep`, `Check the queue name and the URL's prefix; to create the queues of ${queue}: agentq sqs setup --queue ${queue}`);
    return { url, name };
  }

  /** Receives from the SQS DLQ of `queue` (`dlqToSweep`) and takes what it finds into custody. */
  async sweepDlq(queue: string, opts: SweepOptions = {}): Promise<SweepReport> {
    const { url, name } = await this.dlqToSweep(queue);
    return this.answering('sweeping the DLQ', sweepDlq(this.data, this.ext, { url, name, queue, maxReceiveCount: this.url.maxReceiveCount }, opts, (jobId, m) => this.requeue(jobId, m)));
  }

  /**
   * Sends a running job's envelope, which SQS moved to the DLQ while the job's lease lives (custody
   * `requeued`), back to the job's source queue as a new message (receive count 0): its next receive
   * makes it the job's delivery, hidden until the lease ends (consider), deleted by the job's ending.
   * FIFO: in the job's message group, with a deduplication id of its own (that of a renewal).
   */
  private async requeue(jobId: string, m: Message): Promise<boolean> {
    const job = await this.store.get(jobId);
    if (!job) return false;
    const url = await this.sqsQueues.sourceUrl(job.queue, job.class);
    if (url === null) return false;
    const copy: OutgoingMessage = {
      key: jobId,
      body: m.Body ?? '',
      attributes: m.MessageAttributes ?? {},
      ...(this.url.fifo ? { groupId: m.Attributes?.MessageGroupId ?? jobId, dedupId: renewalDedupId(jobId, m.MessageId!) } : {}),
    };
    return (await sendBatch(this.data, url, [copy])).sent.length === 1;
  }

  /**
   * The sweep that follows `agentq dlq redrive` (redrive-sweep.ts): receives the SQS DLQ of
   * `queue` once through and deletes agentq's copies of jobs the store no longer holds dead;
   * everything else is put back visible, unchanged, and nothing is taken into custody. Bounded
   * by the DLQ's depth when it starts (plus a margin: the depth is approximate), and each
   * message stays hidden while the sweep runs (30 s plus 5 s per 1,000 messages, as long as a
   * slow remote sweep may take), then is put back at once. Not created when missing.
   * `holdUntil` (the moves still running): copies of jobs still dead are held, and judged
   * again when a redrive batch of this backend moves their jobs, or once it settles (custody.ts).
   */
  sweepRedrivenCopies(queue: string, signal?: AbortSignal, holdUntil?: Promise<unknown>): Promise<SweepReport & { dlq: string; in_flight: number }> {
    return this.answering('sweeping the DLQ', this.sweepRedrivenCopiesUnwatched(queue, signal, holdUntil));
  }

  private async sweepRedrivenCopiesUnwatched(queue: string, signal?: AbortSignal, holdUntil?: Promise<unknown>): Promise<SweepReport & { dlq: string; in_flight: number }> {
    const name = this.sqsQueues.dlqName(queue);
    const url = await this.sqsQueues.url(name);
    if (url === null) return { dlq: name, received: 0, custody: [], already_in_custody: 0, requeued: 0, deleted: 0, kept_in_sqs: 0, mirror_kept: 0, duplicate_copies: 0, in_flight: 0 };
    const depth = await this.sqsQueues.visibleDepth(url, name, queue);
    // Messages someone else holds hidden (another sweep, a consumer, or a redrive killed mid-sweep)
    // cannot be received now: the report says so, since copies of moved jobs may be among them.
    if (depth === 0) return { dlq: name, received: 0, custody: [], already_in_custody: 0, requeued: 0, deleted: 0, kept_in_sqs: 0, mirror_kept: 0, duplicate_copies: 0, in_flight: await this.sqsQueues.inFlight(url, name, queue) };
    const max = Math.ceil(depth * 1.1) + 100;
    const visibilitySeconds = Math.min(SQS_MAX_VISIBILITY_SECONDS, 30 + Math.ceil(max / 200));
    const onMoved = (listener: (jobIds: string[]) => void) => {
      this.movedListeners.add(listener);
      return () => void this.movedListeners.delete(listener);
    };
    const report = await sweepDlq(this.data, this.ext, { url, name, queue, maxReceiveCount: this.url.maxReceiveCount }, { max, visibilitySeconds, copiesOnly: true, signal, holdUntil, onMoved });
    // After the sweep everything it received is deleted or visible again: what is hidden now is held by others.
    return { dlq: name, ...report, in_flight: report.interrupted ? 0 : await this.sqsQueues.inFlight(url, name, queue) };
  }

  /**
   * A worker whose SQS queues do not exist would idle while the store holds nothing pending (claim
   * receives only from classes with pending work), then fail once a job came: so the queues are
   * looked up at its start (created with `autocreate=1`). A missing DLQ is only warned about: jobs
   * still die into the store's DLQ, but no copy reaches SQS (buryInSqs).
   */
  async workerPreflight(queue: string, classes?: readonly JobClass[]): Promise<string[]> {
    const missing: string[] = [];
    for (const cls of classes && classes.length > 0 ? classes : JOB_CLASSES) {
      if ((await this.sqsQueues.sourceUrl(queue, cls)) === null) missing.push(this.sqsQueues.sourceName(queue, cls));
    }
    if (missing.length > 0) {
      throw new ConfigError(`the SQS queue(s) ${missing.join(', ')} do not exist, so queue ${queue} cannot deliver jobs to this worker`, `Run: agentq sqs setup --queue ${queue}`);
    }
    if ((await this.sqsQueues.dlqUrl(queue)) !== null) return [];
    return [dlqMissing(this.sqsQueues.dlqName(queue), queue)];
  }

  // ------------------------------------------------------------ producers and operators

  async submit(req: SubmitRequest): Promise<SubmitResult> {
    const refused = this.refusesSubmit(req);
    if (refused !== null) throw refused;
    const res = await this.store.submit(req);
    // Published at once when SQS answers (together with concurrent submits); otherwise, or when
    // it does not answer within publishWaitMs, the outbox row waits for the relay (workers,
    // `agentq outbox relay`).
    if (!res.created) return res;
    const unpublished = await this.publisher.publish(res.job.job_id, this.publishWaitMs);
    return unpublished === null ? res : { ...res, unpublished };
  }
  refusesSubmit(req: SubmitRequest): ValidationError | null {
    // (`?.`: a request that is not an object is the store's to refuse, with a ValidationError)
    const runAt = (req as SubmitRequest | null | undefined)?.run_at;
    if (typeof runAt === 'string' && Date.parse(runAt) - this.clock.now() > MAX_SCHEDULE_AHEAD_MS) {
      return new ValidationError(
        'run_at must be at most 13 days ahead on the SQS backend (SQS keeps a message at most 14 days, and the message waits in SQS until it is due)',
        'Submit it later, or schedule it outside agentq.',
      );
    }
    return null;
  }
  get(jobId: string): Promise<Job | null> {
    return this.store.get(jobId);
  }
  list(filter: JobFilter, page: PageRequest): Promise<JobPage> {
    return this.store.list(filter, page);
  }
  /** Store only: a queued job's message is deleted when it is next received; a running job's worker sees the flag. */
  cancel(jobId: string, reason: string | null = null): Promise<CancelResult> {
    return this.store.cancel(jobId, reason);
  }
  events(query: EventQuery): AsyncIterable<JobEvent> {
    return this.store.events(query);
  }
  queues(page: PageRequest): Promise<Page<string>> {
    return this.store.queues(page);
  }

  // ------------------------------------------------------------ workers

  /** An idle claim long-polls one SQS queue for `wait=` seconds (claim below). */
  get claimWaitMs(): number {
    return this.url.waitSeconds * 1000;
  }

  /** SQS, the broker (named by its endpoint, else its region), how many of its calls it answered, and how long it has been silent on one. */
  get broker(): { name: string; answered: number; silentMs: number } {
    return { name: this.url.endpoint === null ? `SQS in ${this.url.region}` : `SQS at ${this.url.endpoint}`, answered: this.answered, silentMs: this.unanswered.silentMs() };
  }

  /**
   * Receives and judges messages until `max` jobs are leased. A failure says it was never sent
   * (`RetryLaterError.notSent`, as the store marks a call that cannot have reached it) exactly
   * while no lease can have been taken: a worker then skips its orphan sweep. Leases are taken
   * only by `consider`; once one answered with a lease (lost with this failure) or failed without
   * saying it never ran, the failure is no longer "never sent", whatever call failed last. Before
   * that, whatever failed (SQS down or frozen at ReceiveMessage, a read of the store) left no
   * orphan: without the mark, a worker listed the queue's running jobs in the store after every
   * claim for as long as SQS was away, load on the one system that answered, for nothing.
   */
  async claim(req: ClaimRequest): Promise<Lease[]> {
    checkClaim(req);
    const leasing: Leasing = { unsure: false };
    try {
      return await this.claimLeasing(req, leasing);
    } catch (e) {
      if (e instanceof RetryLaterError) e.notSent = !leasing.unsure;
      throw e;
    }
  }

  private async claimLeasing(req: ClaimRequest, leasing: Leasing): Promise<Lease[]> {
    // Workers run the relay too, so a crash between commit and publish heals without an operator.
    await this.relay.catchUp({ limit: 100, maxRounds: 1, background: true }).catch(() => undefined);
    const wanted = new Set<JobClass>(req.classes && req.classes.length > 0 ? req.classes : JOB_CLASSES);
    const pending = await this.ext.pendingByClass(req.queue);
    const candidates: Candidates = {};
    for (const c of JOB_CLASSES) if (wanted.has(c) && (pending.get(c) ?? 0) > 0) candidates[c] = ['*'];
    const leases: Lease[] = [];
    const classes = Object.keys(candidates) as JobClass[];
    if (classes.length === 0) return this.idleReceive(req, wanted, leasing);
    // Classes by smooth weighted round robin (core/fairness), each class its own SQS queue.
    while (leases.length < req.max) {
      const choice = nextPick(this.fair, candidates, this.fairness);
      if (!choice) break;
      const cls = choice.pick.class;
      const got = await this.claimFrom(req, cls, req.max - leases.length, 0, leasing);
      if (got.length === 0) {
        delete candidates[cls];
        continue;
      }
      this.fair = choice.state;
      // Charge the class for every job it got beyond the first.
      for (let i = 1; i < got.length; i++) this.fair = nextPick(this.fair, { [cls]: ['*'] }, this.fairness)!.state;
      leases.push(...got);
    }
    // Nothing ready anywhere: long-poll one queue (the first class with work in the store) so an
    // idle worker waits in SQS instead of spinning, without waiting 20 s per empty class.
    if (leases.length === 0 && this.url.waitSeconds > 0 && classes.length > 0) {
      leases.push(...(await this.claimFrom(req, classes[0]!, req.max, this.url.waitSeconds, leasing)));
    }
    return leases;
  }

  /**
   * Nothing of these classes waits in the store, so no receive is due; but a message an ended job
   * left behind is dealt with only when received: a dead job's whose DLQ copy could not be sent
   * (the SQS DLQ missing at its death, a send a stop gave up on), an ended job's whose delete
   * failed. With no further job of its class it was never received: the copy never reached the
   * SQS DLQ once it existed, and the message lay in the source queue (its depth and oldest age)
   * until SQS's retention dropped it. So once a minute an idle worker receives from each of its
   * class queues (no long poll); `consider` buries or deletes what it finds, as on any receive.
   */
  private async idleReceive(req: ClaimRequest, wanted: Set<JobClass>, leasing: Leasing): Promise<Lease[]> {
    const now = this.clock.now();
    if (now < this.nextIdleReceiveAt) return [];
    this.nextIdleReceiveAt = now + IDLE_RECEIVE_EVERY_MS;
    const leases: Lease[] = [];
    for (const cls of JOB_CLASSES) {
      // (a class queue that is missing holds nothing, and no job of the store waits for it)
      if (!wanted.has(cls) || leases.length >= req.max || (await this.sqsQueues.sourceUrl(req.queue, cls)) === null) continue;
      leases.push(...(await this.claimFrom(req, cls, req.max - leases.length, 0, leasing)));
    }
    return leases;
  }

  private async claimFrom(req: ClaimRequest, cls: JobClass, max: number, waitSeconds: number, leasing: Leasing): Promise<Lease[]> {
    const name = this.sqsQueues.sourceName(req.queue, cls);
    const url = await this.sqsQueues.url(name);
    // Asked only for a class the store holds pending jobs of: without its queue they can never be
    // delivered, and a worker that reported "nothing claimable" looked idle and healthy (exit 0 with --drain).
    if (url === null) throw fromBroker(new ConfigError(`the SQS queue ${name} does not exist, so the ${cls} jobs of queue ${req.queue} cannot be delivered`, `Run: agentq sqs setup --queue ${req.queue}`));
    const leases: Lease[] = [];
    const seen = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS && leases.length < max; round++) {
      let msgs: Message[];
      try {
        const out = await this.data.receiveMessage({
          QueueUrl: url,
          MaxNumberOfMessages: Math.min(10, max - leases.length),
          VisibilityTimeout: this.visibilityUntil(this.clock.now() + req.leaseMs),
          WaitTimeSeconds: round === 0 ? waitSeconds : 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
        });
        msgs = out.Messages ?? [];
      } catch (e) {
        throw toAgentqError(e, `ReceiveMessage ${this.sqsQueues.sourceName(req.queue, cls)}`, req.queue);
      }
      if (msgs.length === 0) break;
      if (this.url.fifo === 'tenant') {
        const { judge, putBack } = firstOfEachGroup(msgs);
        for (const m of putBack) await this.setVisibility(url, m.ReceiptHandle!, 0);
        msgs = judge;
      }
      let fresh = 0;
      for (const m of msgs) {
        if (!seen.has(m.MessageId!)) fresh++;
        seen.add(m.MessageId!);
        const lease = await this.handle(m, url, req, leasing);
        if (lease) leases.push(lease);
      }
      // Every message came round again: nothing else is waiting in this queue right now.
      if (fresh === 0) break;
    }
    return leases;
  }

  /** Acts on one received message as the store decided. */
  private async handle(m: Message, url: string, req: ClaimRequest, leasing: Leasing): Promise<Lease | null> {
    const parsed = parseMessage(m);
    if (parsed.kind !== 'agentq') {
      // Not ours: never run, never deleted here. It reaches the DLQ by the native
      // backstop, where custody keeps it byte-exact.
      await this.setVisibility(url, m.ReceiptHandle!, this.notOursVisibility());
      return null;
    }
    let d: Decision;
    try {
      d = await this.ext.consider({ jobId: parsed.jobId, messageId: m.MessageId!, receipt: m.ReceiptHandle!, queueUrl: url }, req);
    } catch (e) {
      // (it may have taken the lease with its answer lost, unless it certainly never ran)
      if (!wasNotSent(e)) leasing.unsure = true;
      throw e;
    }
    if (d.kind === 'claimed') leasing.unsure = true;
    switch (d.kind) {
      case 'claimed':
        return d.lease;
      case 'hide':
        // A running job's message too: it comes back during a live lease only when its heartbeats
        // could not extend its visibility (the worker cut off from SQS), and each time is a
        // receive. The copy, once received, is the job's delivery again (consider).
        if (this.nearBackstop(m) && (await this.renew(m, url, parsed.jobId, d.untilMs))) return null;
        await this.setVisibility(url, m.ReceiptHandle!, this.visibilityUntil(d.untilMs));
        return null;
      case 'delete':
        await this.deleteMessage(url, m.ReceiptHandle!);
        return null;
      case 'bury':
        // After the job's own SQS work (its worker's burial may still be going on behind, SQS slow
        // to answer its copy): two burials at once sent two copies of one death.
        await this.behind(parsed.jobId, () => this.buryInSqs(d.job));
        return null;
      case 'unknown':
        await this.setVisibility(url, m.ReceiptHandle!, this.notOursVisibility());
        return null;
    }
  }

  /**
   * A message of a job that cannot run yet is hidden (at most 12 h at a time; a second when its
   * tenant is at its cap), and every time it comes back is a receive: a job scheduled days ahead,
   * a long retry delay, a tenant held at its cap, or a running job whose worker cannot reach SQS to
   * extend its visibility would reach maxReceiveCount and be moved to the DLQ by the native
   * backstop. So a message one receive short of that is renewed instead of hidden again.
   */
  private nearBackstop(m: Message): boolean {
    // Not with a group per tenant (`fifo=1`): a copy would go to the end of its message group,
    // behind the tenant's later jobs, and the order the group exists for would be lost. With a
    // group per job (`fifo=job`) the copy is alone in its group, and is renewed as on standard queues.
    if (this.url.fifo === 'tenant') return false;
    return Number(m.Attributes?.ApproximateReceiveCount ?? '0') >= this.url.maxReceiveCount - 1;
  }

  /**
   * Sends a copy of the message (receive count 0) hidden as long as SQS lets a new message wait,
   * then deletes the old one: only after SQS confirmed the copy, so the job always has a message.
   * False when the copy was not confirmed (the old message is then hidden as usual).
   */
  private async renew(m: Message, url: string, jobId: string, untilMs: number): Promise<boolean> {
    // The store forgets this message first, so the copy is not taken for a duplicate of it. (No
    // one else can receive the old message meanwhile: this receive hides it for a lease.)
    await this.ext.forgetDelivery(jobId, true);
    const copy: OutgoingMessage = {
      key: jobId,
      body: m.Body ?? '',
      attributes: m.MessageAttributes ?? {},
      // FIFO queues refuse per-message delays: the copy goes now, in the same group (the job's own),
      // with a deduplication id of its own renewal (the message it replaces), and is hidden when
      // received, as the message it replaces was.
      ...(this.url.fifo
        ? { groupId: m.Attributes?.MessageGroupId ?? jobId, dedupId: renewalDedupId(jobId, m.MessageId!) }
        : { delaySeconds: Math.min(MAX_DELAY_SECONDS, this.visibilityUntil(untilMs)) }),
    };
    let sent = false;
    try {
      sent = (await sendBatch(this.data, url, [copy])).sent.length === 1;
    } catch {
      sent = false;
    }
    if (!sent) return false;
    await this.deleteMessage(url, m.ReceiptHandle!);
    return true;
  }

  /**
   * How long a message agentq will not run stays hidden. On a standard queue
   * as long as SQS allows, so it costs few receives on its way to the DLQ. On a
   * FIFO queue a hidden message holds its whole message group, so it is let go
   * at once: each receive counts, and after maxReceiveCount receives the
   * native backstop moves it to the DLQ and frees the group.
   */
  private notOursVisibility(): number {
    return this.url.fifo ? 0 : this.maxVisibility;
  }

  private async setVisibility(url: string, receipt: string, seconds: number): Promise<void> {
    try {
      await this.data.changeMessageVisibility({ QueueUrl: url, ReceiptHandle: receipt, VisibilityTimeout: seconds });
    } catch {
      // A stale receipt (the message was received again elsewhere): the store decides on its next receive.
    }
  }

  private async deleteMessage(url: string, receipt: string): Promise<boolean> {
    try {
      await this.data.deleteMessage({ QueueUrl: url, ReceiptHandle: receipt });
      return true;
    } catch {
      return false;
    }
  }

  /** Deletes the message that carries a job that has ended; a stale copy is deleted on its next receive. */
  private async retire(jobId: string): Promise<void> {
    const d = await this.ext.delivery(jobId);
    if (!d) return;
    if (await this.deleteMessage(d.queue_url, d.receipt)) await this.ext.forgetDelivery(jobId);
  }

  /**
   * A dead job's envelope goes to the SQS DLQ with its error attributes, and
   * the source message is deleted only after both the store entry (already
   * committed) and the DLQ copy exist. If the send fails, the source message
   * stays; when it comes back, `consider` sees dead + not sent and retries this.
   */
  private async buryInSqs(job: Job): Promise<string | undefined> {
    const d = await this.ext.delivery(job.job_id);
    if (!d || !job.dead) return;
    // Its copy was confirmed meanwhile (an earlier burial of this death, going on behind when this
    // one was decided): only the message is left to delete, by its newest receipt. (A copy sent
    // before this death, of an earlier one the job was redriven from, does not count.)
    if (d.dlq_sent_at !== null && d.dlq_sent_at >= Date.parse(job.dead.dead_at)) {
      await this.deleteMessage(d.queue_url, d.receipt);
      return;
    }
    const dlq = await this.sqsQueues.dlqUrl(job.queue);
    // The source message stays (it comes back and is buried again once the DLQ exists).
    if (dlq === null) return dlqMissing(this.sqsQueues.dlqName(job.queue), job.queue);
    const fifo = this.url.fifo ? { groupId: dlqGroupId(job), dedupId: dlqDedupId(job, job.dead.dead_at) } : {};
    const out = await sendBatch(this.data, dlq, [{ key: job.job_id, body: messageBody(job), attributes: dlqAttributes(job, job.dead), ...fifo }]);
    if (out.sent.length !== 1) {
      // Not lost: the source message stays and, when it comes back, the copy is sent again (consider → bury).
      return `its copy could not be sent to the SQS DLQ ${this.sqsQueues.dlqName(job.queue)} (${out.failed[0]?.error ?? 'not confirmed'}); the job is in the job store's DLQ, and the copy is sent again when its message comes back. If the DLQ is missing, run: agentq sqs setup --queue ${job.queue}`;
    }
    // The copy is confirmed: only now may the source message go (never deleted before its copy).
    await this.ext.markDlqSent(job.job_id);
    await this.deleteMessage(d.queue_url, d.receipt);
  }

  /**
   * A burial's warning, said once per queue, not at every death (the worker's start warned too, if
   * the DLQ was missing then). Only a warning that reaches the worker counts as said: one a burial
   * finished behind (SQS slow) came too late for its job, and the next death says it.
   */
  private sayOnce(queue: string, warning: string | undefined): string | undefined {
    if (warning === undefined || this.dlqMissingSaid.has(queue)) return undefined;
    this.dlqMissingSaid.add(queue);
    return warning;
  }

  /**
   * Runs `work` (a job's SQS work) after whatever SQS work of the job is still going on, so a job
   * has one SQS call at a time; it goes on behind for as long as SQS takes. The caller waits for it
   * at most SQS_BEHIND_WAIT_MS (`briefly`): by then the store already holds what the worker needs.
   */
  private behind<T>(jobId: string, work: () => Promise<T>): Promise<T> {
    const before = this.sqsWork.get(jobId) ?? Promise.resolve();
    const run = before.then(work);
    const done: Promise<void> = run.then(
      () => undefined,
      () => undefined,
    );
    this.sqsWork.set(jobId, done);
    void done.then(() => {
      if (this.sqsWork.get(jobId) === done) this.sqsWork.delete(jobId);
    });
    return run;
  }

  /**
   * `work`'s outcome if it settles within SQS_BEHIND_WAIT_MS (its error, if any, is thrown), else
   * `{ settled: false }` and it goes on behind, its outcome dropped. A frozen SQS (connections
   * accepted, never answered) held every job's end for its time-outs (3 x 30 s): the worker's
   * slot, and its stop, with it, though the store held the job's end already.
   */
  private async briefly<T>(work: Promise<T>): Promise<{ settled: true; value: T } | { settled: false }> {
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), SQS_BEHIND_WAIT_MS)));
    try {
      const r = await Promise.race([work.then((value) => ({ value })), late]);
      return r === 'late' ? { settled: false } : { settled: true, value: r.value };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The SQS work jobs' ends (and heartbeats) left going on behind: for how many jobs, and a promise
   * settled once it is all over. A stopping worker waits for it within its grace, then says what it
   * left (nothing is lost: the store holds every job's end, a message that comes back is deleted
   * or buried then, and the DLQ sweep takes in what the native backstop moved).
   */
  brokerWorkBehind(): { jobs: number; settled: Promise<void> } {
    const work = [...this.sqsWork.values()];
    return { jobs: work.length, settled: Promise.all(work).then(() => undefined) };
  }

  async heartbeat(leases: LeaseRef[], leaseMs: number): Promise<HeartbeatResult[]> {
    const results = await this.store.heartbeat(leases, leaseMs);
    // The message stays hidden as far as the store extended the lease (never past the deadline,
    // never past the 12-hour SQS cap). The lease itself lives in the store, and so does what the
    // worker needs from this answer (a cancel request, the deadline); a message SQS shows again
    // during a live lease is hidden again by `consider`. So the answer waits for SQS only briefly:
    // a frozen SQS (connections accepted, never answered) held every heartbeat for its time-outs
    // (3 x 30 s), and with it the cancel the store had answered at once, and the next heartbeat.
    await this.briefly(Promise.all(results.map((r) => (r.status === 'ok' ? this.extendVisibility(r.jobId, r.expiresAt) : undefined))));
    return results;
  }

  /** Hides a running job's message until `untilMs`; skipped while SQS work of the job is still unanswered (one call per job, however long SQS is silent). */
  private async extendVisibility(jobId: string, untilMs: number): Promise<void> {
    if (this.sqsWork.has(jobId)) return;
    await this.behind(jobId, async () => {
      const d = await this.ext.delivery(jobId);
      if (d) await this.setVisibility(d.queue_url, d.receipt, this.visibilityUntil(untilMs));
    });
  }
  checkpoint(lease: LeaseRef, data: unknown): Promise<void> {
    return this.store.checkpoint(lease, data);
  }
  addUsage(lease: LeaseRef, usage: UsageReport): Promise<void> {
    return this.store.addUsage(lease, usage);
  }
  beginEffect(lease: LeaseRef, key: string): Promise<Effect> {
    return this.store.beginEffect(lease, key);
  }
  finishEffect(lease: LeaseRef, key: string, result: unknown): Promise<Effect> {
    return this.store.finishEffect(lease, key, result);
  }
  // A job's end is recorded in the store first; its SQS work follows, waited for briefly and then
  // going on behind (`behind`). Safe: a message whose delete is late or lost comes back and the
  // store answers it (`consider`: deleted, or buried); a dead job's message is deleted only once
  // its DLQ copy is confirmed (buryInSqs), however late that is.
  async complete(lease: LeaseRef, result: string | null): Promise<Job> {
    const job = await this.store.complete(lease, result);
    await this.briefly(this.behind(job.job_id, () => this.retire(job.job_id)));
    return job;
  }
  async fail(lease: LeaseRef, failure: Failure): Promise<FailureOutcome> {
    const out = await this.store.fail(lease, failure);
    if (out.kind === 'retry') {
      // Retry by visibility delay: the same message comes back when the retry is due (or sooner,
      // when this is late: the store then hides it again until the retry is due).
      await this.briefly(
        this.behind(lease.jobId, async () => {
          const d = await this.ext.delivery(lease.jobId);
          if (d) await this.setVisibility(d.queue_url, d.receipt, this.visibilityUntil(out.runAt));
        }),
      );
    } else if (out.kind === 'dead') {
      const buried = await this.briefly(this.behind(lease.jobId, () => this.buryInSqs(out.job)));
      const warning = buried.settled ? this.sayOnce(out.job.queue, buried.value) : undefined;
      if (warning !== undefined) return { ...out, warning };
    } else {
      await this.briefly(this.behind(lease.jobId, () => this.retire(lease.jobId)));
    }
    return out;
  }
  async abort(lease: LeaseRef, outcome: AbortOutcome): Promise<Job> {
    const job = await this.store.abort(lease, outcome);
    await this.briefly(this.behind(job.job_id, () => this.retire(job.job_id)));
    return job;
  }
  async release(lease: LeaseRef): Promise<void> {
    await this.store.release(lease);
    const job = await this.store.get(lease.jobId);
    // (late: the message comes back when its visibility ends, and the store leases it then)
    await this.briefly(
      this.behind(lease.jobId, async () => {
        const d = await this.ext.delivery(lease.jobId);
        if (!d) return;
        if (job && (job.state === 'queued' || job.state === 'scheduled')) await this.setVisibility(d.queue_url, d.receipt, 0);
        else await this.retire(lease.jobId);
      }),
    );
  }

  // ------------------------------------------------------------ DLQ (the store holds the rich entries)

  dlqList(filter: DlqFilter, page: PageRequest): Promise<Page<DlqEntry>> {
    return this.store.dlqList(filter, page);
  }
  dlqRows(filter: DlqFilter, page: PageRequest): Promise<Page<DlqRow>> {
    return this.store.dlqRows(filter, page);
  }
  dlqGet(jobId: string): Promise<DlqEntry | null> {
    return this.store.dlqGet(jobId);
  }
  dlqRaw(jobId: string): Promise<Uint8Array | null> {
    return this.store.dlqRaw(jobId);
  }

  // ------------------------------------------------------------ runs, ledger, locks

  createRun(run: RunRecord, items: Array<{ job_id: string; verdict: PlanVerdict; detail: string | null }>): Promise<void> {
    return this.store.createRun(run, items);
  }
  getRun(runId: string): Promise<RunRecord | null> {
    return this.store.getRun(runId);
  }
  listRuns(filter: { queue?: string }, page: PageRequest): Promise<Page<RunRecord>> {
    return this.store.listRuns(filter, page);
  }
  updateRun(runId: string, patch: Partial<Pick<RunRecord, 'status' | 'updated_at'>>): Promise<RunRecord> {
    return this.store.updateRun(runId, patch);
  }
  ledger(runId: string, page: PageRequest, status?: LedgerStatus): Promise<Page<LedgerItem>> {
    return this.store.ledger(runId, page, status);
  }
  /**
   * Redrive on SQS: the store move, its ledger item and an outbox row commit
   * together (exactly once across kills, as on every backend), a part of the
   * batch at a time; each part's new messages are then sent in batches of 10
   * and their outbox rows marked published only for the entries SQS
   * confirmed. Failed entries stay in the outbox and are retried with backoff
   * by the relay — never lost, never sent twice by the ledger.
   */
  async applyRunItems(req: ApplyRequest): Promise<LedgerItem[]> {
    checkApplyRequest(req);
    // In parts, so that the sends of one part go out while the next part's store work runs
    // (the sends wait on SQS, the store work on this thread); every send is over before this
    // returns, as if the batch were applied in one piece.
    const step = Math.max(APPLY_PART_MIN, Math.ceil(req.jobIds.length / APPLY_PARTS));
    const items: LedgerItem[] = [];
    let sending: Promise<unknown> = Promise.resolve();
    // A part whose every job failed to publish (SQS unreachable, or accepting and never answering:
    // 90 s of time-outs a part) leaves the later parts to the relay: their outbox rows are committed
    // and published later, as the CLI then says; waiting out each part held a redrive for minutes.
    let sqsFailing = false;
    const publish = async (moved: string[]) => {
      if (sqsFailing) return;
      const r = await this.answering('publishing the redriven jobs', this.relay.publishJobs(moved)).catch(() => null);
      if (r === null || (r.published === 0 && r.failed.length > 0)) sqsFailing = true;
    };
    try {
      // (an empty batch still goes to the store once: it checks the run exists)
      for (let i = 0; i === 0 || i < req.jobIds.length; i += step) {
        const part = await this.store.applyRunItems({ ...req, jobIds: req.jobIds.slice(i, i + step) });
        items.push(...part);
        const moved = part.filter((p) => p.status === 'moved').map((p) => p.job_id);
        if (moved.length === 0) continue;
        for (const listener of this.movedListeners) listener(moved);
        sending = sending.then(() => publish(moved));
      }
    } finally {
      // Also when a part failed: what earlier parts committed is sent before the error goes up.
      await sending;
    }
    // A resumed run also delivers what its killed predecessor committed but never sent (not when SQS failed just now).
    if (!sqsFailing) await this.relay.catchUp({ limit: 500, maxRounds: 1, background: true }).catch(() => undefined);
    return items;
  }
  acquireLock(queue: string, holder: LockHolder): Promise<LockResult> {
    return this.store.acquireLock(queue, holder);
  }
  releaseLock(queue: string, runId: string | null): Promise<void> {
    return this.store.releaseLock(queue, runId);
  }
  readLock(queue: string): Promise<LockHolder | null> {
    return this.store.readLock(queue);
  }
  breakLock(queue: string, expected?: LockHolder): Promise<LockHolder | null> {
    return this.store.breakLock(queue, expected);
  }

  // ------------------------------------------------------------ stats

  stats(queue: string, opts?: StatsOptions): Promise<QueueStats> {
    return this.store.stats(queue, opts);
  }

  async close(): Promise<void> {
    // SQS work jobs' ends left behind (a silent SQS; a stopping worker already waited for it within
    // its grace) is waited for a moment only; then the SQS clients are closed under it, which fails
    // its calls and ends it (a dead job's message is never deleted before its DLQ copy is
    // confirmed), and the store closes. Nothing is lost: the store holds every job's end (see
    // brokerWorkBehind).
    const behind = this.brokerWorkBehind();
    if (behind.jobs > 0 && !(await settlesWithin(behind.settled, ABANDONED_ROUND_WAIT_MS))) {
      if (this.ownsData) this.data.destroy();
      if (this.ownsClient) this.sdk.destroy();
      await settlesWithin(behind.settled, ABANDONED_ROUND_WAIT_MS);
    }
    if (!(await this.publisher.settle())) {
      // A publish round its submits gave up on (SQS silent): closing the SQS clients fails its
      // calls, which ends it; it is waited for a moment only, then the store closes under it
      // (its outbox rows stay pending, for the relay). Waiting for it held close() for 90 s.
      if (this.ownsData) this.data.destroy();
      if (this.ownsClient) this.sdk.destroy();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.publisher.flush(), new Promise<void>((r) => (timer = setTimeout(r, ABANDONED_ROUND_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await this.store.close();
    await this.ext.close();
    if (this.ownsData) this.data.destroy();
    if (this.ownsClient) this.sdk.destroy();
  }
}

/** Whether `work` (which never throws) settles within `ms`; not cancelled when it does not. */
async function settlesWithin(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([work.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return done;
}

/** Said when the SQS DLQ of a queue is missing (worker start, the first job buried meanwhile). */
export function dlqMissing(dlq: string, queue: string): string {
  return (
    `the SQS DLQ ${dlq} does not exist: jobs of ${queue} that die are kept in the job store's DLQ (agentq dlq list), ` +
    `but no copy of them is sent to SQS, so alarms on the SQS DLQ do not see them. Run: agentq sqs setup --queue ${queue}`
  );
}
