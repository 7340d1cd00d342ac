/**
 * Checks of the contract's input that every backend makes the same way, before it touches its
 * store: a library caller gets the same ValidationError from SQLite, Redis and SQS (a state
 * misspelt in a filter was refused by one and matched nothing on another).
 */
import { ValidationError } from '../core/errors.js';
import { JOB_CLASSES, JOB_STATES, REASON_MAX_CHARS } from '../core/model.js';
import type { ClaimRequest, EventQuery, JobFilter } from './contract.js';

/**
 * The longest lease a claim or heartbeat may ask for: 2^31 - 1 ms (about 24.8 days), the
 * longest timer Node keeps, which is also the worker's own limit. A longer lease is a mistake
 * (a unit mixed up): the job would look taken for years after its worker died.
 */
export const MAX_LEASE_MS = 2_147_483_647;

export function checkLeaseMs(leaseMs: number): void {
  if (typeof leaseMs !== 'number' || !(leaseMs > 0)) throw new ValidationError(`lease must be positive, got ${leaseMs} ms`);
  if (leaseMs > MAX_LEASE_MS) throw new ValidationError(`lease must be at most ${MAX_LEASE_MS} ms (about 24.8 days), got ${leaseMs} ms`);
}

export function checkClaim(req: ClaimRequest): void {
  if (!Number.isInteger(req.max) || req.max < 1) throw new ValidationError(`claim max must be a positive integer, got ${req.max}`);
  checkLeaseMs(req.leaseMs);
  if (req.classes !== undefined && req.classes !== null) {
    for (const c of req.classes) checkOneOf('class', c, JOB_CLASSES);
  }
}

/** An event query's `last`: a whole number of events, 0 or more; its `signal`, an AbortSignal. */
export function checkEventQuery(query: EventQuery): void {
  const n = query.last;
  if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) throw new ValidationError(`events last must be a whole number of events (0 or more), got ${n}`);
  checkSignal(query.signal);
}

/**
 * A caller's `signal` is an AbortSignal (of any realm, or a polyfill: what is called on it). The
 * AbortController itself in its place (from JavaScript) threw a TypeError, then another from a
 * timer, outside any promise, which ended the process.
 */
export function checkSignal(signal: unknown): void {
  if (signal === undefined) return;
  const o = (typeof signal === 'object' && signal !== null ? signal : {}) as Record<string, unknown>;
  if (typeof o.aborted === 'boolean' && typeof o.addEventListener === 'function' && typeof o.removeEventListener === 'function') return;
  const got = signal === null ? 'null' : signal instanceof AbortController ? 'an AbortController' : typeof signal;
  throw new ValidationError(`signal must be an AbortSignal (a controller's .signal), got ${got}`);
}

export function checkJobFilter(filter: JobFilter): void {
  if (filter.states !== undefined) for (const s of filter.states) checkOneOf('state', s, JOB_STATES);
  if (filter.class !== undefined) checkOneOf('class', filter.class, JOB_CLASSES);
}

/**
 * An effect key: a string of 1-256 characters, on every backend. (Redis checked only the length,
 * so a key given as a number was stored as its text and `null` failed with a TypeError.)
 */
export function checkEffectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 256) {
    throw new ValidationError(`effect key must be a string of 1-256 characters, got ${typeof key === 'string' ? `${key.length} characters` : JSON.stringify(key) ?? typeof key}`);
  }
}

/**
 * A cancel's reason, as `agentq cancel --reason` takes it: null (or left out), or 1-500 characters.
 * The library took anything: SQLite stored a number or an object as the job's cancel_reason (Redis
 * its text, "[object Object]"), and a megabyte of text went into the job record.
 */
export function checkCancelReason(reason: string | null | undefined): void {
  if (reason === null || reason === undefined) return;
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > REASON_MAX_CHARS) {
    const got = typeof reason === 'string' ? `${reason.length} characters` : (JSON.stringify(reason) ?? typeof reason).slice(0, 80);
    throw new ValidationError(`cancel reason must be null or 1-${REASON_MAX_CHARS} characters, got ${got}`);
  }
}

function checkOneOf(what: string, value: unknown, allowed: readonly string[]): void {
  if (typeof value !== 'string' || !allowed.includes(value)) throw new ValidationError(`${what} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}
