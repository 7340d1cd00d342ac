/** The Redis codec's epoch-ms to ISO text conversion, which keeps the last minute's text: it must always equal Date's. */
import { expect, it } from 'vitest';
import { iso } from '../../src/backend/redis/codec.js';

it('writes the same text as Date#toISOString, across minutes and in any order', () => {
  const base = Date.parse('2026-11-29T22:41:00.000Z');
  const samples = [
    base, base + 1, base + 9, base + 10, base + 99, base + 100, base + 999, base + 1000, base + 9_999, base + 59_999,
    base + 60_000, base - 1, base - 60_001, 0, 1, 86_399_999, Date.parse('1999-12-31T23:59:59.999Z'),
    Date.parse('9999-12-31T23:59:59.999Z'),
  ];
  // a pseudo-random walk over a year, jumping back and forth across minutes
  let x = 12345;
  for (let i = 0; i < 2000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    samples.push(base + (x % 31_536_000_000) - 15_768_000_000);
  }
  for (const ms of samples) {
    expect(iso(ms)).toBe(new Date(ms).toISOString());
    expect(iso(String(ms))).toBe(new Date(ms).toISOString());
  }
});

it('keeps Date for what is not a whole ms in years 1970-9999, and null for nothing', () => {
  for (const ms of [1.5, -1, -86_400_000, 253_402_300_800_000]) expect(iso(ms)).toBe(new Date(ms).toISOString());
  expect(() => iso('not a time')).toThrow(RangeError);
  expect(iso(undefined)).toBeNull();
  expect(iso(null)).toBeNull();
  expect(iso('')).toBeNull();
});
