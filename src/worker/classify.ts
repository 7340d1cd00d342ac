/**
 * Turns whatever a handler threw into the one `Failure` shape the backend
 * takes, so the retry decision (core/retry) sees a code and a retryable flag
 * and nothing else. The conversion happens here, at the boundary, once.
 */
import type { Failure } from '../backend/contract.js';
import { isAgentqError, RetryLaterError } from '../core/errors.js';
import { classifyError } from '../core/retry.js';

/** Error messages end up in DLQ entries and terminals: keep them bounded. */
export const MAX_ERROR_MESSAGE_CHARS = 4000;

/** Node/undici error codes that mean the network, not the request, failed: worth a retry. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** An HTTP status (from an SDK error's `status`/`statusCode`) mapped to the documented codes. */
function codeForStatus(status: number): string {
  if (status === 429) return 'PROVIDER_429';
  if (status === 401 || status === 403) return 'PERMISSION';
  if (status === 400 || status === 422) return 'VALIDATION';
  if (status >= 500) return 'PROVIDER_5XX';
  return `HTTP_${status}`;
}

function truncate(s: string): string {
  return s.length <= MAX_ERROR_MESSAGE_CHARS ? s : `${s.slice(0, MAX_ERROR_MESSAGE_CHARS)}…[truncated ${s.length - MAX_ERROR_MESSAGE_CHARS} chars]`;
}

/**
 * Classifies a thrown value:
 * - an object with a string `code` (e.g. `HandlerError`) keeps its code; a
 *   boolean `retryable` on it wins, otherwise the code table decides (with the
 *   HTTP `status`, if any, for codes not in the table);
 * - Node network error codes (`ECONNRESET`, …) become `NETWORK` (retryable);
 * - an HTTP `status`/`statusCode` maps to `PROVIDER_429`, `PROVIDER_5XX`, `PERMISSION`, …;
 * - a `TimeoutError` becomes `TIMEOUT`;
 * - anything else is `HANDLER_FAILED` (permanent: a bug is not fixed by retrying).
 */
export function toFailure(err: unknown, workerVersion: string | null = null): Failure {
  const message = truncate(messageOf(err));
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    retryable?: unknown;
    status?: unknown;
    statusCode?: unknown;
    name?: unknown;
  };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const hint = typeof e.retryable === 'boolean' ? e.retryable : undefined;

  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) {
    return { code: 'NETWORK', message, retryable: hint ?? true, workerVersion };
  }
  if (typeof e.code === 'string' && e.code.length > 0) {
    const retryableHint = hint ?? (isAgentqError(err) ? err instanceof RetryLaterError : undefined);
    const retryable =
      hint ?? classifyError(e.code, { ...(status === undefined ? {} : { status }), ...(retryableHint === undefined ? {} : { retryableHint }) });
    return { code: e.code, message, retryable, workerVersion };
  }
  if (status !== undefined) {
    const code = codeForStatus(status);
    return { code, message, retryable: hint ?? classifyError(code, { status }), workerVersion };
  }
  if (e.name === 'TimeoutError') {
    return { code: 'TIMEOUT', message, retryable: hint ?? true, workerVersion };
  }
  return { code: 'HANDLER_FAILED', message, retryable: hint ?? false, workerVersion };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
