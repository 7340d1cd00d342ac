/**
 * `prune --max N` keeps the N jobs that ended longest ago across the queues it covers
 * (core/prune OldestFirst): the same choice as sorting every candidate by end, then queue, then
 * job id, and taking the first N, while holding no more than N at a time.
 */
import { describe, expect, it } from 'vitest';
import { OldestFirst, type PruneCandidate } from '../../src/core/prune.js';
import { seededRandom } from '../../src/core/clock.js';

const byAge = (a: PruneCandidate, b: PruneCandidate) =>
  a.endedAtMs - b.endedAtMs || (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0) || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0);

function candidates(n: number, seed: number): PruneCandidate[] {
  const random = seededRandom(seed);
  // few distinct ends and queues, so ties are common
  return Array.from({ length: n }, (_v, i) => ({
    queue: `q${Math.floor(random() * 4)}`,
    job_id: `job_${String(Math.floor(random() * 1e6)).padStart(7, '0')}_${i}`,
    state: 'succeeded' as const,
    endedAtMs: Math.floor(random() * 50),
  }));
}

describe('OldestFirst', () => {
  it.each([
    [1, 500],
    [7, 500],
    [499, 500],
    [500, 500],
    [501, 500],
    [10, 0],
  ])('keeps the %i that ended longest ago of %i offered, and counts the rest', (max, n) => {
    for (const seed of [1, 2, 3]) {
      const all = candidates(n, seed);
      const pick = new OldestFirst(max);
      for (const c of all) pick.offer(c);
      expect([...pick.taken()].sort(byAge)).toEqual([...all].sort(byAge).slice(0, max));
      expect(pick.passedOver).toBe(Math.max(0, n - max));
    }
  });

  it('without a cap keeps everything, in the order offered', () => {
    const all = candidates(300, 9);
    const pick = new OldestFirst(Infinity);
    for (const c of all) pick.offer(c);
    expect(pick.taken()).toEqual(all);
    expect(pick.passedOver).toBe(0);
  });
});
