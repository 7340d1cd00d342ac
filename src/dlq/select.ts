/**
 * Walking a DLQ selection in bounded pages. Every bulk read goes through
 * here, so memory stays flat whatever the size of the DLQ: a caller holds one
 * page at a time and the cursor (a job id) is all that carries over.
 */
import { MAX_PAGE_LIMIT, type Backend, type DlqFilter } from '../backend/contract.js';
import { InterruptedError } from '../core/errors.js';
import type { DlqEntry } from '../core/schemas.js';

export const DEFAULT_WALK_PAGE = 250;

export async function* walkDlq(
  backend: Pick<Backend, 'dlqList'>,
  filter: DlqFilter,
  opts: { pageSize?: number; signal?: AbortSignal } = {},
): AsyncGenerator<DlqEntry[], void, void> {
  const limit = Math.min(Math.max(1, opts.pageSize ?? DEFAULT_WALK_PAGE), MAX_PAGE_LIMIT);
  let cursor: string | null = null;
  do {
    // Ctrl-C while reading: nothing has changed yet, so stop with exit 130 rather than an internal error.
    if (opts.signal?.aborted) throw new InterruptedError('interrupted while reading the DLQ: nothing was changed');
    const page = await backend.dlqList(filter, { limit, cursor });
    if (page.items.length > 0) yield page.items;
    cursor = page.next_cursor;
  } while (cursor !== null);
}
