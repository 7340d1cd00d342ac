/**
 * What a person at a terminal sees versus what a pipe gets: table and colour
 * on a terminal (a real pseudo-terminal from util-linux `script`), plain text
 * without escape bytes in a pipe, and the colour switches of DESIGN 3.3.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTQ_BIN, collect, makeCliHome, runCliOk, type CliHome, type CliResult } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';

let home: CliHome;
beforeAll(async () => {
  home = makeCliHome();
  await runCliOk(home, ['demo', '--jobs', '3', '--queue', 'tty']);
});
afterAll(() => home.cleanup());

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a shell line inside a pseudo-terminal of the given width. */
function inTerminal(line: string, env: Record<string, string> = {}, cols = 120): Promise<CliResult> {
  const child = spawn('script', ['-qec', `stty cols ${cols} rows 40; ${line}`, '/dev/null'], { env: { ...home.env, ...env }, cwd: home.dir, stdio: 'pipe' });
  child.stdin.end();
  return collect(child);
}
const agentq = (args: string) => `${sh(process.execPath)} ${sh(AGENTQ_BIN)} ${args}`;
// eslint-disable-next-line no-control-regex
const stripColour = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('on a terminal', () => {
  it('cancel: a short malformed id on the first row does not cut the job ids after it (the table sizes its columns on its first rows)', async () => {
    const { job_id: id } = JSON.parse((await runCliOk(home, ['submit', 'x:v1', '--queue', 'tty-cancel', '-o', 'json'])).stdout) as { job_id: string };
    const r = await inTerminal(agentq(`cancel job_nope ${id}`), {}, 100);
    expect(r.code).toBe(6);
    expect(stripColour(r.stdout)).toMatch(new RegExp(`^${id}\\s+cancelled`, 'm'));
  });

  it('list prints a table with a header, coloured', async () => {
    const r = await inTerminal(agentq('list --queue tty'));
    expect(r.code).toBe(0);
    const lines = stripColour(r.stdout).split(/\r?\n/);
    expect(lines[0]).toMatch(/^JOB\s+QUEUE\s+TENANT\s+WORKFLOW\s+STATE/);
    expect(r.stdout).toContain('\x1b[1mJOB');
  });

  it('NO_COLOR and --color never switch colour off; the table stays', async () => {
    for (const [line, env] of [[agentq('list --queue tty'), { NO_COLOR: '1' }], [agentq('--color never list --queue tty'), {}], [agentq('list --queue tty'), { TERM: 'dumb' }]] as const) {
      const r = await inTerminal(line, env);
      expect(r.stdout).toMatch(/^JOB\s+QUEUE/);
      expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
    }
  });

  it('a narrow terminal shortens free text but never a job id', async () => {
    // (at 70 columns the less important columns are left out and the rest fit; at 50 text is cut)
    const r = await inTerminal(agentq('--color never list --queue tty'), {}, 50);
    const row = r.stdout.split(/\r?\n/)[1]!;
    expect(row).toMatch(/^job_[0-9A-Z]{26} {2}/);
    expect(row).toContain('…');
  });

  it('piped, even from a terminal session, output is plain and has no escape bytes', async () => {
    const r = await inTerminal(`${agentq('list --queue tty')} | cat`);
    const lines = r.stdout.trim().split(/\r?\n/);
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l.split('\t')[0]).toMatch(/^job_/);
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
  });
});

describe('colour switches without a terminal', () => {
  it('--color always forces colour into a pipe, also as a bare --color before the command', async () => {
    for (const args of [['--color', 'always', 'list', '--queue', 'tty', '-o', 'wide'], ['--color', 'list', '--queue', 'tty', '-o', 'wide'], ['list', '--queue', 'tty', '-o', 'wide', '--color=always']]) {
      const r = await runCliOk(home, args);
      expect(r.stdout).toContain('\x1b[1mJOB');
    }
  });

  it('FORCE_COLOR forces it; --color never beats FORCE_COLOR; default is none', async () => {
    expect((await runCliOk(home, ['list', '--queue', 'tty', '-o', 'wide'], { env: { FORCE_COLOR: '1' } })).stdout).toContain('\x1b[');
    expect(hasEscapeByte((await runCliOk(home, ['--color', 'never', 'list', '--queue', 'tty', '-o', 'wide'], { env: { FORCE_COLOR: '3' } })).stdoutBytes)).toBe(false);
    expect(hasEscapeByte((await runCliOk(home, ['list', '--queue', 'tty', '-o', 'wide'])).stdoutBytes)).toBe(false);
  });
});
