import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { checkUsage, formatUsage, formatUsd, jobUsage, USAGE_MAX } from '../../src/core/usage.js';

describe('usage figures', () => {
  it('fills a missing figure with 0 and refuses what is not a non-negative finite figure, naming it', () => {
    expect(checkUsage({ tokens: 12 })).toEqual({ tokens: 12, cost_usd: 0 });
    expect(checkUsage({ cost_usd: 0.5 })).toEqual({ tokens: 0, cost_usd: 0.5 });
    expect(() => checkUsage({ tokens: -1 })).toThrow(/usage tokens must be a non-negative finite number, got -1/);
    expect(() => checkUsage({ cost_usd: '1' })).toThrow(/usage cost_usd must be a non-negative finite number, got "1"/);
    expect(() => checkUsage({ tokens: 2.5 })).toThrow(/whole number/);
    expect(() => checkUsage({ tokens: USAGE_MAX * 10 })).toThrow(/at most/);
    expect(() => checkUsage({ tokens: 1, dollars: 2 })).toThrow(/no field "dollars"/);
    expect(() => checkUsage({})).toThrow(ValidationError);
    expect(() => checkUsage([1])).toThrow(ValidationError);
  });

  it('sums a job over the attempts that reported, and prints dollars without float noise', () => {
    expect(jobUsage([{}, { usage: null }])).toBeNull();
    expect(jobUsage([{ usage: { tokens: 1, cost_usd: 0.1 } }, {}, { usage: { tokens: 2, cost_usd: 0.2 } }])).toEqual({ tokens: 3, cost_usd: 0.30000000000000004 });
    expect(formatUsd(0.30000000000000004)).toBe('$0.3');
    expect(formatUsd(0.0000123)).toBe('$0.0000123');
    expect(formatUsage({ tokens: 1500, cost_usd: 0.02 })).toBe('1500 tokens, $0.02');
  });
});
