/**
 * Where the TUI's entries come from: the backend contract only (`dlqRows`
 * in bounded pages, `dlqGet` for one entry), so it works on every backend.
 */
import { MAX_PAGE_LIMIT, type Backend, type DlqFilter, type DlqRow } from '../backend/contract.js';
import type { DlqEntry } from '../core/schemas.js';

export interface TriageSource {
  /** The DLQ (narrowed by the command's flags) page by page, as light rows: the list never needs a job document. */
  pages(signal: AbortSignal): AsyncIterable<DlqRow[]>;
  /**
   * How many entries the load will bring, from the backend's counters (one cheap query, no
   * walk), so the header can say "of N" while rows stream in; null when it cannot tell.
   */
  expectedTotal?(): Promise<number | null>;
  /** One full entry for the detail view; null when it left the DLQ. */
  get(jobId: string): Promise<DlqEntry | null>;
  /**
   * The job ids whose entry matches `text` as `--grep` does (the whole error message, not only
   * the start a row carries): the text filter asks once it is submitted. Absent: the text
   * filter searches only what the rows hold.
   */
  grepIds?(text: string, signal: AbortSignal): Promise<Set<string>>;
}

/**
 * Rows per `dlqRows` call while loading. A light row is a few hundred bytes,
 * so a page of the contract's maximum is a small burst; fewer, larger pages
 * mean fewer queries (and Redis round trips) for the whole DLQ.
 */
export const LOAD_PAGE_SIZE = MAX_PAGE_LIMIT;

/** Above this many queues the load's total is not estimated (one counters query per queue). */
const EXPECTED_TOTAL_MAX_QUEUES = 100;

export function backendSource(backend: Pick<Backend, 'dlqRows' | 'dlqGet' | 'stats' | 'queues'>, filter: DlqFilter, pageSize = LOAD_PAGE_SIZE): TriageSource {
  return {
    async expectedTotal() {
      // The counters are per queue: any narrower selector (tenant, code, time window…) is only known by walking it.
      const { queue, ...rest } = filter;
      if (Object.values(rest).some((v) => v !== undefined)) return null;
      if (queue !== undefined) return (await backend.stats(queue)).dlq_size;
      // Every queue (no --queue): each queue's counters, summed, so a big DLQ says "of ~N" there too.
      // Not when there are many queues (one counters query each).
      // One page one longer than the bound: more than the bound (a next page or the extra name) is "long".
      const page = await backend.queues({ limit: EXPECTED_TOTAL_MAX_QUEUES + 1 });
      if (page.items.length > EXPECTED_TOTAL_MAX_QUEUES || page.next_cursor !== null) return null;
      let total = 0;
      for (const q of page.items) total += (await backend.stats(q)).dlq_size;
      return total;
    },
    async *pages(signal) {
      let cursor: string | null = null;
      do {
        if (signal.aborted) return;
        const page = await backend.dlqRows(filter, { limit: pageSize, cursor });
        if (page.items.length > 0) yield page.items;
        cursor = page.next_cursor;
      } while (cursor !== null);
    },
    get: (jobId) => backend.dlqGet(jobId),
    async grepIds(text, signal) {
      const ids = new Set<string>();
      let cursor: string | null = null;
      do {
        signal.throwIfAborted();
        const page = await backend.dlqRows({ ...filter, grep: text }, { limit: pageSize, cursor });
        for (const r of page.items) ids.add(r.job_id);
        cursor = page.next_cursor;
        // A turn of the event loop between pages, as the load takes: a synchronous store (SQLite)
        // otherwise held every key and frame until the last page was searched.
        if (cursor !== null) await new Promise((resolve) => setImmediate(resolve));
      } while (cursor !== null);
      return ids;
    },
  };
}
