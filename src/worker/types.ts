/**
 * The public shapes of the worker runtime: what a handler receives, what the
 * worker reports while it runs, and the options of `createWorker`.
 */
import type { Backend, FailureOutcome, UsageReport } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import type { FairnessOptions } from '../core/fairness.js';
import type { Effect, JobClass, JobEnvelope } from '../core/schemas.js';

/** Why a handler's signal was aborted. The signal's `reason` is an `AbortReason` wrapped in a `JobAbortedError`. */
export type AbortReason =
  /** `agentq cancel` on the running job, seen at a heartbeat. */
  | 'cancelled'
  /** The job's deadline passed. */
  | 'deadline'
  /** The fence no longer matches: another worker may own the job now. Stop writing. */
  | 'lease_lost'
  /** The worker is stopping and the grace period ran out; the lease is released, the attempt not counted. */
  | 'shutdown'
  /** A usage report took the job over its `budget`: the attempt fails with BUDGET_EXCEEDED (not retried). */
  | 'budget';

export interface JobContext {
  /** Aborted on cancel, deadline, lost lease, shutdown or a spend over the budget; `signal.reason` is a `JobAbortedError`. */
  readonly signal: AbortSignal;
  readonly jobId: string;
  /** The lease's fence token: every write for this attempt carries it. */
  readonly fence: number;
  /** 1 on the first attempt. */
  readonly attempt: number;
  readonly workerId: string;
  /** The checkpoint saved by an earlier attempt (or earlier in this one), for resuming: as JSON keeps it (a `Date` is its ISO string). */
  readonly lastCheckpoint: unknown;
  /** The effect ledger as it was when the job was claimed. */
  readonly effects: readonly Effect[];
  /** Epoch ms when the current lease runs out (moves on every heartbeat). */
  readonly leaseExpiresAt: number;
  /** Heartbeats this lease now. Throws `LeaseLostError` when the lease is gone; aborts the signal on cancel/deadline. */
  heartbeat(): Promise<void>;
  /** Saves resumable progress, fenced by the lease. */
  checkpoint(data: unknown): Promise<void>;
  /**
   * Adds what this attempt spent (tokens, US dollars) to its attempt record and its queue's totals
   * (cost per job: `agentq inspect`, `agentq stats`, the metrics), fenced by the lease. Call it as
   * the spending happens (after each model call): an attempt that dies keeps what it reported.
   * Figures must be non-negative and finite, tokens a whole number (`ValidationError` otherwise).
   * When the job's spend (every attempt's) goes beyond its `budget`, the spend is still recorded,
   * then this throws a `HandlerError` `BUDGET_EXCEEDED` and the signal aborts (reason `budget`):
   * the attempt fails with that code, which is not retried (a result returned anyway is kept).
   */
  reportUsage(usage: UsageReport): Promise<void>;
  /**
   * Runs an irreversible action at most once per job as far as the store can
   * tell: recorded `started`, then `done` with its result. An effect already
   * `done` is not run again; its recorded result is returned. `fn` receives a
   * stable idempotency key (`<job_id>:<key>`) to hand to the external system,
   * so an effect whose attempt died between the call and the `done` record is
   * safe to repeat on the next attempt. A call of a key already running in
   * this attempt (`Promise.all` over tool calls) does not call `fn` again: it
   * waits for the running call and gets its result, or its error.
   */
  effect<T>(key: string, fn: (idempotencyKey: string) => T | Promise<T>): Promise<T>;
}

/**
 * A job handler. Return a value to complete the job (a string is stored as is,
 * anything else as JSON, `undefined`/`null` as no result); throw to fail it
 * (see `toFailure` for how errors are classified).
 */
export type Handler = (job: JobEnvelope, ctx: JobContext) => unknown | Promise<unknown>;

/** What the worker reports while it runs: events apart from rendering. */
export type WorkerEvent =
  | { kind: 'started'; workerId: string; queue: string }
  | { kind: 'claimed'; jobId: string; attempt: number; fence: number }
  | { kind: 'succeeded'; jobId: string; attempt: number; durationMs: number }
  /** `warning`: what the backend said about the outcome (FailureOutcome's `warning`). */
  | { kind: 'failed'; jobId: string; attempt: number; code: string; message: string; outcome: FailureOutcome['kind']; warning?: string }
  | { kind: 'aborted'; jobId: string; attempt: number; reason: 'cancelled' | 'expired' }
  /**
   * The job's lease is gone; the worker writes nothing more for it. `unsure`: an earlier try of the
   * ending write went unanswered, so that write may have been recorded (the job's record says).
   */
  | { kind: 'lease_lost'; jobId: string; attempt: number; unsure?: boolean }
  | { kind: 'released'; jobId: string; attempt: number }
  /**
   * A job leased to this worker by a call whose answer never came (a claim, or a completion that
   * claimed the next job, across a Redis restart): given back at once without counting the attempt,
   * rather than left running until its lease expires.
   */
  | { kind: 'orphan_released'; jobId: string; attempt: number }
  /** A handler ignored its aborted signal past the abort grace; its job was ended without it. */
  | { kind: 'handler_detached'; jobId: string; reason: AbortReason }
  /** A backend call failed; the worker keeps going (a lease left behind expires and is reclaimed), unless a claim was refused because its client was closed (`ClosedError`): then it stops. */
  /** `startedAt` (a claim's, epoch ms): when the failed call began; a client's connection retries lie between it and the event. */
  | { kind: 'backend_error'; op: string; jobId: string | null; error: unknown; startedAt?: number }
  /**
   * The store stopped answering: a call failed for want of it (`error`), or `waiting` calls went
   * unanswered for 5 s (`error` null). Said once until it answers again (and not again within 10 s).
   */
  | { kind: 'store_unavailable'; waiting: number; error: unknown }
  /** The store answers again, `downMs` after it stopped (only after a `store_unavailable`). */
  | { kind: 'store_available'; downMs: number }
  /**
   * Where the broker is not the store (SQS): a call failed for want of the broker (`broker` names it,
   * e.g. "SQS at http://127.0.0.1:4566"; `error` a `BrokerUnavailableError`) while the store may
   * answer. Said once until the broker itself answers again (and not again within 10 s).
   */
  | { kind: 'broker_unavailable'; broker: string; error: unknown }
  /** The broker answered a call again, `downMs` after it stopped (only after a `broker_unavailable`). */
  | { kind: 'broker_available'; broker: string; downMs: number }
  /** A claim found nothing claimable and no job is in flight; the next claim is in `waitMs` (doubling while idle). */
  | { kind: 'idle'; waitMs: number }
  | { kind: 'stopping'; inFlight: number }
  /**
   * The stop's grace ran out before the store answered the release of `count` leases (it is
   * unavailable): they are left to expire, the last at `expiresAt` (epoch ms), and their jobs are
   * claimed again then (see README "Shutdown").
   */
  | { kind: 'leases_left'; count: number; expiresAt: number }
  /**
   * The stop's last orphan sweep (after a call whose answer was lost) did not finish within the
   * grace (the store did not answer): abandoned. Jobs that call may have leased to this worker, if
   * any, are claimed again once their leases expire, by `expiresBy` (epoch ms) at the latest.
   */
  | { kind: 'orphan_sweep_abandoned'; expiresBy: number }
  /**
   * The stop's grace ran out before the broker (SQS) finished the work the ends of `jobs` jobs
   * left going on behind (a message's delete, a dead job's DLQ copy): it is given up on as the
   * backend closes. Nothing is lost: the store holds those jobs' ends, a message that comes back
   * is deleted (or its DLQ copy sent, then it is deleted) on its next receive.
   */
  | { kind: 'broker_work_left'; broker: string; jobs: number }
  | { kind: 'stopped' };

/** Called for every event; what it throws, or an async logger rejects with, is ignored (a log shipper that is down does not stop the worker). */
export type WorkerLogger = (event: WorkerEvent) => void;

export interface WorkerOptions {
  /** The store; or `url` to open one (closed again when the worker stops). */
  backend?: Backend | undefined;
  url?: string | undefined;
  /** With `url`: per-tenant caps and weights the worker's claims honour (with `backend`, that client's own). */
  fairness?: FairnessOptions | undefined;
  queue: string;
  handler: Handler;
  /** Jobs in flight at once. @default 1 */
  concurrency?: number | undefined;
  /** Lease length per claim and heartbeat (capped at each job's deadline by the backend). @default 60_000 */
  leaseMs?: number | undefined;
  /** How often all in-flight leases are heartbeaten, in one call. Must be below `leaseMs`. @default leaseMs / 4 */
  heartbeatMs?: number | undefined;
  /** Classes this worker takes; all when absent. */
  classes?: readonly JobClass[] | undefined;
  /** @default `<host>:<pid>:<random>` */
  workerId?: string | undefined;
  /** Recorded on every attempt and in DLQ entries. */
  workerVersion?: string | null | undefined;
  /** Used for local deadline checks. @default the clock of `backend` when it is a client created with one (`createClient({ clock })`), else systemClock */
  clock?: Clock | undefined;
  /** On `stop()`, how long running handlers may finish before their signals abort and their leases are released. @default 30_000 */
  gracefulMs?: number | undefined;
  /** After a signal aborts (cancel, deadline, lost lease, shutdown), how long the handler gets to return before the worker ends the job without it. @default 10_000 */
  abortGraceMs?: number | undefined;
  /** When a claim finds nothing, wait this long, doubling up to `maxIdleMs`. @default 25 */
  minIdleMs?: number | undefined;
  /** @default 1_000 */
  maxIdleMs?: number | undefined;
  logger?: WorkerLogger | undefined;
}

export interface Worker {
  readonly workerId: string;
  /** Starts the claim and heartbeat loops. Idempotent while running; once a started worker was stopped it throws a `ClosedError` (a `stop()` before any `start()` makes it do nothing), as it does when its `backend` is a client already closed. */
  start(): Promise<void>;
  /** Graceful stop: no new claims; running handlers get `gracefulMs`, then are aborted and their leases released. Resolves when stopped. */
  stop(): Promise<void>;
  /** Resolves when the worker has stopped (after `stop()`). */
  readonly done: Promise<void>;
  /** Jobs in flight right now. */
  inFlight(): number;
}
