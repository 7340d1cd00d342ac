/**
 * Spawning the built CLI (`node bin/agentq.js`, which loads dist/) in tests:
 * a throwaway home with its own XDG data and config directories, no TTY, no
 * inherited colour or CI settings, and the exit code, stdout and stderr back.
 * Run `npm run build` first (`npm test` does).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const AGENTQ_BIN = join(REPO_ROOT, 'bin', 'agentq.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Raw bytes, for byte-level checks (escape bytes). */
  stdoutBytes: Buffer;
  stderrBytes: Buffer;
}

export interface CliHome {
  dir: string;
  /** The environment a fresh machine would have: HOME and XDG dirs inside `dir`. */
  env: Record<string, string>;
  /** `sqlite:` URL of the default database of this home. */
  dataUrl: string;
  cleanup(): void;
}

/** A fresh, empty home for one test (or one describe block). */
export function makeCliHome(prefix = 'agentq-e2e-'): CliHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // (a TMPDIR as /tmp is: any user may write it, so a test that runs the CLI as another user can)
  mkdirSync(join(dir, 'temp'));
  chmodSync(join(dir, 'temp'), 0o1777);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    // (a worker killed with SIGKILL cannot remove its report directory: it goes with the home)
    TMPDIR: join(dir, 'temp'),
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
  };
  return {
    dir,
    env,
    dataUrl: `sqlite:${join(dir, 'data', 'agentq', 'agentq.db')}`,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Written to stdin, then stdin is closed. */
  input?: string | Buffer;
  /** Safety net against a hung child (not a timing assertion). Default 30 s. */
  timeoutMs?: number;
  /** Extra node flags, e.g. ['--import', hook]. */
  nodeArgs?: string[];
}

function childEnv(home: CliHome | null, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = { ...(home?.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' }) };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Starts the CLI and returns the child (for --follow, --wait, signals). */
export function spawnCli(home: CliHome | null, args: string[], opts: RunOptions = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...(opts.nodeArgs ?? []), AGENTQ_BIN, ...args], {
    cwd: opts.cwd ?? home?.dir ?? REPO_ROOT,
    env: childEnv(home, opts.env),
    stdio: 'pipe',
  });
}

/** Collects a child's output and exit. */
export function collect(child: ChildProcessWithoutNullStreams, timeoutMs = 30_000): Promise<CliResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentq did not exit within ${timeoutMs} ms; stderr so far: ${Buffer.concat(err).toString()}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      const stderrBytes = Buffer.concat(err);
      resolvePromise({ code, signal, stdout: stdoutBytes.toString('utf8'), stderr: stderrBytes.toString('utf8'), stdoutBytes, stderrBytes });
    });
  });
}

/** Runs `agentq ...args` to completion. */
export function runCli(home: CliHome | null, args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const child = spawnCli(home, args, opts);
  const done = collect(child, opts.timeoutMs);
  if (opts.input !== undefined) child.stdin.end(opts.input);
  else child.stdin.end();
  return done;
}

/** Runs and fails with the full output when the exit code is not the expected one. */
export async function runCliOk(home: CliHome | null, args: string[], opts: RunOptions & { expectCode?: number } = {}): Promise<CliResult> {
  const r = await runCli(home, args, opts);
  const expected = opts.expectCode ?? 0;
  if (r.code !== expected) {
    throw new Error(`agentq ${args.join(' ')} exited ${r.code} (expected ${expected})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return r;
}

/** Parses NDJSON output into objects. */
export function parseNdjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}
