/**
 * mapBounded: the queue reads of `stats`, `metrics serve` and `dlq check` go a few at a time (one
 * after the other, 1,500 Redis queues took ~5 s: a scrape's whole budget), in order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { collectStats } from '../../src/cli/commands/stats.js';
import { mapBounded, QUEUE_READS_AT_ONCE } from '../../src/util/bounded.js';

/** A call that counts the calls in flight, and gives way once before it ends (no timer). */
function counted<T, R>(fn: (x: T) => R) {
  let inFlight = 0;
  let most = 0;
  const call = async (x: T): Promise<R> => {
    inFlight++;
    most = Math.max(most, inFlight);
    try {
      await new Promise((r) => setImmediate(r));
      return fn(x);
    } finally {
      inFlight--;
    }
  };
  return { call, most: () => most };
}

it('keeps the order, and at most the limit in flight', async () => {
  const c = counted((x: number) => x * 2);
  const out = await mapBounded(Array.from({ length: 50 }, (_v, i) => i), 4, c.call);
  expect(out).toEqual(Array.from({ length: 50 }, (_v, i) => i * 2));
  expect(c.most()).toBe(4);
  expect(await mapBounded([], 4, c.call)).toEqual([]);
});

it('rejects with the first failure, and starts no call after it', async () => {
  const started: number[] = [];
  const c = counted((x: number) => {
    if (x === 3) throw new Error('queue 3 failed');
    return x;
  });
  await expect(
    mapBounded(Array.from({ length: 100 }, (_v, i) => i), 2, (x) => {
      started.push(x);
      return c.call(x);
    }),
  ).rejects.toThrow('queue 3 failed');
  expect(Math.max(...started)).toBeLessThan(10);
});

it('collectStats reads several queues at once, and gives them in name order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aq-bounded-'));
  const backend = new SqliteBackend({ path: join(dir, 'a.db') });
  try {
    const names = Array.from({ length: 40 }, (_v, i) => `q-${String(i).padStart(2, '0')}`);
    for (const q of names) await backend.submit({ workflow: 'w:v1', queue: q });
    const c = counted((q: string) => backend.stats(q));
    const wrapped = { queues: (p: Parameters<Backend['queues']>[0]) => backend.queues(p), stats: (q: string) => c.call(q) } as unknown as Backend;
    const { stats, damaged } = await collectStats(wrapped, undefined);
    expect(damaged).toEqual([]);
    expect(stats.map((s) => s.queue)).toEqual(names);
    expect(stats.every((s) => s.counts.queued === 1)).toBe(true);
    expect(c.most()).toBe(QUEUE_READS_AT_ONCE);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
