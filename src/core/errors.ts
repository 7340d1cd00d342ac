/**
 * Typed errors that carry their exit code. Only `cli/main` turns them into a
 * process exit; everything else throws them.
 *
 * The exit codes are a public contract (`agentq help exit-codes`): scripts
 * branch on them, so a code never changes meaning.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  declined: 3,
  auth: 4,
  notFound: 5,
  partial: 6,
  /** EX_TEMPFAIL: backpressure, a held lock or a transient backend error. */
  retryLater: 75,
  /** EX_CONFIG: bad configuration file, unknown context. */
  config: 78,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Exit codes of `agentq submit --wait` (documented in the README). */
export const WaitExitCode = {
  succeeded: 0,
  /** The job reached a terminal state other than `succeeded`. */
  endedWithoutSuccess: 1,
  /** `--timeout` passed before the job ended; the job is left as it is (running, or still queued/scheduled). */
  timedOut: 124,
} as const;

export const EXIT_CODE_DOCS: ReadonlyArray<{ code: number; name: string; meaning: string }> = [
  { code: 0, name: 'ok', meaning: 'Success. An empty list is a success.' },
  { code: 1, name: 'failure', meaning: 'The operation failed, or a waited-for job ended without success.' },
  { code: 2, name: 'usage', meaning: 'Invalid flags, arguments or input; the message names the rule that was broken (an argument that is not a job or run id at all is usage, not "not found").' },
  { code: 3, name: 'declined', meaning: 'Confirmation declined, or a mutation in a script without --yes.' },
  { code: 4, name: 'auth', meaning: 'Authentication or permission error from the backend, or a read-only context.' },
  { code: 5, name: 'not-found', meaning: 'The job, run or other named object does not exist.' },
  { code: 6, name: 'partial', meaning: 'A bulk action finished but some items failed; see the ledger.' },
  { code: 75, name: 'retry-later', meaning: 'Backpressure, a held lock or a transient backend error; retry later. From submit --wait after the job was stored: the store was lost while waiting, the job WAS submitted; do not submit it again.' },
  { code: 78, name: 'config', meaning: 'Bad configuration: unreadable config file, unknown context, bad URL, or a command that adds no jobs pointed at a SQLite store that does not exist, or a SQLite store file removed or replaced since a long-running command (worker, tail --follow, metrics serve, submit --wait …) opened it (start the command again).' },
  { code: 124, name: 'wait-timeout', meaning: 'submit --wait: --timeout passed before the job ended.' },
  { code: 130, name: 'interrupted', meaning: 'Interrupted: Ctrl-C, or a first SIGTERM or SIGHUP to a command that changes state (it stops at a safe point; a second signal exits at once, 143 or 129); a command that only reads (list, inspect, stats …) has nothing to finish and exits at once (130, 143, 129); bulk actions print the command to resume.' },
];

export class AgentqError extends Error {
  /** Stable machine-readable code, e.g. `INPUT_TOO_LARGE`. */
  readonly code: string;
  readonly exitCode: number;
  /** A line of advice printed after the message (what to do instead). */
  readonly hint: string | undefined;

  constructor(code: string, message: string, exitCode: number, hint?: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.hint = hint;
  }
}

/** Bad input: names the rule that was broken. Exit 2. */
export class ValidationError extends AgentqError {
  constructor(message: string, hint?: string, code = 'VALIDATION') {
    super(code, message, ExitCode.usage, hint);
  }
}

export class NotFoundError extends AgentqError {
  constructor(message: string, code = 'NOT_FOUND') {
    super(code, message, ExitCode.notFound);
  }
}

export class ConfigError extends AgentqError {
  constructor(message: string, hint?: string) {
    super('CONFIG', message, ExitCode.config, hint);
  }
}

export class DeclinedError extends AgentqError {
  constructor(message: string, hint?: string) {
    super('DECLINED', message, ExitCode.declined, hint);
  }
}

export class PermissionError extends AgentqError {
  constructor(message: string, hint?: string) {
    super('PERMISSION', message, ExitCode.auth, hint);
  }
}

/** Backpressure, a held lock or a transient backend error. Exit 75. */
export class RetryLaterError extends AgentqError {
  /**
   * How long to wait before retrying, if known: a duration in ms, as the name (and HTTP's
   * Retry-After) says, so `setTimeout(retry, err.retryAfterMs)` waits as meant. It once held an
   * epoch time, which such a timer treats as an overflow and fires after 1 ms: a tight loop.
   */
  readonly retryAfterMs: number | undefined;
  /** When it is worth retrying, if known (epoch ms, on the store's clock). */
  readonly retryAt: number | undefined;
  /**
   * The call certainly never reached the store: no connection to it was up from the call's start
   * to its failure (a refused connection), so nothing it would have written was written. Unset
   * when it may have run with its answer lost (a timeout, a connection dropped under it). On an
   * SQS claim it is set whenever no lease can have been taken, whatever failed (SqsBackend.claim).
   */
  notSent = false;
  constructor(message: string, code = 'RETRY_LATER', hint?: string, retry?: { afterMs: number; at: number }) {
    super(code, message, ExitCode.retryLater, hint);
    this.retryAfterMs = retry?.afterMs;
    this.retryAt = retry?.at;
  }
}

/** True for an error that says its call never reached the store (see `RetryLaterError.notSent`). */
export function wasNotSent(error: unknown): boolean {
  return error instanceof RetryLaterError && error.notSent;
}

/**
 * The broker that delivers the jobs, where it is not the store (SQS), could not be reached or is
 * busy: exit 75 like an outage of the store, told apart so that a worker names the broker, not the
 * store, and does not take the store's answers for the broker's.
 */
export class BrokerUnavailableError extends RetryLaterError {}

/** Errors the broker (SQS) gave that are not outages: a missing queue, refused credentials (fromBroker). */
const brokerErrors = new WeakSet<object>();

/**
 * Marks `e` as the broker's (SQS), where the broker is not the store: a worker then names the
 * broker, not the store, for a refusal (a missing SQS queue is not a fault of the job store).
 */
export function fromBroker<E extends AgentqError>(e: E): E {
  brokerErrors.add(e);
  return e;
}

/** Whether `e` came from the broker: an outage of it (BrokerUnavailableError) or an error marked by fromBroker. */
export function cameFromBroker(e: unknown): boolean {
  return e instanceof BrokerUnavailableError || (typeof e === 'object' && e !== null && brokerErrors.has(e));
}

/** A state transition the state machine does not allow (e.g. cancel a succeeded job). */
export class IllegalTransitionError extends AgentqError {
  constructor(message: string) {
    super('ILLEGAL_TRANSITION', message, ExitCode.failure);
  }
}

/** Idempotency key reused with a different request body. Exit 2: it is a caller bug. */
export class IdempotencyConflictError extends AgentqError {
  readonly existingJobId: string;
  constructor(key: string, existingJobId: string) {
    super(
      'IDEMPOTENCY_CONFLICT',
      `idempotency key ${JSON.stringify(key)} was already used for ${existingJobId} with a different request body`,
      ExitCode.usage,
      'Use a new idempotency key for a different request, or resend the original body.',
    );
    this.existingJobId = existingJobId;
  }
}

/**
 * A write by a worker whose lease is gone (expired, reclaimed by another
 * worker, or the job ended). The fence token on every write detects it.
 */
export class LeaseLostError extends AgentqError {
  readonly jobId: string;
  constructor(jobId: string, detail = 'the lease expired or was taken over') {
    super('LEASE_LOST', `lease lost on ${jobId}: ${detail}`, ExitCode.failure);
    this.jobId = jobId;
  }
}

/** A stored job that cannot be read as one (not JSON, damaged, foreign): reported, never guessed at. */
export class MalformedJobError extends AgentqError {
  constructor(jobId: string, why: string) {
    super('MALFORMED_ENTRY', `the stored record of ${jobId} is malformed: ${why}`, ExitCode.failure, `agentq leaves it as it is; if it is in the DLQ, \`agentq dlq show ${jobId} --raw > entry.bin\` saves what is stored.`);
  }
}

/**
 * A new effect refused because the job is stopping: its cancel was requested or its deadline
 * passed. "Cancellation stops new tool calls" is checked by the store in the same step that would
 * record the effect, so it holds even before the worker's next heartbeat brings the news.
 */
export class JobStoppingError extends AgentqError {
  readonly jobId: string;
  constructor(jobId: string, why: 'cancel' | 'deadline') {
    super(
      why === 'cancel' ? 'CANCEL_REQUESTED' : 'DEADLINE_PASSED',
      why === 'cancel'
        ? `${jobId}: its cancel was requested, so no new effect starts`
        : `${jobId}: its deadline has passed, so no new effect starts`,
      ExitCode.failure,
    );
    this.jobId = jobId;
  }
}

/**
 * A client used after its `close()`, or a worker started again after `stop()`. Without it, a
 * SQLite client threw a bare TypeError and a Redis client a RetryLaterError (BACKEND_UNAVAILABLE),
 * which tells a caller to retry something that can never work.
 */
export class ClosedError extends AgentqError {
  constructor(message: string, hint?: string) {
    super('CLOSED', message, ExitCode.failure, hint);
  }
}

export class InterruptedError extends AgentqError {
  constructor(message = 'interrupted', hint?: string) {
    super('INTERRUPTED', message, ExitCode.interrupted, hint);
  }
}

export function isAgentqError(e: unknown): e is AgentqError {
  return e instanceof AgentqError;
}
