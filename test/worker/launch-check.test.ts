/**
 * launchProblem: whether a handler command, the interpreter its #! line names and the program
 * `env` runs can be found. Real files in a temporary directory; no process is started.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  it('does not judge where env looks the program up elsewhere (-i, PATH=…, -C): a worker is never refused for a program that would be found', () => {
    expect(launchProblem('env', env, dir, ['-i', 'agentq-nope'])).toBeNull();
    expect(launchProblem('env', env, dir, [`PATH=${dir}`, 'agentq-nope'])).toBeNull();
    expect(launchProblem(script('env-i.sh', '#!/usr/bin/env -S -i agentq-nope'), env)).toBeNull();
  });
});
