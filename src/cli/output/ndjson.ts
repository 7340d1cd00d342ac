/**
 * `-o ndjson`: one compact JSON object per line, safe for `jq -c`, `grep` and
 * terminals (C1 and bidi escaped as in `json.ts`). `tail` streams events this
 * way; each line carries a `type` field.
 */
import { jsonSafeStringify } from './sanitize.js';

export function ndjsonLine(value: unknown): string {
  // JSON.stringify never emits a raw newline inside a compact document, so one value is one line.
  return jsonSafeStringify(value) + '\n';
}
