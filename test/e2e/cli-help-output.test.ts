/**
 * Help and usage errors are written straight to fd 1 / 2 while nothing else has
 * used the stream (src/cli/output/direct-write.ts; the entry's lone `--version`
 * likewise), so `agentq --help` never creates process.stdout. The text must be the same whatever stdout is: a socket
 * pair (how Node spawns children), a shell pipe, a file, a terminal (which keeps
 * its width), or a pipe whose reader is gone (a quiet exit 0).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTQ_BIN, collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';

let home: CliHome;
beforeAll(() => {
  home = makeCliHome('agentq-help-');
});
afterAll(() => home.cleanup());

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const agentq = (args: string) => `${sh(process.execPath)} ${sh(AGENTQ_BIN)} ${args}`;
const shell = (line: string) => spawnSync('sh', ['-c', line], { env: home.env, cwd: home.dir, encoding: 'utf8' });

describe('help text', () => {
  it('says -o prometheus is for stats only, and the cancel example survives an empty match (xargs -r)', async () => {
    const list = (await runCliOk(home, ['list', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(list).toContain('-o, --output <format> output format: table, wide, plain, json, ndjson; prometheus with stats only');
    expect(list).not.toContain('"ndjson", "prometheus"');
    expect((await runCliOk(home, ['cancel', '--help'])).stdout).toContain('| xargs -r agentq cancel');
  });
});

describe('help output', () => {
  it('is the same through a socket pair, a shell pipe and a file', async () => {
    // A lone --version is answered by the entry itself, the same way.
    for (const args of ['--help', 'submit --help', 'dlq --help', '--version']) {
      const socket = await runCliOk(home, args.split(' '));
      expect(socket.stdout).toMatch(/^(Usage: agentq|agentq \d)/);
      const piped = shell(`${agentq(args)} | cat`);
      expect(piped.status).toBe(0);
      expect(piped.stdout).toBe(socket.stdout);
      const file = join(home.dir, 'help.txt');
      const toFile = shell(`${agentq(args)} > ${sh(file)}`);
      expect(toFile.status).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(socket.stdout);
      // Appending after other text (an fd opened with O_APPEND) keeps both.
      writeFileSync(file, 'before\n');
      expect(shell(`${agentq(args)} >> ${sh(file)}`).status).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(`before\n${socket.stdout}`);
    }
  });

  it('a usage error goes to stderr the same way, exit 2', async () => {
    const r = await runCli(home, ['nosuch']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: unknown command 'nosuch'/);
    const piped = shell(`${agentq('nosuch')} 2>&1 >/dev/null | cat`);
    expect(piped.stdout).toBe(r.stderr);
  });

  it('on a terminal it keeps the terminal width', async () => {
    const inTerminal = async (cols: number) => {
      const child = spawn('script', ['-qec', `stty cols ${cols} rows 40; ${agentq('submit --help')}`, '/dev/null'], { env: home.env, cwd: home.dir, stdio: 'pipe' });
      child.stdin.end();
      const r = await collect(child);
      expect(r.code).toBe(0);
      return r.stdout.split(/\r?\n/);
    };
    // Commander wraps option descriptions to the width; the examples are ours and stay whole.
    const wrapped = (lines: string[]) => lines.filter((l) => !l.startsWith('  $ agentq'));
    const narrow = await inTerminal(90);
    const wide = await inTerminal(200);
    expect(narrow[0]).toMatch(/^Usage: agentq submit/);
    expect(Math.max(...wrapped(narrow).map((l) => l.length))).toBeLessThanOrEqual(90);
    // The wide terminal's lines are longer (so the narrow one did wrap).
    expect(Math.max(...wrapped(wide).map((l) => l.length))).toBeGreaterThan(90);
  });

  it('exits 0 quietly when the reader is already gone (EPIPE)', async () => {
    for (const args of [['--help'], ['submit', '--help'], ['--version']]) {
      const child = spawnCli(home, args);
      child.stdin.end();
      // Close our end before the child has started Node: its first write hits a closed pipe.
      child.stdout.destroy();
      const r = await collect(child);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  });

  it('a write that fails otherwise (a full disk) is an error, exit 1, whose --debug stack names the bundle where it is', () => {
    const r = shell(`${agentq('--debug --help')} > /dev/full`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('ENOSPC');
    // The code cache is made from the swapped-in bundle: V8 keeps the file name a cache was made under.
    expect(r.stderr).toMatch(/dist\/bundle\/agentq\.cjs:\d+/);
    expect(r.stderr).not.toContain('bundle.next');
  });

  it('`agentq --help` and `--version` into a pipe never create process.stdout (no socket stream loaded)', async () => {
    // Records at exit whether Node loaded its socket module (creating stdout for a pipe does).
    const probe = join(home.dir, 'net-probe.cjs');
    writeFileSync(
      probe,
      "process.on('exit', () => require('node:fs').writeSync(2, `@@net ${process.moduleLoadList.includes('NativeModule net')}\\n`));\n",
    );
    for (const args of [['--help'], ['--version']]) {
      const r = await runCliOk(home, args, { nodeArgs: ['--require', probe] });
      expect(r.stderr).toContain('@@net false');
    }
    // The probe can tell: a command that prints through the stream does load it.
    const list = await runCliOk(home, ['list'], { nodeArgs: ['--require', probe] });
    expect(list.stderr).toContain('@@net true');
  });
});
