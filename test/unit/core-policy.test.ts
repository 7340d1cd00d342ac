import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { tenantCap } from '../../src/core/fairness.js';
import { checkedPolicy, mergeFairness, parseAdmission, parseFairness, PolicyRuleError } from '../../src/core/policy.js';

describe('fairness settings', () => {
  it('accepts the library names and values', () => {
    const f = parseFairness({ tenantConcurrency: 2, tenantConcurrencyOverrides: { acme: 4 }, classWeights: { batch: 2 }, tenantWeights: { acme: 2 } });
    expect(f.tenantConcurrency).toBe(2);
    expect({ ...f.tenantConcurrencyOverrides }).toEqual({ acme: 4 });
    expect(f.classWeights).toEqual({ batch: 2 });
    expect({ ...f.tenantWeights }).toEqual({ acme: 2 });
  });

  it.each([
    [{ tenantConcurency: 2 }, /unknown key "tenantConcurency" \(known: tenantConcurrency,/],
    [{ tenantConcurrency: 0 }, /tenantConcurrency must be a whole number of at least 1, got 0/],
    [{ tenantConcurrency: 1.5 }, /at least 1, got 1.5/],
    [{ tenantConcurrency: '2' }, /at least 1, got "2"/],
    [JSON.parse('{ "tenantConcurrency": 1e400 }'), /at least 1, got a number too large to hold \(it reads as Infinity\)/],
    [{ tenantConcurrencyOverrides: { 'a b': 1 } }, /tenant "a b" must be 1-128 characters/],
    [{ tenantConcurrencyOverrides: [1] }, /must be an object of tenant → number/],
    [{ classWeights: { urgent: 2 } }, /unknown class "urgent" \(known: interactive, batch, maintenance\)/],
    [{ tenantWeights: { acme: 1.5 } }, /tenantWeights.acme must be a whole number of at least 1/],
    [5, /fairness must be an object/],
  ])('refuses %j naming the rule', (v, rule) => {
    expect(() => parseFairness(v)).toThrow(PolicyRuleError);
    expect(() => parseFairness(v)).toThrow(rule);
  });

  it('a tenant called constructor or toString is looked up as data, not on Object.prototype', () => {
    const f = parseFairness({ tenantConcurrency: 2, tenantConcurrencyOverrides: { toString: 3 } });
    expect(tenantCap('toString', f)).toBe(3);
    expect(tenantCap('constructor', f)).toBe(2);
  });

  it("a worker's flags go on top of the context's; per-tenant caps are added", () => {
    const base = parseFairness({ tenantConcurrency: 2, tenantConcurrencyOverrides: { acme: 4, beta: 1 }, classWeights: { batch: 2 } });
    const merged = mergeFairness(base, { tenantConcurrency: 3, tenantConcurrencyOverrides: { acme: 6 } })!;
    expect(merged.tenantConcurrency).toBe(3);
    expect({ ...merged.tenantConcurrencyOverrides }).toEqual({ acme: 6, beta: 1 });
    expect(merged.classWeights).toEqual({ batch: 2 });
    expect(mergeFairness(undefined, undefined)).toBeUndefined();
    expect(mergeFairness(base, undefined)).toBe(base);
  });
});

describe('admission settings', () => {
  it('accepts backlog limits in seconds', () => {
    expect(parseAdmission({ batchMaxBacklogSeconds: 3600, tenantMaxBacklogSeconds: 600 })).toEqual({ batchMaxBacklogSeconds: 3600, tenantMaxBacklogSeconds: 600 });
  });

  it.each([
    [{ batchMaxBacklog: 3600 }, /unknown key "batchMaxBacklog" \(known: interactiveMaxBacklogSeconds,/],
    [{ batchMaxBacklogSeconds: '1h' }, /batchMaxBacklogSeconds must be a number greater than 0, got "1h"/],
    [{ batchMaxBacklogSeconds: 0 }, /greater than 0, got 0/],
    // Regression: JSON's 1e400 reads as Infinity, which the message showed as "got null".
    [JSON.parse('{ "batchMaxBacklogSeconds": 1e400 }'), /batchMaxBacklogSeconds must be a number greater than 0, got a number too large to hold \(it reads as Infinity\)/],
    [null, /admission must be an object/],
  ])('refuses %j naming the rule', (v, rule) => {
    expect(() => parseAdmission(v)).toThrow(rule);
  });
});

it("the library's options are checked by the same rules, as ValidationError (exit 2)", () => {
  expect(() => checkedPolicy({ fairness: { tenantConcurrency: -1 } })).toThrow(ValidationError);
  expect(() => checkedPolicy({ admission: { batchMaxBacklogSeconds: Number.NaN } })).toThrow(/greater than 0/);
  expect(checkedPolicy({})).toEqual({});
});
