/**
 * The built CLI as a user meets it: version, help, exit codes of usage
 * errors, start-up hygiene (no ink/react for non-TUI commands), EPIPE.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/core/errors.js';
import { AGENTQ_BIN, collect, makeCliHome, REPO_ROOT, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';
import { bundleManifest, inkOrReact, readTrace, TRACE_NODE_ARGS } from '../support/trace.js';

let home: CliHome;
beforeAll(() => {
  home = makeCliHome();
});
afterAll(() => home.cleanup());

describe('version and help', () => {
  it('--version shows the agentq and Node versions', async () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runCliOk(home, ['--version']);
    expect(r.stdout.trim()).toBe(`agentq ${pkg.version} (node ${process.version})`);
    // The entry answers a lone --version itself (start-up fast path); commander's answer must match it.
    expect((await runCliOk(home, ['--debug', '--version'])).stdout).toBe(r.stdout);
  });

  it('--help lists the commands and exits 0 without escape bytes', async () => {
    const r = await runCliOk(home, ['--help']);
    for (const cmd of ['submit', 'inspect', 'list', 'cancel', 'tail', 'context', 'demo', 'help']) expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
  });

  it.each(['submit', 'inspect', 'list', 'cancel', 'tail', 'demo', 'context'])('%s --help has examples', async (cmd) => {
    const r = await runCliOk(home, [cmd, '--help']);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('$ agentq');
  });

  // Regression: the README says every command's --help has examples; these three had none.
  it.each(['completion', 'sqs custody', 'outbox status'])('%s --help has examples', async (cmd) => {
    const r = await runCliOk(home, [...cmd.split(' '), '--help']);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain(`$ agentq ${cmd}`);
  });

  it('no command (or a group without its subcommand) shows the help on stderr and exits 2', async () => {
    for (const args of [[], ['context']]) {
      const r = await runCli(home, args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^Usage: agentq/);
    }
  });

  it('help COMMAND is the same as COMMAND --help', async () => {
    const a = await runCliOk(home, ['help', 'submit']);
    const b = await runCliOk(home, ['submit', '--help']);
    expect(a.stdout).toBe(b.stdout);
  });

  it('help exit-codes lists every documented code, tab-separated when piped', async () => {
    const r = await runCliOk(home, ['help', 'exit-codes']);
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => Number(l.split('\t')[0]))).toEqual(EXIT_CODE_DOCS.map((d) => d.code));
    const json = JSON.parse((await runCliOk(home, ['help', 'exit-codes', '-o', 'json'])).stdout) as unknown[];
    expect(json).toEqual(EXIT_CODE_DOCS);
  });
});

describe('usage errors exit 2 and name the rule', () => {
  it.each([
    [['bogus'], /unknown command 'bogus'/],
    [['list', '--bogus'], /unknown option '--bogus'/],
    [['inspect'], /missing required argument 'job'/],
    [['list', '-o', 'yaml'], /argument 'yaml' is invalid/],
    [['list', '--state', 'runing'], /--state "runing" is not a job state: use queued, scheduled/],
    [['list', '--limit', '0'], /--limit 0 must be a whole number from 1 to 1000/],
    [['list', '--cursor', 'garbage'], /--cursor must be the cursor printed after the previous page \(a job id, job_\.\.\.\), got "garbage"/],
    [['list', '--since', '30'], /is neither a duration nor an ISO-8601 time: use a duration ago/],
    [['list', '--workflow', 'bad'], /--workflow "bad": a workflow must look like name:vN/],
    [['list', '--queue', 'a b'], /--queue "a b": a queue name must be 1-128 characters/],
    [['inspect', 'job_nope'], /is not a job id/],
    // an empty or blank id (an unset variable) is a typo, not "not found"
    [['inspect', ''], /"" is not a job id: job ids look like job_/],
    [['cancel', ' '], /" " is not a job id: job ids look like job_/],
    [['submit', 'no-version'], /workflow must look like name:vN/],
    [['submit', 'x:v1', '--deadline', '2026-01-01T00:00:00'], /has no time zone/],
    [['submit', 'x:v1', '--max-attempts', '0'], /--max-attempts 0 must be a whole number from 1 to 100/],
    [['help', 'nonsense'], /no help for "nonsense"(?![\s\S]*__complete)/],
  ])('agentq %j', async (args, message) => {
    const r = await runCli(home, args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('a database path that cannot be created fails at once with the reason (exit 78), not a hang', async () => {
    // Node's recursive mkdir never returns under /proc; agentq makes the directories itself.
    // (submit: a reading command does not create a store, it names the missing file instead)
    const r = await runCli(home, ['--url', 'sqlite:/proc/agentq-none/x/jobs.db', 'submit', 'w:v1', '--input', '{}'], { timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/cannot open sqlite:\/proc\/agentq-none\/x\/jobs\.db: ENOENT.*mkdir '\/proc\/agentq-none'/);
  });

  it('no stack trace without --debug; with AGENTQ_DEBUG=1 there is one', async () => {
    const plain = await runCli(home, ['inspect', 'job_nope']);
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const debug = await runCli(home, ['inspect', 'job_nope'], { env: { AGENTQ_DEBUG: '1' } });
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe('start-up hygiene', () => {
  const trace = (name: string) => join(home.dir, `trace-${name}.txt`);
  const traced = async (name: string, args: string[], expectCode = 0) => {
    const file = trace(name);
    await runCliOk(home, args, { expectCode, nodeArgs: TRACE_NODE_ARGS, env: { AGENTQ_TRACE_IMPORTS: file } });
    return readTrace(file);
  };

  it('the tracer sees node_modules imports and requires (positive controls: it can catch ink and react)', async () => {
    const { execFileSync } = await import('node:child_process');
    const esm = trace('control-esm');
    execFileSync(process.execPath, [...TRACE_NODE_ARGS, '-e', 'await import("ink")', '--input-type=module'], {
      cwd: REPO_ROOT,
      env: { ...home.env, AGENTQ_TRACE_IMPORTS: esm },
    });
    expect(inkOrReact(readFileSync(esm, 'utf8').split('\n'))).not.toEqual([]);
    const cjs = trace('control-cjs');
    execFileSync(process.execPath, [...TRACE_NODE_ARGS, '-e', 'require("react")'], { cwd: REPO_ROOT, env: { ...home.env, AGENTQ_TRACE_IMPORTS: cjs } });
    expect(inkOrReact(readFileSync(cjs, 'utf8').split('\n'))).not.toEqual([]);
  });

  it('the bundle manifest names the modules of every chunk (commander is in the entry chunk)', () => {
    const manifest = bundleManifest();
    expect(manifest['agentq.cjs']).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/cli/program.js', 'node_modules/commander/lib/command.js']));
    for (const f of Object.keys(manifest)) expect(existsSync(join(REPO_ROOT, 'dist', 'bundle', f))).toBe(true);
  });

  it.each([
    ['version', ['--version'], 0],
    ['help', ['--help'], 0],
    ['demo', ['demo', '--jobs', '2'], 0],
    ['list', ['list', '--all'], 0],
    ['submit', ['submit', 'x:v1'], 0],
    ['tail', ['tail'], 0],
    ['inspect-missing', ['inspect', 'job_01JD3K0000000000000000000A'], 5],
  ] as const)('agentq %s never loads ink or react', async (name, args, code) => {
    const urls = await traced(name, [...args], code);
    // A lone --version is answered by the entry itself, before commander (in the bundle's entry chunk) loads.
    expect(urls.some((u) => u.includes('/node_modules/commander/'))).toBe(name !== 'version');
    expect(inkOrReact(urls)).toEqual([]);
  });
});

describe('pipes', () => {
  it('a reader slower than the store gets every line of `list --all`, and agentq waits for it', async () => {
    for (let i = 0; i < 3; i++) await runCliOk(home, ['demo', '--jobs', '1000', '--queue', 'slowpipe', '--no-worker']);
    // The reader starts 2 s late (the scenario, not a wait for an event): ~3 MB of NDJSON cannot fit in a
    // pipe meanwhile, so agentq must hold back, and must not exit before the reader has taken everything.
    // (Before this was fixed the exit gave up after 1 s of waiting: the reader got 80 of the 3,000 lines.)
    const r = execFileSync('bash', ['-c', `"${process.execPath}" "${AGENTQ_BIN}" list --queue slowpipe --all --limit 1000 -o ndjson | (sleep 2; wc -l)`], { env: home.env, encoding: 'utf8' });
    expect(Number(r.trim())).toBe(3000);
  });

  it('a gone reader never changes the exit code of a command that changes state, nor of an error', async () => {
    // `head -c 0` exits at once: the job id, the timeout message and the usage error all hit a closed pipe.
    const code = (cmd: string) =>
      Number(execFileSync('bash', ['-c', `"${process.execPath}" "${AGENTQ_BIN}" ${cmd} 2>&1 | head -c 0; echo \${PIPESTATUS[0]}`], { env: home.env, encoding: 'utf8' }).trim());
    expect(code('submit x:v1 --queue gone-reader --wait --timeout 1s')).toBe(124);
    expect(code('submit x:v1 --queue gone-reader --wait --timeout 1s -o json')).toBe(124);
    expect(code('inspect job_nope')).toBe(2);
    expect(code('no-such-command')).toBe(2);
  });

  it('`agentq list | head -1` exits quietly when the reader goes away (EPIPE)', async () => {
    await runCliOk(home, ['demo', '--jobs', '1000', '--queue', 'epipe', '--no-worker']);
    const child = spawnCli(home, ['list', '--queue', 'epipe', '--all', '--limit', '100', '-o', 'json']);
    child.stdin.end();
    // Close our end after the first chunk: the rest (~1.5 MB) can only hit a closed pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const r = await collect(child);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
