/**
 * Walking a store's queue names page by page (`Backend.queues`). A store can know any number of
 * queues; a single bounded read once stood for "every queue", so a check, the stats or a DLQ
 * listing across queues silently skipped those past the first 1,000. Every caller that needs all
 * queues walks them here, and a caller that shows names to a person shows a few and how many more.
 */
import { MAX_PAGE_LIMIT, type Backend } from './contract.js';

type QueueLister = Pick<Backend, 'queues'>;

/** Every queue name, in name order; one bounded page in memory at a time. `pageSize`: for tests. */
export async function* eachQueue(backend: QueueLister, pageSize = MAX_PAGE_LIMIT): AsyncGenerator<string> {
  let cursor: string | null = null;
  do {
    const page = await backend.queues({ limit: pageSize, cursor });
    yield* page.items;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** Every queue name, in name order (for callers that go through each one anyway). */
export async function allQueues(backend: QueueLister, pageSize = MAX_PAGE_LIMIT): Promise<string[]> {
  const out: string[] = [];
  for await (const q of eachQueue(backend, pageSize)) out.push(q);
  return out;
}

/** What a message about one queue needs: whether the store knows it, a few names to show, how many it did not show. */
export interface QueueSurvey {
  known: boolean;
  shown: string[];
  more: number;
}

/** How many names a message shows (the rest are counted, not listed). */
export const SHOWN_QUEUES = 10;

/** Walks every page (a queue past the first page is known too), keeping `show` names and counting the rest. */
export async function surveyQueues(backend: QueueLister, queue: string | null | undefined, show = SHOWN_QUEUES, pageSize = MAX_PAGE_LIMIT): Promise<QueueSurvey> {
  const out: QueueSurvey = { known: false, shown: [], more: 0 };
  for await (const q of eachQueue(backend, pageSize)) {
    if (q === queue) out.known = true;
    if (out.shown.length < show) out.shown.push(q);
    else out.more++;
  }
  return out;
}
