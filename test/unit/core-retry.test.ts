import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/core/clock.js';
import { backoffDelay, classifyError, decideFailure, DEFAULT_RETRY_POLICY } from '../../src/core/retry.js';

const quiet = { attempts: 100, retries: 0 };
const now = Date.UTC(2026, 10, 29);

describe('classifyError', () => {
  it('treats provider rate limits, 5xx, network and lease expiry as retryable', () => {
    for (const code of ['PROVIDER_429', 'PROVIDER_5XX', 'NETWORK', 'LEASE_EXPIRED', 'TRANSIENT']) {
      expect(classifyError(code)).toBe(true);
    }
  });
  it('treats validation, permission and budget errors as permanent', () => {
    for (const code of ['VALIDATION', 'PERMISSION', 'BUDGET_EXCEEDED']) expect(classifyError(code)).toBe(false);
  });
  it('falls back to the HTTP status, then to the hint', () => {
    expect(classifyError('X', { status: 503 })).toBe(true);
    expect(classifyError('X', { status: 400 })).toBe(false);
    expect(classifyError('X', { retryableHint: true })).toBe(true);
    expect(classifyError('X')).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('attempt 2 waits 5-15 s, attempt 3 waits 30-90 s, later ones longer (property)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.999999, noNaN: true }), (r) => {
        const rnd = () => r;
        const d1 = backoffDelay(1, DEFAULT_RETRY_POLICY, rnd);
        const d2 = backoffDelay(2, DEFAULT_RETRY_POLICY, rnd);
        const d4 = backoffDelay(4, DEFAULT_RETRY_POLICY, rnd);
        expect(d1).toBeGreaterThanOrEqual(5_000);
        expect(d1).toBeLessThanOrEqual(15_000);
        expect(d2).toBeGreaterThanOrEqual(30_000);
        expect(d2).toBeLessThanOrEqual(90_000);
        expect(d4).toBeGreaterThan(d2);
        expect(backoffDelay(50, DEFAULT_RETRY_POLICY, rnd)).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.maxDelayMs);
      }),
    );
  });
  it('jitter spreads retries (no thundering herd)', () => {
    const rnd = seededRandom(7);
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(1, DEFAULT_RETRY_POLICY, rnd)));
    expect(delays.size).toBeGreaterThan(40);
  });
});

describe('decideFailure', () => {
  const base = { retryable: true, attempt: 1, maxAttempts: 3, deadlineAt: null };

  it('retries a retryable error with attempts left', () => {
    const d = decideFailure(base, now, () => 0.5, quiet);
    expect(d).toEqual({ kind: 'retry', runAt: now + 10_000, overBudget: false });
  });
  it('sends a permanent error to the DLQ at once', () => {
    expect(decideFailure({ ...base, retryable: false }, now, () => 0.5, quiet)).toEqual({ kind: 'dead', reason: 'permanent' });
  });
  it('sends an exhausted job to the DLQ', () => {
    expect(decideFailure({ ...base, attempt: 3 }, now, () => 0.5, quiet)).toEqual({ kind: 'dead', reason: 'exhausted' });
  });
  it('never schedules a retry past the deadline: the job expires', () => {
    expect(decideFailure({ ...base, deadlineAt: now + 6_000 }, now, () => 0.9, quiet)).toEqual({ kind: 'expired' });
    expect(decideFailure({ ...base, deadlineAt: now }, now, () => 0, quiet)).toEqual({ kind: 'expired' });
  });
  it('over the retry budget, pushes the retry later instead of storming', () => {
    const busy = { attempts: 100, retries: 40 };
    const d = decideFailure(base, now, () => 0.5, busy);
    expect(d).toEqual({ kind: 'retry', runAt: now + 10_000 + DEFAULT_RETRY_POLICY.overBudgetDelayMs, overBudget: true });
  });
  it('a quiet queue may retry even at a high ratio (minimum retries)', () => {
    const d = decideFailure(base, now, () => 0.5, { attempts: 2, retries: 3 });
    expect(d.kind === 'retry' && d.overBudget).toBe(false);
  });
});
