/**
 * Whether a command given as an argv can be started, checked before anything
 * depends on it: `agentq worker` checks its handler at start-up (a typo fails
 * the worker, not every job it would claim), and `agentq job effect` checks
 * its command before recording the effect started (a command that cannot run
 * did nothing external, so the job must not count as partially completed).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ValidationError } from '../core/errors.js';

/**
 * The command to spawn: a path (anything with a `/`) made absolute, or a name found on `PATH`
 * (returned as is, for spawn to look up the same way). Throws a `ValidationError` (exit 2)
 * naming `what` when the file is missing, not a file, or not executable.
 */
export function resolveExecutable(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  what = 'handler command',
): string {
  const isRunnable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const p = isAbsolute(command) ? command : resolve(cwd, command);
    if (!isRunnable(p)) throw new ValidationError(`${what} ${JSON.stringify(command)} is not an executable file`, 'Check the path and its execute permission (chmod +x).');
    return p;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isRunnable(join(dir, command))) return command;
  }
  throw new ValidationError(`${what} ${JSON.stringify(command)} was not found on PATH`, 'Give a path (./run-agent.sh) or install the command.');
}
