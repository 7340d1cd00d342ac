import { describe, expect, it } from 'vitest';
import { addToSummary, parseSummaryKeys, type SummaryGroup } from '../../src/dlq/summary.js';
import { entry } from './entries.js';

const NOW = Date.parse('2026-01-02T00:00:00Z');

describe('dlq summary', () => {
  it('groups by the chosen keys with oldest/newest and expired/partial counts', () => {
    const groups = new Map<string, SummaryGroup>();
    const by = parseSummaryKeys('error_code,tenant');
    addToSummary(groups, by, entry({ dead_at: '2026-01-01T05:00:00.000Z' }), NOW, 0);
    addToSummary(groups, by, entry({ dead_at: '2026-01-01T01:00:00.000Z', deadline_at: '2026-01-01T02:00:00.000Z' }), NOW, 0);
    addToSummary(groups, by, entry({ dead_at: '2026-01-01T09:00:00.000Z', partial: true }), NOW, 0);
    addToSummary(groups, by, entry({ error_code: 'TIMEOUT' }), NOW, 0);
    const g = [...groups.values()];
    expect(g).toHaveLength(2);
    expect(g[0]).toEqual({
      key: { error_code: 'PROVIDER_429', tenant: 'acme' },
      count: 3,
      oldest_dead_at: '2026-01-01T01:00:00.000Z',
      newest_dead_at: '2026-01-01T09:00:00.000Z',
      expired: 1,
      partial: 1,
      malformed: 0,
    });
    expect(g[1]!.key).toEqual({ error_code: 'TIMEOUT', tenant: 'acme' });
  });
  it('--min-remaining counts nearly-expired jobs as expired', () => {
    const groups = new Map<string, SummaryGroup>();
    addToSummary(groups, ['queue'], entry({ deadline_at: '2026-01-02T00:10:00.000Z' }), NOW, 30 * 60_000);
    expect([...groups.values()][0]!.expired).toBe(1);
  });
  it('refuses unknown keys naming the allowed ones', () => {
    expect(() => parseSummaryKeys('error_code,colour')).toThrow(/--by "colour": group by one or more of error_code, workflow, tenant/);
    expect(() => parseSummaryKeys(',')).toThrow(/at least one/);
  });
});
