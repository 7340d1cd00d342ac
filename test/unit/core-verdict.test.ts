import { describe, expect, it } from 'vitest';
import type { DlqEntry } from '../../src/core/schemas.js';
import { isExpiredAt, verdictFor, type VerdictOptions } from '../../src/core/verdict.js';

const now = Date.UTC(2026, 10, 29, 12);
const iso = (ms: number) => new Date(ms).toISOString();

function entry(over: Partial<DlqEntry> = {}): DlqEntry {
  return {
    job_id: 'job_01', queue: 'q', tenant_id: 't', workflow: 'w:v1', class: 'batch', dead_at: iso(now - 1000),
    reason: 'exhausted', error_code: 'PROVIDER_429', error_message: 'rate limited', worker_version: null,
    attempts: 3, max_attempts: 3, deadline_at: null, partial: false, redrive_count: 0, malformed: null, job: null,
    ...over,
  };
}
const redrive: VerdictOptions = { action: 'redrive', now, minRemainingMs: 0, includePartial: false, maxRedrives: 3 };

describe('verdictFor', () => {
  it('redrives a healthy entry', () => {
    expect(verdictFor(entry(), redrive).verdict).toBe('redrive');
  });
  it('skips an entry that left the DLQ', () => {
    expect(verdictFor(null, redrive).verdict).toBe('skip:not_in_dlq');
  });
  it('never touches malformed entries, whatever the action', () => {
    for (const action of ['redrive', 'purge', 'expire'] as const) {
      expect(verdictFor(entry({ malformed: 'bad json' }), { ...redrive, action }).verdict).toBe('skip:malformed');
    }
  });
  it('skips expired entries, and those with less than --min-remaining left', () => {
    expect(verdictFor(entry({ deadline_at: iso(now - 1) }), redrive).verdict).toBe('skip:expired');
    const soon = entry({ deadline_at: iso(now + 60_000) });
    expect(verdictFor(soon, redrive).verdict).toBe('redrive');
    const v = verdictFor(soon, { ...redrive, minRemainingMs: 300_000 });
    expect(v.verdict).toBe('skip:expired');
    expect(v.detail).toBe(`only 1m left before the deadline ${iso(now + 60_000)}, less than --min-remaining 5m`);
  });
  it('skips partial entries unless explicitly included', () => {
    expect(verdictFor(entry({ partial: true }), redrive).verdict).toBe('skip:partial');
    expect(verdictFor(entry({ partial: true }), { ...redrive, includePartial: true }).verdict).toBe('redrive');
  });
  it('quarantines entries redriven too often', () => {
    expect(verdictFor(entry({ redrive_count: 3 }), redrive).verdict).toBe('skip:quarantined');
    expect(verdictFor(entry({ redrive_count: 2 }), redrive).verdict).toBe('redrive');
  });
  it('expire only takes expired entries; purge takes any well-formed entry', () => {
    expect(verdictFor(entry(), { ...redrive, action: 'expire' }).verdict).toBe('skip:not_expired');
    expect(verdictFor(entry({ deadline_at: iso(now - 1) }), { ...redrive, action: 'expire' }).verdict).toBe('expire');
    expect(verdictFor(entry({ partial: true }), { ...redrive, action: 'purge' }).verdict).toBe('purge');
  });
  it('explains a verdict in words that read right (no "deadline none has not passed", no "1 times")', () => {
    const expire = { ...redrive, action: 'expire' as const };
    expect(verdictFor(entry(), expire).detail).toBe('no deadline: it never expires');
    const later = iso(now + 3_600_000);
    expect(verdictFor(entry({ deadline_at: later }), expire).detail).toBe(`deadline ${later} has not passed`);
    expect(verdictFor(entry({ deadline_at: later }), { ...expire, minRemainingMs: 600_000 }).detail).toBe(`deadline ${later} is more than --min-remaining 10m away`);
    expect(verdictFor(entry({ redrive_count: 1 }), { ...redrive, maxRedrives: 1 }).detail).toBe('redriven once already (limit 1)');
    expect(verdictFor(entry({ redrive_count: 4 }), redrive).detail).toBe('redriven 4 times already (limit 3)');
  });
  it('isExpiredAt: no deadline never expires', () => {
    expect(isExpiredAt(null, now, 1e12)).toBe(false);
  });
});
