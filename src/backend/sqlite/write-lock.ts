/**
 * Takes the store's write lock (`BEGIN IMMEDIATE`) for a write transaction, looking for it every
 * millisecond while another process holds it, up to the busy timeout.
 *
 * SQLite's own busy handler (`busy_timeout`) sleeps between its looks 1, 2, 5, 10, 15, 20, 25, 25,
 * 25, 50, 50 ms and then 100 ms each: once a wait passes a third of a second it looks ten times a
 * second. A bulk writer in another process (`agentq prune`, `submit --file`, a redrive) commits
 * short transactions back to back and leaves the lock free only for the moment between two of
 * them, so a worker's claim that looks every 100 ms mostly finds it taken again: measured, claims
 * waited 330 ms, 530 ms, 630 ms, 1 s (the busy handler's steps exactly) in BEGIN while a prune
 * committed batches of a few milliseconds (BENCHMARKS.md, "Prune"). Looking every millisecond
 * takes the lock in one of the first gaps.
 *
 * The wait is as long as before (the busy timeout), ends as before (SQLITE_BUSY, which storeError
 * makes a RetryLaterError), and, as before, holds this process (better-sqlite3 is synchronous). A
 * look is a lock attempt that fails at once: microseconds.
 */

/** How long a write waiting for the lock sleeps between two looks. */
export const LOOK_EVERY_MS = 1;

/** The clock and the sleep of a wait (injected by tests). */
export interface LockWait {
  now(): number;
  sleep(ms: number): void;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** A synchronous sleep: the caller is inside a synchronous SQLite call path, as the busy handler is. */
export const realLockWait: LockWait = {
  now: () => performance.now(),
  sleep: (ms) => void Atomics.wait(sleeper, 0, 0, ms),
};

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `begin` (a `BEGIN IMMEDIATE` on a connection whose own busy timeout is 0, so that it fails
 * at once when the lock is taken) until it succeeds, a look every LOOK_EVERY_MS, for up to
 * `timeoutMs`; then throws its last SQLITE_BUSY. Any other error is thrown at once.
 */
export function takeWriteLock(begin: () => void, timeoutMs: number, wait: LockWait = realLockWait): void {
  const deadline = wait.now() + timeoutMs;
  for (;;) {
    try {
      begin();
      return;
    } catch (e) {
      if (!isBusy(e) || wait.now() >= deadline) throw e;
    }
    wait.sleep(LOOK_EVERY_MS);
  }
}
