/**
 * `ctx.effect(key, fn)`: the guard around an irreversible action.
 *
 * The ledger lives in the store, next to the job, and every write is fenced by
 * the lease. The protocol is: record `started` → call `fn(idempotencyKey)` →
 * record `done` with its result. A crash between the call and `done` leaves a
 * `started` record; the next attempt calls `fn` again with the same
 * idempotency key, which is why the external system must deduplicate on it.
 * A `done` record is never acted on again: its result is returned instead.
 */
import type { Backend, LeaseRef } from '../backend/contract.js';

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
  await backend.finishEffect(lease, key, result === undefined ? null : result);
  return result;
}
