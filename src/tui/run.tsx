/**
 * The app entry: mounts the Ink app full-screen on the alternate screen and
 * restores the terminal when it ends — on `q`, on an error, or when the
 * command's signal aborts (SIGTERM). Loaded only by `dlq browse` / `tui`
 * through a lazy `import()`, so no other command pays for Ink and React.
 */
import { render } from 'ink';
import { App, type AppProps } from './App.js';
import type { FrameTrace } from './trace.js';

/** DEC private modes: 1049 = alternate screen (with the main screen saved), 25 = cursor visible. */
const ENTER_ALT_SCREEN = '\x1b[?1049h\x1b[H\x1b[?25l';
const LEAVE_ALT_SCREEN = '\x1b[?25h\x1b[?1049l';

export interface TuiStreams {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** Unmounts the app (SIGTERM, or the first Ctrl-C outside raw mode). */
  signal: AbortSignal;
  /** Frame timing for the benchmark (`AGENTQ_TUI_TRACE`). */
  trace?: FrameTrace;
}

export async function runTui(props: AppProps, io: TuiStreams): Promise<void> {
  io.stdout.write(ENTER_ALT_SCREEN);
  let isRestored = false;
  const restore = () => {
    if (isRestored) return;
    isRestored = true;
    io.stdout.write(LEAVE_ALT_SCREEN);
  };
  try {
    const trace = io.trace;
    const instance = render(<App {...props} onKey={trace ? () => trace.keyReceived() : undefined} />, {
      stdin: io.stdin,
      stdout: io.stdout,
      stderr: io.stderr,
      // Ctrl-C is a key of the app: it quits, or during a redrive stops after the current batch.
      exitOnCtrlC: false,
      patchConsole: false,
      // Ink throttles frames to maxFps; 60 keeps key-to-frame latency under one 17 ms frame.
      maxFps: 60,
      ...(trace ? { onRender: () => trace.frameWritten() } : {}),
    });
    const onAbort = () => instance.unmount();
    io.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await instance.waitUntilExit();
    } finally {
      io.signal.removeEventListener('abort', onAbort);
      instance.cleanup();
    }
  } finally {
    restore();
  }
}
