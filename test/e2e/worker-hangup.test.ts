/**
 * A worker in a terminal that is closed (tmux's pty goes away: the kernel
 * sends SIGHUP, and from then on every write to the terminal fails with EIO).
 * It used to die on the spot, leaving its handler running with the lease;
 * now it stops as on SIGTERM: the handler is stopped, the lease released, the
 * worker exits. Run `npm run build` first (`npm test` does).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Job } from '../../src/core/schemas.js';
import { AGENTQ_BIN, makeCliHome, runCliOk, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { TmuxPane } from '../tui/support/tmux.js';

let home: CliHome;
let pane: TmuxPane | null = null;
beforeEach(() => {
  home = makeCliHome('agentq-e2e-hangup-');
});
afterEach(() => {
  pane?.kill();
  pane = null;
  home.cleanup();
});

/** Running, not a zombie left for a parent that never reaps it (a container's PID 1 may not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return false;
  }
}

describe('agentq worker in a terminal that is closed', () => {
  it('stops gracefully: the handler is stopped, the lease released, the worker gone', async () => {
    const id = (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', '--max-attempts', '1'])).stdout.trim();
    const pids = join(home.dir, 'pids');
    const h = join(home.dir, 'h.sh');
    // $PPID is the worker.
    writeFileSync(h, `#!/bin/sh\necho "$PPID $$" > ${pids}\nwhile true; do sleep 0.05; done\n`);
    chmodSync(h, 0o755);
    pane = TmuxPane.start(['node', AGENTQ_BIN, 'worker', '--queue', 'w', '--grace', '200ms', '--kill-grace', '1s', '--', h], { ...home.env, TERM: 'xterm-256color' }, undefined, {
      stderrOnScreen: true,
    });
    await pane.waitFor('attempt 1: started');
    await pollUntil(() => existsSync(pids), { what: 'the handler to start' });
    const [worker, handlerPid] = readFileSync(pids, 'utf8').trim().split(' ').map(Number) as [number, number];
    pane.tmux('kill-server');

    await pollUntil(() => !running(worker) && !running(handlerPid), { what: 'the worker and its handler to end' });
    const job = Job.parse(JSON.parse((await runCliOk(home, ['inspect', id, '-o', 'json'])).stdout));
    // Released, not left running until its lease expires: the attempt does not count.
    expect(job.state).toBe('queued');
    expect(job.attempts.at(-1)?.outcome).toBe('released');
  });
});
