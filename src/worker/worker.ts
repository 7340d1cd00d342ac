/**
 * The library worker: a claim loop that keeps `concurrency` jobs in flight,
 * one heartbeat call for every in-flight lease, and the translation of each
 * handler's ending into exactly one fenced write (complete, fail, abort or
 * release).
 *
 * Delivery is at-least-once. The worker never decides retries, DLQ moves or
 * lease expiry itself: the backend does (core/retry, fence tokens). What the
 * worker guarantees is that it stops writing as soon as it learns a lease is
 * gone, and that a handler's signal aborts on cancel, deadline, lost lease or
 * shutdown.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { MAX_PAGE_LIMIT, type Backend, type FailureOutcome, type HeartbeatResult, type Lease, type LeaseRef, type UsageReport } from '../backend/contract.js';
import { clientClock, isClosedClient, onClientClose } from '../backend/close-guard.js';
import { systemClock, type Clock } from '../core/clock.js';
import { ClosedError, LeaseLostError, RetryLaterError, ValidationError, wasNotSent } from '../core/errors.js';
import { JOB_CLASSES, RESULT_MAX_BYTES } from '../core/model.js';
import { checkedPolicy, type BackendPolicy } from '../core/policy.js';
import { Name } from '../core/schemas.js';
import { storedJson } from '../core/stored-json.js';
import { checkOptionKeys } from '../core/validate.js';
import { addUsage, budgetBreach, checkUsage, jobUsage, type Usage } from '../core/usage.js';
import { toFailure, withValidCode } from './classify.js';
import { AttemptEffects } from './effect.js';
import { HANDLER_KILLED, HandlerError, JobAbortedError } from './handler-error.js';
import type { AbortReason, JobContext, Worker, WorkerEvent, WorkerOptions } from './types.js';
import { isUnavailable, StoreWatch } from './store-watch.js';
import { StopBudget } from './stop-budget.js';
import { Waker } from './waker.js';

export const WORKER_DEFAULTS = {
  concurrency: 1,
  leaseMs: 60_000,
  gracefulMs: 30_000,
  abortGraceMs: 10_000,
  minIdleMs: 25,
  maxIdleMs: 1_000,
} as const;

/** Attempts for a finishing write (complete/fail/abort/release) that hit a transient backend error. */
const FINISH_TRIES = 3;
/** Longest wait between tries of an orphan sweep while the store keeps failing it. */
const ORPHAN_SWEEP_MAX_WAIT_MS = 30_000;

interface InFlight {
  lease: Lease;
  ref: LeaseRef;
  controller: AbortController;
  expiresAt: number;
  deadlineAt: number | null;
  startedAt: number;
  abortReason: AbortReason | null;
  /** The handler returned or threw. */
  settled: boolean;
  /** No more writes for this lease: it was lost, or the worker ended the job without the handler. */
  closed: boolean;
  /** The store said the lease is gone (whatever the handler had been aborted for first). */
  lost: boolean;
  graceTimer: NodeJS.Timeout | null;
  /** Aborts the handler at its deadline (see `armDeadline`). */
  deadlineTimer: NodeJS.Timeout | null;
  /** What the job spent so far: its earlier attempts' records as claimed, plus this attempt's reports. */
  spent: Usage | null;
  /** Set when a report took the job over its budget: the failure the attempt ends with. */
  budgetError: HandlerError | null;
  /** Resolves when the slot is free again (the job ended, or the handler was detached). */
  slotFreed: Promise<void>;
  freeSlot: () => void;
}

type HandlerOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export function createWorker(options: WorkerOptions): Worker {
  return new WorkerRuntime(options);
}

/** Every option `createWorker` knows; the compiler keeps it in step with `WorkerOptions`. */
const WORKER_OPTION_KEYS = Object.keys({
  backend: 0, url: 0, fairness: 0, queue: 0, handler: 0, concurrency: 0, leaseMs: 0, heartbeatMs: 0, classes: 0, workerId: 0,
  workerVersion: 0, clock: 0, gracefulMs: 0, abortGraceMs: 0, minIdleMs: 0, maxIdleMs: 0, logger: 0,
} satisfies Record<keyof WorkerOptions, 0>);

function validate(o: WorkerOptions): void {
  if (typeof o !== 'object' || o === null) throw new ValidationError('createWorker needs an options object');
  checkOptionKeys('createWorker', o, WORKER_OPTION_KEYS);
  if (!o.backend && !o.url) throw new ValidationError('createWorker needs either `backend` or `url`');
  // The caps live in the store the worker opens; a given client already has its own.
  if (o.backend && o.fairness !== undefined) throw new ValidationError('fairness applies to a store the worker opens from `url`; with `backend`, give it to createClient({ fairness })');
  if (o.url !== undefined && (typeof o.url !== 'string' || o.url === '')) throw new ValidationError(`url must be a store URL such as sqlite:./agentq.db, got ${show(o.url)}`);
  // An in-memory database belongs to the connection that opens it: the worker's own would hold
  // only what it submits itself, so it idled for ever while jobs went into the client's.
  if (o.url !== undefined && /^sqlite:(\/\/)?:memory:$/i.test(o.url)) {
    throw new ValidationError(
      `url ${o.url} would open an in-memory store of the worker's own, which no producer can reach: it would never see a job`,
      "Open it once with createClient({ url: 'sqlite::memory:' }) and give the worker that client: createWorker({ backend: client, ... }).",
    );
  }
  if (o.backend !== undefined && (typeof o.backend !== 'object' || o.backend === null || typeof o.backend.claim !== 'function')) {
    throw new ValidationError('backend must be a store opened with createClient');
  }
  if (!Name.safeParse(o.queue).success) throw new ValidationError(`queue ${JSON.stringify(o.queue)} is not a valid queue name`);
  if (typeof o.handler !== 'function') throw new ValidationError('handler must be a function (job, ctx) => result');
  const c = o.concurrency ?? WORKER_DEFAULTS.concurrency;
  if (!Number.isInteger(c) || c < 1) throw new ValidationError(`concurrency must be a whole number of at least 1, got ${c}`);
  const lease = o.leaseMs ?? WORKER_DEFAULTS.leaseMs;
  // (typeof first: a string such as '60000' passed the comparisons by coercion, then every claim was refused)
  if (typeof lease !== 'number') throw new ValidationError(`leaseMs must be a number of milliseconds, got ${show(lease)}`);
  if (!(lease >= MIN_LEASE_MS)) throw new ValidationError(`leaseMs must be at least ${MIN_LEASE_MS} ms, got ${lease}`);
  if (o.heartbeatMs !== undefined && typeof o.heartbeatMs !== 'number') throw new ValidationError(`heartbeatMs must be a number of milliseconds, got ${show(o.heartbeatMs)}`);
  const hb = o.heartbeatMs ?? lease / 4;
  if (!(hb > 0)) throw new ValidationError(`heartbeatMs must be more than 0, got ${hb}`);
  if (!(hb < lease)) throw new ValidationError(`heartbeatMs must be less than leaseMs (${hb} ≥ ${lease}): a lease would expire between heartbeats`);
  // A negative or NaN wait becomes a timer of 1 ms (stop() would abort running handlers at once);
  // an idle wait of 0 claims in a busy loop.
  const waits = { gracefulMs: [o.gracefulMs, 0], abortGraceMs: [o.abortGraceMs, 0], minIdleMs: [o.minIdleMs, 1], maxIdleMs: [o.maxIdleMs, 1] } as const;
  for (const [name, [ms, min]] of Object.entries(waits)) {
    if (ms !== undefined && !(typeof ms === 'number' && ms >= min)) {
      throw new ValidationError(`${name} must be a number of milliseconds, at least ${min}, got ${show(ms)}`);
    }
  }
  // The idle wait doubles from min up to max: a min above the max waited min once, then polled
  // the store every max (a worker given { minIdleMs: 5000, maxIdleMs: 10 } claimed 100 times a second).
  const minIdle = o.minIdleMs ?? WORKER_DEFAULTS.minIdleMs;
  const maxIdle = o.maxIdleMs ?? WORKER_DEFAULTS.maxIdleMs;
  if (minIdle > maxIdle) throw new ValidationError(`minIdleMs must not be more than maxIdleMs (${minIdle} > ${maxIdle}): the idle wait doubles from the one up to the other`);
  // Each of these becomes a timer; a longer one fires after 1 ms (Node's TimeoutOverflowWarning),
  // which made a worker with --lease 10000h heartbeat a thousand times a second.
  const times = { leaseMs: lease, heartbeatMs: hb, gracefulMs: o.gracefulMs, abortGraceMs: o.abortGraceMs, minIdleMs: o.minIdleMs, maxIdleMs: o.maxIdleMs };
  for (const [name, ms] of Object.entries(times)) {
    if (ms !== undefined && ms > MAX_TIMER_MS) throw new ValidationError(`${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps), got ${ms}`);
  }
  if (o.classes !== undefined) {
    // A misspelt class matches no job: the worker would claim nothing, for ever, without a word.
    const known: readonly string[] = JOB_CLASSES;
    if (!Array.isArray(o.classes) || o.classes.length === 0) {
      throw new ValidationError(`classes must be a non-empty list of ${JOB_CLASSES.join(', ')} (leave it out for all), got ${show(o.classes)}`);
    }
    const unknown = o.classes.filter((cls) => !known.includes(cls));
    if (unknown.length > 0) throw new ValidationError(`classes: ${unknown.map(show).join(', ')} is not a job class; the classes are ${JOB_CLASSES.join(', ')}`);
  }
  if (o.workerId !== undefined && (typeof o.workerId !== 'string' || o.workerId.length === 0 || o.workerId.length > 256)) {
    throw new ValidationError(`workerId must be a string of 1-256 characters, got ${show(o.workerId)}`);
  }
  if (o.workerVersion !== undefined && o.workerVersion !== null && typeof o.workerVersion !== 'string') {
    throw new ValidationError(`workerVersion must be a string (or null), got ${show(o.workerVersion)}`);
  }
  if (o.clock !== undefined && (typeof o.clock !== 'object' || o.clock === null || typeof o.clock.now !== 'function')) {
    throw new ValidationError('clock must be a Clock, an object with now(): epoch ms');
  }
  if (o.logger !== undefined && typeof o.logger !== 'function') throw new ValidationError('logger must be a function (event) => void');
}

/** A value as a message shows it: JSON where it has JSON, else its type. */
function show(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return typeof v;
  }
}

/** The shortest lease a worker takes: heartbeats (a quarter of it by default) must fit inside. */
export const MIN_LEASE_MS = 100;

/** 2^31 - 1 ms: Node runs a longer timeout after 1 ms instead. */
export const MAX_TIMER_MS = 2_147_483_647;
/** On stop, a claim in flight is waited for the grace period, and at least this long (past `Backend.claimWaitMs`). */
const CLAIM_STOP_WAIT_MS = 1_000;

class WorkerRuntime implements Worker {
  readonly workerId: string;
  readonly done: Promise<void>;

  private readonly o: WorkerOptions;
  private readonly clock: Clock;
  /** The fairness a store opened from `url` gets. */
  private readonly policy: BackendPolicy;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly gracefulMs: number;
  private readonly abortGraceMs: number;
  private readonly minIdleMs: number;
  private readonly maxIdleMs: number;
  private readonly workerVersion: string | null;

  private backend: Backend | null;
  /** Says when the store stops answering and when it answers again. */
  private readonly storeWatch: StoreWatch;
  private readonly ownsBackend: boolean;
  private state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  /** Stopping because the client given as `backend` was closed (stopForClosedClient). */
  private clientClosed = false;
  private unsubscribeClose: (() => void) | null = null;
  /** start() ran (and was not beaten by a stop()). */
  private started = false;
  private readonly inflight = new Map<string, InFlight>();
  private readonly waker = new Waker();
  /** Set when a handler finishes: work is flowing, so the idle backoff starts again from the minimum. */
  private slotFreedSinceClaim = false;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatRunning: Promise<void> | null = null;
  private claimLoopDone: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | null = null;
  /** Set when a stop begins: what is left of its grace for handing leases back. */
  private stopBudget: StopBudget | null = null;
  private resolveDone!: () => void;

  // Orphans: jobs leased to this worker by a call whose answer was lost (see `sweepOrphans`).
  /** Numbers the calls that may lease jobs (claim, completeAndClaim); `claimsPending`, those whose leases are not yet in hand. */
  private claimSeq = 0;
  private readonly claimsPending = new Set<number>();
  private claimsSettledWaiters: Array<{ upTo: number; resolve: () => void }> = [];
  /** A call that may have leased jobs failed without an answer: a sweep is due. */
  private orphansSuspected = false;
  private orphanSweep: Promise<void> | null = null;
  /**
   * The claim loop sleeps until the orphan sweep ends (it may give jobs back): only that sleep is
   * woken by the sweep's end, not the backoff after a failed claim (the sweep's store may answer
   * while the claim's broker does not: SQS down, its job store up, claimed again at once).
   */
  private claimWaitsForSweep = false;
  /** The sweep's wait between tries; woken on stop. */
  private readonly sweepWaker = new Waker();
  /** Lost-lease errors that came after an unanswered try of the same write (which may have been recorded). */
  private readonly unsureLosses = new WeakSet<object>();

  constructor(o: WorkerOptions) {
    validate(o);
    this.o = o;
    // Checked now, so a bad cap fails createWorker, not start().
    this.policy = checkedPolicy({ ...(o.fairness !== undefined ? { fairness: o.fairness } : {}) });
    // (a client made with a clock keeps its store's time: deadlines are judged by it)
    this.clock = o.clock ?? (o.backend ? clientClock(o.backend) : undefined) ?? systemClock;
    this.concurrency = o.concurrency ?? WORKER_DEFAULTS.concurrency;
    this.leaseMs = o.leaseMs ?? WORKER_DEFAULTS.leaseMs;
    this.heartbeatMs = o.heartbeatMs ?? Math.floor(this.leaseMs / 4);
    this.gracefulMs = o.gracefulMs ?? WORKER_DEFAULTS.gracefulMs;
    this.abortGraceMs = o.abortGraceMs ?? WORKER_DEFAULTS.abortGraceMs;
    this.minIdleMs = o.minIdleMs ?? WORKER_DEFAULTS.minIdleMs;
    this.maxIdleMs = Math.max(o.maxIdleMs ?? WORKER_DEFAULTS.maxIdleMs, this.minIdleMs);
    this.workerVersion = o.workerVersion ?? null;
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    // (a call left unanswered by a stop, answered late, is no news after `stopped`)
    this.storeWatch = new StoreWatch(this.clock, (change) => {
      if (!this.isStopped()) this.log(change);
    });
    this.backend = o.backend ? this.storeWatch.wrap(o.backend) : null;
    this.ownsBackend = !o.backend;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  inFlight(): number {
    return this.inflight.size;
  }

  async start(): Promise<void> {
    // A worker stopped after it ran is done (its store closed, `done` resolved): resolving here as
    // if it had started left a caller pausing and resuming with stop()/start() with no worker
    // running. A stop() before any start() (a signal during set-up) still just wins: nothing runs.
    if (this.stopping && this.started) throw new ClosedError(`worker ${this.workerId} was stopped; a stopped worker does not start again`, 'Create another with createWorker.');
    if (this.state !== 'idle') return;
    // A client closed before start() refuses every call: started, the worker would log a refused
    // claim and heartbeat for ever and run nothing.
    if (this.o.backend && isClosedClient(this.o.backend)) {
      throw new ClosedError(
        `worker ${this.workerId}: its client was closed (${this.o.backend.description}); a worker needs an open one`,
        'Give createWorker a client that is open (close it only after the worker stopped), or a url to open its own.',
      );
    }
    this.started = true;
    this.state = 'running';
    // A client closed while the worker runs: with every slot busy no claim would see it, and its
    // handlers would run on, unable to write, until their leases ran out.
    if (this.o.backend) this.unsubscribeClose = onClientClose(this.o.backend, () => this.stopForClosedClient());
    if (!this.backend) {
      const { openBackend } = await import('../backend/open.js');
      let opened: Backend;
      try {
        opened = await openBackend(this.o.url!, { clock: this.clock, ...this.policy });
      } catch (error) {
        // Not started: a later start() tries again (it returned at once, as if running, with nothing claimed).
        if (this.state === 'running') {
          this.state = 'idle';
          this.started = false;
        }
        throw error;
      }
      if (this.state !== 'running') {
        // stop() came while the store was opening: nothing was claimed, just close it again.
        await opened.close();
        return;
      }
      this.backend = this.storeWatch.wrap(opened);
    }
    this.storeWatch.start();
    this.log({ kind: 'started', workerId: this.workerId, queue: this.o.queue });
    this.scheduleHeartbeat();
    this.claimLoopDone = this.claimLoop();
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = this.shutdown();
    return this.stopping;
  }

  // ------------------------------------------------------------ claim loop

  private async claimLoop(): Promise<void> {
    const backend = this.backend!;
    let idleMs = this.minIdleMs;
    while (this.state === 'running') {
      const free = this.concurrency - this.inflight.size;
      if (free <= 0) {
        await this.waker.sleep(null);
        // Let the other handlers that finish in this turn free their slots too, so the next claim is one batch, not many.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      let leases: Lease[];
      const seq = this.beginLeasingCall();
      const claimStartedAt = this.clock.now();
      try {
        leases = await backend.claim({
          queue: this.o.queue,
          workerId: this.workerId,
          workerVersion: this.workerVersion,
          max: free,
          leaseMs: this.leaseMs,
          ...(this.o.classes ? { classes: this.o.classes } : {}),
          onPartialFailure: this.onPartialClaimFailure,
        });
      } catch (error) {
        this.endLeasingCall(seq);
        this.log({ kind: 'backend_error', op: 'claim', jobId: null, error, startedAt: claimStartedAt });
        if (error instanceof ClosedError) {
          // Its client was closed under it: every later call is refused too, so the worker stops
          // (its `done` resolves) instead of logging a refused claim for ever.
          this.stopForClosedClient();
          break;
        }
        // The claim may have run with its answer lost: jobs leased to no one here. Not when it
        // certainly never reached the store (a refused connection): a sweep would only fail too
        // (a second error line per claim) or, after a blip, list the queue's running jobs for nothing.
        if (isUnavailable(error) && !wasNotSent(error)) this.suspectOrphans();
        if (this.state !== 'running') break;
        await this.waker.sleep(idleMs);
        idleMs = Math.min(idleMs * 2, this.maxIdleMs);
        continue;
      }
      if (this.state !== 'running') {
        // stop() arrived while the claim was in flight: hand these back untouched.
        await Promise.all(leases.map((l) => this.releaseQuietly({ jobId: l.jobId, fence: l.fence }, l.envelope.attempt, l.expiresAt)));
        this.endLeasingCall(seq);
        break;
      }
      if (leases.length === 0) {
        this.endLeasingCall(seq);
        if (this.inflight.size === 0 && this.orphanSweep) {
          // Not idle (nor drained) while a sweep may give jobs back to the queue: claim again once
          // it ends (it wakes this loop) or after the idle wait.
          this.claimWaitsForSweep = true;
          await this.waker.sleep(idleMs);
          this.claimWaitsForSweep = false;
          idleMs = Math.min(idleMs * 2, this.maxIdleMs);
          continue;
        }
        if (this.slotFreedSinceClaim) idleMs = this.minIdleMs;
        this.slotFreedSinceClaim = false;
        if (this.inflight.size === 0) this.log({ kind: 'idle', waitMs: idleMs });
        if (this.state !== 'running') break;
        await this.waker.sleep(idleMs);
        idleMs = Math.min(idleMs * 2, this.maxIdleMs);
        continue;
      }
      idleMs = this.minIdleMs;
      for (const lease of leases) this.run(lease);
      this.endLeasingCall(seq);
    }
  }

  private run(lease: Lease): void {
    let freeSlot!: () => void;
    const slotFreed = new Promise<void>((resolve) => (freeSlot = resolve));
    const entry: InFlight = {
      lease,
      ref: { jobId: lease.jobId, fence: lease.fence },
      controller: new AbortController(),
      expiresAt: lease.expiresAt,
      deadlineAt: lease.envelope.deadline_at === null ? null : Date.parse(lease.envelope.deadline_at),
      startedAt: this.clock.now(),
      abortReason: null,
      spent: jobUsage(lease.job.attempts),
      budgetError: null,
      settled: false,
      closed: false,
      lost: false,
      graceTimer: null,
      deadlineTimer: null,
      slotFreed,
      freeSlot: () => {
        if (entry.deadlineTimer) clearTimeout(entry.deadlineTimer);
        if (this.inflight.get(lease.jobId) === entry) this.inflight.delete(lease.jobId);
        freeSlot();
        this.slotFreedSinceClaim = true;
        // A slot the next job already took (completeAndClaim) is not free: waking the claim loop
        // would only cost it a turn of the event loop per job before it sleeps again.
        if (this.inflight.size < this.concurrency || this.state !== 'running') this.waker.wake();
      },
    };
    this.inflight.set(lease.jobId, entry);
    this.log({ kind: 'claimed', jobId: lease.jobId, attempt: lease.envelope.attempt, fence: lease.fence });
    this.armDeadline(entry);
    void this.execute(entry);
  }

  /**
   * A timer per job for its deadline. The heartbeat is scheduled for the jobs running when it is
   * scheduled, so a job claimed in between was aborted up to a whole heartbeat interval late
   * (27 s past its deadline with `--lease 2m`). Checked against the clock when it fires (an
   * injected clock may not be there yet); unref'd, since the heartbeat timer is what keeps a
   * running worker alive, and cleared when the slot is freed.
   */
  private armDeadline(entry: InFlight): void {
    if (entry.deadlineAt === null) return;
    const wait = entry.deadlineAt - this.clock.now();
    if (wait > MAX_TIMER_MS) return; // further than a timer can wait: the heartbeat's own check covers it
    entry.deadlineTimer = setTimeout(() => {
      entry.deadlineTimer = null;
      if (entry.settled || entry.abortReason !== null) return;
      if (this.clock.now() >= entry.deadlineAt!) this.abortJob(entry, 'deadline');
      else this.armDeadline(entry);
    }, Math.max(wait, 0) + 5);
    entry.deadlineTimer.unref();
  }

  private async execute(entry: InFlight): Promise<void> {
    let outcome: HandlerOutcome;
    // A job whose earlier attempts spent its whole budget does not start again (a retry, or a
    // redrive): it fails at once, and BUDGET_EXCEEDED is permanent.
    const spentBefore = budgetBreach(entry.spent, entry.lease.envelope.budget, false);
    if (spentBefore) outcome = { ok: false, error: overBudget(entry.ref.jobId, `${spentBefore} before this attempt`) };
    else {
      try {
        outcome = { ok: true, value: await this.o.handler(entry.lease.envelope, this.contextFor(entry)) };
      } catch (error) {
        outcome = { ok: false, error };
      }
    }
    entry.settled = true;
    if (entry.graceTimer) clearTimeout(entry.graceTimer);
    try {
      if (!entry.closed) await this.finish(entry, outcome);
      // Also when the lease went after a deadline or cancel abort (the lease never outlives the
      // deadline, so a handler slow to exit can find its job ended by another claim's reaping).
      else if (entry.lost || entry.abortReason === 'lease_lost') this.log({ kind: 'lease_lost', jobId: entry.ref.jobId, attempt: this.attemptOf(entry) });
    } finally {
      entry.freeSlot();
    }
  }

  /** The one write that ends this attempt. */
  private async finish(entry: InFlight, outcome: HandlerOutcome): Promise<void> {
    const backend = this.backend!;
    const { ref } = entry;
    const attempt = this.attemptOf(entry);
    entry.closed = true;
    try {
      if (outcome.ok) {
        const stored = storableResult(outcome.value);
        if (!stored.ok) {
          // A result that cannot be stored is the handler's bug: the attempt fails (whatever
          // abort arrived meanwhile), rather than the lease being left to expire unwritten.
          await this.failAttempt(entry, stored.error);
          return;
        }
        // Work that finished is kept even if a cancel or shutdown arrived meanwhile.
        const seq = this.beginLeasingCall();
        try {
          const next = await this.completeAndClaimNext(ref, stored.value);
          this.log({ kind: 'succeeded', jobId: ref.jobId, attempt, durationMs: this.clock.now() - entry.startedAt });
          // The next job takes this slot before it is freed, so the claim loop stays asleep.
          for (const lease of next) this.run(lease);
        } finally {
          this.endLeasingCall(seq);
        }
        return;
      }
      if (outcome.error instanceof LeaseLostError) {
        this.log({ kind: 'lease_lost', jobId: ref.jobId, attempt });
        return;
      }
      switch (entry.abortReason) {
        case 'shutdown':
          await this.releaseOnStop(entry);
          return;
        case 'cancelled':
        case 'deadline': {
          const end = entry.abortReason === 'cancelled' ? 'cancelled' : 'expired';
          await this.withRetries(() => backend.abort(ref, end));
          this.log({ kind: 'aborted', jobId: ref.jobId, attempt, reason: end });
          return;
        }
        case 'budget':
          // whatever the handler threw on its way out (the report's own error, or its signal's)
          await this.failAttempt(entry, entry.budgetError!);
          return;
        default:
          if (this.state === 'stopping' && outcome.error instanceof HandlerError && outcome.error.code === HANDLER_KILLED) {
            // Killed by the same stop that stops this worker (systemd's KillMode=control-group, a
            // `kill -TERM -- -PGID`: every process of the service at once), not failed: given back
            // as a shutdown gives it back, without counting the attempt. (Should the handler's
            // death be seen before the worker's own signal, it is a retryable failure instead.)
            await this.releaseOnStop(entry);
            return;
          }
          await this.failAttempt(entry, outcome.error);
      }
    } catch (error) {
      if (error instanceof LeaseLostError) this.log({ kind: 'lease_lost', jobId: ref.jobId, attempt, ...(this.unsureLosses.has(error) ? { unsure: true } : {}) });
      // Anything else: the lease is left to expire and the job is reclaimed (at-least-once holds).
      else this.log({ kind: 'backend_error', op: 'finish', jobId: ref.jobId, error });
    }
  }

  /** Fails the attempt with the classified error (the store decides retry or DLQ). */
  private async failAttempt(entry: InFlight, error: unknown): Promise<void> {
    const { ref } = entry;
    const failure = withValidCode(toFailure(error, this.workerVersion), error);
    const result: FailureOutcome = await this.withRetries(() => this.backend!.fail(ref, failure));
    this.log({
      kind: 'failed',
      jobId: ref.jobId,
      attempt: this.attemptOf(entry),
      code: failure.code,
      message: failure.message,
      outcome: result.kind,
      ...(result.kind === 'dead' && result.warning !== undefined ? { warning: result.warning } : {}),
    });
  }

  /**
   * Completes a job and, while the worker runs, claims the next one for the
   * slot it frees in the same backend call when the backend can
   * (`completeAndClaim`: one round trip per job instead of two). A transient
   * error falls back to plain `complete` with retries: if the first call did
   * apply (its answer lost), the store answers the re-sent completion as done
   * (same fence, same outcome), and the job it claimed for this worker is
   * given back by the orphan sweep (`sweepOrphans`).
   */
  private async completeAndClaimNext(ref: LeaseRef, result: string | null): Promise<Lease[]> {
    const backend = this.backend!;
    if (!backend.completeAndClaim || this.state !== 'running') {
      await this.withRetries(() => backend.complete(ref, result));
      return [];
    }
    let next: Lease[];
    try {
      ({ next } = await backend.completeAndClaim(ref, result, {
        queue: this.o.queue,
        workerId: this.workerId,
        workerVersion: this.workerVersion,
        max: 1,
        leaseMs: this.leaseMs,
        ...(this.o.classes ? { classes: this.o.classes } : {}),
        onPartialFailure: this.onPartialClaimFailure,
      }));
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      if (isUnavailable(error) && !wasNotSent(error)) this.suspectOrphans();
      try {
        await this.withRetries(() => backend.complete(ref, result));
      } catch (e) {
        if (e instanceof LeaseLostError) this.unsureLosses.add(e);
        throw e;
      }
      return [];
    }
    if (this.state !== 'running') {
      // stop() arrived meanwhile: hand the claimed jobs back untouched.
      await Promise.all(next.map((l) => this.releaseQuietly({ jobId: l.jobId, fence: l.fence }, l.envelope.attempt, l.expiresAt)));
      return [];
    }
    return next;
  }

  /** A part of the store a claim could not reach (a shard whose node is down): reported, while the leases the others gave are run. */
  private readonly onPartialClaimFailure = (error: Error): void => this.log({ kind: 'backend_error', op: 'claim', jobId: null, error });

  /**
   * `onStop`: the lease handed back on the way out of a stop is not tried again when the store is
   * unavailable: each try already waits out the client's own attempts to reach it (about 10 s on
   * a Redis that refuses connections, 15 s on a frozen one), which held a SIGTERM with --grace 2s
   * for 32 s; the lease expires by itself and the job is claimed again, as after a second signal.
   */
  private async withRetries<T>(op: () => Promise<T>, o: { onStop?: boolean } = {}): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await op();
      } catch (error) {
        // (lost after an unanswered try: that try may have been the write that ended the lease)
        if (error instanceof LeaseLostError && i > 1) this.unsureLosses.add(error);
        if (o.onStop && error instanceof RetryLaterError) throw error;
        // (a closed client refuses every retry too)
        if (error instanceof LeaseLostError || error instanceof ClosedError || i >= FINISH_TRIES) throw error;
        await new Promise((r) => setTimeout(r, 20 * 4 ** i));
      }
    }
  }

  // ------------------------------------------------------------ orphans

  private beginLeasingCall(): number {
    const seq = ++this.claimSeq;
    this.claimsPending.add(seq);
    return seq;
  }

  /** The call's leases are in hand (running, or handed back), or it failed. */
  private endLeasingCall(seq: number): void {
    if (!this.claimsPending.delete(seq)) return;
    const oldest = Math.min(...this.claimsPending);
    this.claimsSettledWaiters = this.claimsSettledWaiters.filter((w) => {
      if (oldest <= w.upTo) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once every leasing call numbered up to `upTo` has ended. */
  private leasingCallsSettled(upTo: number): Promise<void> {
    if (Math.min(...this.claimsPending) > upTo) return Promise.resolve();
    return new Promise((resolve) => this.claimsSettledWaiters.push({ upTo, resolve }));
  }

  private suspectOrphans(): void {
    this.orphansSuspected = true;
    if (this.state !== 'running') return;
    this.orphanSweep ??= this.sweepOrphans().finally(() => {
      this.orphanSweep = null;
      if (this.claimWaitsForSweep) this.waker.wake();
    });
  }

  /**
   * Gives back jobs leased to this worker that it does not hold. A claim, or a completeAndClaim,
   * whose answer was lost (a Redis restart between the script and its reply) may have leased jobs
   * to this worker id that it never heard of: left alone they stay running until their leases
   * expire, then count a lost attempt (and a draining worker exits leaving them). So after such a
   * failure the worker lists the queue's running jobs, keeps those leased to it by id and not in
   * its hands, waits until every leasing call it had started by then has answered (a job such a
   * call leased is in hand once it answers: no call of its own is mistaken for an orphan), and
   * releases the rest under the fence it read (fenced: a job that moved on meanwhile is left
   * alone). Releasing, not adopting, keeps the slot count exact and needs no job body; the attempt
   * does not count, as on a graceful shutdown. Retried with backoff while the store fails.
   */
  private async sweepOrphans(): Promise<void> {
    let waitMs = this.minIdleMs;
    while (this.orphansSuspected && this.state === 'running') {
      try {
        await this.releaseOrphans();
      } catch (error) {
        this.orphansSuspected = true;
        if (this.isStopped()) break; // abandoned by the stop: its late failure is not news
        this.log({ kind: 'backend_error', op: 'orphan sweep', jobId: null, error });
        // A stop makes the last try itself (bounded by its grace): it woke this sleep already, and
        // a sleep begun after that wake would hold the stop for the whole backoff.
        if (this.state !== 'running') break;
        await this.sweepWaker.sleep(waitMs);
        waitMs = Math.min(waitMs * 2, ORPHAN_SWEEP_MAX_WAIT_MS);
      }
    }
  }

  private async releaseOrphans(): Promise<void> {
    this.orphansSuspected = false;
    const backend = this.backend!;
    const candidates: Array<{ ref: LeaseRef; attempt: number }> = [];
    let cursor: string | null = null;
    do {
      const page = await backend.list({ queue: this.o.queue, states: ['running'] }, { limit: MAX_PAGE_LIMIT, cursor });
      for (const j of page.items) {
        if (j.lease?.worker_id === this.workerId && !this.inflight.has(j.job_id)) candidates.push({ ref: { jobId: j.job_id, fence: j.lease.fence }, attempt: j.attempt });
      }
      cursor = page.next_cursor;
    } while (cursor !== null);
    // A sweep the stop abandoned (past its grace) answers late: the worker said it left those
    // leases to expire and reports nothing after `stopped`, so nothing more is done.
    if (candidates.length === 0 || this.isStopped()) return;
    await this.leasingCallsSettled(this.claimSeq);
    for (const { ref, attempt } of candidates) {
      if (this.isStopped()) return;
      if (this.inflight.get(ref.jobId)?.ref.fence === ref.fence) continue;
      try {
        await backend.release(ref);
        this.log({ kind: 'orphan_released', jobId: ref.jobId, attempt });
      } catch (error) {
        if (!(error instanceof LeaseLostError)) throw error;
        // ended or taken by someone else meanwhile: not ours to give back
      }
    }
  }

  // ------------------------------------------------------------ handler context

  private contextFor(entry: InFlight): JobContext {
    const backend = this.backend!;
    const { ref, lease } = entry;
    const guard = <T>(p: Promise<T>): Promise<T> =>
      p.catch((error: unknown) => {
        if (error instanceof LeaseLostError) this.markLost(entry);
        throw error;
      });
    const effects = new AttemptEffects(backend, ref, entry.controller.signal);
    const assertOpen = (): void => {
      if (entry.closed) throw new LeaseLostError(ref.jobId, 'this worker no longer holds the lease');
    };
    let lastCheckpoint: unknown = lease.job.checkpoint ?? null;
    return {
      signal: entry.controller.signal,
      jobId: ref.jobId,
      fence: ref.fence,
      attempt: lease.envelope.attempt,
      workerId: this.workerId,
      get lastCheckpoint() {
        return lastCheckpoint;
      },
      effects: lease.job.effects,
      get leaseExpiresAt() {
        return entry.expiresAt;
      },
      heartbeat: async () => {
        assertOpen();
        const [result] = await guard(backend.heartbeat([ref], this.leaseMs));
        if (result) this.applyHeartbeat(entry, result);
        if (!result || result.status === 'lost') throw new LeaseLostError(ref.jobId);
      },
      checkpoint: async (data: unknown) => {
        assertOpen();
        await guard(backend.checkpoint(ref, data));
        // As the next attempt will see it: what JSON kept of it.
        lastCheckpoint = JSON.parse(storedJson(data, 'the checkpoint')) as unknown;
      },
      reportUsage: async (usage: UsageReport) => {
        // Checked before the lease, so a bad figure is the handler's bug whatever the lease's state.
        const checked = checkUsage(usage);
        assertOpen();
        await guard(backend.addUsage(ref, checked));
        // The spend is recorded first (it happened), then held against the job's budget: over it,
        // the handler is stopped (this call throws, its signal aborts) and the attempt fails with
        // BUDGET_EXCEEDED, which is not retried.
        entry.spent = addUsage(entry.spent, checked);
        const breach = budgetBreach(entry.spent, lease.envelope.budget, true);
        if (breach) {
          entry.budgetError ??= overBudget(ref.jobId, breach);
          this.abortJob(entry, 'budget');
          throw entry.budgetError;
        }
      },
      effect: async <T>(key: string, fn: (idempotencyKey: string) => T | Promise<T>): Promise<T> => {
        assertOpen();
        // (checked before the effect is recorded started: a job with a started effect counts as partial for good)
        if (typeof fn !== 'function') throw new ValidationError(`effect ${JSON.stringify(key)}: fn must be a function (idempotencyKey) => result, got ${typeof fn}`);
        return guard(effects.run(key, fn));
      },
    };
  }

  // ------------------------------------------------------------ heartbeats, cancel, deadline

  private scheduleHeartbeat(): void {
    if (this.state === 'stopped') return;
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatRunning = this.heartbeatTick().finally(() => {
        this.heartbeatRunning = null;
        this.scheduleHeartbeat();
      });
    }, this.nextHeartbeatDelay());
    // Deliberately not unref'd: a handler waiting only on its signal (a cancel, a deadline) must keep
    // the process alive until the heartbeat that aborts it. stop() clears the timer.
  }

  /** Every `heartbeatMs`, or sooner when a deadline falls before that, so deadline aborts are prompt. */
  private nextHeartbeatDelay(): number {
    let delay = this.heartbeatMs;
    const now = this.clock.now();
    for (const f of this.inflight.values()) {
      if (f.deadlineAt !== null && f.abortReason === null) delay = Math.min(delay, Math.max(f.deadlineAt - now, 0) + 5);
    }
    return Math.max(delay, 5);
  }

  private async heartbeatTick(): Promise<void> {
    const now = this.clock.now();
    const open = [...this.inflight.values()].filter((f) => !f.closed && !f.settled);
    for (const f of open) {
      if (f.deadlineAt !== null && now >= f.deadlineAt) this.abortJob(f, 'deadline');
    }
    if (open.length === 0) return;
    let results: HeartbeatResult[];
    try {
      results = await this.backend!.heartbeat(
        open.map((f) => f.ref),
        this.leaseMs,
      );
    } catch (error) {
      this.log({ kind: 'backend_error', op: 'heartbeat', jobId: null, error });
      // The client was closed while every slot was busy (the claim loop asleep, so no claim saw it):
      // stop now rather than heartbeat in vain until the leases run out.
      if (error instanceof ClosedError) this.stopForClosedClient();
      // Unable to extend: once a lease has run out, someone else may own the job. Stop the handler.
      for (const f of open) if (this.clock.now() >= f.expiresAt) this.abortJob(f, 'lease_lost');
      return;
    }
    for (const r of results) {
      const f = this.inflight.get(r.jobId);
      if (f) this.applyHeartbeat(f, r);
    }
  }

  private applyHeartbeat(f: InFlight, r: HeartbeatResult): void {
    if (r.status === 'lost') {
      this.markLost(f);
      return;
    }
    f.expiresAt = r.expiresAt;
    if (r.cancelRequested) this.abortJob(f, 'cancelled');
    else if (r.deadlineReached) this.abortJob(f, 'deadline');
  }

  private markLost(f: InFlight): void {
    f.closed = true;
    f.lost = true;
    this.abortJob(f, 'lease_lost');
  }

  /**
   * Aborts the handler's signal (first reason wins, except that a lost lease
   * always closes writes). If the handler has not returned after
   * `abortGraceMs`, the job is ended without it and its slot freed.
   */
  private abortJob(f: InFlight, reason: AbortReason): void {
    if (f.settled || f.abortReason !== null) return;
    f.abortReason = reason;
    f.controller.abort(new JobAbortedError(f.ref.jobId, reason));
    f.graceTimer = setTimeout(() => void this.detach(f), this.abortGraceMs);
  }

  private async detach(f: InFlight): Promise<void> {
    if (f.settled) return;
    const reason = f.abortReason!;
    this.log({ kind: 'handler_detached', jobId: f.ref.jobId, reason });
    const wasClosed = f.closed;
    f.closed = true;
    try {
      if (!wasClosed) {
        const backend = this.backend!;
        const attempt = this.attemptOf(f);
        if (reason === 'shutdown') {
          await this.releaseQuietly(f.ref, attempt, f.expiresAt);
        } else if (reason === 'cancelled' || reason === 'deadline') {
          const end = reason === 'cancelled' ? 'cancelled' : 'expired';
          await this.withRetries(() => backend.abort(f.ref, end));
          this.log({ kind: 'aborted', jobId: f.ref.jobId, attempt, reason: end });
        } else if (reason === 'budget') {
          await this.failAttempt(f, f.budgetError!);
        }
      }
    } catch (error) {
      if (error instanceof LeaseLostError) this.log({ kind: 'lease_lost', jobId: f.ref.jobId, attempt: this.attemptOf(f) });
      else this.log({ kind: 'backend_error', op: 'abort', jobId: f.ref.jobId, error });
    } finally {
      f.freeSlot();
    }
  }

  // ------------------------------------------------------------ shutdown

  /**
   * The worker's client was closed under it: nothing can be written any more (a result, a
   * release), so running handlers get no grace to finish: their signals abort at once (reason
   * `shutdown`) and their leases are left to expire, as after a crash.
   */
  private stopForClosedClient(): void {
    this.clientClosed = true;
    void this.stop();
  }

  private async shutdown(): Promise<void> {
    if (this.state === 'idle') {
      this.state = 'stopped';
      this.resolveDone();
      return;
    }
    this.state = 'stopping';
    this.stopBudget = new StopBudget(this.clock, this.clock.now() + (this.clientClosed ? 0 : this.gracefulMs));
    this.log({ kind: 'stopping', inFlight: this.inflight.size });
    this.waker.wake();
    // The grace period runs from here, for a claim in flight as for running handlers: a claim the
    // store leaves unanswered (a frozen server, a client that no longer tries to connect) held up
    // the stop, the first SIGTERM included, until the call gave up, or for ever. (The claim gets at
    // least its wait for work by design, SQS's long poll, and CLAIM_STOP_WAIT_MS more: with a short
    // grace, a claim the store answers still hands its jobs back before the store is closed.)
    let graceTimer: NodeJS.Timeout | undefined;
    let claimTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((r) => (graceTimer = setTimeout(r, this.clientClosed ? 0 : this.gracefulMs)));
    let claimLoopEnded = false;
    await Promise.race([
      this.claimLoopDone.then(() => (claimLoopEnded = true)),
      new Promise<void>((r) => (claimTimer = setTimeout(r, Math.max(this.gracefulMs, (this.backend?.claimWaitMs ?? 0) + CLAIM_STOP_WAIT_MS)))),
    ]);
    clearTimeout(claimTimer);

    // Running handlers get the rest of the grace period to finish on their own…
    const all = (): Promise<void> => Promise.all([...this.inflight.values()].map((f) => f.slotFreed)).then(() => undefined);
    await Promise.race([all(), graceOver]);
    clearTimeout(graceTimer);
    // …then their signals abort and their leases go back without counting the attempt.
    for (const f of this.inflight.values()) this.abortJob(f, 'shutdown');
    await all();
    // A sweep still due: one last try, so a stopping (or --drain) worker leaves no orphan running.
    // Not while a claim is unanswered: the sweep waits for its answer (jobs it may have leased are
    // claimed again once their leases expire).
    // Bounded by what is left of the grace, as the releases are: a store that leaves the sweep
    // unanswered (frozen: each call waits out the client's command timeout) does not hold the stop;
    // the sweep is abandoned and said so, and its orphans, if any, are claimed again once their
    // leases expire.
    this.sweepWaker.wake();
    if (claimLoopEnded && (this.orphanSweep !== null || this.orphansSuspected)) {
      const lastSweep = (async () => {
        await this.orphanSweep;
        if (this.orphansSuspected) {
          await this.releaseOrphans().catch((error: unknown) => {
            if (!this.isStopped()) this.log({ kind: 'backend_error', op: 'orphan sweep', jobId: null, error });
          });
        }
      })();
      // (every orphan was leased before now: its lease ends within leaseMs of now)
      if (!(await this.stopBudget.settles(lastSweep))) this.log({ kind: 'orphan_sweep_abandoned', expiresBy: this.clock.now() + this.leaseMs });
    }

    // The broker's work the jobs' ends left going on behind (SQS silent: a message's delete, a DLQ
    // copy), waited for within what is left of the grace, as the releases are; past it, said and
    // given up on (the store holds every job's end, and a message that comes back is answered from it).
    const behind = this.backend?.brokerWorkBehind?.();
    if (behind && behind.jobs > 0 && !(await this.stopBudget.settles(behind.settled))) {
      this.log({ kind: 'broker_work_left', broker: this.backend?.broker?.name ?? 'the broker', jobs: behind.jobs });
    }
    const left = this.stopBudget?.leftBehind();
    if (left) this.log({ kind: 'leases_left', ...left });
    this.state = 'stopped';
    this.unsubscribeClose?.();
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    await this.heartbeatRunning;
    this.storeWatch.stop();
    if (this.ownsBackend && this.backend) await this.backend.close();
    this.log({ kind: 'stopped' });
    this.resolveDone();
  }

  /**
   * Hands back the lease of a job stopped by this stop (or killed with it): tried once, and only
   * for what is left of the grace (see StopBudget); past it the lease is left to expire.
   */
  private async releaseOnStop(entry: InFlight): Promise<void> {
    await this.releaseWithinGrace(entry.ref, this.attemptOf(entry), entry.expiresAt);
  }

  /** Hands back a lease claimed as a stop arrived (its job never ran); bounded by the stop's grace. */
  private async releaseQuietly(ref: LeaseRef, attempt: number, expiresAt: number): Promise<void> {
    try {
      await this.releaseWithinGrace(ref, attempt, expiresAt);
    } catch (error) {
      if (error instanceof LeaseLostError) this.log({ kind: 'lease_lost', jobId: ref.jobId, attempt });
      else this.log({ kind: 'backend_error', op: 'release', jobId: ref.jobId, error });
    }
  }

  /** One release, tried once when the store is unavailable, for what is left of the grace (if stopping); logged when done in time. */
  private async releaseWithinGrace(ref: LeaseRef, attempt: number, expiresAt: number): Promise<void> {
    const release = (): Promise<void> => this.withRetries(() => this.backend!.release(ref), { onStop: true });
    const inTime = this.stopBudget ? await this.stopBudget.within({ jobId: ref.jobId, expiresAt }, release) : (await release(), true);
    if (inTime) this.log({ kind: 'released', jobId: ref.jobId, attempt });
  }

  // ------------------------------------------------------------ helpers

  /** (a method, so that a check after an await is not narrowed away by one made before it) */
  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private attemptOf(f: InFlight): number {
    return f.lease.envelope.attempt;
  }

  private log(event: WorkerEvent): void {
    try {
      const r: unknown = this.o.logger?.(event);
      // An async logger (one that ships events somewhere) that rejects was an unhandled rejection,
      // which ends the process, running jobs and all.
      if (r instanceof Promise) r.catch(() => {});
    } catch {
      // A faulty logger must not take the worker down.
    }
  }
}

/** The failure of a job over its budget (a permanent code: a retry would spend again). */
function overBudget(jobId: string, breach: string): HandlerError {
  return new HandlerError('BUDGET_EXCEEDED', `job ${jobId} is over its budget: ${breach}`, { retryable: false });
}

/** A handler's return value as stored: strings as is, other values as JSON, nothing as null. */
export function serializeResult(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? null;
}

/**
 * `serializeResult`, or the failure of a value JSON cannot hold (a BigInt, a circular object, a
 * throwing `toJSON`). That is a programming error in the handler, so it is permanent
 * (`HANDLER_FAILED`, not retried): the next attempt would return the same kind of value.
 */
export function storableResult(value: unknown): { ok: true; value: string | null } | { ok: false; error: HandlerError } {
  try {
    const text = serializeResult(value);
    // A function, a Symbol or a toJSON giving undefined has no JSON text: storing "no result" for
    // it lost the output of a handler that returned `res.json` for `res.json()` without a word.
    if (text === null && value !== undefined && value !== null) {
      throw new Error(`JSON has no text for ${typeof value === 'object' ? 'an object whose toJSON returns undefined' : `a ${typeof value}`}`);
    }
    // Over the store's limit (a handler returning a whole document): refused before anything is
    // written, and permanent, as the next attempt would return as much.
    if (text !== null && text.length * 3 > RESULT_MAX_BYTES && Buffer.byteLength(text) > RESULT_MAX_BYTES) {
      const bytes = Buffer.byteLength(text);
      return {
        ok: false,
        error: new HandlerError('HANDLER_FAILED', `the handler's result cannot be stored: it is ${bytes} bytes${typeof value === 'string' ? '' : ' as JSON'}; the limit is ${RESULT_MAX_BYTES} bytes (16 MiB). Store large output elsewhere and return a reference to it`, { retryable: false }),
      };
    }
    return { ok: true, value: text };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      error: new HandlerError('HANDLER_FAILED', `the handler's result cannot be stored: it is not serialisable as JSON (${why})`, { retryable: false, cause: e }),
    };
  }
}
