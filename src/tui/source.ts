/**
 * Where the TUI's entries come from: the backend contract only (`dlqRows`
 * in bounded pages, `dlqGet` for one entry), so it works on every backend.
 */
import { MAX_PAGE_LIMIT, type Backend, type DlqFilter, type DlqRow } from '../backend/contract.js';
import type { DlqEntry } from '../core/schemas.js';

export interface TriageSource {
  /** The DLQ (narrowed by the command's flags) page by page, as light rows: the list never needs a job document. */
  pages(signal: AbortSignal): AsyncIterable<DlqRow[]>;
  /** One full entry for the detail view; null when it left the DLQ. */
  get(jobId: string): Promise<DlqEntry | null>;
}

/**
 * Rows per `dlqRows` call while loading. A light row is a few hundred bytes,
 * so a page of the contract's maximum is a small burst; fewer, larger pages
 * mean fewer queries (and Redis round trips) for the whole DLQ.
 */
export const LOAD_PAGE_SIZE = MAX_PAGE_LIMIT;

export function backendSource(backend: Pick<Backend, 'dlqRows' | 'dlqGet'>, filter: DlqFilter, pageSize = LOAD_PAGE_SIZE): TriageSource {
  return {
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
  };
}
