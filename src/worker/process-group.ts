/**
 * Ending what is left of a handler's process group. A handler runs in a group
 * of its own; when its attempt ends, anything it started and left behind
 * (`( loop ) &` in a shell script) would run on beside the job's next attempt,
 * or after a `--drain` worker has exited. So, as systemd's
 * `KillMode=control-group` does for a service: SIGTERM to the group, SIGKILL
 * after the kill grace, and the attempt ends only once the group is empty.
 *
 * The handler is started in a session of its own too (spawn's `detached`: setsid), whose id is
 * its pid, as is its group's. A command it runs may make a process group of its own inside that
 * session — GNU `timeout` does (`timeout 300 claude -p …`), as does a shell with job control — and
 * a signal to the handler's group alone missed it: the agent ran on after a cancel. So every
 * group of the session is signalled and waited for (on Linux, where /proc lists them). Only a
 * process that leaves the session on purpose (`setsid`, a daemon) is not followed.
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

  /** SIGTERM to the session's groups, SIGKILL after the kill grace; only the first call does anything. */
  terminate(): void {
    if (this.termSentAt !== null) return;
    this.termSentAt = Date.now();
    this.signal('SIGTERM');
    this.killTimer = setTimeout(() => this.kill(), this.killGraceMs);
    this.killTimer.unref();
  }

  /** Resolves once no live process is left in the session (SIGTERM, then SIGKILL, as needed). */
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
    signalSessions([this.pgid], sig);
  }
}

/**
 * Sends `sig` to every process group of the sessions `sids` (each handler's own group first), with
 * one read of /proc for them all: a worker leaving at once ends every running handler's session.
 */
export function signalSessions(sids: Iterable<number>, sig: NodeJS.Signals): void {
  const wanted = new Set(sids);
  if (wanted.size === 0) return;
  const found = groupsBySession(wanted, procStats());
  for (const sid of wanted) {
    for (const group of new Set([sid, ...(found?.get(sid) ?? [])])) {
      try {
        process.kill(-group, sig);
      } catch {
        // the group is empty
      }
    }
  }
}

/**
 * Whether a process other than a zombie is in the session `sid` (the handler's pid: its group's
 * id as well). A zombie needs no ending: a background child the handler left is reparented to
 * PID 1, and where PID 1 does not reap (a container's process manager) it stays a zombie.
 */
export function hasLiveMembers(sid: number): boolean {
  return liveGroupsOf(sid).length > 0;
}

/**
 * The process groups of the session `sid` with a live member (not a zombie). On Linux /proc
 * lists them; elsewhere the kill probe on the session leader's group decides, alone. (A file read
 * per process on the machine, tens of microseconds each, once as each handler ends; read
 * asynchronously, the same took several times as long and held the event loop longer still.)
 */
export function liveGroupsOf(sid: number): number[] {
  const stats = procStats();
  const probe = probeLeaderGroup(sid);
  if (stats === null) return probe === 'empty' ? [] : [sid];
  // (a member whose /proc entry this user cannot read still counts, as the probe found it)
  const groups = groupsBySession(new Set([sid]), stats).get(sid) ?? new Set<number>();
  if (probe === 'other-user') groups.add(sid);
  return [...groups];
}

/** The /proc/PID/stat lines of every process, or null where there is no /proc. */
function procStats(): Array<string | null> | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return null;
  }
  return pids
    .filter((p) => /^\d+$/.test(p))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        return null; // exited meanwhile
      }
    });
}

/** For each wanted session, the process groups in it with a live member (not a zombie). */
function groupsBySession(sids: ReadonlySet<number>, stats: ReadonlyArray<string | null> | null): Map<number, Set<number>> {
  const out = new Map<number, Set<number>>();
  for (const stat of stats ?? []) {
    if (stat === null) continue;
    // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const sid = Number(fields[3]);
    if (!sids.has(sid) || fields[0] === 'Z' || fields[0] === 'X') continue;
    const groups = out.get(sid) ?? new Set<number>();
    groups.add(Number(fields[2]));
    out.set(sid, groups);
  }
  return out;
}

/** Whether the session leader's own group has members: `kill(-sid, 0)`, which counts zombies too. */
function probeLeaderGroup(sid: number): 'members' | 'other-user' | 'empty' {
  try {
    process.kill(-sid, 0);
    return 'members';
  } catch (e) {
    // EPERM: a member this user may not signal (it changed its uid): still a member.
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'other-user' : 'empty';
  }
}
