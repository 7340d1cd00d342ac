/**
 * A daemon's log output (`agentq worker`: its own lines, its handlers' stderr, its `-o ndjson`
 * events) that never holds up the daemon. A reader that stops reading — a stalled log
 * collector, `| less` left paused, a `docker run -t` whose log driver stalls, a terminal paused
 * with Ctrl-S — must not stop the work the output is about:
 * - Node writes to a terminal synchronously: once the terminal's buffer was full, the worker's
 *   event loop stopped inside write(2), so its heartbeats stopped, its leases expired and its
 *   jobs were handed to other workers while their handlers still ran. The terminal is made
 *   asynchronous here, as a pipe is;
 * - what the fd cannot take waits in memory, up to a cap (1 MiB by default); past it, lines are
 *   dropped and counted, and once the reader has taken everything that waited, one line says how
 *   many were dropped and for how long the output was blocked. Lines are never reordered or cut:
 *   a line is written whole or dropped whole, and nothing is written after a dropped line until
 *   the note about it;
 * - at exit, what still waits is waited for while the reader takes it, and given up once the
 *   reader has taken nothing for a bounded time (`flush`), not for ever: a worker told to stop
 *   exited only once a reader that never came back had read its stdout.
 * A reader that went away (EPIPE) is handled as before, by the entry: the output is dropped
 * without a word, and the worker goes on (bin/agentq.js).
 */
import { formatDuration } from '../../core/duration.js';
import type { CliIo, OutStream } from '../context.js';
import { ndjsonLine } from './ndjson.js';

/** The part of a Node stdio stream the writer uses. */
export interface LogStream extends OutStream {
  write(chunk: string, callback?: (error?: Error | null) => void): boolean;
  /** Bytes written but not yet taken by the fd. */
  readonly writableLength?: number;
  /** Set once the stream failed (EPIPE): its reader is gone. */
  readonly destroyed?: boolean;
  /** Node's handle of the fd; a terminal's can be made non-blocking. */
  readonly _handle?: { setBlocking?(blocking: boolean): unknown; readonly writeQueueSize?: number } | null;
}

export interface LogWriterOptions {
  /**
   * How many bytes may wait for the reader before lines are dropped.
   * @default 1 MiB
   */
  capBytes?: number;
  /** The line (with its line end) that says `lines` lines were dropped while the output was blocked for `blockedMs`. */
  droppedLine: (lines: number, blockedMs: number) => string;
  /** The clock for `blockedMs` (tests inject one). */
  now?: () => number;
}

export const LOG_CAP_BYTES = 1024 * 1024;

/** How long a worker's exit waits for a reader that takes nothing of what its output still holds. */
export const LOG_FLUSH_MS = 2_000;

/** How often the exit's flush looks whether the reader took anything. */
const FLUSH_POLL_MS = 100;

export class LogWriter implements OutStream {
  private readonly capBytes: number;
  private readonly now: () => number;
  /** Lines dropped since the output blocked (0: not dropping). */
  private dropped = 0;
  private blockedSince = 0;
  /** Every line dropped over the writer's life (for tests and a closing note). */
  droppedTotal = 0;

  constructor(
    private readonly stream: LogStream,
    private readonly o: LogWriterOptions,
  ) {
    this.capBytes = o.capBytes ?? LOG_CAP_BYTES;
    this.now = o.now ?? Date.now;
    // Node makes a terminal's writes blocking, so that what is written before an exit is not lost;
    // flush() keeps that promise for a bounded time instead. (libuv writes through a descriptor of
    // the terminal of its own, so other processes on the same terminal keep blocking writes.)
    if (stream.isTTY) stream._handle?.setBlocking?.(false);
  }

  get isTTY(): boolean | undefined {
    return this.stream.isTTY;
  }

  get columns(): number | undefined {
    return this.stream.columns;
  }

  /** Whether lines are being dropped now (the reader has not taken what waits). */
  get isDropping(): boolean {
    return this.dropped > 0;
  }

  /** Writes `text` (whole lines), or drops it if too much already waits for the reader. Never blocks. */
  write(text: string): boolean {
    // The reader went away (EPIPE): nothing can be shown any more, and nothing is owed a note.
    if (this.stream.destroyed) return true;
    if (this.dropped > 0) {
      this.dropped += lineCount(text);
      this.droppedTotal += lineCount(text);
      return true;
    }
    const waiting = this.stream.writableLength ?? 0;
    // (a line longer than the cap still goes out when nothing waits: it is cut by nobody)
    if (waiting > 0 && waiting + Buffer.byteLength(text) > this.capBytes) {
      this.dropped = lineCount(text);
      this.droppedTotal += this.dropped;
      this.blockedSince = this.now();
      // An empty write's callback comes once everything before it is written: the reader is back.
      this.stream.write('', () => this.sayDropped());
      return true;
    }
    this.stream.write(text);
    return true;
  }

  /**
   * Resolves once the reader has taken everything written (true), or once it has taken nothing for
   * `timeoutMs` (false): a reader that never comes back does not hold the exit, but one that is
   * only slow (a log shipper at 100 KiB/s behind a backlog) is waited for — a bound on the whole
   * wait cut the worker's last lines, its summary among them, mid-line. Lines being dropped are
   * noted first.
   */
  flush(timeoutMs: number): Promise<boolean> {
    this.sayDropped();
    if (this.stream.destroyed || (this.stream.writableLength ?? 0) === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const step = Math.min(FLUSH_POLL_MS, timeoutMs);
      let last = this.waiting();
      let idleMs = 0;
      const timer = setInterval(() => {
        const now = this.waiting();
        idleMs = now.stream < last.stream || now.fd < last.fd ? 0 : idleMs + step;
        last = now;
        if (idleMs >= timeoutMs) {
          clearInterval(timer);
          resolve(false);
        }
      }, step);
      this.stream.write('', () => {
        clearInterval(timer);
        resolve(true);
      });
    });
  }

  /**
   * What still waits: in the stream, and of that, what the fd has not yet taken. Node hands a
   * pipe everything queued in one write and counts it in `writableLength` until the last byte is
   * taken (540 KB stayed 540 KB for 3 s while a reader took 160 KB/s); libuv's write queue shrinks
   * as the reader takes it.
   */
  private waiting(): { stream: number; fd: number } {
    return { stream: this.stream.writableLength ?? 0, fd: this.stream._handle?.writeQueueSize ?? 0 };
  }

  private sayDropped(): void {
    if (this.dropped === 0) return;
    const lines = this.dropped;
    this.dropped = 0;
    if (this.stream.destroyed) return;
    this.stream.write(this.o.droppedLine(lines, this.now() - this.blockedSince));
  }
}

/** Lines in `text` (a write without a line end counts as one). */
function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return Math.max(n, 1);
}

/** A daemon's stdout and stderr as log writers, and a bounded flush of both for its exit. */
export interface LogOutput {
  io: CliIo;
  flush(timeoutMs?: number): Promise<boolean>;
}

/**
 * The worker's io: stderr's note is a line like its others; on stdout, with `-o json|ndjson`,
 * the note is an event record of its own (`type: "output_dropped"`), so a log shipper parsing
 * every line still can.
 */
export function logOutput(io: CliIo, o: { isMachine: boolean; now?: () => number; capBytes?: number }): LogOutput {
  const now = o.now ?? Date.now;
  const textNote = (name: string) => (lines: number, blockedMs: number) =>
    `worker: ${lines} ${lines === 1 ? 'line' : 'lines'} of output dropped: ${name} was blocked (not read) for ${formatDuration(blockedMs)}\n`;
  const recordNote = (lines: number, blockedMs: number) =>
    ndjsonLine({ type: 'output_dropped', at: new Date(now()).toISOString(), stream: 'stdout', lines, blockedMs });
  const common = { now, ...(o.capBytes !== undefined ? { capBytes: o.capBytes } : {}) };
  const stdout = new LogWriter(io.stdout as LogStream, { ...common, droppedLine: o.isMachine ? recordNote : textNote('stdout') });
  const stderr = new LogWriter(io.stderr as LogStream, { ...common, droppedLine: textNote('stderr') });
  return {
    io: {
      stdout,
      stderr,
      get stdin() {
        return io.stdin;
      },
    },
    // Both at once: the exit waits for the slower, not for the sum.
    flush: async (timeoutMs = LOG_FLUSH_MS) => (await Promise.all([stdout.flush(timeoutMs), stderr.flush(timeoutMs)])).every(Boolean),
  };
}
