/**
 * Ending an attempt's processes (`ProcessGroup`), against real processes. /proc is read for real;
 * the reads of its entries are only counted, to hold the cost of ending a stubborn group down.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { pollUntil } from '../support/poll.js';

/** Reads of a /proc/PID/stat file, one per process on the machine in a full look at /proc. */
const statReads = { count: 0 };
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    if (/^\/proc\/\d+\/stat$/.test(String(path))) statReads.count++;
    return (real.readFileSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readFileSync;
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const { pid1Warning, ProcessGroup } = await import('../../src/worker/process-group.js');

function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('ProcessGroup: ending what an attempt left', () => {
  // Regression: while a group that ignored SIGTERM was waited for (the whole kill grace, 10 s by
  // default), every process on the machine had its /proc entry read every 50 ms: about 40 ms of
  // each 50 on a host with a thousand processes, a core held by the worker for the whole grace.
  it('a group that ignores SIGTERM is waited for by its own processes; /proc is read in full a few times, not every 50 ms', async () => {
    const child = spawn('sh', ['-c', 'trap "" TERM; while :; do sleep 0.05; done'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    await pollUntil(() => running(pid), { what: 'the stubborn child to run' });
    const group = new ProcessGroup(pid, 1500, null);
    const processes = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).length;
    statReads.count = 0;
    await group.end();
    expect(running(pid)).toBe(false);
    // The members at the start, SIGTERM, SIGKILL and the check that none is left: a few full
    // looks, and the members' own entries between them (not 30 full looks in 1.5 s).
    expect(statReads.count).toBeLessThan(8 * processes);
  });

  it('a member started while the known ones are being ended is found before the group counts as ended', async () => {
    // On SIGTERM, the shell starts a new process group of its own and exits: the known member is
    // gone, the new one is not, and it must be found and ended too.
    // The shell says when its trap is set (a SIGTERM before that ends it at once, with no new
    // member), and writes the new member's pid itself before it exits (the new member may be
    // found and ended before it could write anything). Seen under load: no pid file, both ways.
    // The grace leaves the shell time to run its trap before any SIGKILL.
    const pidFile = `/tmp/agentq-pg-${process.pid}-${Date.now()}`;
    const ready = `${pidFile}.ready`;
    const child = spawn('bash', ['-c', `trap 'set -m; (trap "" TERM; while :; do sleep 0.05; done) & echo $! > ${pidFile}; exit 0' TERM; : > ${ready}; while :; do sleep 0.05; done`], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    await pollUntil(() => fs.existsSync(ready), { what: 'the child to set its trap' });
    fs.rmSync(ready, { force: true });
    await new ProcessGroup(pid, 2_000, null).end();
    const late = Number(fs.readFileSync(pidFile, 'utf8'));
    fs.rmSync(pidFile, { force: true });
    expect(running(late)).toBe(false);
  });

  // Regression: a worker that was PID 1 (a container started without --init) left every process
  // its handlers left behind as a zombie for good (Node reaps only the children it started): a
  // pid lost per job, until spawns failed. Nothing said so.
  it('a worker that is PID 1 is told to run under an init; any other pid is not', () => {
    expect(pid1Warning(1)).toMatch(/PID 1 .*never reaped.*docker run --init/);
    expect(pid1Warning(4242)).toBeNull();
  });
});
