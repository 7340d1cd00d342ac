/**
 * The worker's log writer (src/cli/output/log-writer.ts) against a stream whose reader takes
 * what waits only when the test says so: writes never wait, what waits is capped, dropped lines
 * are counted in one note once the reader is back, order is kept, and the exit's flush is bounded.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogWriter, logOutput, type LogStream } from '../../src/cli/output/log-writer.js';
import type { CliIo } from '../../src/cli/context.js';

/** A stream in front of a reader that reads only on `take()`. */
class StalledStream implements LogStream {
  isTTY?: boolean;
  destroyed = false;
  writableLength = 0;
  /** What the reader has taken, in order. */
  taken: string[] = [];
  private waiting: { text: string; cb?: (e?: Error | null) => void }[] = [];
  blocking: boolean[] = [];
  readonly _handle = { setBlocking: (b: boolean) => void this.blocking.push(b) };

  write(text: string, cb?: (e?: Error | null) => void): boolean {
    this.waiting.push({ text, cb });
    this.writableLength += Buffer.byteLength(text);
    return this.writableLength < 16_384;
  }

  /** The reader takes the first write that waits (a slow reader). */
  takeOne(): void {
    const w = this.waiting.shift();
    if (!w) return;
    this.writableLength -= Buffer.byteLength(w.text);
    if (w.text !== '') this.taken.push(w.text);
    w.cb?.();
  }

  /** The reader takes everything that waits (and what is written meanwhile, from callbacks). */
  take(): void {
    while (this.waiting.length > 0) {
      const w = this.waiting.shift()!;
      this.writableLength -= Buffer.byteLength(w.text);
      if (w.text !== '') this.taken.push(w.text);
      w.cb?.();
    }
  }
}

const line = (i: number) => `${String(i).padStart(5, '0')} ${'x'.repeat(94)}\n`; // 101 bytes

afterEach(() => {
  vi.useRealTimers();
});

describe('LogWriter', () => {
  it('passes every line through, in order, while what waits stays under the cap', () => {
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 10_000, droppedLine: () => 'note\n' });
    for (let i = 0; i < 50; i++) w.write(line(i));
    s.take();
    expect(s.taken).toEqual(Array.from({ length: 50 }, (_, i) => line(i)));
    expect(w.droppedTotal).toBe(0);
  });

  it('past the cap drops whole lines, and says how many (and for how long) once the reader has taken what waited', () => {
    const s = new StalledStream();
    let now = 1_000;
    const w = new LogWriter(s, { capBytes: 1_000, now: () => now, droppedLine: (n, ms) => `dropped ${n} in ${ms}ms\n` });
    for (let i = 0; i < 30; i++) w.write(line(i)); // 9 fit under 1,000 bytes
    expect(s.writableLength).toBeLessThanOrEqual(1_000);
    expect(w.isDropping).toBe(true);
    now += 2_500;
    s.take();
    expect(s.taken).toEqual([...Array.from({ length: 9 }, (_, i) => line(i)), 'dropped 21 in 2500ms\n']);
    // Writing goes on after the note.
    w.write(line(30));
    s.take();
    expect(s.taken.at(-1)).toBe(line(30));
    expect(w.droppedTotal).toBe(21);
  });

  it('writes nothing after a dropped line until the note, not even a line that would fit: no line overtakes the gap', () => {
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 250, droppedLine: (n) => `dropped ${n}\n` });
    w.write(line(0));
    w.write(line(1));
    w.write(line(2)); // dropped: 303 > 250
    w.write('short\n'); // would fit, but comes after the gap
    s.take();
    expect(s.taken).toEqual([line(0), line(1), 'dropped 2\n']);
  });

  it('counts lines, not writes', () => {
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 150, droppedLine: (n) => `dropped ${n}\n` });
    w.write(line(0));
    w.write('a\nb\nc\n'.repeat(20));
    s.take();
    expect(s.taken.at(-1)).toBe('dropped 60\n');
  });

  it('a line longer than the cap still goes out when nothing waits', () => {
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 50, droppedLine: () => 'note\n' });
    w.write(line(0));
    s.take();
    expect(s.taken).toEqual([line(0)]);
  });

  it('a reader that went away (EPIPE: the stream destroyed) is a quiet non-event: no error, no note', () => {
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 150, droppedLine: () => 'note\n' });
    w.write(line(0));
    s.destroyed = true;
    expect(() => w.write(line(1))).not.toThrow();
    s.take();
    expect(s.taken).toEqual([line(0)]);
  });

  it('makes a terminal non-blocking (Node writes to one synchronously), and leaves other streams alone', () => {
    const tty = new StalledStream();
    tty.isTTY = true;
    new LogWriter(tty, { droppedLine: () => '' });
    expect(tty.blocking).toEqual([false]);
    const pipe = new StalledStream();
    new LogWriter(pipe, { droppedLine: () => '' });
    expect(pipe.blocking).toEqual([]);
  });

  it('flush: true once the reader has taken everything (the note of a gap included), false after the bound when it never does', async () => {
    vi.useFakeTimers();
    const s = new StalledStream();
    const w = new LogWriter(s, { capBytes: 150, droppedLine: (n) => `dropped ${n}\n` });
    w.write(line(0));
    w.write(line(1));
    const taken = w.flush(2_000);
    s.take();
    await expect(taken).resolves.toBe(true);
    expect(s.taken).toEqual([line(0), 'dropped 1\n']);

    w.write(line(2));
    const never = w.flush(2_000);
    await vi.advanceTimersByTimeAsync(2_000);
    await expect(never).resolves.toBe(false);
  });
  it('flush: a reader that is slow but still taking what waits is waited for; only one that took nothing for the bound is left', async () => {
    vi.useFakeTimers();
    const s = new StalledStream();
    const w = new LogWriter(s, { droppedLine: (n) => `dropped ${n}\n` });
    for (let i = 0; i < 30; i++) w.write(line(i));
    let result: boolean | undefined;
    void w.flush(2_000).then((r) => (result = r));
    // The reader takes one line a second: 30 s for everything, far past the bound, but never idle for it.
    for (let i = 0; i < 29; i++) {
      await vi.advanceTimersByTimeAsync(1_000);
      s.takeOne();
      expect(result).toBeUndefined();
    }
    await vi.advanceTimersByTimeAsync(1_000);
    s.take();
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toBe(true);
    expect(s.taken).toEqual(Array.from({ length: 30 }, (_, i) => line(i)));

    // Then it stops reading: the exit waits the bound after its last progress, no longer.
    w.write(line(30));
    w.write(line(31));
    result = undefined;
    void w.flush(2_000).then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(1_000);
    s.takeOne();
    await vi.advanceTimersByTimeAsync(1_900);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(400);
    expect(result).toBe(false);
  });
  it("flush: progress is also the fd's write queue shrinking while the stream still counts one big write as waiting (Node hands a pipe all it queued at once)", async () => {
    vi.useFakeTimers();
    const handle = { writeQueueSize: 50_000, setBlocking: () => undefined };
    let done: (() => void) | undefined;
    const s = {
      writableLength: 50_000,
      destroyed: false,
      _handle: handle,
      write: (_t: string, cb?: () => void) => ((done = cb), false),
    };
    const w = new LogWriter(s, { droppedLine: () => '' });
    let result: boolean | undefined;
    void w.flush(2_000).then((r) => (result = r));
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(1_000);
      handle.writeQueueSize -= 5_000;
      expect(result).toBeUndefined();
    }
    s.writableLength = 0;
    done?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toBe(true);
  });
});

describe('logOutput', () => {
  function io(): { io: CliIo; out: StalledStream; err: StalledStream } {
    const out = new StalledStream();
    const err = new StalledStream();
    return { io: { stdout: out, stderr: err, stdin: {} as CliIo['stdin'] }, out, err };
  }

  it("says dropped lines on stderr as a worker line, and on stdout with -o ndjson as an event record of its own", () => {
    const t = io();
    const now = Date.parse('2026-01-01T00:00:00Z');
    const log = logOutput(t.io, { isMachine: true, capBytes: 150, now: () => now });
    for (const s of [log.io.stdout, log.io.stderr]) {
      s.write(line(0));
      s.write(line(1));
      s.write(line(2));
    }
    t.out.take();
    t.err.take();
    expect(t.err.taken.at(-1)).toBe('worker: 2 lines of output dropped: stderr was blocked (not read) for 0ms\n');
    expect(JSON.parse(t.out.taken.at(-1)!)).toEqual({ type: 'output_dropped', at: '2026-01-01T00:00:00.000Z', stream: 'stdout', lines: 2, blockedMs: 0 });
  });
});
