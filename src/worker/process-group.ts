/**
 * Ending what is left of a handler's process group. A handler runs in a group
 * of its own; when its attempt ends, anything it started and left behind
 * (`( loop ) &` in a shell script) would run on beside the job's next attempt,
 * or after a `--drain` worker has exited. So, as systemd's
 * `KillMode=control-group` does for a service: SIGTERM to the group, SIGKILL
 * after the kill grace, and the attempt ends only once the group is empty.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** How often the group is looked at while it is being ended. */
const POLL_MS = 50;
/**
 * After SIGKILL, how long to wait for the group to empty (a process stuck in the kernel cannot die
 * sooner). Under the second the worker adds to the kill grace before it detaches a stopped handler.
 */
const AFTER_KILL_MS = 500;

export class ProcessGroup {
  private termSentAt: number | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private killed = false;

  constructor(
    readonly pgid: number,
    private readonly killGraceMs: number,
  ) {}

  /** SIGTERM to the group, SIGKILL after the kill grace; only the first call does anything. */
  terminate(): void {
    if (this.termSentAt !== null) return;
    this.termSentAt = Date.now();
    this.signal('SIGTERM');
    this.killTimer = setTimeout(() => this.kill(), this.killGraceMs);
    this.killTimer.unref();
  }

  /** Resolves once no live process is left in the group (SIGTERM, then SIGKILL, as needed). */
  async end(): Promise<void> {
    if (!hasLiveMembers(this.pgid)) return this.done();
    this.terminate();
    let killedAt: number | null = null;
    while (hasLiveMembers(this.pgid)) {
      if (this.killed) killedAt ??= Date.now();
      if (killedAt !== null && Date.now() - killedAt > AFTER_KILL_MS) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return this.done();
  }

  private kill(): void {
    this.killed = true;
    this.signal('SIGKILL');
  }

  private done(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.pgid, sig);
    } catch {
      // the group is empty
    }
  }
}

/**
 * Whether a process other than a zombie is in the group. `kill(-pgid, 0)` alone counts zombies:
 * a background child the handler left is reparented to PID 1, and where PID 1 does not reap (a
 * container's process manager) it stays a zombie, which needs no ending. On Linux /proc tells
 * them apart; elsewhere the kill probe decides.
 */
export function hasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    // EPERM: a member this user may not signal (it changed its uid): still a member.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}
