/**
 * `-o json`: one JSON document (pretty-printed), with DEL, C1 and bidi
 * characters written as `\uXXXX` so even `cat out.json` on a terminal is safe.
 * The shapes are the zod schemas of `core/schemas.ts`: the public contract.
 */
import { jsonSafeStringify } from './sanitize.js';

export function renderJson(value: unknown): string {
  return jsonSafeStringify(value, 2) + '\n';
}

/**
 * Streams a JSON array page by page in bounded memory (`list --all -o json`):
 * call `open()`, `items(page)` per page, then `close()`.
 */
export class JsonArrayWriter {
  private count = 0;
  constructor(private readonly write: (s: string) => void) {}
  open(): void {
    this.write('[');
  }
  items(items: readonly unknown[]): void {
    for (const item of items) {
      const body = jsonSafeStringify(item, 2).replace(/\n/g, '\n  ');
      this.write(`${this.count === 0 ? '\n  ' : ',\n  '}${body}`);
      this.count++;
    }
  }
  close(): void {
    this.write(this.count === 0 ? ']\n' : '\n]\n');
  }
}
