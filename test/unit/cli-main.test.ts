/**
 * `main` in-process with fake streams: how outcomes become exit codes and
 * messages, and how argv becomes the options a command receives (parsing is
 * tested apart from behaviour, with the command modules not run).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { main, reportError } from '../../src/cli/main.js';
import { redactCredentials } from '../../src/cli/output/redact.js';
import { buildProgram, firstOperand, type CommandRunner } from '../../src/cli/program.js';
import { CliContext, type CliIo } from '../../src/cli/context.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import { ManualClock } from '../../src/core/clock.js';
import { DeclinedError, NotFoundError, RetryLaterError } from '../../src/core/errors.js';
import { makeCliHome } from '../support/cli.js';

function fakeIo(opts: { tty?: boolean } = {}) {
  let out = '';
  let err = '';
  const stdin = new PassThrough() as unknown as CliIo['stdin'];
  (stdin as { isTTY?: boolean }).isTTY = opts.tty;
  const io: CliIo = {
    stdout: { write: (s: string) => ((out += s), true), isTTY: opts.tty, columns: 100 },
    stderr: { write: (s: string) => ((err += s), true), isTTY: opts.tty },
    stdin,
  };
  return { io, out: () => out, err: () => err };
}

describe('argv → command options (command modules not run)', () => {
  const parse = async (argv: string[]) => {
    let got: { name: string; opts: Record<string, unknown>; globals: Record<string, unknown> } | undefined;
    const program = buildProgram({
      run: async (cmd: Command, opts: Record<string, unknown>, _runner: CommandRunner) => {
        got = { name: cmd.name(), opts, globals: cmd.optsWithGlobals() };
      },
    });
    program.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    await program.parseAsync(argv, { from: 'user' });
    return got!;
  };

  it.each([
    [['submit', 'a:v1', '--allowed-tool', 'x', '--allowed-tool', 'y', '--class', 'interactive'], 'submit', { workflow: 'a:v1', allowedTool: ['x', 'y'], class: 'interactive', tenant: 'default', maxAttempts: '3' }],
    [['inspect', 'job_1', '--events', '3'], 'inspect', { job: 'job_1', events: '3' }],
    [['cancel', 'job_1', 'job_2', '--reason', 'r'], 'cancel', { jobs: ['job_1', 'job_2'], reason: 'r' }],
    [['ls', '--state', 'queued,running', '--all'], 'list', { state: 'queued,running', all: true }],
    [['tail', '-f', '-q', 'research'], 'tail', { follow: true, queue: 'research' }],
    [['context', 'use', 'prod'], 'use', { name: 'prod' }],
  ])('%j', async (argv, name, expected) => {
    const got = await parse(argv);
    expect(got.name).toBe(name);
    expect(got.opts).toMatchObject(expected);
  });

  it('global options work before or after the command', async () => {
    expect((await parse(['--json', 'list'])).globals).toMatchObject({ json: true });
    expect((await parse(['list', '--url', 'sqlite:x', '-o', 'ndjson', '--no-input'])).globals).toMatchObject({ url: 'sqlite:x', output: 'ndjson', input: false });
  });
});

describe('building only the command that runs', () => {
  it.each([
    [['inspect', 'job_1'], 'inspect'],
    [['-o', 'json', 'list'], 'list'],
    [['--url', 'list', '--context', 'x', 'cancel', 'j'], 'cancel'],
    [['--json', '--debug', 'ls'], 'ls'],
    [['--color=never', 'tail', '-f'], 'tail'],
    [['--help'], undefined],
    [['--', 'submit'], undefined],
  ])('firstOperand(%j) = %s', (argv, expected) => {
    expect(firstOperand(argv)).toBe(expected);
  });

  const host = { run: async () => {} };
  const helpOf = (program: Command, path: string[]) => {
    let cmd = program;
    for (const name of path) cmd = cmd.commands.find((c) => c.name() === name)!;
    return cmd.helpInformation();
  };

  it.each([['submit'], ['inspect'], ['list'], ['cancel'], ['tail'], ['demo'], ['context', 'use']])(
    'agentq %s is defined exactly as in the full tree',
    (...path) => {
      const full = buildProgram(host);
      const lean = buildProgram(host, { commandHint: path[0] });
      expect(lean.commands.map((c) => c.name())).toEqual([path[0]]);
      expect(helpOf(lean, path)).toBe(helpOf(full, path));
    },
  );

  it('other commands, help and typos get the full tree', () => {
    const full = buildProgram(host).commands.length;
    for (const hint of ['dlq', 'help', 'worker', 'lsit', undefined]) expect(buildProgram(host, { commandHint: hint }).commands.length).toBe(full);
  });
});

describe('errors → exit codes and messages', () => {
  const argv = ['list'];
  it.each([
    [new NotFoundError('job job_x not found'), 5, 'error: job job_x not found'],
    [new DeclinedError('declined', 'Pass --yes to confirm in scripts.'), 3, 'hint: Pass --yes'],
    [new RetryLaterError('queue is over its backlog'), 75, 'error: queue is over its backlog'],
  ])('%s', (e, code, text) => {
    const { io, err } = fakeIo();
    expect(reportError(e, { io, debug: false, argv })).toBe(code);
    expect(err()).toContain(text);
    expect(err()).not.toMatch(/\n\s+at /);
  });

  it('an unexpected error is an internal error with a ready-to-file report line, and no stack unless --debug', () => {
    const { io, err } = fakeIo();
    expect(reportError(new TypeError('cannot read properties of undefined'), { io, debug: false, argv: ['inspect', 'job_1'] })).toBe(1);
    expect(err()).toContain('internal error: cannot read properties of undefined');
    expect(err()).toMatch(/Please report it with this line: agentq \d+\.\d+\.\d+.*; node v\d+.*command: agentq inspect job_1; error: TypeError/);
    expect(err()).not.toMatch(/\n\s+at /);
    const d = fakeIo();
    reportError(new TypeError('boom'), { io: d.io, debug: true, argv });
    expect(d.err()).toMatch(/\n\s+at /);
  });

  it("the report line cuts a long argument (an inline --input): one line to copy, not the job's data", () => {
    const { io, err } = fakeIo();
    const input = 'secret-report-text '.repeat(300);
    reportError(new TypeError('boom'), { io, debug: false, argv: ['submit', 'w:v1', '--input', input] });
    expect(err()).toContain(`command: agentq submit w:v1 --input ${input.slice(0, 80)}…(${input.length} characters); error: TypeError`);
    expect(err()).not.toContain(input);
  });

  it('redacts credentials and neutralises control characters in messages', () => {
    const { io, err } = fakeIo();
    reportError(new Error('connect ECONNREFUSED redis://default:hunter2@10.0.0.1:6379 \x1b]0;x\x07'), { io, debug: false, argv });
    expect(err()).not.toContain('hunter2');
    expect(err()).not.toContain('\x1b');
    expect(err()).toContain('redis://default:***@10.0.0.1:6379');
  });

  it('regression: a line break from data in an error, hint or warning is shown as \\n, never a forged line of its own', () => {
    const { io, err } = fakeIo();
    reportError(new DeclinedError('x\nhint: run rm -rf ~ is not in the DLQ', 'see\nerror: forged'), { io, debug: false, argv });
    expect(err()).toBe('error: x\\nhint: run rm -rf ~ is not in the DLQ\nhint: see\\nerror: forged\n');
    const c = fakeIo();
    const ctx = new CliContext({
      io: c.io,
      env: {},
      cwd: '/',
      clock: new ManualClock(),
      globals: {},
      format: 'plain',
      palette: NO_COLOUR,
      signal: new AbortController().signal,
      loadConfig: () => ({ url: null, urlSource: 'default', context: null, contexts: new Map(), projectFile: null, userFile: null, userFilePath: '/x' }),
      open: () => Promise.reject(new Error('not used')),
      defaultUrl: () => Promise.resolve('sqlite::memory:'),
      readLine: async () => 'y',
      mustFinish: () => undefined,
    });
    ctx.warn('the stored record is malformed: Unexpected token\nwarning: forged');
    ctx.note('note\rforged');
    expect(c.err()).toBe('warning: the stored record is malformed: Unexpected token\\nwarning: forged\nnote\\rforged\n');
  });

  it('redacts a password with an unencoded @ whole (up to the last @ of the authority)', () => {
    expect(redactCredentials('cannot connect to redis://admin:Xy@9f3kLmQ@127.0.0.1:7501 (ECONNREFUSED)')).toBe('cannot connect to redis://admin:***@127.0.0.1:7501 (ECONNREFUSED)');
    expect(redactCredentials('redis://tok@en@h:1/0 and redis://h:2/0?x=a@b')).toBe('redis://***@h:1/0 and redis://h:2/0?x=a@b');
  });

  it('redacts a password percent-encoded inside another URL (an SQS URL with a Redis store)', () => {
    const enc = (u: string) => encodeURIComponent(u);
    expect(redactCredentials(`sqs://us-east-1/p?endpoint=${enc('http://127.0.0.1:4566')}&store=${enc('redis://default:s3cr%t@10.0.0.1:6379/0?prefix=aq')}`)).toBe(
      `sqs://us-east-1/p?endpoint=${enc('http://127.0.0.1:4566')}&store=redis%3A%2F%2Fdefault%3A***%40${enc('10.0.0.1:6379/0?prefix=aq')}`,
    );
    expect(redactCredentials(`x?store=${enc('rediss+cluster://t0ken@h:1,h:2')}`)).toBe(`x?store=rediss%2Bcluster%3A%2F%2F***%40${enc('h:1,h:2')}`);
    // a path or a query without user-info is left alone
    expect(redactCredentials(`x?store=${enc('redis://h:1/0?prefix=a@b')}`)).toBe(`x?store=${enc('redis://h:1/0?prefix=a@b')}`);
  });
});

describe('main', () => {
  it('returns 0 for --help and --version, 2 for usage errors, without touching process', async () => {
    const home = makeCliHome();
    try {
      const cases: Array<[string[], number]> = [[['--version'], 0], [['--help'], 0], [['nope'], 2], [['list', '--limit'], 2]];
      for (const [argv, code] of cases) {
        const f = fakeIo();
        expect(await main(argv, { io: f.io, env: home.env, cwd: home.dir })).toBe(code);
        if (code === 2) expect(f.err()).toMatch(/^error: /);
      }
    } finally {
      home.cleanup();
    }
  });
});

describe('-o and --json', () => {
  it('regression: --json with another -o is refused (exit 2) for every command alike (stats took -o, list took --json)', async () => {
    const home = makeCliHome();
    try {
      for (const argv of [['stats', '-o', 'prometheus', '--json'], ['list', '-o', 'table', '--json'], ['--json', 'list', '-o', 'ndjson']]) {
        const f = fakeIo();
        expect(await main(argv, { io: f.io, env: home.env, cwd: home.dir }), argv.join(' ')).toBe(2);
        expect(f.err()).toMatch(/^error: -o \w+ and --json ask for two output formats: give one of them/);
        expect(f.out()).toBe('');
      }
      const same = fakeIo();
      expect(await main(['list', '-o', 'json', '--json'], { io: same.io, env: home.env, cwd: home.dir })).toBe(0);
      expect(JSON.parse(same.out())).toEqual([]);
    } finally {
      home.cleanup();
    }
  });
});

describe('confirmation', () => {
  const ctx = (tty: boolean, input?: boolean, env: Record<string, string> = {}) => {
    const f = fakeIo({ tty });
    const c = new CliContext({
      io: f.io,
      env,
      cwd: '/',
      clock: new ManualClock(),
      globals: { input },
      format: 'plain',
      palette: NO_COLOUR,
      signal: new AbortController().signal,
      loadConfig: () => ({ url: null, urlSource: 'default', context: null, contexts: new Map(), projectFile: null, userFile: null, userFilePath: '/x' }),
      open: () => Promise.reject(new Error('not used')),
      defaultUrl: () => Promise.resolve('sqlite::memory:'),
      readLine: async () => 'y',
      mustFinish: () => undefined,
    });
    return c;
  };

  it('without a terminal a mutation needs --yes (exit 3)', async () => {
    await expect(ctx(false).confirm('redrive 5 jobs?')).rejects.toMatchObject({ exitCode: 3, hint: 'Pass --yes to confirm in scripts.' });
    await expect(ctx(false).confirm('redrive 5 jobs?', { yes: true })).resolves.toBeUndefined();
  });

  it('--no-input counts as no terminal; on a terminal the answer decides', async () => {
    await expect(ctx(true, false).confirm('x?')).rejects.toMatchObject({ exitCode: 3 });
    await expect(ctx(true).confirm('x?')).resolves.toBeUndefined();
    await expect(ctx(true).confirm('x?', { typeToConfirm: '25' })).rejects.toMatchObject({ exitCode: 3 });
  });

  it('is never interactive in CI', () => {
    expect(ctx(true).isInteractive).toBe(true);
    expect(ctx(true, undefined, { CI: 'true' }).isInteractive).toBe(false);
    expect(ctx(true, undefined, { CI: '0' }).isInteractive).toBe(true);
  });
});
