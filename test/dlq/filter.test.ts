import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { hasSelector, parseSelector, requireSelector } from '../../src/dlq/filter.js';

const NOW = Date.parse('2026-01-02T00:00:00Z');

describe('DLQ selector', () => {
  it('turns every flag into the backend filter and records what was given', () => {
    const s = parseSelector(
      {
        queue: 'research',
        tenant: 'acme',
        workflow: 'research_report:v3',
        errorCode: ['PROVIDER_429', 'TIMEOUT', 'PROVIDER_429'],
        reason: 'exhausted',
        since: '6h',
        until: '2026-01-01T23:00:00Z',
        minAttempts: '2',
        maxAttempts: '5',
        notExpired: true,
        minRemaining: '30m',
        partial: false,
        grep: 'timeout',
      },
      NOW,
    );
    expect(s.filter).toEqual({
      queue: 'research',
      tenant: 'acme',
      workflow: 'research_report:v3',
      errorCodes: ['PROVIDER_429', 'TIMEOUT'],
      reason: 'exhausted',
      since: NOW - 6 * 3_600_000,
      until: Date.parse('2026-01-01T23:00:00Z'),
      minAttempts: 2,
      maxAttempts: 5,
      expired: false,
      minRemainingMs: 1_800_000,
      now: NOW,
      partial: false,
      grep: 'timeout',
    });
    expect(s.minRemainingMs).toBe(1_800_000);
    expect(s.given.since).toBe('2026-01-01T18:00:00.000Z');
  });

  it('matches a typed code as typed and upper-cased: the worker stores codes in upper case, other writers as they wrote them', () => {
    const s = parseSelector({ errorCode: ['permission', 'Provider_429', 'PERMISSION', 'HTTP 429'] }, NOW);
    expect(s.filter.errorCodes).toEqual(['permission', 'PERMISSION', 'Provider_429', 'PROVIDER_429', 'HTTP 429']);
    expect(s.given.error_code).toEqual(s.filter.errorCodes);
  });

  it.each([
    [{ queue: 'bad queue' }, /--queue "bad queue": a queue name must be/],
    [{ tenant: '' }, /--tenant "": a tenant id must be/],
    [{ workflow: 'research' }, /--workflow "research": a workflow must look like name:vN/],
    [{ errorCode: ['PROVIDER\n429'] }, /--error-code "PROVIDER\\n429": an error code is 1-128 characters, none of them a control character/],
    [{ errorCode: ['X'.repeat(129)] }, /an error code is 1-128 characters/],
    [{ reason: 'bored' }, /the dead reason must be one of exhausted, permanent, lease_lost, custody/],
    [{ since: '6' }, /--since "6" is neither a duration nor an ISO-8601 time/],
    [{ since: '1h', until: '2h' }, /--since .* must be before --until/],
    [{ since: '2026-01-01T10:00' }, /has no time zone/],
    [{ minAttempts: 'two' }, /--min-attempts "two" must be a whole number/],
    [{ minAttempts: '4', maxAttempts: '3' }, /--min-attempts \(4\) must not be greater than --max-attempts \(3\)/],
    [{ expired: true, notExpired: true }, /--expired and --not-expired exclude each other/],
    [{ partial: false, partialFlags: ['--partial', '--no-partial'] }, /--partial and --no-partial exclude each other/],
    [{ minRemaining: 'soon' }, /--min-remaining "soon" is not a duration/],
    [{ grep: '' }, /--grep TEXT must be 1-200 characters/],
  ])('refuses %j naming the rule (exit 2)', (input, message) => {
    let err: unknown;
    try {
      parseSelector(input, NOW);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(message);
  });

  it('a bulk action with no selector is refused unless --all', () => {
    const empty = parseSelector({}, NOW);
    expect(hasSelector(empty)).toBe(false);
    expect(() => requireSelector(empty, false, 'redrive')).toThrow(/no selector would act on the whole DLQ/);
    expect(() => requireSelector(empty, true, 'redrive')).not.toThrow();
    // --min-remaining only tunes the expiry rule; it selects nothing by itself.
    expect(hasSelector(parseSelector({ minRemaining: '1h' }, NOW))).toBe(false);
    expect(hasSelector(parseSelector({ queue: 'research' }, NOW))).toBe(true);
    expect(hasSelector(parseSelector({ partial: false }, NOW))).toBe(true);
  });
});
