import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { ValidationError } from '../../src/core/errors.js';
import { createIdFactory, isJobId } from '../../src/core/ids.js';
import { INLINE_INPUT_MAX_BYTES } from '../../src/core/schemas.js';
import { normalizeSubmit, requestFingerprint, sameRequest, stableStringify } from '../../src/core/submit.js';

const now = Date.UTC(2026, 10, 29);

describe('normalizeSubmit', () => {
  it('fills defaults', () => {
    const r = normalizeSubmit({ workflow: 'research_report:v3' }, now);
    expect(r).toMatchObject({ queue: 'default', tenant_id: 'default', class: 'batch', max_attempts: 3, allowed_tools: [] });
  });
  it('caps inline input at 64 KiB and points to --input-ref', () => {
    const big = 'x'.repeat(INLINE_INPUT_MAX_BYTES + 1);
    try {
      normalizeSubmit({ workflow: 'w:v1', input: big }, now);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).code).toBe('INPUT_TOO_LARGE');
      expect((e as ValidationError).hint).toMatch(/--input-ref/);
    }
    expect(() => normalizeSubmit({ workflow: 'w:v1', input: 'x'.repeat(INLINE_INPUT_MAX_BYTES) }, now)).not.toThrow();
  });
  it('counts bytes, not characters', () => {
    const emoji = '€'.repeat(Math.floor(INLINE_INPUT_MAX_BYTES / 3) + 1); // 3 bytes each
    expect(() => normalizeSubmit({ workflow: 'w:v1', input: emoji }, now)).toThrow(/bytes/);
  });
  it('a reference needs its checksum', () => {
    expect(() => normalizeSubmit({ workflow: 'w:v1', input_ref: 's3://b/k' }, now)).toThrow(/input_sha256/);
  });
  it('names the broken rule for bad fields', () => {
    expect(() => normalizeSubmit({ workflow: 'nope' }, now)).toThrow(/workflow: .*name:vN/);
    expect(() => normalizeSubmit({ workflow: 'w:v1', class: 'urgent' }, now)).toThrow(/class/);
    expect(() => normalizeSubmit({ workflow: 'w:v1', queue: 'a b' }, now)).toThrow(/queue: name must be/);
    expect(() => normalizeSubmit({ workflow: 'w:v1', surprise: 1 }, now)).toThrow(ValidationError);
  });
  // Regression: two jobs of 1e308 s made a SQLite queue's backlog counter Infinity for good (it
  // stayed so after they ended), and with an admission limit every later submit was refused.
  it('refuses an estimated_seconds past 100 years, which no real job takes and whose sums overflow', () => {
    expect(() => normalizeSubmit({ workflow: 'w:v1', estimated_seconds: 1e308 }, now)).toThrow(/estimated_seconds/);
    expect(() => normalizeSubmit({ workflow: 'w:v1', estimated_seconds: 36_500 * 86_400 + 1 }, now)).toThrow(ValidationError);
    expect(normalizeSubmit({ workflow: 'w:v1', estimated_seconds: 36_500 * 86_400 }, now).estimated_seconds).toBe(36_500 * 86_400);
  });
  it('refuses a deadline in the past', () => {
    expect(() => normalizeSubmit({ workflow: 'w:v1', deadline_at: '2026-01-01T00:00:00Z' }, now)).toThrow(/not in the future/);
  });
  it('refuses a run_at at or after the deadline: the job could never run', () => {
    const deadline_at = '2026-11-29T01:00:00.000Z';
    expect(() => normalizeSubmit({ workflow: 'w:v1', deadline_at, run_at: '2026-11-29T02:00:00Z' }, now)).toThrow(/run_at .* is not before deadline_at .*could never run/);
    expect(() => normalizeSubmit({ workflow: 'w:v1', deadline_at, run_at: deadline_at }, now)).toThrow(ValidationError);
    expect(normalizeSubmit({ workflow: 'w:v1', deadline_at, run_at: '2026-11-29T00:30:00Z' }, now).run_at).toBe('2026-11-29T00:30:00.000Z');
  });
});

describe('keys stored by an earlier agentq (fingerprints with the times)', () => {
  const legacy = (r: ReturnType<typeof normalizeSubmit>) => createHash('sha256').update(stableStringify(r)).digest('hex');
  it('a request without times has the same fingerprint as before', () => {
    const r = normalizeSubmit({ workflow: 'w:v1', tenant_id: 't', idempotency_key: 'k', input: 'x' }, now);
    expect(requestFingerprint(r)).toBe(legacy(r));
  });
  it('a stored fingerprint with the times still matches the same request', () => {
    const r = normalizeSubmit({ workflow: 'w:v1', idempotency_key: 'k', deadline_at: '2026-11-29T05:00:00Z' }, now);
    expect(requestFingerprint(r)).not.toBe(legacy(r));
    expect(sameRequest(legacy(r), r)).toBe(true);
    expect(sameRequest(legacy(normalizeSubmit({ workflow: 'w:v1', idempotency_key: 'k', input: 'other' }, now)), r)).toBe(false);
  });
});

describe('requestFingerprint', () => {
  it('ignores field order and zone spelling, not content', () => {
    const a = normalizeSubmit({ workflow: 'w:v1', tenant_id: 't', deadline_at: '2026-12-01T01:00:00+01:00' }, now);
    const b = normalizeSubmit({ deadline_at: '2026-12-01T00:00:00Z', tenant_id: 't', workflow: 'w:v1' }, now);
    const c = normalizeSubmit({ workflow: 'w:v1', tenant_id: 'u' }, now);
    expect(requestFingerprint(a)).toBe(requestFingerprint(b));
    expect(requestFingerprint(a)).not.toBe(requestFingerprint(c));
  });
});

describe('job ids', () => {
  it('are job_ + ULID and sort in creation order within one millisecond', () => {
    const clock = new ManualClock(now);
    const next = createIdFactory(clock, seededRandom(1));
    const ids = Array.from({ length: 100 }, () => next('job_'));
    expect(ids.every(isJobId)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(isJobId('job_nope')).toBe(false);
  });
});
