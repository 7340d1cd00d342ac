/**
 * What every command gets besides its own options: streams, environment,
 * clock, output format, colour, configuration, the backend, and the means to
 * ask the operator. Built once per invocation by `main`; commands never touch
 * `process` themselves, so they can be run in-process by tests with fake
 * streams.
 */
import { chromeFor, terminalCharset, type Charset } from './output/charset.js';
import type { Backend } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import type { FairnessOptions } from '../core/fairness.js';
import { DeclinedError, PermissionError } from '../core/errors.js';
import type { Palette } from './output/colour.js';
import type { OutputFormat, OutputTarget } from './output/format.js';
import type { ResolvedConfig } from './config.js';
import { mergeFairness, type BackendPolicy } from '../core/policy.js';
import { sanitize } from './output/sanitize.js';
import { redactCredentials } from './output/redact.js';

export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
  /** A stream's backpressure (Node's Writable): true once a write returned false, until 'drain'. */
  writableNeedDrain?: boolean;
  once?(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  removeListener?(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
}

/**
 * Resolves once `stream` can take more (at once when it has room): a command that writes page
 * after page waits here, so a slow reader (`agentq list --all | slow-consumer`) holds the
 * producer back instead of the output piling up in memory. Also resolves if the stream closes
 * or fails (the reader went away; the entry's EPIPE handling ends the process).
 */
export function streamDrained(stream: OutStream): Promise<void> {
  if (!stream.writableNeedDrain || typeof stream.once !== 'function') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      for (const e of ['drain', 'close', 'error'] as const) stream.removeListener?.(e, done);
      resolve();
    };
    for (const e of ['drain', 'close', 'error'] as const) stream.once!(e, done);
  });
}

export interface InStream extends NodeJS.EventEmitter {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  pause?(): unknown;
  resume?(): unknown;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  stdin: InStream;
}

/** The options every command accepts (registered on the root program). */
export interface GlobalOptions {
  url?: string;
  context?: string;
  output?: string;
  json?: boolean;
  color?: string | boolean;
  /** `--no-input` sets this to false. */
  input?: boolean;
  debug?: boolean;
}

export interface ConfirmOptions {
  /** `--yes` was given: proceed without asking. */
  yes?: boolean;
  /**
   * For large or dangerous actions: the operator must type this exact text
   * (e.g. the number of jobs) instead of `y`.
   */
  typeToConfirm?: string;
}

export interface CommandContext {
  readonly io: CliIo;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly clock: Clock;
  /** stdin and stdout are terminals, not CI, and no `--no-input`. Computed once. */
  readonly isInteractive: boolean;
  readonly format: OutputFormat;
  /** Records go here (stdout); see `output/format.ts`. */
  readonly out: OutputTarget;
  readonly palette: Palette;
  /** UTF-8 or ASCII for agentq's own glyphs, from the locale (output/charset.ts); notes and warnings follow it. */
  readonly charset: Charset;
  readonly debug: boolean;
  /**
   * Aborted on the first Ctrl-C / SIGTERM / SIGHUP, if the command gets to see it: one that
   * neither holds `handleStops` nor has called `mustFinish` is ended at once instead (runCli).
   */
  readonly signal: AbortSignal;
  readonly globals: GlobalOptions;

  /**
   * Configuration and context (read on first use; a broken file throws ConfigError, exit 78, and
   * so does an unknown selected context unless `unknownContextOk`: `context list` and
   * `context use` must work with a stale currentContext, to get out of it).
   */
  config(opts?: { unknownContextOk?: boolean }): ResolvedConfig;
  /** The backend URL after precedence, with the embedded default filled in. */
  backendUrl(): Promise<string>;
  /**
   * Opens the backend once; `main` closes it at exit. It honours the context's fairness and
   * admission settings; `fairness` (a worker's flags) goes on top of the context's.
   * `create`: the command writes, so a missing SQLite store at the URL it was given is created.
   * Without it (reading commands) a missing store fails naming the path (exit 78): a mistyped
   * `--url sqlite:…` must not be answered from a new, empty store. The embedded default store
   * is created by any command, so `agentq list` works on a fresh machine.
   */
  openBackend(overrides?: { fairness?: FairnessOptions; create?: boolean }): Promise<Backend>;
  /**
   * The command is quitting while a backend call may never answer (a second Ctrl-C during a
   * redrive on a hung node): `main` then closes the backend without waiting for it, so the
   * process exits at once, as runCli's second Ctrl-C does.
   */
  abandonBackend?(): void;
  /** The queue a command uses when it got no `--queue`: the context's queue, else `default`. */
  defaultQueue(): string;
  /**
   * Throws PermissionError (exit 4) in a read-only context. Call before any mutation. Once passed,
   * the command finishes its work even if its stdout reader goes away (`mustFinish`).
   */
  assertMutable(action: string): void;
  /**
   * The command is about to change state: from here on a closed stdout (`agentq … | head -1`)
   * drops its output instead of ending it half way. `assertMutable` calls it; commands that
   * write without that check (`agentq job …` inside a handler) call it themselves.
   */
  mustFinish(): void;
  /**
   * From now until the returned function is called, the command stops on `signal` at safe points
   * of its own (a worker, tail --follow, stats --watch, metrics serve, the TUI), and says so itself:
   * a first Ctrl-C only aborts `signal`. Without it, a command that has changed nothing is ended by
   * a first Ctrl-C at once (it has nothing to finish).
   */
  handleStops(): () => void;
  /**
   * What a first Ctrl-C (SIGTERM, SIGHUP) that ends the command at once says on stderr, after
   * `interrupted: ` (null: nothing). For a command that reads for a while before it changes
   * anything: `the redrive plan was not finished; nothing was changed`.
   */
  interruptNote(note: string | null): void;
  /**
   * Asks before a mutation. `--yes` skips it; without a terminal and without
   * `--yes` it throws DeclinedError (exit 3); a "no" throws DeclinedError too.
   */
  confirm(question: string, opts?: ConfirmOptions): Promise<void>;
  /** Reads one line from the operator (terminal only). */
  prompt(question: string): Promise<string>;
  /** A line on stderr, credentials redacted and control characters made visible (line breaks kept). */
  note(message: string): void;
  warn(message: string): void;
}

export interface ContextDeps {
  io: CliIo;
  env: Record<string, string | undefined>;
  cwd: string;
  clock: Clock;
  globals: GlobalOptions;
  format: OutputFormat;
  palette: Palette;
  signal: AbortSignal;
  /** Resolves configuration (injected so tests can stub it). */
  /** May leave an unknown selected context in `unknownContext` (see `config()`). */
  loadConfig: () => ResolvedConfig;
  /** Opens a backend for a URL (injected so tests can pass an in-memory one). */
  open: (url: string, opts: BackendPolicy & { create?: boolean }) => Promise<Backend>;
  defaultUrl: () => Promise<string>;
  readLine: (question: string) => Promise<string>;
  /** From here on a gone stdout reader must not end the command (see `mustFinish` in main.ts). */
  mustFinish: () => void;
  /** See `CommandContext.handleStops` (main.ts StopGate). */
  handleStops?: () => () => void;
  /** See `CommandContext.interruptNote` (main.ts StopGate). */
  interruptNote?: (note: string | null) => void;
}

/** Interactive = both ends are terminals, not CI, and prompting was not switched off. */
export function computeInteractive(io: CliIo, env: Record<string, string | undefined>, input: boolean | undefined): boolean {
  if (input === false) return false;
  if (isCi(env)) return false;
  // stdout first: when it is not a terminal, process.stdin is never created (see runCli in main.ts).
  return io.stdout.isTTY === true && io.stdin.isTTY === true;
}

export function isCi(env: Record<string, string | undefined>): boolean {
  const ci = env.CI;
  if (ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false') return true;
  return env.GITHUB_ACTIONS === 'true' || env.BUILDKITE === 'true' || env.GITLAB_CI !== undefined || env.TF_BUILD !== undefined;
}

/** Defence in depth for notes: even a message built from unsanitised data cannot reach the terminal raw. */
function safeLine(message: string): string {
  // One line: a line break from data (a record's parse error, an argument) shows as `\n`, never a forged line.
  return sanitize(redactCredentials(message));
}

export class CliContext implements CommandContext {
  private isBackendAbandoned = false;
  readonly io: CliIo;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly clock: Clock;
  readonly isInteractive: boolean;
  readonly format: OutputFormat;
  readonly out: OutputTarget;
  readonly palette: Palette;
  /** UTF-8 or ASCII for agentq's own glyphs, from the locale (output/charset.ts). */
  readonly charset: Charset;
  readonly debug: boolean;
  readonly signal: AbortSignal;
  readonly globals: GlobalOptions;
  private resolved: ResolvedConfig | undefined;
  private backend: Promise<Backend> | undefined;

  constructor(private readonly deps: ContextDeps) {
    this.io = deps.io;
    this.env = deps.env;
    this.cwd = deps.cwd;
    this.clock = deps.clock;
    this.globals = deps.globals;
    this.format = deps.format;
    this.palette = deps.palette;
    this.signal = deps.signal;
    this.debug = deps.globals.debug === true || deps.env.AGENTQ_DEBUG === '1';
    this.isInteractive = computeInteractive(deps.io, deps.env, deps.globals.input);
    this.charset = terminalCharset(deps.env);
    // Tables and describe views are for a person; plain, json, ndjson and prometheus are data and
    // keep their bytes. Same width: a table's columns were measured before its glyphs were changed.
    const isForPerson = deps.format === 'table' || deps.format === 'wide';
    const charset = isForPerson ? this.charset : 'utf8';
    this.out = {
      format: deps.format,
      write: (s) => void deps.io.stdout.write(chromeFor(charset, s, { sameWidth: true })),
      charset: this.charset,
      drain: () => streamDrained(deps.io.stdout),
      // A pseudo-terminal without a size reports 0 columns: treat it as unknown, not as zero width.
      width: deps.io.stdout.isTTY && (deps.io.stdout.columns ?? 0) > 0 ? deps.io.stdout.columns : undefined,
      palette: deps.palette,
      note: (line) => this.note(line),
    };
  }

  config(opts: { unknownContextOk?: boolean } = {}): ResolvedConfig {
    if (!this.resolved) {
      this.resolved = this.deps.loadConfig();
      for (const w of this.resolved.warnings ?? []) this.warn(w);
    }
    if (this.resolved.unknownContext && !opts.unknownContextOk) throw this.resolved.unknownContext;
    return this.resolved;
  }

  async backendUrl(): Promise<string> {
    return this.config().url ?? (await this.deps.defaultUrl());
  }

  openBackend(overrides: { fairness?: FairnessOptions; create?: boolean } = {}): Promise<Backend> {
    this.backend ??= (async () => {
      const given = this.config().url;
      const fallback = await this.deps.defaultUrl();
      const url = given ?? fallback;
      const create = overrides.create === true || url === fallback;
      return this.deps.open(url, { ...this.policy(overrides.fairness), create });
    })();
    return this.backend;
  }

  /** The selected context's scheduling policy (none without a context), a worker's flags on top. */
  private policy(fairnessFlags: FairnessOptions | undefined): BackendPolicy {
    const c = this.config().context;
    const fairness = mergeFairness(c?.fairness, fairnessFlags);
    return { ...(fairness ? { fairness } : {}), ...(c?.admission ? { admission: c.admission } : {}) };
  }

  /** Closes the backend if it was opened. Called by `main` only. */
  abandonBackend(): void {
    this.isBackendAbandoned = true;
  }

  /** `now`: the command stopped on a signal (see the contract's close): nothing unanswered is waited for. */
  async close(opts: { now?: boolean } = {}): Promise<void> {
    if (!this.backend) return;
    if (this.isBackendAbandoned) {
      // Started, not awaited: a hung node would keep the process alive; runCli exits after main returns.
      const pending = this.backend;
      this.backend = undefined;
      void pending.then((b) => b.close({ now: true })).catch(() => undefined);
      return;
    }
    const b = await this.backend.catch(() => null);
    this.backend = undefined;
    await b?.close(opts.now ? { now: true } : {});
  }

  defaultQueue(): string {
    return this.config().context?.queue ?? 'default';
  }

  assertMutable(action: string): void {
    const ctx = this.config().context;
    if (ctx?.readOnly) {
      throw new PermissionError(
        `context ${JSON.stringify(ctx.name)} is read-only: ${action} refused`,
        `Use a context that allows changes (agentq context list), or remove "readOnly" from ${ctx.name} in ${ctx.readOnlyFrom ?? ctx.file}.`,
      );
    }
    this.mustFinish();
  }

  mustFinish(): void {
    this.deps.mustFinish();
  }

  handleStops(): () => void {
    return this.deps.handleStops?.() ?? (() => undefined);
  }

  interruptNote(note: string | null): void {
    this.deps.interruptNote?.(note);
  }

  async confirm(question: string, opts: ConfirmOptions = {}): Promise<void> {
    if (opts.yes) return;
    if (!this.isInteractive) {
      throw new DeclinedError('confirmation needed but it cannot be asked for here (stdin and stdout are not both a terminal, or --no-input or CI is set)', 'Pass --yes to confirm in scripts.');
    }
    const ctxName = this.config().context?.name;
    const where = ctxName ? `[${sanitize(ctxName)}] ` : '';
    if (opts.typeToConfirm !== undefined) {
      const answer = await this.prompt(`${where}${question} Type ${opts.typeToConfirm} to confirm: `);
      if (answer.trim() !== opts.typeToConfirm) throw new DeclinedError(`declined: expected ${JSON.stringify(opts.typeToConfirm)}`);
      return;
    }
    const answer = await this.prompt(`${where}${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new DeclinedError('declined');
  }

  prompt(question: string): Promise<string> {
    if (!this.isInteractive) return Promise.reject(new DeclinedError('cannot prompt: not on a terminal (or --no-input)'));
    return this.deps.readLine(question);
  }

  note(message: string): void {
    this.io.stderr.write(chromeFor(this.charset, safeLine(message)) + '\n');
  }

  warn(message: string): void {
    this.io.stderr.write(`${this.palette.warn('warning:')} ${chromeFor(this.charset, safeLine(message))}\n`);
  }
}
