/**
 * A SQLite store this user may not write (a file of another user, mode 0444, a read-only
 * directory): reading commands work, a command that writes exits 4 naming the file, and a worker
 * stops with exit 4 as it does when a store refuses its credentials. It used to print
 * "internal error ... This is a bug in agentq" (exit 1), and a worker polled on for ever.
 *
 * File modes do not bind root, so when the tests run as root the CLI runs as nobody (setpriv).
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTQ_BIN, collect, makeCliHome, runCli, runCliOk, type CliHome, type CliResult } from '../support/cli.js';

const ROOT = process.getuid?.() === 0;
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

let home: CliHome;
let path: string;
let url: string;
let jobId: string;
beforeAll(async () => {
  home = makeCliHome('agentq-e2e-ro-');
  // nobody must reach the file (the home is 0700) but not write it; the directory stays writable,
  // where a reader makes the -wal and -shm files.
  chmodSync(home.dir, 0o755);
  mkdirSync(join(home.dir, 'store'), { mode: 0o777 });
  chmodSync(join(home.dir, 'store'), 0o777);
  path = join(home.dir, 'store', 'store.db');
  url = `sqlite:${path}`;
  jobId = (await runCliOk(home, ['--url', url, 'submit', 'task:v1', '--queue', 'ro'])).stdout.trim();
  chmodSync(path, 0o444);
});
afterAll(() => home.cleanup());

/** The CLI as a user the file modes bind. */
function runUnprivileged(args: string[], storeUrl = url): Promise<CliResult> {
  if (!ROOT) return runCli(home, ['--url', storeUrl, ...args]);
  // (scripts/test-tools.sh installs it: without it a root run could not test this at all)
  if (SETPRIV === undefined) throw new Error('setpriv (util-linux) is needed to run these tests as root');
  const child = spawn(SETPRIV, ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, AGENTQ_BIN, '--url', storeUrl, ...args], {
    cwd: home.dir,
    env: home.env,
    stdio: 'pipe',
  });
  child.stdin.end();
  return collect(child);
}

describe('a SQLite store this user may not write', () => {
  it('reading commands work; submit and cancel exit 4 naming the file and what to check, not "internal error"', async () => {
    const list = await runUnprivileged(['list', '-o', 'plain']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(jobId);

    for (const args of [['submit', 'task:v1', '--queue', 'ro'], ['cancel', jobId]]) {
      const r = await runUnprivileged(args);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`error: the SQLite database ${path} cannot be written by this process (SQLITE_READONLY`);
      expect(r.stderr).toContain('hint: Check that this user may write the file');
      expect(r.stderr).not.toContain('internal error');
    }
    const after = await runUnprivileged(['list', '-o', 'plain']);
    expect(after.stdout.trim().split('\n')).toHaveLength(1);
    expect(after.stdout).toContain('queued');
  });

  it('a worker stops with exit 4, as on refused credentials, instead of polling on while it looks alive', async () => {
    const r = await runUnprivileged(['worker', '--queue', 'ro', '--', 'true']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('the store has refused this worker');
    expect(r.stderr).toContain('cannot be written by this process');
  });
});

describe('a SQLite store in a directory this user may not write', () => {
  it('every command exits 4 saying SQLite must make the -wal and -shm files in that directory even to read, not that a list "cannot be written"', async () => {
    // SQLite answers a reader it cannot give a -wal and -shm SQLITE_READONLY_DIRECTORY (not
    // SQLITE_CANTOPEN), whatever the file's own mode: a `list` said the store "cannot be written".
    const lockedDir = join(home.dir, 'locked');
    mkdirSync(lockedDir, { mode: 0o755 });
    chmodSync(lockedDir, 0o755);
    const lockedPath = join(lockedDir, 'store.db');
    await runCliOk(home, ['--url', `sqlite:${lockedPath}`, 'submit', 'task:v1', '--queue', 'ro']);
    // The -wal and -shm a reader needs are made anew in the directory (as after a clean shutdown).
    for (const f of [`${lockedPath}-wal`, `${lockedPath}-shm`]) if (existsSync(f)) rmSync(f);
    for (const mode of [0o444, 0o666]) {
      chmodSync(lockedPath, mode);
      for (const args of [['list', '-o', 'plain'], ['submit', 'task:v1', '--queue', 'ro']]) {
        const r = await runUnprivileged(args, `sqlite:${lockedPath}`);
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toContain(`this user may not write the directory ${lockedDir}, where SQLite must create the -wal and -shm files even to read`);
        expect(r.stderr).not.toContain('cannot be written by this process');
        expect(r.stderr).toContain(`hint: Check the directory's owner and mode (ls -ld ${lockedDir})`);
      }
    }
  });
});
