/**
 * Whether a handler command can be launched at all: the file itself and, when it is a script, the
 * interpreter its `#!` line names (for `#!/usr/bin/env python3`, `python3` on the handler's PATH);
 * and, when it is a shell or a well-known interpreter, the script it is told to run.
 *
 * Exit 127 means "command not found" both when `env` cannot find a script's interpreter (every job
 * would fail alike: the worker must stop before it drains the queue into the DLQ) and when a
 * command in the middle of a script is missing (one job's ordinary failure). The exit status
 * cannot tell them apart, but the launch chain can: it is checked at start-up (a worker whose
 * handler cannot run does not start), and again when a handler exits 127 or 126, to decide which
 * of the two it was.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { interpreterScript, scriptMissing } from './interpreter-script.js';

/** The kernel reads at most this much of a `#!` line (BINPRM_BUF_SIZE on Linux 5.1+). */
const SHEBANG_MAX = 256;
/** Interpreters that are scripts themselves (Linux allows a few levels); more is a loop. */
const MAX_DEPTH = 4;

/**
 * What stops `command` from being launched, in words, or null when the file and the interpreters
 * its `#!` lines name are there and executable. `command` is a path (with a `/`, relative to
 * `cwd`) or a name looked up on `env.PATH`, as spawn does.
 */
export function launchProblem(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string = process.cwd(),
  args: readonly string[] = [],
): string | null {
  const problem = check(command, env, cwd, 0);
  if (problem !== null) return problem;
  if (basename(command) !== 'env') return scriptProblem(command, args, env, cwd);
  // `agentq worker -- env FOO=1 python3 handler.py`: env exits 127 when python3 is missing, as on a `#!` line.
  const words = envProgram([...args]);
  if (words === null) return null;
  const [program, ...rest] = words as [string, ...string[]];
  const missing = check(program, env, cwd, 1) ?? scriptProblem(program, rest, env, cwd);
  return missing === null ? null : `it runs ${program} through ${command}, and ${missing}`;
}

/**
 * The script file a shell or a well-known interpreter given as the command is told to run, when
 * it is not there: `agentq worker -- bash ./run.sh` (bash exits 127 for every job) or
 * `-- node handler.js`, `-- python3 agent.py` with the name misspelt (node exits 1 with "Cannot
 * find module", python 2 with "can't open file": every job failed as if by its own fault).
 */
function scriptProblem(command: string, args: readonly string[], env: Readonly<Record<string, string | undefined>>, cwd: string): string | null {
  if (SHELLS.has(basename(command))) {
    const file = shellScript(args);
    return file !== null && !scriptFound(file, env, cwd) ? `the script it runs, ${file}, is not there` : null;
  }
  const ref = interpreterScript(command, args);
  if (ref === null || !scriptMissing(ref, cwd)) return null;
  // (two names when an option this reading does not know may have taken the first as its value)
  return ref.candidates.length === 1 ? `the script it runs, ${ref.candidates[0]}, is not there` : `the script it runs (${ref.candidates.join(' or ')}) is not there`;
}

/** Whether `launchProblem` reads a script file out of these arguments (a shell's or an interpreter's), directly or through `env`. */
export function namesScript(command: string, args: readonly string[]): boolean {
  if (basename(command) === 'env') {
    const words = envProgram([...args]);
    return words !== null && namesScript(words[0]!, words.slice(1));
  }
  return SHELLS.has(basename(command)) ? shellScript(args) !== null : interpreterScript(command, args) !== null;
}

function check(command: string, env: Readonly<Record<string, string | undefined>>, cwd: string, depth: number): string | null {
  const path = locate(command, env, cwd);
  if (path === null) return command.includes('/') ? `${command} is not an executable file` : `${command} is not on PATH`;
  if (depth >= MAX_DEPTH) return null; // deeper than the kernel follows: let the spawn say
  const line = shebang(path);
  if (line === null) return null;
  const [interpreter, ...rest] = line.split(/[ \t]+/).filter((w) => w !== '');
  if (interpreter === undefined) return `${path} has an empty #! line`;
  // The kernel takes a #! interpreter as a path (relative to the working directory), never
  // looking it up on PATH.
  const inner = check(interpreter.includes('/') ? interpreter : `./${interpreter}`, env, cwd, depth + 1);
  if (inner !== null) return `the interpreter its #! line names (${interpreter}) cannot run: ${inner}`;
  if (basename(interpreter) !== 'env') return null;
  const program = envProgram(rest)?.[0];
  if (program === undefined) return null;
  const missing = check(program, env, cwd, depth + 1);
  return missing === null ? null : `its #! line runs ${program} through ${interpreter}, and ${missing}`;
}

/** Shells that run a script file named by their first operand. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash']);

/**
 * The script a shell's arguments name: the first operand, unless -c or -s says the commands come
 * from elsewhere. The options that take a value (-o/+o NAME, -O/+O NAME, --rcfile/--init-file
 * FILE) skip it. Null when there is no script file (a shell reading stdin, -c).
 */
function shellScript(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || a === '-') return a === '--' ? (args[i + 1] ?? null) : null;
    if (/^[-+][a-zA-Z]*[cs]/.test(a) && !a.startsWith('--')) return null;
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-') || a.startsWith('+')) continue;
    return a;
  }
  return null;
}

/** Whether a shell finds the script: in the working directory, else (bash does) on PATH. */
function scriptFound(file: string, env: Readonly<Record<string, string | undefined>>, cwd: string): boolean {
  const isFile = (p: string): boolean => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (isFile(isAbsolute(file) ? file : resolve(cwd, file))) return true;
  if (file.includes('/')) return false;
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && isFile(join(dir, file)));
}

/** The executable file a command names, or null when there is none (missing, not a file, not executable). */
function locate(command: string, env: Readonly<Record<string, string | undefined>>, cwd: string): string | null {
  if (command.includes('/')) {
    const p = isAbsolute(command) ? command : resolve(cwd, command);
    return runnable(p) ? p : null;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && runnable(join(dir, command))) return join(dir, command);
  }
  return null;
}

function runnable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The rest of the file's `#!` line, or null when it has none (a binary, or unreadable: the spawn decides). */
function shebang(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(SHEBANG_MAX);
    const n = readSync(fd, buf, 0, SHEBANG_MAX, 0);
    if (n < 2 || buf[0] !== 0x23 || buf[1] !== 0x21) return null;
    const end = buf.subarray(0, n).indexOf(0x0a);
    // A CR is kept: the kernel takes it as part of the interpreter's name (`/bin/bash\r`, a script
    // saved with Windows line ends), so the spawn would fail, and the message shows it.
    return buf.subarray(2, end < 0 ? n : end).toString('utf8').replace(/^[ \t]+|[ \t]+$/g, '');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The program `env ARGS` runs, with its arguments after it: the first word that is neither an option nor a NAME=VALUE
 * assignment. `-S` splits its argument into words (`#!/usr/bin/env -S python3 -u`); `-u NAME`
 * skips its value. Null when there is none (env then prints its environment), and when env looks
 * the program up elsewhere than on the PATH checked here (`-i`, `PATH=…`, `-P`, `-C DIR`) or
 * takes options beyond this reading: then the exit status alone decides nothing, and a worker is
 * never refused for a program that would in fact be found.
 */
function envProgram(words: string[]): string[] | null {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--') return i + 1 < words.length ? words.slice(i + 1) : null;
    if (w === '-u' || w === '--unset') {
      i++;
      continue;
    }
    // -S STRING: env splits STRING into words itself (the kernel hands a `#!` line's rest over as
    // one word). Quotes, escapes and ${VAR} in it are env's to read: then nothing is judged.
    const split = w === '-S' || w === '--split-string' ? words[++i] : w.startsWith('--split-string=') ? w.slice(15) : w.startsWith('-S') ? w.slice(2) : undefined;
    if (split !== undefined) {
      if (/["'\\$]/.test(split)) return null;
      return envProgram([...split.split(/[ \t]+/).filter((x) => x !== ''), ...words.slice(i + 1)]);
    }
    if (w === '-v' || w === '--debug' || w === '-0' || w === '--null') continue;
    if (w.startsWith('-') || w.startsWith('PATH=')) return null;
    if (/^[^=]+=/.test(w)) continue;
    return words.slice(i);
  }
  return null;
}
