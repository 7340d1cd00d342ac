import { describe, expect, it } from 'vitest';
import { formatDuration, parseDeadline, parseDuration, parseIsoTime, parsePastTime } from '../../src/core/duration.js';
import { ValidationError } from '../../src/core/errors.js';

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['1w', 604_800_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('trims surrounding spaces', () => {
    expect(parseDuration(' 2h ')).toBe(7_200_000);
  });

  it.each(['', '30', 'h', '2x', ' ', '-5m', '5m3', 'abc'])('refuses %j and names the rule', (text) => {
    expect(() => parseDuration(text, 'deadline')).toThrow(ValidationError);
    expect(() => parseDuration(text, 'deadline')).toThrow(/use a number with a unit/);
  });

  it.each([
    ['2H', '2h'],
    ['90S', '90s'],
    ['1D', '1d'],
    ['1h30M', null],
    ['500MS', '500ms'],
    ['1W', '1w'],
  ])('refuses upper-case %j (units are case-sensitive, as in Go and kubectl), saying units are lower case', (text, lower) => {
    expect(() => parseDuration(text, '--since')).toThrow(ValidationError);
    expect(() => parseDuration(text, '--since')).toThrow(/units are lower case/);
    if (lower !== null) expect(() => parseDuration(text, '--since')).toThrow(`write ${lower}`);
  });

  it('refuses M without guessing minutes or months: it says m is minutes and there is no month unit', () => {
    expect(() => parseDuration('5M', '--older-than')).toThrow(
      '--older-than "5M" is not a duration: units are lower case (ms, s, m, h, d, w); M is not one: m is minutes, and there is no month unit (write days, e.g. 30d)',
    );
  });

  it('refuses more than 100 years (a time that far off is no date), naming the limit', () => {
    expect(parseDuration('36500d')).toBe(36_500 * 86_400_000);
    expect(() => parseDuration('36501d', '--deadline')).toThrow(/--deadline "36501d" is too long: at most 100 years/);
    expect(() => parseDeadline('99999999999h', Date.now())).toThrow(ValidationError);
    expect(() => parsePastTime('99999999999h', Date.now())).toThrow(ValidationError);
  });
});

describe('formatDuration', () => {
  it('is compact and keeps two units', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(90_061_000)).toBe('1d1h');
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(120)).toBe('120ms');
    expect(formatDuration(-60_000)).toBe('-1m');
  });

  it('shows two ADJACENT units, so a skipped middle unit is never misread (1h39s looked like 1 h 39 min)', () => {
    expect(formatDuration(3_600_000 + 20_000)).toBe('1h0m');
    expect(formatDuration(86_400_000 + 5 * 60_000)).toBe('1d0h');
    expect(formatDuration(60_000 + 400)).toBe('1m0s');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(7 * 86_400_000)).toBe('7d');
  });

  it('rounds to the smaller unit instead of cutting, carrying into the larger one', () => {
    expect(formatDuration(1794)).toBe('2s');
    expect(formatDuration(1400)).toBe('1s');
    expect(formatDuration(3_600_000 + 39_000)).toBe('1h1m');
    expect(formatDuration(2 * 3_600_000 - 1000)).toBe('2h0m');
    expect(formatDuration(59_600)).toBe('1m0s');
    expect(formatDuration(86_400_000 - 20_000)).toBe('1d0h');
    expect(formatDuration(-(3_600_000 + 39_000))).toBe('-1h1m');
  });
});

describe('absolute and relative times', () => {
  const now = Date.UTC(2026, 10, 29, 10, 0, 0);

  it('a relative deadline is from now; an absolute one is parsed with its zone', () => {
    expect(parseDeadline('2h', now)).toBe(now + 7_200_000);
    expect(parseDeadline('2026-11-29T12:00:00+01:00', now)).toBe(Date.UTC(2026, 10, 29, 11));
  });

  it('a deadline in the past is refused', () => {
    expect(() => parseDeadline('2026-11-29T09:00:00Z', now)).toThrow(/not in the future/);
  });

  it('a time without a zone is refused: it means different instants on different machines', () => {
    expect(() => parseIsoTime('2026-11-29T10:00:00')).toThrow(/no time zone/);
  });

  it('--since 6h means six hours ago', () => {
    expect(parsePastTime('6h', now)).toBe(now - 6 * 3_600_000);
    expect(parsePastTime('2026-11-28', now)).toBe(Date.UTC(2026, 10, 28));
  });

  it('garbage is refused with the rule', () => {
    expect(() => parseIsoTime('2026-13-45T99:00:00Z')).toThrow(ValidationError);
  });

  it('a --since or --deadline that is neither says both forms it takes, not only a duration (a time was as good)', () => {
    for (const text of ['10:00', 'yesterday', '1767225600']) {
      expect(() => parsePastTime(text, now, '--since')).toThrow(
        `--since ${JSON.stringify(text)} is neither a duration nor an ISO-8601 time: use a duration ago (90s, 15m, 2h, 1d, 1h30m) or a time with its zone (2026-11-29T10:00:00Z)`,
      );
    }
    expect(() => parseDeadline('tomorrow', now)).toThrow('--deadline "tomorrow" is neither a duration nor an ISO-8601 time: use a duration from now (90s, 15m, 2h, 1d, 1h30m) or a time with its zone (2026-11-29T10:00:00Z)');
    // (a unit in the wrong case still gets its own hint)
    expect(() => parsePastTime('2H', now, '--since')).toThrow('--since "2H" is not a duration: units are lower case (ms, s, m, h, d, w): write 2h');
  });

  it('regression: a day the month does not have is refused, not rolled over into the next month (--since 2026-02-30 was 2 March)', () => {
    for (const text of ['2026-02-30T00:00:00Z', '2026-02-29', '2026-04-31T12:00:00+02:00', '2026-11-31T00:00:00Z', '2026-11-30T23:60:00Z', '2026-11-30T10:00:60Z']) {
      expect(() => parseIsoTime(text, '--since'), text).toThrow(/--since ".*" is not a valid date/);
    }
    expect(parseIsoTime('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
    expect(parseIsoTime('2026-11-30T24:00:00Z')).toBe(Date.UTC(2026, 11, 1));
  });
});
