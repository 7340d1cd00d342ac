/**
 * Ending what is left of a handler's processes. A handler runs in a group of its own; when its
 * attempt ends, anything it started and left behind (`( loop ) &` in a shell script) would run on
 * beside the job's next attempt, or after a `--drain` worker has exited. So, as systemd's
 * `KillMode=control-group` does for a service: SIGTERM to what is left, SIGKILL after the kill
 * grace, and the attempt ends only once nothing of it is left.
 *
 * What belongs to an attempt, on Linux (where /proc lists processes):
 * - the handler's session. It is started in one of its own (spawn's `detached`: setsid), whose id
 *   is its pid, as is its group's. A command it runs may make a process group of its own inside
 *   that session — GNU `timeout` does (`timeout 300 claude -p …`), as does a shell with job
 *   control — so every group of the session is signalled and waited for;
 * - the session of any process carrying the attempt's mark in its environment (the handler's
 *   `AGENTQ_REPORT_FILE=…`, a path unique to the worker and the attempt, which every descendant
 *   inherits). A process that leaves the session (`setsid`, a daemon that detaches, a browser
 *   node starts `detached`) is followed so; only one that also clears its environment (`env -i`)
 *   is not. Only a process started after the handler can be one: the environment of no other is read.
 * Elsewhere the kill probe on the handler's group decides, alone.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** How often the known members are looked at while an attempt is being ended. */
const POLL_MS = 50;
/**
 * After SIGKILL, how long to wait for the group to empty (a process stuck in the kernel cannot die
 * sooner). Under the second the worker adds to the kill grace before it detaches a stopped handler.
 */
const AFTER_KILL_MS = 500;

/** Which processes are one attempt's: its handler's session, and the processes carrying its mark. */
export interface Attempt {
  /** The handler's pid: its session's and its group's id as well. */
  readonly sid: number;
  /** The `NAME=value` in the environment of the attempt's processes, or null to follow the session alone. */
  readonly mark: string | null;
  /** The handler's start time (clock ticks after boot, /proc/PID/stat), or null where unknown. */
  readonly startTicks: number | null;
}

export class ProcessGroup implements Attempt {
  readonly startTicks: number | null;
  private termSentAt: number | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private killed = false;

  constructor(
    readonly sid: number,
    private readonly killGraceMs: number,
    readonly mark: string | null = null,
  ) {
    // Read at once, while the handler is there (alive, or a zombie not yet reaped by Node).
    this.startTicks = procStat(sid)?.start ?? null;
  }

  /** SIGTERM to the attempt's process groups, SIGKILL after the kill grace; only the first call does anything. */
  terminate(): void {
    if (this.termSentAt !== null) return;
    this.termSentAt = Date.now();
    signalAttempts([this], 'SIGTERM');
    this.killTimer = setTimeout(() => this.kill(), this.killGraceMs);
    this.killTimer.unref();
  }

  /**
   * Resolves once no live process of the attempt is left (SIGTERM, then SIGKILL, as needed). The
   * whole of /proc is read only to find the members (at the start, and again to confirm that none
   * is left once the known ones are gone); while they run, only their own entries are looked at:
   * a read of every process every 50 ms held a core for the whole kill grace on a busy host.
   */
  async end(): Promise<void> {
    let members = liveMembers(this);
    if (members !== null && members.length === 0) return this.done();
    this.terminate();
    let killedAt: number | null = null;
    for (;;) {
      if (this.killed) killedAt ??= Date.now();
      if (killedAt !== null && Date.now() - killedAt > AFTER_KILL_MS) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
      if (members === null) {
        // No /proc: the probe of the handler's group is all there is.
        if (probeGroup(this.sid) === 'empty') break;
        continue;
      }
      members = members.filter(stillRunning);
      if (members.length === 0) {
        members = liveMembers(this) ?? [];
        if (members.length === 0) break;
      }
    }
    return this.done();
  }

  private kill(): void {
    this.killed = true;
    signalAttempts([this], 'SIGKILL');
  }

  private done(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
  }
}

/**
 * Sends `sig` to every process group of the attempts (each handler's own group first), with one
 * read of /proc for them all: a worker leaving at once ends every running handler's processes.
 */
export function signalAttempts(attempts: Iterable<Attempt>, sig: NodeJS.Signals): void {
  const list = [...attempts];
  if (list.length === 0) return;
  const procs = procStats();
  // (one read of each environment for all the attempts: a worker leaving at once may have many)
  const environs = new Map<number, string | null>();
  for (const a of list) {
    const groups = new Set([a.sid]);
    for (const p of procs === null ? [] : membersOf(a, procs, environs)) groups.add(p.pgrp);
    for (const group of groups) {
      try {
        process.kill(-group, sig);
      } catch {
        // the group is empty
      }
    }
  }
}

/** A process as /proc/PID/stat gives it: the fields used here. */
interface Proc {
  pid: number;
  state: string;
  pgrp: number;
  sid: number;
  /** Start time, in clock ticks after boot: with the pid, it names one process (a pid is reused). */
  start: number;
}

/**
 * The live processes of the attempt (not zombies), or null where there is no /proc. A zombie needs
 * no ending: a background child the handler left is reparented to PID 1, and where PID 1 does not
 * reap (a container's process manager) it stays a zombie. (A file read per process on the machine,
 * tens of microseconds each; read asynchronously, the same took several times as long and held
 * the event loop longer still.)
 */
export function liveMembers(a: Attempt): Proc[] | null {
  const procs = procStats();
  if (procs === null) return probeGroup(a.sid) === 'empty' ? [] : null;
  const members = membersOf(a, procs);
  // A member whose /proc entry this user cannot read still counts, as the probe finds it: such a
  // group is then watched by the probe alone (a pid of 0 in `stillRunning`).
  if (members.length === 0 && probeGroup(a.sid) === 'other-user') return [{ pid: 0, state: 'S', pgrp: a.sid, sid: a.sid, start: 0 }];
  return members;
}

/** The processes of `procs` that are the attempt's (see the file comment), zombies left out. */
function membersOf(a: Attempt, procs: readonly Proc[], environs = new Map<number, string | null>()): Proc[] {
  const sessions = new Set([a.sid]);
  if (a.mark !== null && a.startTicks !== null) {
    const needle = `\0${a.mark}\0`;
    for (const p of procs) {
      // sid 0: a kernel thread. Only what started after the handler may be its descendant.
      if (p.sid === 0 || sessions.has(p.sid) || p.start < a.startTicks || !alive(p)) continue;
      if (!environs.has(p.pid)) environs.set(p.pid, environ(p.pid));
      if (environs.get(p.pid)?.includes(needle)) sessions.add(p.sid);
    }
  }
  return procs.filter((p) => sessions.has(p.sid) && alive(p));
}

function alive(p: Proc): boolean {
  return p.state !== 'Z' && p.state !== 'X';
}

/** Whether the process is still there as it was (the same start time: not its pid reused), and not a zombie. */
function stillRunning(p: Proc): boolean {
  if (p.pid === 0) return probeGroup(p.pgrp) !== 'empty';
  const now = procStat(p.pid);
  return now !== null && now.start === p.start && alive(now);
}

/** A process's environment as /proc gives it (`\0` between entries, one before the first), or null when it cannot be read. */
function environ(pid: number): string | null {
  try {
    return `\0${readFileSync(`/proc/${pid}/environ`, 'utf8')}`;
  } catch {
    return null; // gone, or another user's
  }
}

/** Every process, or null where there is no /proc. */
function procStats(): Proc[] | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return null;
  }
  const out: Proc[] = [];
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const p = procStat(Number(pid));
    if (p !== null) out.push(p);
  }
  return out;
}

function procStat(pid: number): Proc | null {
  let stat: string;
  try {
    // (utf8: Node reads a whole file fastest so; 'latin1' took half as long again per look at /proc)
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited meanwhile
  }
  // "pid (comm) state ppid pgrp session … starttime(22nd) …": comm may hold spaces and
  // parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0] ?? '', pgrp: Number(fields[2]), sid: Number(fields[3]), start: Number(fields[19]) };
}

/**
 * What to say when the worker is PID 1 (a container started without an init): what a handler
 * leaves is reparented to PID 1 when its parent exits, ended there, and then never reaped, since
 * Node waits only for the children it started: each such process keeps its pid as a zombie until
 * the container stops, and a long-running worker runs out of them (every spawn then fails).
 */
export function pid1Warning(pid: number = process.pid): string | null {
  if (pid !== 1) return null;
  return 'this worker is PID 1 (a container without an init): the processes its handlers leave behind are never reaped and each keeps a pid until the container stops; run it under an init (docker run --init, tini, dumb-init; Kubernetes: shareProcessNamespace or an init in the image)';
}

/** Whether the group has members: `kill(-pgid, 0)`, which counts zombies too. */
function probeGroup(pgid: number): 'members' | 'other-user' | 'empty' {
  try {
    process.kill(-pgid, 0);
    return 'members';
  } catch (e) {
    // EPERM: a member this user may not signal (it changed its uid): still a member.
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'other-user' : 'empty';
  }
}
