/**
 * The app entry: mounts the Ink app full-screen on the alternate screen and
 * restores the terminal when it ends — on `q`, on an error, or when the
 * command's signal aborts (SIGTERM; SIGHUP too while the app runs). A signal
 * does not just unmount: a running redrive is stopped after its current batch
 * and recorded `interrupted` first, and the outcome is handed back so the
 * command exits 130 with the resume command, as the CLI's bulk actions do.
 * Loaded only by `dlq browse` / `tui` through a lazy `import()`, so no other
 * command pays for Ink and React.
 */
import { render } from 'ink';
import { asciiChrome, type Charset } from '../cli/output/charset.js';
import { App, type AppProps } from './App.js';
import type { RedriveResult } from './redrive-port.js';
import type { ApplyFailure, CutRun, TriageState } from './state.js';
import type { FrameTrace } from './trace.js';

/**
 * DEC private modes: 1049 = alternate screen (with the main screen saved), 25 = cursor visible,
 * 2004 = bracketed paste (a paste comes marked, so it is text, never keys: use-keys.ts).
 */
const ENTER_ALT_SCREEN = '\x1b[?1049h\x1b[H\x1b[?25l\x1b[?2004h';
const LEAVE_ALT_SCREEN = '\x1b[?2004l\x1b[?25h\x1b[?1049l';
/** DECRQM for mode 2004: "does this terminal mark pastes?" (the answer is read in use-keys.ts). */
const ASK_PASTE_MODE = '\x1b[?2004$p';

export interface TuiStreams {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** Unmounts the app (SIGTERM, or the first Ctrl-C outside raw mode). */
  signal: AbortSignal;
  /** Frame timing for the benchmark (`AGENTQ_TUI_TRACE`). */
  trace?: FrameTrace;
  /** `ascii` for a terminal whose locale is not UTF-8 (cli/output/charset.ts); UTF-8 when absent. */
  charset?: Charset;
}

/**
 * The terminal as Ink sees it, with every frame's own glyphs (hint separators, `…` cuts, the `›`
 * cursor, arrows, the dialog's rounded border, Ink's own truncation mark) turned into ASCII of the
 * same width on the way out. At the door rather than in each view: Ink adds glyphs of its own
 * (truncate-end, borders) that no view writes, and the same width keeps the layout Ink measured.
 */
export function asciiTerminal(stdout: NodeJS.WriteStream): NodeJS.WriteStream {
  return new Proxy(stdout, {
    get(target, key) {
      if (key === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...a: unknown[]) => boolean)(typeof chunk === 'string' ? asciiChrome(chunk, { sameWidth: true }) : chunk, ...rest);
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** How the app ended, for the command's exit code and last words. */
export interface TuiOutcome {
  /** The signal that ended it (SIGTERM, SIGHUP…), null when the operator quit. */
  interruptedBy: string | null;
  /** Quit while a run was still applying its batch (second Ctrl-C / q), not waiting for it. */
  isAbandoned: boolean;
  /** That run's id, when it was recorded already, else null. */
  abandonedRunId: string | null;
  /** The result on screen when the app ended (a stopped run carries its resume command), else null. */
  result: RedriveResult | null;
  /** Why the last redrive failed, when the app ended on that screen, else null. */
  failure: string | null;
  /** The run that failure cut short, when it was recorded, else null. */
  cutRun: CutRun | null;
  /** Every redrive an error cut short or refused, oldest first (also those whose screen was left). */
  cutShort: ApplyFailure[];
  /** Every run stopped early with work left (its resume command), oldest first (also those whose screen was left). */
  stopped: RedriveResult[];
  /** What finished runs left for later (SQS DLQ copies, jobs not yet published), oldest first. */
  notes: string[];
}

export function outcomeOf(s: TriageState | null): TuiOutcome {
  const r = s?.redrive;
  return {
    interruptedBy: s?.interruptedBy ?? null,
    isAbandoned: s?.isForceQuit === true && r?.step === 'applying',
    abandonedRunId: s?.isForceQuit && r?.step === 'applying' ? (r.progress.runId ?? null) : null,
    result: r?.step === 'done' ? r.result : null,
    failure: r?.step === 'failed' ? r.message : null,
    cutRun: r?.step === 'failed' ? r.run : null,
    cutShort: s?.cutShort ?? [],
    stopped: s?.stoppedRuns ?? [],
    notes: s?.runNotes ?? [],
  };
}

export async function runTui(props: AppProps, io: TuiStreams): Promise<TuiOutcome> {
  // A closed terminal (SIGHUP) is a stop like SIGTERM while the app runs. runCli's handler
  // aborts the command's signal on it too (its first SIGHUP); this one makes sure the app's own
  // stop runs whichever arrives first. (`nohup` gives no protection to be kept: Node resets every
  // signal's disposition at start-up, so a hang-up would otherwise end the process at once.)
  const interrupt = new AbortController();
  const onParentAbort = () => interrupt.abort(io.signal.reason);
  if (io.signal.aborted) onParentAbort();
  else io.signal.addEventListener('abort', onParentAbort, { once: true });
  const onHangup = () => interrupt.abort(new Error('SIGHUP'));
  process.on('SIGHUP', onHangup);
  let last: TriageState | null = null;
  const onState = props.onState;
  io.stdout.write(ENTER_ALT_SCREEN);
  let isRestored = false;
  const restore = () => {
    if (isRestored) return;
    isRestored = true;
    io.stdout.write(LEAVE_ALT_SCREEN);
  };
  // A second SIGTERM/Ctrl-C signal makes runCli exit at once (process.exit): the main screen
  // must come back then too (writes to a terminal are synchronous, so this one is not lost).
  process.once('exit', restore);
  try {
    const trace = io.trace;
    const app = (
      <App
        {...props}
        interrupt={interrupt.signal}
        onState={(st) => {
          last = st;
          onState?.(st);
        }}
        onKey={trace ? () => trace.keyReceived() : undefined}
        onInputReady={() => {
          // (not the Linux console: it takes `$` for the sequence's end and would print the `p`)
          if (!isRestored && !(process.env.TERM ?? '').startsWith('linux')) io.stdout.write(ASK_PASTE_MODE);
        }}
      />
    );
    const instance = render(app, {
      stdin: io.stdin,
      stdout: io.charset === 'ascii' ? asciiTerminal(io.stdout) : io.stdout,
      stderr: io.stderr,
      // Ctrl-C is a key of the app: it quits, or during a redrive stops after the current batch.
      exitOnCtrlC: false,
      patchConsole: false,
      // Ink throttles frames to maxFps; 60 keeps key-to-frame latency under one 17 ms frame.
      maxFps: 60,
      ...(trace ? { onRender: () => trace.frameWritten() } : {}),
    });
    try {
      await instance.waitUntilExit();
    } finally {
      instance.cleanup();
    }
  } finally {
    io.signal.removeEventListener('abort', onParentAbort);
    process.removeListener('SIGHUP', onHangup);
    process.removeListener('exit', restore);
    restore();
  }
  return outcomeOf(last);
}
