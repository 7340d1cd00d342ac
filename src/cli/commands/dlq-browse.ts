/**
 * `agentq dlq browse` (also `agentq tui`): the interactive DLQ triage TUI.
 *
 * This module is on the start path only of these two commands and imports
 * no Ink or React itself: the app is loaded with `import()` after the checks,
 * so `--help` and the "not a terminal" error stay fast.
 */
import { setFlagsFromString } from 'node:v8';
import { AgentqError, InterruptedError, PermissionError, ValidationError } from '../../core/errors.js';
import { resumeCommand } from '../../dlq/engine.js';
import { parseSelector, type SelectorInput } from '../../dlq/filter.js';
import { DEFAULT_RATE_PER_SEC, parseBatchSize, parseRate } from '../../dlq/rate.js';
import type { CommandContext } from '../context.js';
import { isCi } from '../context.js';
import { terminalCharset } from '../output/charset.js';
import { dlqIoFrom } from './dlq-context.js';
import type { ApplyFailure } from '../../tui/state.js';
import type { RedriveResult } from '../../tui/redrive-port.js';

export interface BrowseOptions extends Pick<SelectorInput, 'queue' | 'tenant' | 'workflow' | 'errorCode' | 'since' | 'until' | 'grep'> {
  /** Redrive pacing, as `dlq redrive --rate`. */
  rate?: string;
  batchSize?: string;
  maxRedrives?: string;
}

/** Why the TUI cannot run here, or null when it can. */
export function notInteractiveReason(ctx: Pick<CommandContext, 'io' | 'env' | 'globals'>): string | null {
  if (ctx.io.stdin.isTTY !== true && ctx.io.stdout.isTTY !== true) return 'stdin and stdout are not terminals';
  if (ctx.io.stdin.isTTY !== true) return 'stdin is not a terminal';
  if (ctx.io.stdout.isTTY !== true) return 'stdout is not a terminal';
  if (ctx.globals.input === false) return '--no-input was given';
  // A dumb terminal (Emacs shell buffers, some CI consoles) cannot move the cursor or switch screens.
  if (ctx.env.TERM === 'dumb') return 'TERM is "dumb": the terminal cannot draw a full-screen app';
  if (isCi(ctx.env)) return 'CI is set in the environment';
  return null;
}

export async function run(opts: BrowseOptions, ctx: CommandContext): Promise<void> {
  const why = notInteractiveReason(ctx);
  if (why !== null) {
    // Refuse before raw mode is ever attempted: Ink would crash on a pipe.
    throw new ValidationError(
      `agentq dlq browse is interactive and needs a terminal: ${why}`,
      'For scripts use `agentq dlq list` (filters, -o json/ndjson), `agentq dlq summary --by error_code,workflow` and `agentq dlq redrive --dry-run`.',
      'NOT_A_TERMINAL',
    );
  }
  const now = ctx.clock.now();
  const selector = parseSelector(
    {
      queue: opts.queue, // the context's queue when none was given (cli/queue-scope.ts)
      tenant: opts.tenant,
      workflow: opts.workflow,
      errorCode: opts.errorCode,
      since: opts.since,
      until: opts.until,
      grep: opts.grep,
    },
    now,
  );
  const rate = opts.rate !== undefined ? parseRate(opts.rate) : DEFAULT_RATE_PER_SEC;
  const batchSize = opts.batchSize !== undefined ? parseBatchSize(opts.batchSize) : undefined;
  const maxRedrives = opts.maxRedrives !== undefined ? parseMaxRedrives(opts.maxRedrives) : undefined;

  let readOnlyReason: string | null = null;
  try {
    ctx.assertMutable('redrive');
  } catch (e) {
    if (!(e instanceof PermissionError)) throw e;
    readOnlyReason = e.message;
  }

  // React picks its build from NODE_ENV when it is first loaded, which is just below: the
  // development build checks every element and costs about a quarter of each frame.
  // This command is the only one that loads React, so the choice is made here.
  process.env.NODE_ENV ??= 'production';
  // Ink reads DEV=true (a name many shells and CI set-ups use for their own tools) as "connect to
  // React devtools": it then imports react-devtools-core, which agentq does not ship (a warning to
  // install it), and its own package.json, which the bundle has not (an internal error, exit 1).
  // Nothing here is for React devtools, so Ink never sees it; this process spawns nothing that could miss it.
  delete process.env.DEV;
  // V8 lets the old generation grow to a few times the live heap before a full collection. Ink
  // builds each frame from scratch (an object per character cell) and 1-2 MB of every frame
  // outlives the young generation, so a few dozen key presses piled up 60-100 MB of garbage on
  // top of the ~50 MB the rows need (issue 6, RSS under 250 MB). A growing step of 1.6x keeps
  // that pile small (30 % kept it smaller still but cost a quarter more CPU per key). Unlike
  // --max-old-space-size it caps nothing: a DLQ whose rows need more memory still gets it, only
  // collected more often. Measured in BENCHMARKS.md ("TUI").
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // Load the app (Ink, React, Yoga) while the backend opens: both are on the way to the first frame.
  const tui = Promise.all([
    import('../../tui/run.js'),
    import('../../tui/source.js'),
    import('../../tui/redrive-gateway.js'),
    import('../../tui/trace.js'),
    import('../../tui/store-file.js'),
  ]);
  tui.catch(() => undefined); // awaited below; this only keeps a failed import from going unhandled if opening fails first
  const backend = await ctx.openBackend();
  // Read one row before the screen is taken over: an unreachable or failing backend ends the
  // command with its message and exit code (75 for a transient one), as every other command
  // does, instead of a full-screen app showing nothing. Later failures (reloads) are shown in the app.
  await backend.dlqRows(selector.filter, { limit: 1 });
  const io = dlqIoFrom(ctx);
  const [{ runTui }, { backendSource }, { engineRedrive }, { fileTrace }, { watchStoreFile, watchedSource, watchedRedrive }] = await tui;
  // The app stays open for hours: a SQLite file removed or replaced meanwhile is said, not read as the store.
  const storeFile = watchStoreFile(backend);
  const tracePath = ctx.env.AGENTQ_TUI_TRACE;
  // The app restores the terminal and stops a redrive after its batch on a first SIGTERM or SIGHUP.
  const releaseStops = ctx.handleStops();
  let outcome: Awaited<ReturnType<typeof runTui>>;
  try {
    outcome = await runTui(
      {
        source: watchedSource(backendSource(backend, selector.filter), storeFile),
        redrive: watchedRedrive(
          engineRedrive(
            { backend, clock: ctx.clock, sleep: io.sleep, newRunId: io.newRunId, identity: io.identity, probe: io.probe },
            { baseFilter: selector.filter, given: selector.given, rate, batchSize, maxRedrives },
          ),
          storeFile,
        ),
        info: { context: io.contextName, backend: backend.description, queue: selector.filter.queue ?? null, selection: selectionText(selector.given) },
        readOnlyReason,
        traceUrlTemplate: ctx.config().traceUrl ?? null,
        clock: ctx.clock,
      },
      {
        stdin: ctx.io.stdin as NodeJS.ReadStream,
        stdout: ctx.io.stdout as NodeJS.WriteStream,
        stderr: ctx.io.stderr as NodeJS.WriteStream,
        signal: ctx.signal,
        trace: tracePath ? fileTrace(tracePath) : undefined,
        charset: terminalCharset(ctx.env),
      },
    );
  } finally {
    releaseStops();
  }
  // The terminal is restored by now: what follows is read on the normal screen, as after a CLI redrive.
  const result = outcome.result;
  // Runs stopped earlier in the session, whose screen was left: said on the normal screen, however the app ends.
  for (const r of outcome.stopped) if (r.runId !== result?.runId) ctx.note(stoppedText(r));
  for (const n of outcome.notes) ctx.note(n);
  if (outcome.isAbandoned) {
    // The batch in flight may never end (a hung node): do not wait for the backend to close either.
    ctx.abandonBackend?.();
    if (outcome.abandonedRunId === null) {
      throw new InterruptedError('quit while a redrive was starting: its run may or may not have been recorded', 'See the runs with: agentq dlq runs');
    }
    throw new InterruptedError(
      `quit while run ${outcome.abandonedRunId} was applying a batch: the jobs of that batch may or may not have moved; the run shows as interrupted once this process has ended`,
      `Check it with: agentq dlq runs show ${outcome.abandonedRunId}; resume it with: ${resumeCommand({ run_id: outcome.abandonedRunId, action: 'redrive' })}`,
    );
  }
  if (outcome.interruptedBy !== null) {
    if (result?.resumeCommand) {
      throw new InterruptedError(
        `${outcome.interruptedBy}: run ${result.runId} stopped after its current batch (moved ${result.moved}, skipped ${result.skipped}, failed ${result.failed}); the ledger is recorded`,
        `Resume it with: ${result.resumeCommand}`,
      );
    }
    if (result !== null) throw new InterruptedError(`${outcome.interruptedBy}: agentq dlq browse ended; run ${result.runId} had already ended (${result.status})`);
    if (outcome.failure !== null) {
      const resume = outcome.cutRun?.resumeCommand;
      throw new InterruptedError(`${outcome.interruptedBy}: agentq dlq browse ended; the last redrive failed: ${outcome.failure}`, resume ? `Resume it with: ${resume}` : 'See the runs with: agentq dlq runs');
    }
    throw new InterruptedError(`${outcome.interruptedBy}: agentq dlq browse ended; no redrive was running`);
  }
  // Quit with q: the run left to resume is said on the normal screen too (the alternate screen is gone).
  if (result?.resumeCommand) ctx.note(stoppedText(result));
  // A redrive an error cut short ends the command with that error's exit code (75 for a passing
  // backend failure), as `dlq redrive` does, also when its screen was left; each says how to resume.
  const cuts = outcome.cutShort;
  if (cuts.length === 0) return;
  for (const c of cuts.slice(0, -1)) ctx.note(`${cutShortText(c)}${c.run?.resumeCommand ? `; resume it with: ${c.run.resumeCommand}` : c.hint ? `; ${c.hint}` : ''}`);
  const last = cuts[cuts.length - 1]!;
  // The error's own advice when no run was recorded (a lock a dead process left: resume its run, or --break-lock).
  throw new AgentqError(last.code, cutShortText(last), last.exitCode, last.run?.resumeCommand ? `Resume it with: ${last.run.resumeCommand}` : (last.hint ?? 'See the runs with: agentq dlq runs'));
}

function stoppedText(r: RedriveResult): string {
  return `run ${r.runId} stopped after its current batch (moved ${r.moved}, skipped ${r.skipped}, failed ${r.failed}); resume it with: ${r.resumeCommand}`;
}

function cutShortText(c: ApplyFailure): string {
  return c.run === null ? `a redrive failed before its run was recorded (${c.message})` : `run ${c.run.runId} was stopped by an error (${c.message}) after moving ${c.run.moved}`;
}

/** The TUI process's old-generation growing step, in percent (V8's default is dynamic, up to 300 %). */
const HEAP_GROWING_PERCENT = 60;

function parseMaxRedrives(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 1 && n <= 1000)) throw new ValidationError(`--max-redrives ${JSON.stringify(text)} must be a whole number from 1 to 1000`);
  return n;
}

/** The selector flags beyond the queue, as the header and an empty list name them (`error_code=A,B grep="x y"`), or null. */
export function selectionText(given: Record<string, unknown>): string | null {
  const parts = Object.entries(given)
    .filter(([k]) => k !== 'queue')
    .map(([k, v]) => {
      const text = Array.isArray(v) ? v.join(',') : String(v);
      return `${k}=${/^[\w.:,+-]+$/.test(text) ? text : JSON.stringify(text)}`;
    });
  return parts.length === 0 ? null : parts.join(' ');
}
