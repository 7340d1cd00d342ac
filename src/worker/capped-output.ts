/**
 * Collects a child's stdout as the job result, up to a cap. A result lives in
 * the job record (and in `inspect` output), so an agent that prints a whole
 * document must not bloat the store: past the cap the bytes are counted, not
 * kept, and the text ends with a marker saying how much was cut.
 */
import { StringDecoder } from 'node:string_decoder';

export const DEFAULT_RESULT_CAP_BYTES = 64 * 1024;

/** The most the `…[truncated N bytes]` marker takes (N has at most 16 digits). */
export const RESULT_MARKER_ROOM = 64;

export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly capBytes: number = DEFAULT_RESULT_CAP_BYTES) {}

  push(chunk: Buffer): void {
    const room = this.capBytes - this.kept;
    if (room >= chunk.length) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
      return;
    }
    if (room > 0) {
      this.chunks.push(chunk.subarray(0, room));
      this.kept += room;
    }
    this.dropped += chunk.length - Math.max(room, 0);
  }

  get truncatedBytes(): number {
    return this.dropped;
  }

  /** Whether nothing at all was written. */
  get empty(): boolean {
    return this.kept === 0 && this.dropped === 0;
  }

  /**
   * The kept text, with `…[truncated N bytes]` appended when something was cut. The cut is
   * moved back to a character boundary: a multibyte character cut in half would be stored as
   * U+FFFD (the bytes of its first half count as truncated). With `maxTextBytes`, the text is cut
   * again to fit it: bytes that are not UTF-8 become U+FFFD, 3 bytes each, so the text of 64 KiB of
   * binary output is up to 192 KiB, over what the store keeps (which refused it: an effect's
   * command that had run was left started, to run again).
   */
  text(maxTextBytes = Infinity): string {
    const text = this.decoded();
    if (text.length <= maxTextBytes / 3 || Buffer.byteLength(text) <= maxTextBytes) return text;
    // Cut again from the output itself, so the count is of the output's bytes, as the first cut's
    // (counting bytes of the text added 3 for each U+FFFD, and the first marker, to it).
    const { text: head, bytes } = prefixFitting(Buffer.concat(this.chunks, this.kept), maxTextBytes - RESULT_MARKER_ROOM);
    return `${head}…[truncated ${this.kept + this.dropped - bytes} bytes]`;
  }

  private decoded(): string {
    let body = Buffer.concat(this.chunks, this.kept);
    if (this.dropped === 0) return body.toString('utf8');
    const whole = utf8BoundaryBefore(body, body.length);
    const cut = body.length - whole;
    body = body.subarray(0, whole);
    return `${body.toString('utf8')}…[truncated ${this.dropped + cut} bytes]`;
  }
}

/** Bytes of output decoded at a time by `prefixFitting`. */
const FIT_CHUNK = 4096;

/**
 * The longest text a prefix of `buf` decodes to whose UTF-8 is at most `limit` bytes, and how many
 * bytes of `buf` that prefix is. Decoded a few KiB at a time, cut where no character can be split
 * (so each piece decodes as the whole would); the piece that does not fit whole is searched for
 * its longest fitting prefix.
 */
function prefixFitting(buf: Buffer, limit: number): { text: string; bytes: number } {
  const parts: string[] = [];
  let size = 0;
  let at = 0;
  while (at < buf.length) {
    const end = Math.min(buf.length, at + FIT_CHUNK);
    const cut = end === buf.length ? end : Math.max(utf8BoundaryBefore(buf, end), at + 1);
    const piece = buf.subarray(at, cut).toString('utf8');
    const pieceSize = Buffer.byteLength(piece);
    if (size + pieceSize <= limit) {
      parts.push(piece);
      size += pieceSize;
      at = cut;
      continue;
    }
    // The longest fitting prefix of this piece (its size grows with its length).
    let lo = 0;
    let hi = cut - at;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const p = utf8BoundaryBefore(buf.subarray(at, cut), mid);
      if (p > lo && size + Buffer.byteLength(buf.subarray(at, at + p).toString('utf8')) <= limit) lo = p;
      else hi = mid - 1;
    }
    parts.push(buf.subarray(at, at + lo).toString('utf8'));
    at += lo;
    break;
  }
  return { text: parts.join(''), bytes: at };
}

/**
 * The largest index ≤ `end` at which `buf` can be cut without splitting a UTF-8 character: a
 * character whose lead byte is within the last three bytes and whose continuation bytes do not
 * all fit before `end` is left out whole. Bytes that are not UTF-8 are not moved around.
 */
export function utf8BoundaryBefore(buf: Uint8Array, end: number): number {
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need > end ? i : end;
  }
  return end;
}

/** The first index ≥ `start` that does not fall inside a character (skips at most three continuation bytes). */
export function utf8BoundaryAfter(buf: Uint8Array, start: number): number {
  let i = start;
  while (i < buf.length && i < start + 3 && (buf[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** Splits a byte stream into lines for prefixing; a final unterminated line is flushed at the end. */
export class LineSplitter {
  private rest = '';
  // A read can end inside a multibyte character: the decoder keeps its first bytes for the next
  // one (decoding each chunk alone turned one character into two U+FFFD). It never returns half a
  // surrogate pair either, so the runaway-line cut below cannot split a character.
  private readonly decoder = new StringDecoder('utf8');
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    const text = this.rest + this.decoder.write(chunk);
    // CRLF ends a line too (a CR left on it showed as a visible "\r" on every line); a lone CR
    // (a progress bar redrawing itself) stays in the line.
    const lines = text.split('\n').map((l, i, all) => (i < all.length - 1 && l.endsWith('\r') ? l.slice(0, -1) : l));
    this.rest = lines.pop() ?? '';
    // A runaway line without newlines must not grow without bound.
    if (this.rest.length > 16_384) {
      lines.push(this.rest);
      this.rest = '';
    }
    for (const l of lines) this.onLine(l);
  }

  flush(): void {
    this.rest += this.decoder.end();
    if (this.rest) this.onLine(this.rest);
    this.rest = '';
  }
}
