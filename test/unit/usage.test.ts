import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { budgetBreach, checkUsage, formatUsage, formatUsd, jobUsage, USAGE_MAX } from '../../src/core/usage.js';

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

describe('budgetBreach', () => {
  const spent = { tokens: 1000, cost_usd: 0.05 };
  it('is null without a budget, without a spend, or within the ceilings', () => {
    expect(budgetBreach(spent, null, true)).toBeNull();
    expect(budgetBreach(null, { tokens: 1, cost_usd: 0.01 }, false)).toBeNull();
    expect(budgetBreach(spent, { tokens: 2000, cost_usd: null }, true)).toBeNull();
    expect(budgetBreach(spent, { tokens: null, cost_usd: null }, false)).toBeNull();
  });
  it('while an attempt runs (strict) only a spend beyond a ceiling breaks it; before one starts, reaching it does', () => {
    const exact = { tokens: 1000, cost_usd: 0.05 };
    expect(budgetBreach(spent, exact, true)).toBeNull();
    expect(budgetBreach(spent, exact, false)).toBe('it spent 1000 tokens of its 1000 and $0.05 of its $0.05');
    expect(budgetBreach({ tokens: 1001, cost_usd: 0.01 }, exact, true)).toBe('it spent 1001 tokens of its 1000');
    // float noise in a sum of reports is not a breach, either way
    expect(budgetBreach({ tokens: 0, cost_usd: 0.1 + 0.2 }, { tokens: null, cost_usd: 0.3 }, true)).toBeNull();
    expect(budgetBreach({ tokens: 0, cost_usd: 0.7 + 0.1 }, { tokens: null, cost_usd: 0.8 }, false)).toBe('it spent $0.8 of its $0.8');
    expect(budgetBreach({ tokens: 0, cost_usd: 0.300001 }, { tokens: null, cost_usd: 0.3 }, true)).toBe('it spent $0.300001 of its $0.3');
  });
});
