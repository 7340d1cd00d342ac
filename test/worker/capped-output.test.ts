/**
 * The result cap and the stderr line splitter cut a byte stream: neither may
 * cut a multibyte UTF-8 character in half (it would be stored or shown as
 * U+FFFD). Pure code, so fed chunks directly.
 */
import { describe, expect, it } from 'vitest';
import { CappedOutput, LineSplitter, utf8BoundaryAfter, utf8BoundaryBefore } from '../../src/worker/capped-output.js';

describe('CappedOutput: the result cap', () => {
  // Regression: bytes that are not UTF-8 become U+FFFD (3 bytes each), so the text of 64 KiB of
  // binary output was up to 192 KiB, more than the store keeps of an effect's result.
  it('text(max) fits the text in max UTF-8 bytes, marker included, when invalid bytes grew it', () => {
    const out = new CappedOutput(1000);
    out.push(Buffer.alloc(1500, 0xff));
    expect(Buffer.byteLength(out.text())).toBeGreaterThan(1000);
    const fitted = out.text(1000);
    expect(Buffer.byteLength(fitted)).toBeLessThanOrEqual(1000);
    expect(fitted).toMatch(/^\uFFFD+…\[truncated \d+ bytes\]$/);
    const small = new CappedOutput(1000);
    small.push(Buffer.from('plain'));
    expect(small.text(1000)).toBe('plain');
  });

  // Regression: the count after a second cut added bytes of the text (3 for each U+FFFD, and the
  // first marker itself) to the bytes of output: 20 MB of binary output said "[truncated 37748697
  // bytes]", more than the handler had written. It counts bytes of the output, as the first cut does.
  it('text(max) counts what it cut in bytes of the output, not of the text they became', () => {
    for (const [cap, written] of [
      [1000, 1500],
      [1000, 1000],
      [1000, 900],
    ] as const) {
      const out = new CappedOutput(cap);
      out.push(Buffer.from('ok:'));
      out.push(Buffer.alloc(written, 0xff));
      const fitted = out.text(1000);
      const m = /^ok:(\uFFFD+)…\[truncated (\d+) bytes\]$/.exec(fitted);
      expect(m, fitted).not.toBeNull();
      // each 0xff byte became one U+FFFD: what is not in the text was cut
      expect(Number(m![2]), `cap ${cap}, written ${written}`).toBe(3 + written - 3 - m![1]!.length);
    }
  });

  it('cuts before a character the cap would split, counting its bytes as truncated', () => {
    // "ab" + "é" (2 bytes) + "😀" (4 bytes) = 8 bytes
    for (const [cap, text] of [
      [3, 'ab…[truncated 6 bytes]'],
      [4, 'abé…[truncated 4 bytes]'],
      [5, 'abé…[truncated 4 bytes]'],
      [7, 'abé…[truncated 4 bytes]'],
    ] as const) {
      const out = new CappedOutput(cap);
      out.push(Buffer.from('abé😀'));
      expect(out.text(), `cap ${cap}`).toBe(text);
    }
  });

  it('cuts on a boundary when the cap falls where a chunk ended inside a character', () => {
    const bytes = Buffer.from('aé€');
    const out = new CappedOutput(4); // "aé" is 3 bytes: the cap keeps the lead byte of "€", from the first chunk
    out.push(bytes.subarray(0, 4));
    out.push(bytes.subarray(4));
    expect(out.text()).toBe('aé…[truncated 3 bytes]');
    const mid = new CappedOutput(2);
    mid.push(bytes.subarray(0, 2)); // "a" + the lead byte of "é"
    mid.push(bytes.subarray(2));
    expect(mid.text()).toBe('a…[truncated 5 bytes]');
  });

  it('leaves uncut output and invalid bytes as they are', () => {
    const out = new CappedOutput(100);
    out.push(Buffer.from('😀'));
    expect(out.text()).toBe('😀');
    expect(utf8BoundaryBefore(Buffer.from([0x61, 0x80, 0x80]), 3)).toBe(3);
    expect(utf8BoundaryAfter(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x61]), 0)).toBe(3);
  });
});

describe('LineSplitter: stderr lines', () => {
  it('decodes a character split across chunks whole', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('naïve 😀\nnext');
    for (let i = 0; i < bytes.length; i++) s.push(bytes.subarray(i, i + 1));
    s.flush();
    expect(lines).toEqual(['naïve 😀', 'next']);
  });

  it('a runaway line is split without cutting a character', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('😀'.repeat(10_000));
    for (let i = 0; i < bytes.length; i += 4097) s.push(bytes.subarray(i, i + 4097));
    s.flush();
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join('')).toBe('😀'.repeat(10_000));
    for (const l of lines) expect(l).not.toContain('\uFFFD');
  });

  // Regression: a handler writing CRLF lines (a tool made for Windows, Python with newline='\r\n')
  // had every line of the worker's stderr end in a visible "\r".
  it('takes CRLF as a line end, also split across chunks; a lone CR stays in the line', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(Buffer.from('error: boom\r\nnext\r'));
    s.push(Buffer.from('\n10%\r50%\r\nlast\r'));
    s.flush();
    expect(lines).toEqual(['error: boom', 'next', '10%\r50%', 'last\r']);
  });
});
