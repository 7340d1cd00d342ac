/**
 * The per-queue bulk-action lock: two operators must not redrive (or purge)
 * the same DLQ at once. The lock records who holds it, so a refusal can say
 * "held by alice@host pid 4242 since 03:12" instead of just "busy".
 *
 * A lock outlives a killed process. It may be broken only when that is known
 * to be safe: the holder ran on this host and its pid is gone. A holder on
 * another host cannot be checked from here and needs `--force` as well.
 */
import type { Backend, LockHolder } from '../backend/contract.js';
import { RetryLaterError, ValidationError } from '../core/errors.js';

export interface Identity {
  user: string;
  host: string;
  pid: number;
  /** The config context name, for the audit. */
  context: string | null;
}

/** Is this pid alive on this host? Injected so tests and the TUI need no real processes. */
export type ProcessProbe = (pid: number) => boolean;

export const probeProcess: ProcessProbe = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else — alive.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export function holderFor(id: Identity, runId: string | null, at: string): LockHolder {
  return { owner: `${id.user}@${id.host} pid ${id.pid}`, host: id.host, pid: id.pid, run_id: runId, acquired_at: at };
}

export function describeHolder(h: LockHolder): string {
  return `${h.owner}${h.run_id ? ` (run ${h.run_id})` : ''} since ${h.acquired_at}`;
}

export type HolderLiveness = 'alive' | 'dead' | 'unknown';

export function holderLiveness(h: LockHolder, me: Identity, probe: ProcessProbe): HolderLiveness {
  if (h.host !== me.host) return 'unknown';
  if (h.pid === me.pid) return 'alive';
  return probe(h.pid) ? 'alive' : 'dead';
}

export interface LockOptions {
  /** `--break-lock`: remove a dead holder's lock first. */
  breakLock?: boolean;
  /** With `--break-lock`: also break a lock held from another host (its pid cannot be checked). */
  force?: boolean;
  /** Resuming this run: a lock left by this same run's killed process is taken over without `--break-lock`. */
  resumingRunId?: string | null;
  probe?: ProcessProbe;
}

/** Takes the queue's lock or throws `RetryLaterError` (exit 75) naming the holder. */
export async function takeQueueLock(
  backend: Pick<Backend, 'acquireLock' | 'readLock' | 'breakLock' | 'getRun'>,
  queue: string,
  me: Identity,
  runId: string,
  now: string,
  o: LockOptions = {},
): Promise<void> {
  const probe = o.probe ?? probeProcess;
  const holder = holderFor(me, runId, now);
  const first = await backend.acquireLock(queue, holder);
  if (first.acquired) return;
  const held = first.holder;
  const liveness = holderLiveness(held, me, probe);
  const sameRunLeftover = o.resumingRunId != null && held.run_id === o.resumingRunId && liveness === 'dead';
  // A process killed between taking the lock and creating its run left a lock that names a run that
  // does not exist: nothing was planned or moved under it, and no --resume can take it over. Such a
  // lock of a dead process on this host is broken without being asked.
  const runlessLeftover = liveness === 'dead' && held.run_id !== null && (await backend.getRun(held.run_id)) === null;
  if (o.breakLock || sameRunLeftover || runlessLeftover) {
    if (liveness === 'alive') {
      throw new RetryLaterError(
        `the ${queue} DLQ lock is held by ${describeHolder(held)}, and that process is still running: not breaking it`,
        'LOCK_HELD',
        'Wait for it to finish, or stop it first.',
      );
    }
    if (liveness === 'unknown' && !o.force) {
      throw new ValidationError(
        `the ${queue} DLQ lock is held from host ${held.host} (${describeHolder(held)}); its process cannot be checked from here`,
        'Check that process is gone, then add --force to --break-lock.',
        'LOCK_REMOTE',
      );
    }
    await backend.breakLock(queue);
    const second = await backend.acquireLock(queue, holder);
    if (second.acquired) return;
    throw lockHeld(queue, second.holder);
  }
  throw lockHeld(queue, held, liveness === 'dead');
}

function lockHeld(queue: string, h: LockHolder, dead = false): RetryLaterError {
  return new RetryLaterError(
    `another bulk action holds the ${queue} DLQ lock: ${describeHolder(h)}`,
    'LOCK_HELD',
    dead
      ? `That process (pid ${h.pid}) is no longer running on this host: ${h.run_id ? `resume its run with --resume ${h.run_id}, or ` : ''}break the lock with --break-lock.`
      : 'Wait for it to finish; if its process is dead, break the lock with --break-lock.',
  );
}
