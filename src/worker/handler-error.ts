/**
 * Errors a handler throws on purpose, and the reason carried by an aborted
 * handler signal.
 */
import type { AbortReason } from './types.js';

/**
 * Throw this from a handler to report an error code (see `ERROR_CODE_TABLE`
 * in core/retry). `retryable` overrides the table; leave it out to use it.
 *
 * ```ts
 * throw new HandlerError('PROVIDER_429', 'rate limited by the model provider');
 * ```
 */
export class HandlerError extends Error {
  readonly code: string;
  readonly retryable: boolean | undefined;
  constructor(code: string, message: string, opts: { retryable?: boolean | undefined; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HandlerError';
    this.code = code;
    this.retryable = opts.retryable;
  }
}

/**
 * The code of a handler process killed by a signal the worker did not send (exec handler). The
 * worker releases such a job when it is stopping itself: a supervisor signalled the whole service.
 */
export const HANDLER_KILLED = 'HANDLER_KILLED';

/** The `reason` of an aborted handler signal. */
export class JobAbortedError extends Error {
  readonly reason: AbortReason;
  readonly jobId: string;
  constructor(jobId: string, reason: AbortReason) {
    super(`job ${jobId} aborted: ${ABORT_REASON_TEXT[reason]}`);
    this.name = 'JobAbortedError';
    this.reason = reason;
    this.jobId = jobId;
  }
}

const ABORT_REASON_TEXT: Record<AbortReason, string> = {
  cancelled: 'cancel requested',
  deadline: 'deadline passed',
  lease_lost: 'lease lost (another worker may own the job)',
  shutdown: 'worker shutting down',
  budget: 'over its budget (tokens or cost)',
};
