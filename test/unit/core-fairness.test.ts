import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLASS_WEIGHTS, initialFairnessState, nextPick, parseFairnessState, tenantCap, type Candidates, type FairnessState } from '../../src/core/fairness.js';
import { JOB_CLASSES, type JobClass } from '../../src/core/schemas.js';

function run(n: number, candidates: Candidates, start: FairnessState = initialFairnessState(), opts = {}) {
  let state = start;
  const picks: Array<{ class: JobClass; tenant: string }> = [];
  for (let i = 0; i < n; i++) {
    const r = nextPick(state, candidates, opts);
    if (!r) break;
    picks.push(r.pick);
    state = r.state;
  }
  return { picks, state };
}

describe('fairness: classes', () => {
  it('gives each class exactly its weight in every cycle of 10 picks when all are busy', () => {
    const { picks } = run(100, { interactive: ['a'], batch: ['a'], maintenance: ['a'] });
    for (let cycle = 0; cycle < 10; cycle++) {
      const window = picks.slice(cycle * 10, cycle * 10 + 10).map((p) => p.class);
      for (const c of JOB_CLASSES) expect(window.filter((x) => x === c)).toHaveLength(DEFAULT_CLASS_WEIGHTS[c]);
    }
  });

  it('never starves a busy class: within any 10 consecutive picks each busy class appears (property)', () => {
    fc.assert(
      fc.property(fc.subarray([...JOB_CLASSES], { minLength: 1 }), fc.integer({ min: 0, max: 50 }), (busy, warmup) => {
        const candidates: Candidates = Object.fromEntries(busy.map((c) => [c, ['t']]));
        const { picks } = run(warmup + 10, candidates);
        const window = picks.slice(warmup).map((p) => p.class);
        for (const c of busy) expect(window).toContain(c);
        for (const c of JOB_CLASSES) if (!busy.includes(c)) expect(window).not.toContain(c);
      }),
    );
  });

  it('honours configured weights and drops a class with weight 0', () => {
    const { picks } = run(20, { interactive: ['a'], batch: ['a'], maintenance: ['a'] }, initialFairnessState(), {
      classWeights: { interactive: 1, batch: 1, maintenance: 0 },
    });
    expect(picks.filter((p) => p.class === 'interactive')).toHaveLength(10);
    expect(picks.filter((p) => p.class === 'maintenance')).toHaveLength(0);
  });

  it('returns null when nothing is claimable', () => {
    expect(nextPick(initialFairnessState(), {})).toBeNull();
    expect(nextPick(initialFairnessState(), { batch: [] })).toBeNull();
  });

  it('does not modify the input state (a caller can retry after an empty pick)', () => {
    const s = initialFairnessState();
    const before = JSON.stringify(s);
    nextPick(s, { interactive: ['a'], batch: ['b'] });
    expect(JSON.stringify(s)).toBe(before);
  });
});

describe('fairness: tenants (deficit round robin)', () => {
  it('serves every busy tenant once per round whatever its backlog (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 20 }), (tenants, warmup) => {
        const { picks } = run(warmup + tenants.length, { batch: tenants });
        const round = picks.slice(warmup).map((p) => p.tenant);
        expect(new Set(round)).toEqual(new Set(tenants));
      }),
    );
  });

  it('does not depend on the order candidates are given in (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,4}$/), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 20 }), (tenants, n) => {
        const sorted = run(n, { batch: [...tenants].sort() }).picks;
        const reversed = run(n, { batch: [...tenants].sort().reverse() }).picks;
        expect(reversed).toEqual(sorted);
      }),
    );
  });

  it('gives a weighted tenant that many jobs per round', () => {
    const { picks } = run(8, { batch: ['a', 'b'] }, initialFairnessState(), { tenantWeights: { a: 3 } });
    expect(picks.filter((p) => p.tenant === 'a')).toHaveLength(6);
    expect(picks.filter((p) => p.tenant === 'b')).toHaveLength(2);
  });

  it('moves on when the tenant being served has no more work', () => {
    let state = initialFairnessState();
    state = nextPick(state, { batch: ['a', 'b'] })!.state;
    const r = nextPick(state, { batch: ['b', 'c'] })!;
    expect(r.pick.tenant).toBe('b');
    expect(nextPick(r.state, { batch: ['b', 'c'] })!.pick.tenant).toBe('c');
  });

  it('survives a persisted state that is damaged or from an older version', () => {
    expect(parseFairnessState('not json')).toEqual(initialFairnessState());
    expect(parseFairnessState(null)).toEqual(initialFairnessState());
    const s = parseFairnessState(JSON.stringify({ classCredit: { batch: 2 }, turn: { batch: { tenant: 'x', deficit: 0 } } }));
    expect(s.classCredit.batch).toBe(2);
    expect(s.turn.batch).toEqual({ tenant: 'x', deficit: 0 });
  });

  it('reads concurrency caps with per-tenant overrides', () => {
    expect(tenantCap('a')).toBe(Infinity);
    expect(tenantCap('a', { tenantConcurrency: 4 })).toBe(4);
    expect(tenantCap('a', { tenantConcurrency: 4, tenantConcurrencyOverrides: { a: 1 } })).toBe(1);
  });
});
