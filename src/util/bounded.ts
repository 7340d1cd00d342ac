/**
 * Calls over many items, a bounded number at a time: `stats` and `dlq check` read every queue,
 * and one queue after the other waited one round trip (or several) each, so a store of 1,500
 * queues took 5 s on a local Redis, past a scrape's budget (`metrics serve` answered 503 for
 * ever). A few at a time keeps the load on the store bounded and the results in order.
 */

/** How many queues `stats`, `metrics serve` and `dlq check` read at once. */
export const QUEUE_READS_AT_ONCE = 16;

/**
 * `fn` over `items`, at most `limit` calls in flight, the results in the items' order. The first
 * failure rejects, and no call starts after it (the calls in flight are let finish).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return out;
}
