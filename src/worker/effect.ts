/**
 * `ctx.effect(key, fn)`: the guard around an irreversible action.
 *
 * The ledger lives in the store, next to the job, and every write is fenced by
 * the lease. The protocol is: record `started` → call `fn(idempotencyKey)` →
 * record `done` with its result. A crash between the call and `done` leaves a
 * `started` record; the next attempt calls `fn` again with the same
 * idempotency key, which is why the external system must deduplicate on it.
 * A `done` record is never acted on again: its result is returned instead.
 * Results are kept as JSON, so a replayed one is what JSON makes of it (a
 * `Date` comes back as its ISO string, `undefined` as null).
 */
import type { Backend, LeaseRef } from '../backend/contract.js';
import { STORED_JSON_MAX_BYTES, storedJson } from '../core/stored-json.js';
import { HandlerError } from './handler-error.js';

/**
 * The effects of one attempt. The store cannot tell a `started` record left by a dead attempt
 * from one this attempt is still running (both say `started`), so two calls of the same key
 * at once in one attempt (`Promise.all` over tool calls) would both call `fn`. Here a key in
 * flight is remembered: a second call waits for the first and gets its result, or its error.
 * Once the first call has settled the key is forgotten, and the store's record decides again
 * (a `done` one is replayed; a `started` one, whose call failed, is called again).
 */
export class AttemptEffects {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly backend: Backend,
    private readonly lease: LeaseRef,
    private readonly signal: AbortSignal,
  ) {}

  run<T>(key: string, fn: (idempotencyKey: string) => T | Promise<T>): Promise<T> {
    const first = this.inFlight.get(key);
    if (first) return first as Promise<T>;
    const call = runEffect(this.backend, this.lease, key, fn, this.signal);
    this.inFlight.set(key, call);
    const forget = (): void => {
      if (this.inFlight.get(key) === call) this.inFlight.delete(key);
    };
    // (then with both handlers, not finally: a derived promise of a rejected call would be unhandled)
    call.then(forget, forget);
    return call;
  }
}

export async function runEffect<T>(
  backend: Backend,
  lease: LeaseRef,
  key: string,
  fn: (idempotencyKey: string) => T | Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  // A cancelled or expired job starts no new tool calls.
  signal.throwIfAborted();
  const record = await backend.beginEffect(lease, key);
  if (record.status === 'done') return record.result as T;
  signal.throwIfAborted();
  const result = await fn(record.idempotency_key);
  let why: string | null = null;
  try {
    storedJson(result, 'result', STORED_JSON_MAX_BYTES);
  } catch (e) {
    why = (e as Error).message;
  }
  if (why !== null) {
    // The action has happened: left `started`, a redrive or retry would run it again. It is
    // recorded done (its result lost), then the attempt fails for good: returning a result that
    // cannot be kept is a bug in the handler, as it is for the handler's own result.
    await backend.finishEffect(lease, key, null);
    throw new HandlerError(
      'HANDLER_FAILED',
      `effect ${JSON.stringify(key)} ran, but its ${why}: it is recorded as done with result null and will not run again`,
      { retryable: false },
    );
  }
  await backend.finishEffect(lease, key, result === undefined ? null : result);
  return result;
}
