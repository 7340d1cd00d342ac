import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { QueueStats } from '../../src/backend/contract.js';
import { FAILURE_CODE_OTHER, STATS_MAX_FAILURE_CODES, failureCounts } from '../../src/core/queue-stats.js';
import { formatDuration } from '../../src/core/duration.js';
import {
  StatsHistory,
  StatsReport,
  buildStatsReport,
  checkDlqLimits,
  parseRate,
  percentile,
  sparkline,
  summarizeDurations,
} from '../../src/core/stats.js';

const counts = { queued: 0, scheduled: 0, running: 0, succeeded: 0, dead: 0, cancelled: 0, expired: 0 };

describe('percentile', () => {
  it('interpolates between closest ranks', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([10], 95)).toBe(10);
    expect(percentile([5, 1, 3], 0)).toBe(1);
    expect(percentile([5, 1, 3], 100)).toBe(5);
    expect(percentile([0, 100], 95)).toBe(95);
  });

  it('is null for no samples, not zero', () => {
    expect(percentile([], 50)).toBeNull();
  });

  it('refuses a p outside 0..100', () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it('lies between min and max and grows with p', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 99 }), (xs, p) => {
        const a = percentile(xs, p)!;
        const b = percentile(xs, p + 1)!;
        expect(a).toBeGreaterThanOrEqual(Math.min(...xs));
        expect(b).toBeLessThanOrEqual(Math.max(...xs));
        expect(b).toBeGreaterThanOrEqual(a);
      }),
    );
  });

  it('does not reorder the caller’s samples', () => {
    const xs = [3, 1, 2];
    percentile(xs, 50);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe('summarizeDurations', () => {
  it('gives count, sum, p50, p95, max', () => {
    const s = summarizeDurations(Array.from({ length: 101 }, (_, i) => i * 10))!;
    expect(s).toMatchObject({ count: 101, sum_ms: 50500, p50_ms: 500, p95_ms: 950, max_ms: 1000 });
  });
  it('is null when the backend keeps no samples', () => {
    expect(summarizeDurations(undefined)).toBeNull();
  });
});

describe('sparkline', () => {
  it('scales from zero to the largest value shown', () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline([5, 5, 5])).toBe('███');
    expect(sparkline([0, 0])).toBe('▁▁');
  });
  it('shows the last `width` values and a gap for unknown ones', () => {
    expect(sparkline([9, 9, 0, null, 1], 3)).toBe('▁ █');
  });
});

describe('StatsHistory', () => {
  it('keeps at most `capacity` readings per key', () => {
    const h = new StatsHistory(3);
    for (const v of [1, 2, 3, 4, 5]) h.push('depth', v);
    expect(h.get('depth')).toEqual([3, 4, 5]);
    expect(h.get('other')).toEqual([]);
  });
});

describe('buildStatsReport', () => {
  const full: QueueStats = {
    queue: 'research',
    counts: { ...counts, queued: 30, scheduled: 10, running: 4, dead: 5 },
    dlq_size: 5,
    oldest_queued_age_ms: 120_000,
    running: 4,
    at: Date.UTC(2026, 0, 1),
    backlog_seconds: 2400,
    totals: { submitted: 200, attempts: 180, succeeded: 140, retried: 18, dead: 5, expired: 3, cancelled: 2 },
    by_attempt: [
      { attempt: 2, succeeded: 9, failed: 6 },
      { attempt: 1, succeeded: 131, failed: 19 },
    ],
    time_in_queue_ms: [100, 200, 300],
    execution_ms: [1000],
    recent: { window_ms: 300_000, submitted: 60, succeeded: 27, failed: 3 },
  };

  it('derives rates, throughput and drain time from counters', () => {
    const r = buildStatsReport(full);
    expect(StatsReport.parse(r)).toEqual(r);
    expect(r.retry_rate).toBeCloseTo(18 / 180);
    expect(r.dlq_rate).toBeCloseTo(5 / 150);
    expect(r.throughput_per_s).toBeCloseTo(30 / 300);
    expect(r.drain_estimate_seconds).toBeCloseTo(40 / 0.1);
    expect(r.success_rate_by_attempt.map((a) => [a.attempt, a.rate])).toEqual([
      [1, 131 / 150],
      [2, 9 / 15],
    ]);
    expect(r.time_in_queue?.p50_ms).toBe(200);
    expect(r.at).toBe('2026-01-01T00:00:00.000Z');
  });

  it('reports figures a backend does not keep as null, never as zero', () => {
    const r = buildStatsReport({ queue: 'q', counts, dlq_size: 0, oldest_queued_age_ms: null, running: 0 });
    expect(StatsReport.parse(r)).toEqual(r);
    expect(r).toMatchObject({
      backlog_seconds: null,
      retry_rate: null,
      dlq_rate: null,
      throughput_per_s: null,
      drain_estimate_seconds: null,
      time_in_queue: null,
      by_class: null,
      totals: null,
    });
  });
});

describe('checkDlqLimits', () => {
  const obs = { queue: 'q', dlq_size: 12, oldest_dead_age_ms: 7_200_000, dlq_rate: 0.1 };
  it('passes within every limit', () => {
    expect(checkDlqLimits(obs, { maxSize: 12, maxRate: 0.1 }, formatDuration)).toBeNull();
    expect(checkDlqLimits(obs, {}, formatDuration)).toBeNull();
  });
  it('names the broken limit in one line', () => {
    expect(checkDlqLimits(obs, { maxSize: 11 }, formatDuration)).toBe('queue q: DLQ holds 12 jobs, more than --max-size 11');
    expect(checkDlqLimits({ ...obs, dlq_size: 1 }, { maxSize: 0 }, formatDuration)).toBe('queue q: DLQ holds 1 job, more than --max-size 0');
    expect(checkDlqLimits(obs, { maxAgeMs: 3_600_000 }, formatDuration)).toBe('queue q: a DLQ entry is 2h old, older than --max-age 1h');
    expect(checkDlqLimits(obs, { maxRate: 0.05 }, formatDuration)).toBe('queue q: DLQ rate is 10.00%, above --max-rate 5.00%');
  });
  it('does not fire on an unknown rate', () => {
    expect(checkDlqLimits({ ...obs, dlq_rate: null }, { maxRate: 0 }, formatDuration)).toBeNull();
  });
});

describe('parseRate', () => {
  it('takes a fraction or a percentage', () => {
    expect(parseRate('0.05')).toBe(0.05);
    expect(parseRate('5%')).toBe(0.05);
    expect(parseRate('150%')).toBeNull();
    expect(parseRate('abc')).toBeNull();
  });
});

describe('failureCounts', () => {
  it('lists codes largest first (ties by code) and leaves out zeros', () => {
    expect(failureCounts(new Map([['TIMEOUT', 1], ['PROVIDER_429', 4], ['NETWORK', 1], ['GONE', 0]]))).toEqual([
      { code: 'PROVIDER_429', count: 4 },
      { code: 'NETWORK', count: 1 },
      { code: 'TIMEOUT', count: 1 },
    ]);
  });

  it(`keeps the ${STATS_MAX_FAILURE_CODES} largest codes of a sum over shards, the rest added to ${FAILURE_CODE_OTHER}`, () => {
    // Two shards each kept their own codes: together more than one queue keeps.
    const counts = new Map<string, number>([[FAILURE_CODE_OTHER, 2]]);
    for (let i = 0; i < STATS_MAX_FAILURE_CODES + 5; i++) counts.set(`C${String(i).padStart(3, '0')}`, i < 5 ? 1 : 10);
    const out = failureCounts(counts);
    expect(out).toHaveLength(STATS_MAX_FAILURE_CODES + 1);
    expect(out.find((c) => c.code === FAILURE_CODE_OTHER)).toEqual({ code: FAILURE_CODE_OTHER, count: 2 + 5 });
    expect(out.filter((c) => c.code !== FAILURE_CODE_OTHER).every((c) => c.count === 10)).toBe(true);
    expect(out.reduce((n, c) => n + c.count, 0)).toBe(2 + 5 + 10 * STATS_MAX_FAILURE_CODES);
  });
});
