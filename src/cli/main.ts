/**
 * The one place that turns outcomes into exit codes and prints errors.
 *
 * `main(argv, env)` runs one invocation with injected streams and returns the
 * exit code (tests call it in-process); `runCli()` is what `bin/agentq.js`
 * calls: it wires the real process (signals, exit). Nothing else in agentq
 * calls `process.exit`.
 *
 * Error reporting:
 * - AgentqError → `error: message` (+ `hint: ...`) on stderr, its exit code;
 * - commander usage errors → commander's message, exit 2;
 * - anything else is a bug → `internal error: ...` and a ready-to-file report line, exit 1;
 * - stack traces only with `--debug` or `AGENTQ_DEBUG=1`;
 * - every message has credentials redacted and control characters made visible.
 */
import { createRequire } from 'node:module';
import type { Command, CommanderError, OutputConfiguration } from 'commander';
import type { Backend } from '../backend/contract.js';
import { systemClock, type Clock } from '../core/clock.js';
import { AgentqError, ExitCode, InterruptedError } from '../core/errors.js';
import { setResumeTarget } from '../core/resume-target.js';
// Only what every invocation needs is imported here; what a running command needs
// (context, config, output formats, colour) is imported when one runs, so
// `agentq --help` and usage errors load as few modules as possible.
import type { CliContext, CliIo, GlobalOptions } from './context.js';
import type { BackendPolicy } from '../core/policy.js';
import { redactCredentials } from './output/redact.js';
import { resumeTargetOf } from './resume-flags.js';
import { directWriter } from './output/direct-write.js';
import type { LogOutput } from './output/log-writer.js';
import { sanitize } from './output/sanitize.js';
import { chromeFor, terminalCharset, type Charset } from './output/charset.js';
import { agentqVersion, buildProgram, firstOperand } from './program.js';

export interface MainEnv {
  io: CliIo;
  env: Record<string, string | undefined>;
  cwd: string;
  clock?: Clock;
  /** Aborted on Ctrl-C / SIGTERM / SIGHUP by `runCli`; the reason's message is the signal's name. */
  signal?: AbortSignal;
  /** Replaces `openBackend(url)` from `backend/open` (tests). */
  openBackend?: (url: string, policy: BackendPolicy) => Promise<Backend>;
  /** Called when a command passes its read-only check (see `StdioProbe.mustFinish`). */
  mustFinish?: () => void;
  /** What the running command does with a first stop signal (see `StopGate`); runCli reads it. */
  stops?: StopGate;
  /**
   * Called when the command's output becomes a daemon's log (`agentq worker`, see output/log-writer.ts):
   * it never waits for its reader, and `main` has given it a bounded time to drain before returning.
   */
  onLogOutput?: () => void;
  /** Where commander's own text (help, usage errors) goes; by default `io.stdout` / `io.stderr`. */
  messages?: Pick<OutputConfiguration, 'writeOut' | 'writeErr' | 'getOutHelpWidth' | 'getErrHelpWidth'>;
}

/**
 * What the entry (bin/agentq.js) knows about the process's stdout and stderr
 * without creating their streams (reading `process.stdout` creates it).
 */
export interface StdioProbe {
  /** Whether `process[name]` has been created already. */
  created(name: 'stdout' | 'stderr'): boolean;
  /** Whether the fd is a terminal. */
  isTerminal(fd: 1 | 2): boolean;
  /** The command started changing state: a reader that goes away (EPIPE on stdout) must not end it. */
  mustFinish?(): void;
  /**
   * The user's own values of the variables the entry set for agentq itself (FORCE_COLOR carrying its
   * colour decision, NO_COLOR and DEBUG dropped, the AWS SDK's Node warning off), undefined for unset: the
   * commands see, and pass on to handlers and effect commands, the environment the user gave.
   */
  userEnv?: Readonly<Record<string, string | undefined>>;
}

/** `env` with the user's own values back in place of those the entry set (see StdioProbe.userEnv). */
export function withUserEnv(env: NodeJS.ProcessEnv, userEnv: Readonly<Record<string, string | undefined>> | undefined): Record<string, string | undefined> {
  if (!userEnv) return env;
  const out: Record<string, string | undefined> = { ...env };
  for (const [k, v] of Object.entries(userEnv)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Without the entry's probe: the streams themselves (reading them creates them). */
const streamsProbe: StdioProbe = {
  created: () => true,
  isTerminal: (fd) => (fd === 1 ? process.stdout : process.stderr).isTTY === true,
};

/**
 * Rewrites `--color`, `--color X` and `--no-color` to `--color=X` before
 * commander sees them: commander would take the next word as the value of an
 * optional `--color [when]` (`agentq --color list` → colour "list", no command),
 * so the option is declared with a required value and normalised here.
 */
export function normaliseArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a === '--no-color') out.push('--color=never');
    else if (a === '--color') {
      const next = argv[i + 1];
      if (next === 'auto' || next === 'always' || next === 'never' || isMistypedColour(argv, i)) {
        // A mistyped value (`--color sometimes list`) is handed to commander as the value, which
        // names the valid ones, instead of becoming the command ("unknown command 'sometimes'").
        out.push(`--color=${next}`);
        i++;
      } else out.push('--color=always');
    } else out.push(a);
  }
  return out;
}

/**
 * `--color X` before the command word, where X is no option and no command: X was meant as the
 * colour. After the command word a bare `--color` may be followed by an argument
 * (`inspect --color job_…`), so only the command position is judged.
 */
function isMistypedColour(argv: readonly string[], at: number): boolean {
  const next = argv[at + 1];
  if (next === undefined || next.startsWith('-') || firstOperand(argv.slice(0, at)) !== undefined) return false;
  const commands = buildProgram({ run: async () => {} }).commands;
  return !commands.some((c) => c.name() === next || c.aliases().includes(next));
}

function isCommanderError(e: unknown): e is CommanderError {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === 'string' && code.startsWith('commander.');
}

const COMMANDER_OK = new Set(['commander.helpDisplayed', 'commander.version']);

/**
 * Safe to print: credentials redacted, control characters visible. An error or hint is one line,
 * so a line break in it (from stored data or an argument: `dlq show $'x\nhint: …'`) shows as `\n`
 * instead of forging a line of its own; `isMultiLine` keeps them, for a stack trace and
 * commander's own usage messages.
 */
export function printable(message: string, isMultiLine = false): string {
  return sanitize(redactCredentials(message), { allowNewlines: isMultiLine });
}

export async function main(argv: readonly string[], m: MainEnv): Promise<number> {
  const { env } = m;
  let io = m.io;
  /** A daemon's output (see `onLogOutput`): flushed for a bounded time before returning. */
  let log: LogOutput | undefined;
  const args = normaliseArgv(argv);
  // Only agentq's own flags count: `worker -- cmd --debug` passes --debug to the handler.
  const ownArgs = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  const debug = env.AGENTQ_DEBUG === '1' || ownArgs.includes('--debug');
  let ctx: CliContext | undefined;
  const signal = m.signal ?? new AbortController().signal;
  // Help, usage errors and errors are read by a person: agentq's glyphs in ASCII when the locale is not UTF-8.
  const charset = terminalCharset(env);

  const program = buildProgram({
    run: async (cmd: Command, opts, runner) => {
      const [{ CliContext }, { resolveFormat }, { parseColourWhen, resolveColourLevel, createPalette }, configModule] = await Promise.all([
        import('./context.js'),
        import('./output/format.js'),
        import('./output/colour.js'),
        import('./config.js'),
      ]);
      const globals = cmd.optsWithGlobals() as GlobalOptions;
      const when = parseColourWhen(globals.color);
      const stdoutTTY = io.stdout.isTTY === true;
      const palette = await createPalette(resolveColourLevel({ when, env, isTTY: stdoutTTY }));
      const format = resolveFormat(globals.output, globals.json, stdoutTTY);
      // A worker is a daemon: a reader that stops reading its log must not stop its heartbeats.
      if (isDaemon(cmd)) {
        const { logOutput } = await import('./output/log-writer.js');
        log = logOutput(io, { isMachine: format === 'json' || format === 'ndjson' });
        io = log.io;
        m.onLogOutput?.();
      }
      ctx = new CliContext({
        io,
        env,
        cwd: m.cwd,
        clock: m.clock ?? systemClock,
        globals,
        format,
        palette,
        signal,
        // Read on first use, so commands that need no backend never fail on a broken config file.
        loadConfig: () => configModule.resolveConfigLenient({ flags: { url: globals.url, context: globals.context }, env, cwd: m.cwd }),
        open: async (url, policy) => (m.openBackend ? m.openBackend(url, policy) : (await import('../backend/open.js')).openBackend(url, policy)),
        defaultUrl: async () => (await import('../backend/open.js')).defaultDataUrl(env),
        // (the prompt ends on a first signal itself, saying nothing was changed)
        readLine: (q) => {
          const release = m.stops?.hold();
          return readLine(io, q, signal).finally(() => release?.());
        },
        mustFinish: () => {
          m.stops?.changing();
          m.mustFinish?.();
        },
        handleStops: () => m.stops?.hold() ?? (() => undefined),
        interruptNote: (note) => m.stops?.setExitNote(note),
      });
      // A resume command printed by this invocation names the store it used (--context / --url).
      setResumeTarget(resumeTargetOf(globals));
      try {
        await runner(opts, ctx);
      } finally {
        setResumeTarget(null);
      }
    },
    // Every message commander prints goes through the same rules as ours.
    output: {
      ...m.messages,
      writeOut: (s) => (m.messages?.writeOut ?? ((t: string) => void io.stdout.write(t)))(chromeFor(charset, s)),
      writeErr: (s) => (m.messages?.writeErr ?? ((t: string) => void io.stderr.write(t)))(chromeFor(charset, s)),
      outputError: (s, write) => write(printable(s, true)),
    },
  }, { commandHint: firstOperand(args) });
  try {
    await program.parseAsync(args, { from: 'user' });
    return ExitCode.ok;
  } catch (e) {
    return reportError(e, { io, debug: debug || (ctx?.debug ?? false), argv: args, charset });
  } finally {
    if (ctx) {
      try {
        // A command that stopped on a signal has had the answers it waited for: whatever is still
        // unanswered (a frozen Redis) must not hold its exit (QUIT waited 2 s after a tail --follow).
        await ctx.close({ now: signal.aborted });
      } catch (e) {
        if (debug) io.stderr.write(printable(`warning: closing the backend failed: ${(e as Error).message}`) + '\n');
      }
    }
    await log?.flush();
  }
}

/** Commands whose output is a daemon's log (see output/log-writer.ts): `agentq worker`. */
function isDaemon(cmd: Command): boolean {
  return cmd.name() === 'worker' && cmd.parent?.parent === null;
}

/** Prints an error the way an operator should see it and returns its exit code. */
export function reportError(e: unknown, o: { io: CliIo; debug: boolean; argv: readonly string[]; charset?: Charset }): number {
  const { debug } = o;
  const io = { stderr: { write: (s: string) => o.io.stderr.write(chromeFor(o.charset ?? 'utf8', s)) } };
  if (isCommanderError(e)) {
    if (COMMANDER_OK.has(e.code)) return ExitCode.ok;
    // `agentq` or `agentq context` without a subcommand: commander shows the help on stderr as an error.
    if (e.code === 'commander.help') return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    // commander already printed its message (through outputError).
    return ExitCode.usage;
  }
  if (e instanceof AgentqError) {
    io.stderr.write(printable(`error: ${e.message}`) + '\n');
    if (e.hint) io.stderr.write(printable(`hint: ${e.hint}`) + '\n');
    if (debug && e.stack) io.stderr.write(printable(e.stack, true) + '\n');
    return e.exitCode;
  }
  const err = e instanceof Error ? e : new Error(String(e));
  io.stderr.write(printable(`internal error: ${err.message}`) + '\n');
  io.stderr.write(
    printable(
      `This is a bug in agentq. Please report it with this line: agentq ${agentqVersion()}; node ${process.version}; ${process.platform}-${process.arch}; ` +
        `command: agentq ${o.argv.map(shortArg).join(' ')}; error: ${err.name}: ${err.message}`,
    ) + '\n',
  );
  if (debug && err.stack) io.stderr.write(printable(err.stack, true) + '\n');
  else io.stderr.write('Run again with --debug (or AGENTQ_DEBUG=1) for a stack trace.\n');
  return ExitCode.failure;
}

/** An argument as the bug report line shows it: a long one (an inline --input) is cut, so the line stays one line to copy, without the job's data. */
function shortArg(a: string): string {
  return a.length > 120 ? `${a.slice(0, 80)}…(${a.length} characters)` : a;
}

/**
 * One line from the operator's terminal; the prompt goes to stderr so stdout stays data.
 * node:readline is loaded here, when a prompt is shown, with require and not import(): this
 * module runs from a chunk compiled with the V8 code cache (bin/code-cache.js), and on Node 20
 * an import() in cached code fails ("A dynamic import callback was not specified"), which broke
 * every confirmation prompt on a terminal (tested by test/e2e/prompt-tty.test.ts).
 */
async function readLine(io: CliIo, question: string, signal: AbortSignal): Promise<string> {
  const { createInterface } = createRequire(import.meta.url)('node:readline') as typeof import('node:readline');
  const rl = createInterface({ input: io.stdin as NodeJS.ReadableStream, output: io.stderr as NodeJS.WritableStream, terminal: true });
  let onStop: (() => void) | undefined;
  try {
    return await new Promise<string>((resolve, reject) => {
      // A SIGTERM or SIGHUP (a supervisor, a closed session) asks the command to stop, and a prompt
      // is no point it gets past: it waited on for an answer until a second signal. Nothing was
      // changed yet, so it ends now, with the signal's status.
      onStop = () => {
        io.stderr.write('\n');
        const sig = String((signal.reason as Error | undefined)?.message ?? '');
        const code = sig in STOP_SIGNALS ? STOP_SIGNALS[sig as StopSignal] : ExitCode.interrupted;
        reject(new AgentqError('INTERRUPTED', 'interrupted at the prompt: nothing was changed', code));
      };
      if (signal.aborted) return onStop();
      signal.addEventListener('abort', onStop, { once: true });
      rl.once('close', () => reject(new AgentqErrorClosed()));
      // The terminal went away while asking (setRawMode EIO): no answer, nothing changed.
      rl.once('error', () => reject(new InterruptedError('the terminal went away at the prompt: nothing was changed')));
      // The terminal is raw while readline reads, so Ctrl-C arrives here, not as a signal.
      rl.once('SIGINT', () => {
        io.stderr.write('\n');
        reject(new InterruptedError('interrupted at the prompt: nothing was changed'));
      });
      rl.question(question, resolve);
    });
  } finally {
    if (onStop) signal.removeEventListener('abort', onStop);
    rl.close();
  }
}

class AgentqErrorClosed extends AgentqError {
  constructor() {
    super('DECLINED', 'no answer (input closed)', ExitCode.declined);
  }
}

/**
 * The signals that ask a command to stop, and the status a second one exits with at once (a
 * shell's: 128 + the signal's number). SIGHUP is one of them: closing the terminal a worker runs
 * in used to kill it on the spot (129), leaving its handlers running with their leases.
 */
export const STOP_SIGNALS = { SIGINT: ExitCode.interrupted, SIGTERM: 143, SIGHUP: 129 } as const satisfies Partial<Record<NodeJS.Signals, number>>;
export type StopSignal = keyof typeof STOP_SIGNALS;

/**
 * Whether the running command has a use for a first stop signal. A command that only reads and
 * waits on the store (list, inspect, stats, dlq list …) has no safe point to reach: it used to
 * ignore a first Ctrl-C until its call gave up (15 s on a frozen Redis, then exit 75), where a
 * person expects it to end, as kubectl's or aws's does. So the first signal ends the invocation at
 * once unless the command holds the gate (`CommandContext.handleStops`: a worker, tail --follow,
 * stats --watch, metrics serve, the TUI), or has started changing state (`mustFinish`: a submit, a
 * cancel, a redrive), which stops at its next safe point and is told so on stderr at once.
 */
export class StopGate {
  private holds = 0;
  private isChanging = false;
  private note: string | null = null;

  /**
   * What a first signal that ends the command at once says on stderr (null: nothing, as a read).
   * A command that reads for a while before it changes anything (a redrive planning) says that
   * nothing was changed, instead of ending without a word.
   */
  setExitNote(note: string | null): void {
    this.note = note;
  }

  /** The note set with `setExitNote`. */
  exitNote(): string | null {
    return this.note;
  }

  /** The command stops at safe points of its own from now until the returned function is called. */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (!released) this.holds--;
      released = true;
    };
  }

  /** The command started changing state: a first signal asks it to stop at its next safe point. */
  changing(): void {
    this.isChanging = true;
  }

  /** What a first stop signal does now: end at once, ask the command (which says what it does), or ask it and say so here. */
  onFirstSignal(): 'exit' | 'ask' | 'ask-and-note' {
    if (this.holds > 0) return 'ask';
    return this.isChanging ? 'ask-and-note' : 'exit';
  }
}

/**
 * At exit, points the stdio fds that were a terminal now gone (a hang-up) at /dev/null just before
 * the process ends. On exit Node restores each terminal's settings and aborts when that fails
 * (Node 20: the check nodejs/node#58200 removed), which a closed terminal always does: a worker
 * that had stopped cleanly on SIGHUP then died of SIGABRT. Node skips an fd that no longer is
 * the file it was at start-up, so the swap avoids the restore; nothing was changed on the
 * terminal that would need restoring (raw mode is only the TUI's, and it restores its own).
 */
function detachClosedTerminal(): void {
  const req = createRequire(import.meta.url);
  const { closeSync, fstatSync, openSync, statSync } = req('node:fs') as typeof import('node:fs');
  let devNull: number | undefined;
  for (const fd of [0, 1, 2]) {
    try {
      // A hung-up terminal is still a character device but answers isatty() with EIO, i.e. "not a
      // terminal"; a live one (a `kill -HUP` with the window open) is left for Node to restore.
      // /dev/null (stdin of most scripts) needs nothing, and is told apart without loading node:tty.
      const st = fstatSync(fd);
      if (!st.isCharacterDevice()) continue;
      devNull ??= statSync('/dev/null').rdev;
      if (st.rdev === devNull) continue;
      if ((req('node:tty') as typeof import('node:tty')).isatty(fd)) continue;
      closeSync(fd);
      // The lowest free fd is the one just closed (0-2 are taken in order).
      openSync('/dev/null', fd === 0 ? 'r' : 'w');
    } catch {
      // Best effort: the process is ending either way.
    }
  }
}

/**
 * The process entry (called by bin/agentq.js): real streams, signals, exit.
 * The first Ctrl-C, SIGTERM or SIGHUP aborts `ctx.signal` (its reason an Error
 * whose message is the signal's name) so a command can stop at a safe point
 * (tail --follow ends, a redrive finishes its batch, a worker stops claiming);
 * a command with no such point (a read waiting on the store) ends at once
 * (see `StopGate`); a second one always exits at once (130, 143, 129).
 */
export async function runCli(argv: readonly string[] = process.argv.slice(2), stdio: StdioProbe = streamsProbe): Promise<void> {
  const controller = new AbortController();
  const stops = new StopGate();
  let interrupts = 0;
  // At every exit, not only after a SIGHUP: the terminal can go away without one reaching us (the
  // TUI sees its input end first and quits; a prompt's terminal closes), and Node then aborted
  // (exit 139) restoring it.
  process.once('exit', detachClosedTerminal);
  const onSignal = (sig: StopSignal) => {
    interrupts++;
    const first = stops.onFirstSignal();
    if (interrupts === 1 && first === 'exit') {
      const note = stops.exitNote();
      if (note !== null) process.stderr.write(`interrupted: ${note}\n`);
    }
    if (interrupts > 1 || first === 'exit') process.exit(STOP_SIGNALS[sig]);
    if (first === 'ask-and-note') {
      const again = sig === 'SIGINT' ? 'Ctrl-C again' : `${sig} again`;
      process.stderr.write(`interrupted: waiting for the store to answer the call under way, then stopping (${again} to exit at once; what it was changing may then be half done)\n`);
    }
    controller.abort(new Error(sig));
  };
  for (const sig of Object.keys(STOP_SIGNALS) as StopSignal[]) process.on(sig, onSignal);
  // SIGQUIT (Ctrl-\) means "quit now". Left to Node's default it killed the process outright, so
  // nothing ran at exit: a worker's handlers, in process groups of their own, ran on as orphans
  // with their leases (the job ran twice). Now it exits at once as a second stop signal does,
  // which kills them on the way out (131: 128 + SIGQUIT).
  process.on('SIGQUIT', () => process.exit(131));
  // Help on stdout whose reader went away: exit quietly, as the entry does for a reading command.
  // A message on stderr nobody reads: dropped, so a usage error still exits 2.
  const onClosed = () => process.exit(ExitCode.ok);
  const onErrClosed = () => undefined;
  let isLogOutput = false;
  const code = await main(argv, {
    // On first use only: creating a stdio stream loads Node's stream and socket modules (for a
    // pipe or a terminal), which `agentq --help` and `inspect` never need (a measurable share of their start-up).
    io: {
      get stdout() {
        return process.stdout;
      },
      get stderr() {
        return process.stderr;
      },
      get stdin() {
        return process.stdin;
      },
    },
    // Help and usage errors go straight to the fd while nothing else has used its stream.
    messages: {
      writeOut: directWriter({ fd: 1, stream: () => process.stdout, streamCreated: () => stdio.created('stdout'), onClosed }),
      writeErr: directWriter({ fd: 2, stream: () => process.stderr, streamCreated: () => stdio.created('stderr'), onClosed: onErrClosed }),
      // Commander's own rule without reading the stream unless it is a terminal (80: commander's default width).
      getOutHelpWidth: () => (stdio.isTerminal(1) ? process.stdout.columns : undefined) ?? 80,
      getErrHelpWidth: () => (stdio.isTerminal(2) ? process.stderr.columns : undefined) ?? 80,
    },
    env: withUserEnv(process.env, stdio.userEnv),
    cwd: process.cwd(),
    signal: controller.signal,
    mustFinish: () => stdio.mustFinish?.(),
    onLogOutput: () => (isLogOutput = true),
    stops,
  });
  // Exit explicitly: an open handle (a timer, a socket) must not keep a finished command alive.
  process.exitCode = code;
  // But first let the reader take what stdout still holds. Writes to a file are synchronous; to a
  // pipe only while it has room, and the rest is queued: exiting then would cut the output short
  // (`agentq list --all -o ndjson | slow-consumer` lost all but the first ~1,500 lines of 200,000
  // when this wait gave up after a second). A reader that goes away ends the wait (close/error,
  // then EPIPE); one that never reads keeps the command waiting, as with any Unix producer, and a
  // second Ctrl-C still exits at once.
  // A daemon's log was given its bounded time by main: a log collector that stalled does not hold
  // a worker's exit (its supervisor would SIGKILL it, handlers and all).
  if (!isLogOutput && stdio.created('stdout') && process.stdout.writableLength > 0 && !process.stdout.destroyed) {
    // Writes are done in order: the callback of an empty one comes after everything before it.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  }
  process.exit(code);
}
