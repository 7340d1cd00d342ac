/**
 * Checks of the contract's input that every backend makes the same way, before it touches its
 * store: a library caller gets the same ValidationError from SQLite, Redis and SQS (a state
 * misspelt in a filter was refused by one and matched nothing on another).
 */
import { ValidationError } from '../core/errors.js';
import { RESULT_MAX_BYTES } from '../core/model.js';
import { DEAD_REASONS, JOB_CLASSES, JOB_STATES, REASON_MAX_CHARS } from '../core/model.js';
import { STATS_ENDS_MAX_WINDOW_MS, type StatsOptions } from '../core/queue-stats.js';
import { DLQ_GREP_MAX_CHARS, LEDGER_STATUSES, MAX_PAGE_LIMIT, type ApplyRequest, type ClaimRequest, type DlqFilter, type EventQuery, type Failure, type JobFilter, type PageRequest } from './contract.js';

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
  checkObject('claim request', req);
  checkQueueArg(req.queue);
  if (typeof req.workerId !== 'string' || req.workerId === '') throw new ValidationError(`workerId must be a non-empty string, got ${shown(req.workerId)}`);
  if (req.workerVersion !== null) checkOptional('workerVersion', req.workerVersion, 'string');
  if (!Number.isInteger(req.max) || req.max < 1) throw new ValidationError(`claim max must be a positive integer, got ${req.max}`);
  checkLeaseMs(req.leaseMs);
  if (req.classes !== undefined && req.classes !== null) {
    for (const c of req.classes) checkOneOf('class', c, JOB_CLASSES);
  }
}

/** An event query's `last`: a whole number of events, 0 or more; its `signal`, an AbortSignal. */
export function checkEventQuery(query: EventQuery): void {
  checkObject('events query', query);
  checkOptional('queue', query.queue, 'name');
  if (query.jobId !== undefined) checkJobIdArg(query.jobId);
  if (query.afterSeq !== null) checkOptional('afterSeq', query.afterSeq, 'string');
  checkOptional('since', query.since, 'time');
  // (a truthy non-boolean, such as 'no', followed for ever)
  checkOptional('follow', query.follow, 'boolean');
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
  checkObject('list filter', filter);
  for (const k of ['queue', 'tenant', 'workflow'] as const) checkOptional(k, filter[k], 'name');
  checkOptional('since', filter.since, 'time');
  checkOptional('until', filter.until, 'time');
  if (filter.states !== undefined && !Array.isArray(filter.states)) throw new ValidationError(`states must be an array of job states, got ${shown(filter.states)}`);
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
 * The key of an effect about to begin, besides `checkEffectKey`: not all blank, no control
 * character. Its idempotency key (job id + ':' + key) goes to an external system, as an HTTP
 * header or an argument, and a blank key is a variable that was not set. Only beginning is held
 * to it: an effect an older version began with such a key can still be finished.
 */
export function checkNewEffectKey(key: string): void {
  checkEffectKey(key);
  if (key.trim() === '' || CONTROL_RE.test(key)) {
    throw new ValidationError(`effect key must be a string of 1-256 characters, not all blank, without control characters, got ${visible(key)}`);
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

/** The longest page cursor taken: far above any id a store hands out as `next_cursor`. */
const CURSOR_MAX_CHARS = 1024;

/**
 * A page's cursor is the `next_cursor` a previous page returned (a job id, a run id for the list of
 * runs), or null / absent for the first page: a string, which is all that is checked. Its form is
 * not: a store can hold an id no agentq made (another tool's row, a hand edit, a damaged record: the
 * malformed entries the lists show), a page ending on one returns it as its next_cursor, and a
 * listing must never stop at such a record. A string no page returned reads as a last page.
 */
export function checkCursor(cursor: unknown, kind: 'job' | 'run' | 'queue' = 'job'): void {
  if (cursor === undefined || cursor === null) return;
  if (typeof cursor === 'string' && cursor.length > 0 && cursor.length <= CURSOR_MAX_CHARS) return;
  const shown = typeof cursor === 'string' ? (cursor.length === 0 ? 'an empty string' : `of ${cursor.length} characters`) : typeof cursor;
  throw new ValidationError(`page cursor ${shown} is not one a page returned: a cursor is the next_cursor of the previous page (a ${kind === 'queue' ? 'queue name' : `${kind} id`}), or null for the first page`);
}

/*
 * Arguments of the wrong type, as a JavaScript caller can pass them: refused the same way on every
 * backend, before the store is touched. (SQLite threw a RangeError for `stats({ queue })` where
 * Redis answered, `get(42)` read as "no such job", and `events({ since: NaN })` matched nothing.)
 */

type Kind = 'string' | 'name' | 'boolean' | 'time' | 'count' | 'ms';

const KIND_RULE: Record<Kind, string> = {
  string: 'a string',
  name: 'a non-empty string',
  boolean: 'true or false',
  time: 'a time in epoch ms (a finite number)',
  count: 'a whole number, 0 or more',
  ms: 'a number of milliseconds, 0 or more',
};

function shown(v: unknown): string {
  if (typeof v === 'number' || v === null || v === undefined) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  return Array.isArray(v) ? 'an array' : typeof v;
}

function fits(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string';
    case 'name':
      return typeof v === 'string' && v !== '';
    case 'boolean':
      return typeof v === 'boolean';
    case 'time':
      return typeof v === 'number' && Number.isFinite(v);
    case 'count':
      return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    case 'ms':
      return typeof v === 'number' && Number.isFinite(v) && v >= 0;
  }
}

function checkOptional(what: string, v: unknown, kind: Kind): void {
  if (v !== undefined && !fits(v, kind)) throw new ValidationError(`${what} must be ${KIND_RULE[kind]}, got ${shown(v)}`);
}

function checkObject(what: string, v: unknown): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ValidationError(`${what} must be an object, got ${shown(v)}`);
}

/** The longest id taken (a job or run id, a lease's jobId): as long as the longest page cursor. */
const ID_MAX_CHARS = CURSOR_MAX_CHARS;

/**
 * A job id argument (get, cancel, dlqGet, dlqRaw, a lease, events' jobId) or a run id: a string,
 * of which an unknown one is simply not found. Its form is not checked (a store can hold a record
 * another tool wrote, with any id, and `dlq show` must reach it), but an empty or blank id, one
 * with a control character or a longer one than any cursor is a mistake — an unset variable, a
 * pasted line end — not an id that no job happens to have: `get('')` answered null (read as "the
 * job is gone"), and `events({ jobId: '' })` listed every job's events on Redis and none on SQLite.
 * (A record another tool wrote with such an id is still listed, sanitised, but not opened by it.)
 */
function checkIdArg(what: 'job id' | 'run id', id: unknown): void {
  if (typeof id !== 'string') throw new ValidationError(`${what} must be a string, got ${shown(id)}`);
  if (id.length === 0 || id.length > ID_MAX_CHARS || id.trim() === '' || CONTROL_RE.test(id)) {
    const example = what === 'job id' ? 'job_01JD3K…' : 'run_01JD3K…';
    const got = id.length > ID_MAX_CHARS ? `${id.length} characters` : visible(id);
    throw new ValidationError(`${what} must be 1-${ID_MAX_CHARS} characters, not all blank, without control characters (such as ${example}), got ${got}`);
  }
}

/** C0 and C1 control characters and DEL: never in an id, where they would act on a terminal. */
const CONTROL_RE = /\p{Cc}/u;

/** A refused text as the message quotes it: JSON, with the C1 controls JSON leaves raw escaped too. */
function visible(text: string): string {
  return shown(text).replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function checkJobIdArg(jobId: unknown): void {
  checkIdArg('job id', jobId);
}

export function checkRunIdArg(runId: unknown): void {
  checkIdArg('run id', runId);
}

/** A queue argument (stats, locks): a string, such as 'default'. */
export function checkQueueArg(queue: unknown): void {
  if (typeof queue !== 'string' || queue === '') throw new ValidationError(`queue must be a non-empty string (a queue name such as 'default'), got ${shown(queue)}`);
}

/** A page request: an object with a limit (checked by each backend's page check) and an optional cursor. */
export function checkPageArg(page: PageRequest): void {
  checkObject('page', page);
}

/** A page of `queues`: its limit (1..MAX_PAGE_LIMIT, so no read takes a whole queue set), checked the same way on every backend. */
export function checkQueuePage(page: PageRequest): number {
  checkPageArg(page);
  checkCursor(page.cursor, 'queue');
  const l = page.limit;
  if (!Number.isInteger(l) || l < 1 || l > MAX_PAGE_LIMIT) throw new ValidationError(`page limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${shown(l)}`);
  return l;
}

export function checkStatsOptions(opts: StatsOptions | undefined): void {
  if (opts === undefined) return;
  checkObject('stats options', opts);
  if (opts.endsWindowMs !== undefined && !(typeof opts.endsWindowMs === 'number' && Number.isFinite(opts.endsWindowMs) && opts.endsWindowMs >= 0)) {
    throw new ValidationError(`endsWindowMs must be a number of milliseconds, 0 or more, got ${shown(opts.endsWindowMs)}`);
  }
  // (job ends are kept per minute for that long: a longer window reported counts it never had)
  if (opts.endsWindowMs !== undefined && opts.endsWindowMs > STATS_ENDS_MAX_WINDOW_MS) {
    throw new ValidationError(`endsWindowMs must be at most ${STATS_ENDS_MAX_WINDOW_MS} ms (24 hours: job ends are kept that long), got ${opts.endsWindowMs}`);
  }
}

export function checkRunFilter(filter: { queue?: string }): void {
  checkObject('run filter', filter);
  checkOptional('queue', filter.queue, 'name');
}

export function checkDlqFilter(filter: DlqFilter): void {
  checkObject('DLQ filter', filter);
  for (const k of ['queue', 'tenant', 'workflow'] as const) checkOptional(k, filter[k], 'name');
  // (as `--grep` takes it: an empty one matched nothing on every backend, a long one was scanned for)
  if (filter.grep !== undefined && !(typeof filter.grep === 'string' && filter.grep.length >= 1 && filter.grep.length <= DLQ_GREP_MAX_CHARS)) {
    throw new ValidationError(`grep must be 1-${DLQ_GREP_MAX_CHARS} characters, got ${typeof filter.grep === 'string' ? `${filter.grep.length} characters` : shown(filter.grep)}`);
  }
  for (const k of ['since', 'until', 'now'] as const) checkOptional(k, filter[k], 'time');
  for (const k of ['minAttempts', 'maxAttempts'] as const) checkOptional(k, filter[k], 'count');
  checkOptional('minRemainingMs', filter.minRemainingMs, 'ms');
  for (const k of ['expired', 'partial'] as const) checkOptional(k, filter[k], 'boolean');
  if (filter.errorCodes !== undefined && !(Array.isArray(filter.errorCodes) && filter.errorCodes.every((c) => typeof c === 'string'))) {
    throw new ValidationError(`errorCodes must be an array of strings, got ${shown(filter.errorCodes)}`);
  }
  if (filter.reason !== undefined) checkOneOf('reason', filter.reason, DEAD_REASONS);
}

/**
 * A job's result: a string or null, of at most `RESULT_MAX_BYTES` (16 MiB, the most `agentq worker
 * --max-result-bytes` keeps). The library stored any size (a 20 MB result went into the job record).
 */
export function checkJobResult(result: unknown): void {
  if (result !== null && typeof result !== 'string') throw new ValidationError(`job result must be a string or null, got ${shown(result)}`);
  if (result === null) return;
  // (a string's UTF-8 bytes are at most 3 per UTF-16 unit: most results need no count)
  if (result.length * 3 <= RESULT_MAX_BYTES) return;
  const bytes = Buffer.byteLength(result);
  if (bytes > RESULT_MAX_BYTES) {
    throw new ValidationError(`job result is ${bytes} bytes; the limit is ${RESULT_MAX_BYTES} bytes (16 MiB)`, 'Store large output elsewhere (a file, an object store) and return a reference to it.');
  }
}

/** A lease as `claim` returned it (or its `{ jobId, fence }`): a wrong shape threw TypeErrors, or read as a lost lease. */
export function checkLeaseRef(lease: unknown): void {
  const o = (typeof lease === 'object' && lease !== null ? lease : {}) as Record<string, unknown>;
  if (typeof o.jobId !== 'string' || !Number.isSafeInteger(o.fence)) {
    throw new ValidationError(`lease must be an object with a string jobId and a whole-number fence (a Lease from claim), got ${lease === null || typeof lease !== 'object' ? shown(lease) : `{ jobId: ${shown(o.jobId)}, fence: ${shown(o.fence)} }`}`);
  }
  checkJobIdArg(o.jobId);
}

export function checkLeaseRefs(leases: unknown): void {
  if (!Array.isArray(leases)) throw new ValidationError(`leases must be an array of leases, got ${shown(leases)}`);
  for (const l of leases) checkLeaseRef(l);
}

/**
 * A failure's code is a string of 1-128 characters: fail() kept { code: 1 } as the job's
 * last_error, a number where every reader expects a code. Its characters are not checked here:
 * the worker classifies what handlers throw into codes of the rule (`HandlerError`, `agentq job
 * error`), stores hold codes written by others anyway (older versions, SQS custody), and every
 * reader sanitises a code where it shows it.
 */
/** The longest failure message a store keeps (64 Ki characters). */
const FAILURE_MESSAGE_MAX_CHARS = 64 * 1024;

export function checkFailure(failure: Failure): void {
  checkObject('failure', failure);
  if (typeof failure.code !== 'string' || failure.code.length === 0 || failure.code.length > 128) {
    throw new ValidationError(`failure code must be a string of 1-128 characters (e.g. PROVIDER_429), got ${shown(failure.code)}`);
  }
  if (typeof failure.message !== 'string') throw new ValidationError(`failure message must be a string, got ${shown(failure.message)}`);
  // (the worker keeps 4,000 characters of what a handler says; a direct caller stored any size,
  // which every later read of the job and its DLQ entry then carried)
  if (failure.message.length > FAILURE_MESSAGE_MAX_CHARS) {
    throw new ValidationError(`failure message must be at most ${FAILURE_MESSAGE_MAX_CHARS} characters, got ${failure.message.length}`);
  }
  if (typeof failure.retryable !== 'boolean') throw new ValidationError(`failure retryable must be true or false, got ${shown(failure.retryable)}`);
  if (failure.workerVersion !== null) checkOptional('workerVersion', failure.workerVersion, 'string');
}

export function checkLockHolder(holder: unknown): void {
  checkObject('lock holder', holder);
}

export function checkRunRecord(run: unknown, items: unknown): void {
  checkObject('run', run);
  if (!Array.isArray(items)) throw new ValidationError(`run items must be an array, got ${shown(items)}`);
}

export function checkApplyRequest(req: ApplyRequest): void {
  checkObject('apply request', req);
  checkRunIdArg(req.runId);
  if (!Array.isArray(req.jobIds) || !req.jobIds.every((id) => typeof id === 'string')) throw new ValidationError(`apply request jobIds must be an array of job ids, got ${shown(req.jobIds)}`);
  checkOptional('now', req.now, 'time');
}

export function checkLedgerStatus(status: unknown): void {
  if (status !== undefined) checkOneOf('ledger status', status, LEDGER_STATUSES);
}
