import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { effectiveBatchSize, Pacer, parseBatchSize, parseRate } from '../../src/dlq/rate.js';

describe('--rate', () => {
  it('accepts per-second, per-minute and unlimited forms', () => {
    expect(parseRate('50')).toBe(50);
    expect(parseRate('20/s')).toBe(20);
    expect(parseRate('300/m')).toBe(5);
    expect(parseRate('0')).toBeNull();
    expect(parseRate('unlimited')).toBeNull();
  });
  it('names the rule for nonsense', () => {
    expect(() => parseRate('fast')).toThrow(/must be a number of jobs per second/);
    expect(() => parseRate('0.0/s')).toThrow(/greater than zero/);
    expect(() => parseBatchSize('0')).toThrow(/from 1 to 1000/);
    expect(() => parseBatchSize('5000')).toThrow(/from 1 to 1000/);
  });
  it('keeps default batches to one second of work at the rate', () => {
    expect(effectiveBatchSize(undefined, 20)).toBe(20);
    expect(effectiveBatchSize(undefined, 0.5)).toBe(1);
    expect(effectiveBatchSize(undefined, null)).toBe(100);
    expect(effectiveBatchSize(7, 20)).toBe(7);
  });
  it('caps a given --batch-size at one second of the rate: the rate is a cap, a batch goes at once', () => {
    expect(effectiveBatchSize(1000, 10)).toBe(10);
    expect(effectiveBatchSize(1000, 0.5)).toBe(1);
    expect(effectiveBatchSize(1000, null)).toBe(1000);
  });
});

describe('Pacer', () => {
  it('never lets the k-th item start before start + k/rate', () => {
    const clock = new ManualClock(0);
    const p = new Pacer(10, () => clock.now());
    expect(p.delayFor()).toBe(0);
    p.issue(10); // 10 items at t=0: the next may start at t=1000
    expect(p.delayFor()).toBe(1000);
    clock.advance(400);
    expect(p.delayFor()).toBe(600);
    clock.advance(600);
    p.issue(5);
    expect(p.delayFor()).toBe(500);
    // A slow stretch is not made up with a burst beyond what is due.
    clock.advance(10_000);
    expect(p.delayFor()).toBe(0);
  });
  it('a refund gives skipped items back without turning their time into a burst', () => {
    const clock = new ManualClock(0);
    const p = new Pacer(10, () => clock.now());
    p.issue(10);
    clock.advance(10_000); // a long apply of 10 items that all turned out to be skips
    p.refund(10);
    expect(p.delayFor()).toBe(0);
    p.issue(10); // the next 10 are moves: the 10 after them wait a second, no credit from the skips
    expect(p.delayFor()).toBe(1000);
  });
  it('unlimited never waits', () => {
    const clock = new ManualClock(0);
    const p = new Pacer(null, () => clock.now());
    p.issue(1_000_000);
    expect(p.delayFor()).toBe(0);
  });
});
