/**
 * Collects a child's stdout as the job result, up to a cap. A result lives in
 * the job record (and in `inspect` output), so an agent that prints a whole
 * document must not bloat the store: past the cap the bytes are counted, not
 * kept, and the text ends with a marker saying how much was cut.
 */
export const DEFAULT_RESULT_CAP_BYTES = 64 * 1024;

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

  /** The kept text, with `…[truncated N bytes]` appended when something was cut. */
  text(): string {
    const body = Buffer.concat(this.chunks, this.kept).toString('utf8');
    return this.dropped > 0 ? `${body}…[truncated ${this.dropped} bytes]` : body;
  }
}

/** Splits a byte stream into lines for prefixing; a final unterminated line is flushed at the end. */
export class LineSplitter {
  private rest = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    const text = this.rest + chunk.toString('utf8');
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    // A runaway line without newlines must not grow without bound.
    if (this.rest.length > 16_384) {
      lines.push(this.rest);
      this.rest = '';
    }
    for (const l of lines) this.onLine(l);
  }

  flush(): void {
    if (this.rest) this.onLine(this.rest);
    this.rest = '';
  }
}
