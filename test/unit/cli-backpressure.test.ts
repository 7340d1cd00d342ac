/**
 * Output in bounded memory also for a slow reader: `RecordStream.page` waits
 * until stdout can take more (streamDrained, cli/context.ts) before the command
 * reads the next page. Checked against a real `Writable` whose writes complete
 * only when the test lets them: no timing involved.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { streamDrained } from '../../src/cli/context.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import { RecordStream } from '../../src/cli/output/format.js';

/** A stream with a 1 KiB buffer whose writes finish only when `release()` is called. */
function heldStream() {
  const held: Array<() => void> = [];
  let written = '';
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      held.push(() => {
        written += chunk.toString();
        cb();
      });
    },
  });
  const release = () => {
    while (held.length > 0) held.shift()!();
  };
  return { stream, release, written: () => written };
}

describe('stdout backpressure', () => {
  it('page() returns only once the stream took the page; a stream with room does not wait', async () => {
    const h = heldStream();
    const out = { format: 'ndjson' as const, write: (s: string) => void h.stream.write(s), drain: () => streamDrained(h.stream), width: undefined, palette: NO_COLOUR };
    const rs = new RecordStream<{ n: number }>(out, { columns: [{ header: 'n', get: (r) => String(r.n) }], empty: 'No rows.' });
    let settled = false;
    const paged = rs.page(Array.from({ length: 200 }, (_, n) => ({ n }))).then(() => (settled = true));
    // Several microtask turns: still waiting, the page (~1.5 KB) is over the 1 KiB mark and nothing was taken.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(h.stream.writableNeedDrain).toBe(true);
    expect(settled).toBe(false);
    // The reader takes it: the page is done, and every line is there, in order.
    while (!settled) {
      h.release();
      await new Promise((r) => setImmediate(r));
    }
    await paged;
    expect(h.written().trim().split('\n').map((l) => JSON.parse(l).n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
    // Room in the buffer: no wait at all.
    await expect(streamDrained(h.stream)).resolves.toBeUndefined();
  });

  it('ends the wait when the stream closes or fails (the reader went away)', async () => {
    for (const end of ['destroy', 'error'] as const) {
      const h = heldStream();
      h.stream.on('error', () => undefined);
      h.stream.write('x'.repeat(2048));
      expect(h.stream.writableNeedDrain).toBe(true);
      const waiting = streamDrained(h.stream);
      if (end === 'destroy') h.stream.destroy();
      else h.stream.destroy(new Error('EPIPE'));
      await expect(waiting).resolves.toBeUndefined();
    }
  });
});
