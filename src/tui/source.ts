/**
 * Where the TUI's entries come from: the backend contract only (`dlqList`
 * in bounded pages, `dlqGet` for one entry), so it works on every backend.
 */
import { MAX_PAGE_LIMIT, type Backend, type DlqFilter } from '../backend/contract.js';
import type { DlqEntry } from '../core/schemas.js';

export interface TriageSource {
  /** The DLQ (narrowed by the command's flags) page by page. */
  pages(signal: AbortSignal): AsyncIterable<DlqEntry[]>;
  /** One full entry for the detail view; null when it left the DLQ. */
  get(jobId: string): Promise<DlqEntry | null>;
}

/** Pages as large as the contract allows: fewer round trips to fill 100,000 rows. */
export const LOAD_PAGE_SIZE = MAX_PAGE_LIMIT;

export function backendSource(backend: Pick<Backend, 'dlqList' | 'dlqGet'>, filter: DlqFilter, pageSize = LOAD_PAGE_SIZE): TriageSource {
  return {
    async *pages(signal) {
      let cursor: string | null = null;
      do {
        if (signal.aborted) return;
        const page = await backend.dlqList(filter, { limit: pageSize, cursor });
        if (page.items.length > 0) yield page.items;
        cursor = page.next_cursor;
      } while (cursor !== null);
    },
    get: (jobId) => backend.dlqGet(jobId),
  };
}
