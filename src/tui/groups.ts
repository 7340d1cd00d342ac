/**
 * The group-by-error view: how many DLQ entries share an error code and a
 * workflow. Triage usually starts here ("which failure is this?"), then
 * drills into one group.
 */
import { isRowExpired, type TriageRow } from './row.js';

export interface ErrorGroup {
  /** Set when the groups are split by queue (the list holds several: a redrive works on one). */
  queue: string | null;
  errorCode: string;
  workflow: string;
  count: number;
  expired: number;
  partial: number;
}

/** Groups the given rows (indices into `rows`), largest group first, ties by code then workflow. */
export function groupByError(rows: readonly TriageRow[], indices: readonly number[], now: number, byQueue = false): ErrorGroup[] {
  const byKey = new Map<string, ErrorGroup>();
  for (const i of indices) {
    const row = rows[i]!;
    // A NUL cannot appear in a stored code or workflow name, so it separates the two safely.
    const key = byQueue ? `${row.queue}\u0000${row.errorCode}\u0000${row.workflow}` : `${row.errorCode}\u0000${row.workflow}`;
    let g = byKey.get(key);
    if (g === undefined) {
      g = { queue: byQueue ? row.queue : null, errorCode: row.errorCode, workflow: row.workflow, count: 0, expired: 0, partial: 0 };
      byKey.set(key, g);
    }
    g.count++;
    if (isRowExpired(row, now)) g.expired++;
    if (row.isPartial) g.partial++;
  }
  return [...byKey.values()].sort(
    (a, b) => b.count - a.count || cmp(a.errorCode, b.errorCode) || cmp(a.workflow, b.workflow) || cmp(a.queue ?? '', b.queue ?? ''),
  );
}

/** Distinct values of one column with their counts, most frequent first: the picker's options. */
export function distinctCounts(rows: readonly TriageRow[], column: 'errorCode' | 'tenant' | 'queue'): Array<{ value: string; count: number }> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row[column], (counts.get(row[column]) ?? 0) + 1);
  return [...counts.entries()].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || cmp(a.value, b.value));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
