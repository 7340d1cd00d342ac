/**
 * Turns whatever a handler threw into the one `Failure` shape the backend
 * takes, so the retry decision (core/retry) sees a code and a retryable flag
 * and nothing else. The conversion happens here, at the boundary, once.
 */
import type { Failure } from '../backend/contract.js';
import { isAgentqError, RetryLaterError } from '../core/errors.js';
import { classifyError } from '../core/retry.js';
import { ERROR_CODE_RE, ERROR_CODE_RULE, shownCode } from './job-env.js';

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

/**
 * How far the search for a network code goes into what a thrown error wraps: `cause` chains and
 * an `AggregateError`'s `errors` (Node's happy-eyeballs connect throws one per address tried).
 * Bounded, and a value seen before ends its branch, so a cyclic or huge graph costs little.
 */
const MAX_CAUSE_DEPTH = 8;
const MAX_CAUSES_VISITED = 64;

/**
 * The first error with a network code among those `err` wraps (itself excluded). Node's `fetch`
 * throws `TypeError: fetch failed` and puts the socket's error, with its errno code, in `cause`.
 */
function networkCause(err: unknown): { code: string; message: string } | null {
  const seen = new Set<unknown>([err]);
  let frontier: unknown[] = wrapped(err);
  for (let depth = 1; depth <= MAX_CAUSE_DEPTH && frontier.length > 0; depth++) {
    const next: unknown[] = [];
    for (const e of frontier) {
      if (typeof e !== 'object' || e === null || seen.has(e) || seen.size >= MAX_CAUSES_VISITED) continue;
      seen.add(e);
      const code = read(e, 'code');
      if (typeof code === 'string' && NETWORK_CODES.has(code)) return { code, message: messageOf(e) };
      next.push(...wrapped(e));
    }
    frontier = next;
  }
  return null;
}

/** What an error wraps: its `cause`, and the `errors` of an AggregateError. */
function wrapped(e: unknown): unknown[] {
  if (typeof e !== 'object' || e === null) return [];
  const out: unknown[] = [];
  const cause = read(e, 'cause');
  if (cause !== undefined) out.push(cause);
  const errors = read(e, 'errors');
  if (Array.isArray(errors)) out.push(...errors.slice(0, MAX_CAUSES_VISITED));
  return out;
}

/** A property of a thrown value, which may be a proxy or have a throwing getter: never throws. */
function read(e: object, name: string): unknown {
  try {
    return (e as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

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
 * - Node network error codes (`ECONNRESET`, …) become `NETWORK` (retryable), also when the
 *   error only wraps one (`fetch`'s `TypeError: fetch failed` with the code in `cause`, an
 *   `AggregateError`), as long as the error has no code or status of its own;
 * - an HTTP `status`/`statusCode` maps to `PROVIDER_429`, `PROVIDER_5XX`, `PERMISSION`, …;
 * - a `TimeoutError` becomes `TIMEOUT`;
 * - anything else is `HANDLER_FAILED` (permanent: a bug is not fixed by retrying).
 */
export function toFailure(err: unknown, workerVersion: string | null = null): Failure {
  const message = truncate(messageOf(err));
  // Read once, each through read(): a proxy or a throwing getter must not throw out of the
  // worker's ending write (the job was left running, unwritten, until its lease ran out).
  const obj = typeof err === 'object' && err !== null ? err : {};
  const e = { code: read(obj, 'code'), retryable: read(obj, 'retryable'), status: read(obj, 'status'), statusCode: read(obj, 'statusCode'), name: read(obj, 'name') };
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
  const network = networkCause(err);
  if (network) {
    // "fetch failed" alone does not say what failed: the wrapped error's message does.
    const full = network.message && !message.includes(network.message) ? `${message}: ${network.message}` : message;
    return { code: 'NETWORK', message: truncate(full), retryable: hint ?? true, workerVersion };
  }
  return { code: 'HANDLER_FAILED', message, retryable: hint ?? false, workerVersion };
}

function messageOf(err: unknown): string {
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null) {
    // An Error from another realm (a vm context) is no `instanceof Error`, and its fields are not
    // enumerable: JSON made its message "{}" in the DLQ. A plain object an SDK rejects with
    // (`{ status: 429, message }`) is told best by its message too.
    const message = read(err, 'message');
    if (typeof message === 'string' && message !== '') return message;
    const name = read(err, 'name');
    if (typeof name === 'string' && name !== '' && (err instanceof Error || isErrorObject(err))) return name;
  }
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    try {
      return String(err);
    } catch {
      return 'a value that cannot be shown (reading it threw)';
    }
  }
}

/** An Error of any realm (`[object Error]`), without trusting a proxy not to throw. */
function isErrorObject(e: object): boolean {
  try {
    return Object.prototype.toString.call(e) === '[object Error]';
  } catch {
    return false;
  }
}

/**
 * Holds a library handler's failure to the rule the shell worker holds a report to
 * (`ERROR_CODE_RE`): a thrown error's `code` is stored as the DLQ's error code, and one with
 * spaces, escapes, zero-width characters or 300 characters is a group no `--error-code` can
 * select (and prints badly). Such a code is replaced by the code of the error's HTTP status, if
 * it has one, else `HANDLER_FAILED`; the message quotes it (control characters visible); whether
 * the failure is retried does not change.
 */
export function withValidCode(failure: Failure, err: unknown): Failure {
  if (ERROR_CODE_RE.test(failure.code)) return failure;
  const obj = typeof err === 'object' && err !== null ? err : {};
  const e = { status: read(obj, 'status'), statusCode: read(obj, 'statusCode') };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const byStatus = status === undefined ? null : codeForStatus(status);
  const code = byStatus !== null && ERROR_CODE_RE.test(byStatus) ? byStatus : 'HANDLER_FAILED';
  const said = `the handler threw an error with the code "${shownCode(failure.code)}", which is not one (error codes ${ERROR_CODE_RULE})`;
  return { ...failure, code, message: truncate(`${said}: ${failure.message}`) };
}
