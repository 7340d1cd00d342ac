/**
 * The library API for producers and workers.
 *
 * ```ts
 * import { createClient, createWorker, HandlerError } from 'agentq';
 *
 * const client = await createClient({ url: 'sqlite:./agentq.db' });
 * await client.submit({ workflow: 'research_report:v3', queue: 'research', input: 'topic: queues' });
 *
 * const worker = createWorker({
 *   url: 'sqlite:./agentq.db',
 *   queue: 'research',
 *   concurrency: 4,
 *   handler: async (job, ctx) => {
 *     const order = await ctx.effect('create-order', (key) => shop.createOrder({ idempotencyKey: key }));
 *     await ctx.checkpoint({ orderId: order.id });
 *     if (ctx.signal.aborted) throw ctx.signal.reason; // cancel, deadline, lost lease or shutdown: `return` would complete the job
 *     return { orderId: order.id };
 *   },
 * });
 * await worker.start();
 * process.on('SIGTERM', () => void worker.stop());
 * ```
 */
import type { Backend } from './backend/contract.js';
import type { AdmissionLimits } from './core/admission.js';
import type { Clock, Random } from './core/clock.js';
import type { FairnessOptions } from './core/fairness.js';
import { checkSignal, MAX_LEASE_MS } from './backend/checks.js';
import { clientClock, guardClose, isClosedClient, onClientClose, setClientClock } from './backend/close-guard.js';
import { ClosedError, NotFoundError, ValidationError } from './core/errors.js';
import { systemClock } from './core/clock.js';
import type { Job } from './core/schemas.js';
import { checkedPolicy } from './core/policy.js';
import { checkOptionKeys } from './core/validate.js';

export const VERSION = "0.1.0";

export { createWorker, serializeResult, WORKER_DEFAULTS } from './worker/worker.js';
export { HandlerError, JobAbortedError } from './worker/handler-error.js';
export { toFailure } from './worker/classify.js';
export type { AbortReason, Handler, JobContext, Worker, WorkerEvent, WorkerLogger, WorkerOptions } from './worker/types.js';
export type * from './backend/contract.js';
export type { Job, JobEnvelope, JobEvent, JobState, JobClass, DlqEntry, Effect, SubmitRequest } from './core/schemas.js';
export { DEFAULT_RETRY_POLICY, ERROR_CODE_TABLE } from './core/retry.js';
export {
  AgentqError,
  BrokerUnavailableError,
  ClosedError,
  ConfigError,
  DeclinedError,
  ExitCode,
  IdempotencyConflictError,
  IllegalTransitionError,
  InterruptedError,
  isAgentqError,
  JobStoppingError,
  LeaseLostError,
  MalformedJobError,
  NotFoundError,
  PermissionError,
  RetryLaterError,
  ValidationError,
} from './core/errors.js';
export { ManualClock, systemClock } from './core/clock.js';
export type { AdmissionLimits, FairnessOptions };

export interface ClientOptions {
  /** `sqlite:PATH`, `redis://…`. @default `AGENTQ_URL`, else the embedded default store */
  url?: string | undefined;
  clock?: Clock | undefined;
  random?: Random | undefined;
  /**
   * Per-tenant concurrency caps and class/tenant weights, honoured by this client's claims
   * (give a worker this client, or the same `fairness` in its own options). Every worker on a
   * queue should use the same caps: the running counts they are checked against are the store's.
   */
  fairness?: FairnessOptions | undefined;
  /** Backlog limits (seconds of work) honoured by this client's `submit`: over one, it throws RetryLaterError (BACKLOG_FULL). */
  admission?: AdmissionLimits | undefined;
}

export interface WaitOptions {
  /** Give up after this long (a `WAIT_TIMEOUT` error); the job is left as it is. @default no limit */
  timeoutMs?: number | undefined;
  /** Stop waiting when it aborts (an `INTERRUPTED` error); the job is left as it is. */
  signal?: AbortSignal | undefined;
  /** How often the job is read. @default 200 */
  pollMs?: number | undefined;
}

/**
 * Waits until a job ends (`succeeded`, `dead`, `cancelled` or `expired`) and returns it as it
 * ended: read `state`, `result` and `last_error`. What `agentq submit --wait` does. Throws
 * `NotFoundError` for an unknown job (also one that vanishes from the store while waited on), and an `AgentqError` when the wait stops first:
 * `WAIT_TIMEOUT`, `INTERRUPTED`, `DEADLINE_MISSED` (still waiting past its deadline: it can no
 * longer run) or `WAIT_STORE_LOST` (the store failed; the job is unaffected, do not submit it again);
 * a `ClosedError` when the client is closed while it waits.
 */
export async function waitForJob(client: Backend, jobId: string, opts: WaitOptions = {}): Promise<Job> {
  // (from JavaScript, a client left out or the arguments swapped threw bare TypeErrors)
  if (typeof client !== 'object' || client === null || typeof (client as Partial<Backend>).get !== 'function') {
    throw new ValidationError(`waitForJob takes a client from createClient as its first argument, got ${client === null ? 'null' : typeof client}`);
  }
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw new ValidationError(`waitForJob options must be an object, such as { timeoutMs: 60_000 }, got ${opts === null ? 'null' : typeof opts}`);
  checkOptionKeys('waitForJob', opts, WAIT_OPTION_KEYS);
  if (opts.timeoutMs !== undefined && !(typeof opts.timeoutMs === 'number' && opts.timeoutMs >= 0)) throw new ValidationError(`timeoutMs must be a number of milliseconds, at least 0, got ${String(opts.timeoutMs)}`);
  // (at most the longest timer Node keeps: a longer one fires after 1 ms, a busy loop on the store)
  if (opts.pollMs !== undefined && !(typeof opts.pollMs === 'number' && opts.pollMs >= 1 && opts.pollMs <= MAX_LEASE_MS)) {
    throw new ValidationError(`pollMs must be a number of milliseconds, from 1 to ${MAX_LEASE_MS}, got ${String(opts.pollMs)}`);
  }
  checkSignal(opts.signal);
  const job = await client.get(jobId);
  if (!job) throw new NotFoundError(`job ${jobId} not found`, 'JOB_NOT_FOUND');
  // (loaded only here: a producer that never waits does not load the CLI's modules)
  const { waitForEnd } = await import('./cli/commands/submit.js');
  // Closing the client ends the wait at once, as a ClosedError: the poll that followed was refused
  // and read as a failed store (WAIT_STORE_LOST, "the job WAS submitted…"), up to a poll later.
  const closing = new AbortController();
  const unsubscribe = onClientClose(client, () => closing.abort());
  if (isClosedClient(client)) closing.abort(); // closed while the first read was under way
  const signal = opts.signal ? AbortSignal.any([opts.signal, closing.signal]) : closing.signal;
  // The job's deadline is the store's time: judged by the clock the client was created with (a
  // ManualClock in a test), not the system's, or a job an hour from its deadline "missed" it.
  const clock = clientClock(client) ?? systemClock;
  try {
    const { job: final, stopped } = await waitForEnd(client, job, { clock, signal }, opts.timeoutMs, opts.pollMs);
    if (stopped && (closing.signal.aborted || isClosedClient(client))) throw closedWhileWaiting(client, stopped.code === 'WAIT_STORE_LOST' ? job : final);
    if (stopped) throw stopped;
    return final;
  } finally {
    unsubscribe();
  }
}

function closedWhileWaiting(client: Backend, last: Job): ClosedError {
  return new ClosedError(
    `waitForJob(${last.job_id}) stopped: the client was closed while it waited (${client.description}). The job is unaffected`,
    `Wait with a client that stays open, or check on it with: agentq inspect ${last.job_id}`,
  );
}

const WAIT_OPTION_KEYS = Object.keys({ timeoutMs: 0, signal: 0, pollMs: 0 } satisfies Record<keyof WaitOptions, 0>);

/**
 * Opens a store for producers and operators: the `Backend` contract
 * (`submit`, `get`, `list`, `cancel`, `events`, `stats`, `dlqList`, …).
 * Close it with `close()`; any call after that throws a `ClosedError` (`CLOSED`), and so does an
 * `events()` iteration still under way (a follow whose signal has not aborted).
 */
export async function createClient(opts: ClientOptions = {}): Promise<Backend> {
  checkClientOptions(opts);
  const { openBackend, defaultDataUrl } = await import('./backend/open.js');
  const url = opts.url ?? process.env.AGENTQ_URL ?? defaultDataUrl(process.env);
  const backend = await openBackend(url, {
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.random ? { random: opts.random } : {}),
    ...checkedPolicy(opts),
  });
  const client = guardClose(backend);
  if (opts.clock) setClientClock(client, opts.clock);
  return client;
}


const CLIENT_OPTION_KEYS = Object.keys({ url: 0, clock: 0, random: 0, fairness: 0, admission: 0 } satisfies Record<keyof ClientOptions, 0>);

/**
 * `createClient('sqlite:./x.db')` (a URL where the options go) or `{ urll: … }` opened the default
 * store instead, and jobs went where nobody looked: the options are checked before anything opens.
 */
function checkClientOptions(opts: unknown): asserts opts is ClientOptions {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw new ValidationError(`createClient takes an options object, such as { url: 'sqlite:./agentq.db' }, got ${typeof opts === 'string' ? JSON.stringify(opts) : opts === null ? 'null' : typeof opts}`);
  }
  checkOptionKeys('createClient', opts, CLIENT_OPTION_KEYS);
  const { url, clock, random } = opts as ClientOptions;
  if (url !== undefined && (typeof url !== 'string' || url === '')) throw new ValidationError(`url must be a store URL such as sqlite:./agentq.db, got ${JSON.stringify(url) ?? typeof url}`);
  if (clock !== undefined && (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')) {
    throw new ValidationError('clock must be a Clock, an object with now(): epoch ms');
  }
  // (a number was taken, then every submit threw a bare TypeError when it made a job id)
  if (random !== undefined && typeof random !== 'function') throw new ValidationError('random must be a function returning a number in [0, 1), as Math.random does');
}
