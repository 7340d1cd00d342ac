/**
 * The committed completion scripts, loaded in their real shells: top-level
 * commands, `dlq` subcommands, option values (`--class`, `-o`) and a live
 * value (queue names from a temp SQLite store through `agentq __complete`).
 * Needs `npm run build` (npm test does) and bash, zsh and fish installed
 * (.ci/run installs them).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, runCliOk, type CliHome } from '../support/cli.js';
import { candidates, makeAgentqOnPath, type ShellName } from './shell-harness.js';

let home: CliHome;
let env: Record<string, string>;
const QUEUE = `research-${process.pid}`;

beforeAll(async () => {
  home = makeCliHome('agentq-completion-');
  // The ~500 ms give-up of live lookups is unit-tested (dynamic.test.ts); here a loaded CI machine must
  // not turn a slow start into "no candidates", so the deadline is raised.
  env = { ...home.env, PATH: `${makeAgentqOnPath(home.dir)}:${home.env.PATH}`, AGENTQ_COMPLETE_TIMEOUT_MS: '20000' };
  // Two queues in the default store of this home: one to find by prefix, one that must be filtered out.
  await runCliOk(home, ['submit', 'demo:v1', '--queue', QUEUE]);
  await runCliOk(home, ['submit', 'demo:v1', '--queue', 'other']);
  // A second store, reachable through a context: `--context staging` on the line completes against it.
  const staging = join(home.dir, 'staging.db');
  mkdirSync(join(home.env.XDG_CONFIG_HOME!, 'agentq'), { recursive: true });
  writeFileSync(join(home.env.XDG_CONFIG_HOME!, 'agentq', 'config.json'), JSON.stringify({ contexts: { staging: { url: `sqlite:${staging}` } } }));
  await runCliOk(home, ['--context', 'staging', 'submit', 'demo:v1', '--queue', 'staging-only']);
}, 60_000);

afterAll(() => home?.cleanup());

const SHELLS: ShellName[] = ['bash', 'zsh', 'fish'];

describe.each(SHELLS)('%s completion', (shell) => {
  it('offers the top-level commands, without the hidden __complete', async () => {
    const all = await candidates(shell, 'agentq ', env);
    expect(all).toEqual(expect.arrayContaining(['submit', 'inspect', 'list', 'cancel', 'tail', 'dlq', 'stats', 'metrics', 'completion', 'context']));
    expect(all).not.toContain('__complete');
    expect(await candidates(shell, 'agentq dl', env)).toEqual(['dlq']);
    expect(await candidates(shell, 'agentq st', env)).toEqual(['stats']);
  });

  it('offers the dlq subcommands', async () => {
    const subs = await candidates(shell, 'agentq dlq ', env);
    expect(subs).toEqual(expect.arrayContaining(['list', 'show', 'summary', 'redrive', 'purge', 'expire', 'check']));
    expect(subs).not.toContain('submit');
    expect(await candidates(shell, 'agentq dlq re', env)).toEqual(['redrive']);
  });

  it('offers the service classes for --class and the formats for -o', async () => {
    expect(await candidates(shell, 'agentq submit --class ', env)).toEqual(['batch', 'interactive', 'maintenance']);
    expect(await candidates(shell, 'agentq list --class in', env)).toEqual(['interactive']);
    // prometheus only where it works: stats
    expect(await candidates(shell, 'agentq list -o ', env)).toEqual(['json', 'ndjson', 'plain', 'table', 'wide']);
    expect(await candidates(shell, 'agentq stats -o ', env)).toEqual(['json', 'ndjson', 'plain', 'prometheus', 'table', 'wide']);
    expect(await candidates(shell, 'agentq stats -o pr', env)).toEqual(['prometheus']);
    expect(await candidates(shell, 'agentq -o pr', env)).toEqual([]);
    // A global option after a subcommand of a group still completes.
    expect(await candidates(shell, 'agentq dlq list -o nd', env)).toEqual(['ndjson']);
  });

  it('offers dead reasons, classes, summary keys, help topics, and the item after a comma', async () => {
    const reasons = ['custody', 'exhausted', 'lease_lost', 'permanent'];
    expect(await candidates(shell, 'agentq dlq list --reason ', env)).toEqual(reasons);
    expect(await candidates(shell, 'agentq dlq redrive --dead-reason ex', env)).toEqual(['exhausted']);
    // --reason on a bulk command or cancel is free audit text
    expect(await candidates(shell, 'agentq dlq redrive --reason ', env)).toEqual([]);
    expect(await candidates(shell, 'agentq worker --classes in', env)).toEqual(['interactive']);
    expect(await candidates(shell, 'agentq dlq summary --by error_code,wo', env)).toEqual(['error_code,worker_version', 'error_code,workflow']);
    expect(await candidates(shell, 'agentq list --state queued,ru', env)).toEqual(['queued,running']);
    expect(await candidates(shell, 'agentq list --state queued,', env)).toEqual(expect.arrayContaining(['queued,running', 'queued,dead']));
    const strip = (l: string[]) => l.map((c) => c.replace(/^--state=/, ''));
    expect(strip(await candidates(shell, 'agentq list --state=queued,ru', env))).toEqual(['queued,running']);
    expect(await candidates(shell, 'agentq help ', env)).toEqual(expect.arrayContaining(['dlq', 'stats', 'exit-codes']));
    expect(await candidates(shell, 'agentq help ex', env)).toEqual(['exit-codes']);
  });

  it('offers the options of the command under the cursor', async () => {
    expect(await candidates(shell, 'agentq dlq check --max-', env)).toEqual(['--max-age', '--max-rate', '--max-size']);
  });

  it('offers live queue names from the store for --queue', async () => {
    expect(await candidates(shell, 'agentq stats --queue ', env)).toEqual(expect.arrayContaining([QUEUE, 'other']));
    expect(await candidates(shell, 'agentq dlq list --queue res', env)).toEqual([QUEUE]);
    expect(await candidates(shell, 'agentq stats --queue ', env)).not.toContain('staging-only');
  });

  it('completes against the store of a --context typed on the line, and completes context names', async () => {
    expect(await candidates(shell, 'agentq --context staging stats --queue ', env)).toEqual(['staging-only']);
    expect(await candidates(shell, 'agentq --context st', env)).toEqual(['staging']);
  });

  it('completes against the store of a --url typed on the line (bash splits it at ":")', async () => {
    const line = `agentq --url sqlite:${join(home.dir, 'staging.db')} stats --queue `;
    expect(await candidates(shell, line, env)).toEqual(['staging-only']);
    expect(await candidates(shell, `agentq --url sqlite:${join(home.dir, 'staging.db')} dlq ch`, env)).toEqual(['check']);
  });

  it('completes the value of --opt=value as it does for --opt value', async () => {
    // bash completes the word after "=" (COMP_WORDBREAKS), zsh and fish offer "--opt=value": compare the values.
    const values = async (line: string, opt: string) => (await candidates(shell, line, env)).map((c) => (c.startsWith(`${opt}=`) ? c.slice(opt.length + 1) : c));
    const states = await candidates(shell, 'agentq list --state ', env);
    expect(states).toEqual(expect.arrayContaining(['queued', 'running', 'dead']));
    expect(await values('agentq list --state=', '--state')).toEqual(states);
    expect(await values('agentq list --state=ru', '--state')).toEqual(['running']);
    expect(await values('agentq dlq list --output=nd', '--output')).toEqual(['ndjson']);
    expect(await values('agentq stats --queue=res', '--queue')).toEqual([QUEUE]);
    // Not after a short option: commander reads -o=json as the value "=json".
    expect(await candidates(shell, 'agentq list -o=', env)).toEqual([]);
    expect(await candidates(shell, 'agentq list -o=nd', env)).toEqual([]);
    // The value typed after "=" is skipped when finding the command path, as a separate one is.
    expect(await candidates(shell, 'agentq --output=json dlq ch', env)).toEqual(['check']);
  });

  it('skips option values when finding the command path', async () => {
    // `json` (the value of --output) must not be taken for a subcommand or an argument.
    expect(await candidates(shell, 'agentq --output json dlq check --max-s', env)).toEqual(['--max-size']);
    expect(await candidates(shell, 'agentq completion ', env)).toEqual(['bash', 'fish', 'zsh']);
  });
});

describe('zsh autoloaded from fpath', () => {
  it('works as an fpath function file (#compdef), not only when sourced', async () => {
    expect(await candidates('zsh', 'agentq dl', env, { zshMode: 'fpath' })).toEqual(['dlq']);
    expect(await candidates('zsh', 'agentq stats --queue res', env, { zshMode: 'fpath' })).toEqual([QUEUE]);
  });
});

// Candidate lines come from the store and from project config files: whatever `__complete` prints,
// the scripts must take each line as one literal word. An `agentq` whose `__complete` prints hostile
// lines (no filtering by isOfferable) checks the scripts on their own.
describe.each(SHELLS)('%s completion with hostile candidates', (shell) => {
  it('never runs $(...) or backticks from a candidate line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-hostile-compl-'));
    try {
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      const marks = [join(dir, 'dollar'), join(dir, 'tick'), join(dir, 'plain')];
      const lines = [`$(touch${'${IFS}'}${marks[0]})`, `\`touch${'${IFS}'}${marks[1]}\``, `$(touch ${marks[2]})`, 'safe-one'];
      writeFileSync(join(bin, 'agentq'), `#!/bin/sh\n[ "$1" = __complete ] && printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')}\nexit 0\n`);
      chmodSync(join(bin, 'agentq'), 0o755);
      const e = { ...env, PATH: `${bin}:${env.PATH}` };
      const got = await candidates(shell, 'agentq stats --queue ', e);
      expect(got).toContain('safe-one');
      await candidates(shell, 'agentq --context ', e);
      await candidates(shell, 'agentq stats --queue $', e);
      for (const m of marks) expect(existsSync(m), `${shell} ran a command taken from a candidate (${m})`).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(['bash', 'zsh'] as const)('%s completion of a quoted word typed earlier', (shell) => {
  it('passes the word to __complete unquoted', async () => {
    expect(await candidates(shell, 'agentq --context "staging" stats --queue ', env)).toEqual(['staging-only']);
    expect(await candidates(shell, "agentq --context 'staging' stats --queue ", env)).toEqual(['staging-only']);
    expect(await candidates(shell, 'agentq --context st\\aging stats --queue ', env)).toEqual(['staging-only']);
  });
});
