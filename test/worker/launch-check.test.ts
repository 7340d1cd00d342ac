/**
 * launchProblem: whether a handler command, the interpreter its #! line names and the program
 * `env` runs can be found. Real files in a temporary directory; no process is started.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchProblem } from '../../src/worker/launch-check.js';

const dir = mkdtempSync(join(tmpdir(), 'agentq-launch-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function script(name: string, firstLine: string): string {
  const p = join(dir, name);
  writeFileSync(p, `${firstLine}\necho hi\n`);
  chmodSync(p, 0o755);
  return p;
}

/** A PATH with stand-ins for the interpreters this machine may not have (ruby, deno, bun, …): only their names are read. */
function interpreters(): { PATH: string } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const name of ['node', 'python3', 'python3.12', 'ruby', 'deno', 'bun', 'npx', 'uv']) script(join('bin', name), '#!/bin/sh');
  return { PATH: `${bin}:${env.PATH}` };
}

describe('launchProblem', () => {
  it('finds nothing wrong with a binary, or a script whose interpreter is there', () => {
    expect(launchProblem(process.execPath, env)).toBeNull();
    expect(launchProblem('bash', env, dir, ['-c', 'nosuchcmd'])).toBeNull();
    expect(launchProblem(script('ok.sh', '#!/bin/sh'), env)).toBeNull();
    expect(launchProblem(script('ok-env.sh', '#!/usr/bin/env bash'), env)).toBeNull();
    expect(launchProblem(script('ok-env-s.sh', '#!/usr/bin/env -S bash -eu'), env)).toBeNull();
    expect(launchProblem(script('no-shebang.sh', 'echo'), env)).toBeNull();
  });

  it('names a missing #! interpreter, and a program #!/usr/bin/env does not find on PATH', () => {
    expect(launchProblem(script('abs.sh', '#!/nonexistent/python'), env)).toBe(
      'the interpreter its #! line names (/nonexistent/python) cannot run: /nonexistent/python is not an executable file',
    );
    expect(launchProblem(script('env.sh', '#!/usr/bin/env agentq-nope'), env)).toBe('its #! line runs agentq-nope through /usr/bin/env, and agentq-nope is not on PATH');
    expect(launchProblem(script('env-s.sh', '#!/usr/bin/env -S A=1 agentq-nope -u'), env)).toContain('agentq-nope is not on PATH');
    // A script saved with Windows line ends: the kernel looks for "/bin/sh\r", which is not there.
    expect(launchProblem(script('crlf.sh', '#!/bin/sh\r'), env)).toBe('the interpreter its #! line names (/bin/sh\r) cannot run: /bin/sh\r is not an executable file');
    // not looked up on PATH: the kernel takes it as a path
    expect(launchProblem(script('bare.sh', '#!bash'), env, dir)).toBe('the interpreter its #! line names (bash) cannot run: ./bash is not an executable file');
  });

  // `agentq worker -- env FOO=1 python3 handler.py` without python3 exits 127 every time, as a
  // #!/usr/bin/env line does: it was taken for a command missing inside the handler.
  it('reads `env` given as the command itself', () => {
    expect(launchProblem('env', env, dir, ['FOO=1', 'agentq-nope', 'x.py'])).toBe('it runs agentq-nope through env, and agentq-nope is not on PATH');
    expect(launchProblem('/usr/bin/env', env, dir, ['--', 'agentq-nope'])).toContain('agentq-nope is not on PATH');
    expect(launchProblem('env', env, dir, ['FOO=1', 'bash', '-c', 'nosuchcmd'])).toBeNull();
    // Regression: `env -S "bash -eu"` as the command's own argument is one word env splits: it was
    // taken for a program named "bash -eu", and the worker was refused.
    expect(launchProblem('env', env, dir, ['-S', 'bash -eu', '-c', 'true'])).toBeNull();
    expect(launchProblem('env', env, dir, ['-Sbash -eu', '-c', 'true'])).toBeNull();
    expect(launchProblem('env', env, dir, ['--split-string=bash -eu', '-c', 'true'])).toBeNull();
    expect(launchProblem('env', env, dir, ['-S', 'A=1 agentq-nope -u', 'x.py'])).toBe('it runs agentq-nope through env, and agentq-nope is not on PATH');
    // quotes, escapes and variables are env's to read: not judged
    expect(launchProblem('env', env, dir, ['-S', '"agentq nope" x'])).toBeNull();
    expect(launchProblem('env', env, dir, ['-S', '${PY} x.py'])).toBeNull();
  });

  // `agentq worker -- bash ./run.sh` with the name misspelt: bash exits 127 for every job, which
  // (the shell itself being there) read as a command missing inside the script, failing them all.
  it('names the script a shell given as the command is told to run, when it is not there', () => {
    const ok = script('run.sh', '#!/bin/sh');
    expect(launchProblem('bash', env, dir, [ok])).toBeNull();
    expect(launchProblem('bash', env, dir, ['-eu', '-o', 'pipefail', 'run.sh', 'arg'])).toBeNull();
    expect(launchProblem('/bin/sh', env, dir, ['./nope.sh'])).toBe('the script it runs, ./nope.sh, is not there');
    expect(launchProblem('bash', env, dir, ['-x', '--', 'nope.sh'])).toBe('the script it runs, nope.sh, is not there');
    // no script file: commands from -c or stdin
    expect(launchProblem('bash', env, dir, ['-c', 'nope.sh'])).toBeNull();
    expect(launchProblem('bash', env, dir, ['-euc', 'x', 'nope.sh'])).toBeNull();
    expect(launchProblem('sh', env, dir, ['-s', 'nope.sh'])).toBeNull();
    expect(launchProblem('bash', env, dir, [])).toBeNull();
    // bash also finds a script on PATH
    expect(launchProblem('bash', { PATH: `${dir}:${env.PATH}` }, '/', ['run.sh'])).toBeNull();
  });

  // `agentq worker -- node handler.js` (or python3, ruby, deno, bun) with the file misspelt: node
  // exits 1 "Cannot find module", python 2 "can't open file", for every job, each read as the
  // job's own failure (HANDLER_FAILED, straight to the DLQ).
  it('names the script a well-known interpreter given as the command is told to run, when it is not there', () => {
    const ok = script('handler.js', '// js');
    script('agent.py', '# py');
    script('run.rb', '# rb');
    script('main.ts', '// ts');
    const missing = (cmd: string, args: string[]) => launchProblem(cmd, interpreters(), dir, args);
    // there (node finds `handler` as handler.js; a loader such as tsx finds x.ts for x.js)
    expect(missing(process.execPath, [ok])).toBeNull();
    expect(missing('node', ['--enable-source-maps', '--env-file', '.env', 'handler.js', 'arg'])).toBeNull();
    expect(missing('node', ['handler'])).toBeNull();
    expect(missing('node', ['--import', 'tsx', 'main.js'])).toBeNull();
    expect(missing('python3', ['-u', '-W', 'ignore', 'agent.py'])).toBeNull();
    // not there
    expect(missing('node', ['missing-file.js'])).toBe('the script it runs, missing-file.js, is not there');
    expect(missing('node', ['--enable-source-maps', '-r', 'dotenv/config', 'dist/nope.js', '--flag'])).toBe('the script it runs, dist/nope.js, is not there');
    expect(missing('python3', ['nosuch.py'])).toBe('the script it runs, nosuch.py, is not there');
    expect(missing('python3', ['-uB', '--', 'nosuch.py'])).toBe('the script it runs, nosuch.py, is not there');
    expect(missing('python3.12', ['-X', 'dev', 'nosuch.py'])).toBe('the script it runs, nosuch.py, is not there');
    expect(missing('ruby', ['-w', '-r', 'json', 'nope.rb'])).toBe('the script it runs, nope.rb, is not there');
    expect(missing('deno', ['run', '-A', '--config', 'deno.json', 'nope.ts'])).toBe('the script it runs, nope.ts, is not there');
    expect(missing('bun', ['--watch', './nope.ts'])).toBe('the script it runs, ./nope.ts, is not there');
    // through env, as for a #! line
    expect(missing('env', ['NODE_ENV=production', 'node', 'missing-file.js'])).toBe('it runs node through env, and the script it runs, missing-file.js, is not there');
    // an option this reading does not know may take the next word: both names must be missing
    expect(missing('node', ['--some-new-option', 'value', 'handler.js'])).toBeNull();
    expect(missing('node', ['--some-new-option', 'handler.js'])).toBeNull();
    expect(missing('node', ['--some-new-option', 'value', 'nope.js'])).toBe('the script it runs (value or nope.js) is not there');
  });

  it('does not judge an interpreter given code inline, from stdin, from elsewhere, or a launcher that resolves names itself', () => {
    const none = (cmd: string, args: string[]) => expect(launchProblem(cmd, interpreters(), dir, args), `${cmd} ${args.join(' ')}`).toBeNull();
    none('node', ['-e', 'nope.js']);
    none('node', ['--test', 'nope.test.js']);
    none('node', ['-']);
    none('node', ['inspect', 'handler.js']); // the debugger, a subcommand
    none('node', []);
    none('node', ['--some-new-option', 'nope.js']); // maybe its value, and then a REPL
    none('node', ['--experimental-test-isolation', 'none', '--test']); // a valued option this reading does not list
    none('python3', ['-c', 'print(1)', 'nope.py']);
    none('python3', ['-m', 'nope']);
    none('python3', ['-um', 'nope']);
    none('ruby', ['-e', 'puts 1', 'nope.rb']);
    none('ruby', ['-C', '/elsewhere', 'nope.rb']);
    none('ruby', ['-S', 'nope']);
    none('bun', ['run', 'dev']); // a package.json script
    none('bun', ['build', './nope.ts']);
    none('bun', ['--cwd', '/elsewhere', './nope.ts']);
    none('deno', ['run', 'https://example.com/nope.ts']);
    none('deno', ['run', 'npm:cowsay']);
    none('deno', ['task', 'start']);
    none('npx', ['tsx', 'nope.ts']);
    none('uv', ['run', 'nope.py']);
  });

  it('does not judge where env looks the program up elsewhere (-i, PATH=…, -C): a worker is never refused for a program that would be found', () => {
    expect(launchProblem('env', env, dir, ['-i', 'agentq-nope'])).toBeNull();
    expect(launchProblem('env', env, dir, [`PATH=${dir}`, 'agentq-nope'])).toBeNull();
    expect(launchProblem(script('env-i.sh', '#!/usr/bin/env -S -i agentq-nope'), env)).toBeNull();
  });
});
