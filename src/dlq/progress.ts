/**
 * What a bulk run reports while it works, as a discriminated union — events
 * apart from rendering. The CLI renders them as a bar (terminal) or plain
 * lines (stderr elsewhere); the TUI renders them its own way.
 */
import type { BulkAction, LedgerStatus } from '../backend/contract.js';

export type RunEvent =
  | { kind: 'started'; run_id: string; action: BulkAction; queue: string; remaining: number; resumed: boolean }
  | {
      kind: 'batch';
      run_id: string;
      action: BulkAction;
      /** Items handled in this session / items that were planned when it started. */
      done: number;
      remaining_at_start: number;
      moved: number;
      skipped: number;
      failed: number;
      elapsed_ms: number;
      /** Jobs per second since the first batch ended (null until a second one has). */
      rate_per_s: number | null;
    }
  | { kind: 'interrupted'; run_id: string; done: number; remaining_at_start: number }
  | { kind: 'finished'; run_id: string; action: BulkAction; counts: Record<LedgerStatus, number> };

export type ProgressSink = (e: RunEvent) => void;

function pct(done: number, total: number): string {
  return total === 0 ? '100%' : `${Math.floor((done * 100) / total)}%`;
}

function rate(perSecond: number | null): string {
  return perSecond === null ? '-/s' : `${Math.round(perSecond)}/s`;
}

/** What the ledger calls `moved`, in the words of the action: a purged job was not moved anywhere. */
const DONE_WORD: Record<BulkAction, string> = { redrive: 'moved', purge: 'purged', expire: 'expired', prune: 'pruned' };

/** One plain line per event: for logs and CI (stderr, not a terminal). */
export function formatProgressLine(e: RunEvent): string {
  switch (e.kind) {
    case 'started':
      return `${e.action} ${e.run_id} on ${e.queue}: ${e.resumed ? 'resuming, ' : ''}${e.remaining} to go`;
    case 'batch':
      return `${e.run_id}: ${e.done}/${e.remaining_at_start} (${pct(e.done, e.remaining_at_start)}) ${DONE_WORD[e.action]}=${e.moved} skipped=${e.skipped} failed=${e.failed} ${rate(e.rate_per_s)}`;
    case 'interrupted':
      return `${e.run_id}: interrupted after ${e.done}/${e.remaining_at_start}; the ledger is recorded`;
    case 'finished':
      return `${e.run_id}: finished: ${DONE_WORD[e.action]}=${e.counts.moved} skipped=${e.counts.skipped} failed=${e.counts.failed}`;
  }
}

/** A one-line bar redrawn in place (`\r`), for a terminal. */
export function formatProgressBar(e: Extract<RunEvent, { kind: 'batch' }>, width = 30): string {
  const frac = e.remaining_at_start === 0 ? 1 : e.done / e.remaining_at_start;
  const full = Math.round(frac * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${pct(e.done, e.remaining_at_start)} ${e.done}/${e.remaining_at_start} ${DONE_WORD[e.action]} ${e.moved} skipped ${e.skipped} failed ${e.failed} ${rate(e.rate_per_s)}`;
}

/**
 * A sink writing to a stream: a bar on a terminal, lines elsewhere. Lines are
 * throttled (at most one batch line per `everyMs`) so a fast run does not
 * flood a CI log; start, interruption and the end are always written.
 */
export function streamProgress(out: { write(s: string): unknown }, o: { isTTY: boolean; now: () => number; everyMs?: number }): ProgressSink {
  let last = -Infinity;
  let barShown = false;
  const every = o.everyMs ?? 1000;
  return (e) => {
    if (o.isTTY) {
      if (e.kind === 'batch') {
        // \x1b[K clears what a longer previous line left (a rate that got shorter read as "3/s/s")
        out.write(`\r${formatProgressBar(e)}\x1b[K`);
        barShown = true;
        return;
      }
      if (barShown) out.write('\n');
      barShown = false;
      out.write(`${formatProgressLine(e)}\n`);
      return;
    }
    if (e.kind === 'batch') {
      const t = o.now();
      if (t - last < every && e.done < e.remaining_at_start) return;
      last = t;
    }
    out.write(`${formatProgressLine(e)}\n`);
  };
}
