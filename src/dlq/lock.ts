/**
 * The per-queue bulk-action lock: two operators must not redrive (or purge)
 * the same DLQ at once. The lock records who holds it, so a refusal can say
 * "held by alice@host pid 4242 since 03:12" instead of just "busy".
 *
 * A lock outlives a killed process. It may be broken only when that is known
 * to be safe: the holder ran on this host and its pid is gone. A holder on
 * another host cannot be checked from here and needs `--force` as well.
 */
import { readFileSync } from 'node:fs';
import type { Backend, LockHolder } from '../backend/contract.js';
import { RetryLaterError, ValidationError } from '../core/errors.js';

export interface Identity {
  user: string;
  host: string;
  pid: number;
  /** When this process started (`processStartTime`), recorded in the lock: a reused pid is told apart. */
  pidStart?: string | null;
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

/** When a process started, as a token to compare (null when it cannot be told, e.g. not Linux). Injected in tests. */
export type StartTimeProbe = (pid: number) => string | null;

/**
 * Linux: the boot id and field 22 of /proc/PID/stat (start time in clock ticks since boot). A pid
 * is reused once its process is gone; the same pid with another start time is another process.
 * Elsewhere (or without /proc) null: the pid alone is checked, as before.
 */
export const processStartTime: StartTimeProbe = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or ")": count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19];
    if (ticks === undefined || !/^\d+$/.test(ticks)) return null;
    let boot = '';
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      // no boot id: the ticks alone
    }
    return boot ? `${boot}/${ticks}` : ticks;
  } catch {
    return null;
  }
};

export function holderFor(id: Identity, runId: string | null, at: string): LockHolder {
  return {
    owner: `${id.user}@${id.host} pid ${id.pid}`,
    host: id.host,
    pid: id.pid,
    ...(id.pidStart ? { pid_start: id.pidStart } : {}),
    run_id: runId,
    acquired_at: at,
  };
}

export function describeHolder(h: LockHolder): string {
  return `${h.owner}${h.run_id ? ` (run ${h.run_id})` : ''} since ${h.acquired_at}`;
}

export type HolderLiveness = 'alive' | 'dead' | 'unknown';

export function holderLiveness(h: LockHolder, me: Identity, probe: ProcessProbe, startOf: StartTimeProbe = processStartTime): HolderLiveness {
  if (h.host !== me.host) return 'unknown';
  if (h.pid === me.pid) return h.pid_start && me.pidStart && h.pid_start !== me.pidStart ? 'dead' : 'alive';
  if (!probe(h.pid)) return 'dead';
  // The pid runs, but if it started at another time than the holder recorded it is a reused pid:
  // the holder is gone. (A lock without pid_start, or a process whose start cannot be read: alive.)
  const started = h.pid_start ? startOf(h.pid) : null;
  return started !== null && started !== h.pid_start ? 'dead' : 'alive';
}

export interface LockOptions {
  /** `--break-lock`: remove a dead holder's lock first. */
  breakLock?: boolean;
  /**
   * With `--break-lock`: also break a lock held from another host (its pid cannot be checked), or
   * one whose pid is running here (after a warning): for when that process is known not to be a
   * bulk action, e.g. a pid of another machine's or container's pid namespace.
   */
  force?: boolean;
  /** Where the warning of a forced break of a live holder's lock goes (stderr). */
  warn?: (message: string) => void;
  startOf?: StartTimeProbe;
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
  const liveness = holderLiveness(held, me, probe, o.startOf);
  const sameRunLeftover = o.resumingRunId != null && held.run_id === o.resumingRunId && liveness === 'dead';
  // A process killed between taking the lock and creating its run left a lock that names a run that
  // does not exist: nothing was planned or moved under it, and no --resume can take it over. Such a
  // lock of a dead process on this host is broken without being asked.
  const runlessLeftover = liveness === 'dead' && held.run_id !== null && (await backend.getRun(held.run_id)) === null;
  if (o.breakLock || sameRunLeftover || runlessLeftover) {
    if (liveness === 'alive' && !(o.breakLock && o.force)) {
      throw new RetryLaterError(
        `the ${queue} DLQ lock is held by ${describeHolder(held)}, and that process is still running: not breaking it`,
        'LOCK_HELD',
        'Wait for it to finish, or stop it first. If you know pid ' + held.pid + ' is not that bulk action (a pid reused, or of another pid namespace), --break-lock --force breaks the lock anyway.',
      );
    }
    if (liveness === 'alive') {
      o.warn?.(
        `breaking the ${queue} DLQ lock of ${describeHolder(held)} although pid ${held.pid} is running on this host (--break-lock --force): if that process is the bulk action, two now act on this queue`,
      );
    }
    if (liveness === 'unknown' && !o.force) {
      throw new ValidationError(
        `the ${queue} DLQ lock is held from host ${held.host} (${describeHolder(held)}); its process cannot be checked from here`,
        'Check that process is gone, then add --force to --break-lock.',
        'LOCK_REMOTE',
      );
    }
    // Only the holder judged above: another operator may have broken it meanwhile and taken the queue.
    await backend.breakLock(queue, held);
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
