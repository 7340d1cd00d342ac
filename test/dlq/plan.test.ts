import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { PlanBuilder, isActing, parsePlan, planTotals, serializePlan, VERDICTS } from '../../src/core/plan.js';
import type { VerdictOptions } from '../../src/core/verdict.js';
import { entry } from './entries.js';

const NOW = Date.parse('2026-01-02T00:00:00Z');
const redrive: VerdictOptions = { action: 'redrive', now: NOW, minRemainingMs: 0, includePartial: false, maxRedrives: 3 };
const meta = { action: 'redrive' as const, createdAt: '2026-01-02T00:00:00.000Z', filters: { queue: 'research' }, options: {}, store: 'sqlite:/var/lib/agentq.db' };

describe('plan building', () => {
  it('gives every selected entry exactly one verdict, and totals add up', () => {
    const b = new PlanBuilder(redrive);
    b.add(entry());
    b.add(entry({ deadline_at: '2026-01-01T12:00:00.000Z' }));
    b.add(entry({ partial: true }));
    b.add(entry({ redrive_count: 3 }));
    b.add(entry({ malformed: 'payload is not JSON' }));
    const plan = b.finish(meta);
    expect(plan.items.map((i) => i.verdict)).toEqual(['redrive', 'skip:expired', 'skip:partial', 'skip:quarantined', 'skip:malformed']);
    expect(plan.totals).toMatchObject({ total: 5, acting: 1, redrive: 1, 'skip:expired': 1, 'skip:partial': 1, 'skip:quarantined': 1, 'skip:malformed': 1 });
    expect(plan.queue).toBe('research');
  });

  it('lists a job once even if a page repeats it', () => {
    const b = new PlanBuilder(redrive);
    const e = entry();
    b.add(e);
    expect(b.add(e)).toBeNull();
    expect(b.finish(meta).items).toHaveLength(1);
  });

  it('collects the effects of partial jobs it will redrive under --include-partial', () => {
    const b = new PlanBuilder({ ...redrive, includePartial: true });
    const effect = { key: 'send-email', status: 'started' as const, idempotency_key: 'x:send-email', attempt: 1, started_at: '2026-01-01T00:00:00.000Z', done_at: null, result: null };
    b.add(entry({ partial: true, job: { effects: [effect], attempts: [], budget: null } as never }));
    b.add(entry());
    expect(b.partialNotices).toHaveLength(1);
    expect(b.partialNotices[0]!.effects[0]!.key).toBe('send-email');
    expect(b.finish(meta).totals.acting).toBe(2);
  });

  it('refuses a selection spanning several queues: the lock is per queue', () => {
    const b = new PlanBuilder(redrive);
    b.add(entry({ queue: 'a' }));
    b.add(entry({ queue: 'b' }));
    expect(() => b.finish(meta)).toThrow(/spans 2 queues/);
  });

  it('an empty selection is an empty plan with no queue', () => {
    const plan = new PlanBuilder(redrive).finish(meta);
    expect(plan.items).toEqual([]);
    expect(plan.queue).toBeNull();
    expect(plan.totals).toEqual({ total: 0, acting: 0 });
  });
});

describe('plan files', () => {
  it('round-trips through serialize/parse exactly', () => {
    const b = new PlanBuilder(redrive);
    for (let i = 0; i < 10; i++) b.add(entry({ partial: i % 3 === 0 }));
    const plan = b.finish({ ...meta, options: { attempts: { kind: 'reset' }, maxRedrives: 3, minRemainingMs: 0, includePartial: false } });
    expect(parsePlan(serializePlan(plan))).toEqual(plan);
  });

  it('names the broken rule of a damaged plan file', () => {
    expect(() => parsePlan('{not json')).toThrow(ValidationError);
    expect(() => parsePlan('{not json')).toThrow(/not JSON/);
    const plan = new PlanBuilder(redrive).finish(meta);
    expect(() => parsePlan(JSON.stringify({ ...plan, version: 2 }))).toThrow(/version/);
    const bad = { ...plan, queue: 'research', items: [{ job_id: 'job_1', queue: 'research', verdict: 'redriv', detail: null }] };
    expect(() => parsePlan(JSON.stringify(bad))).toThrow(/items\.0\.verdict/);
    // many broken items: the first few named, the rest counted (one readable message)
    const many = { ...bad, items: Array.from({ length: 30 }, (_v, i) => ({ job_id: `job_${i}`, queue: 'research', verdict: 'redriv', detail: null })) };
    const err = (() => {
      try {
        parsePlan(JSON.stringify(many));
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err).toMatch(/items\.4\.verdict.*; and 25 more$/);
    expect(err).not.toContain('items.5.');
  });

  it('refuses duplicated jobs, foreign queues and verdicts of another action', () => {
    const base = { ...new PlanBuilder(redrive).finish(meta), queue: 'research' };
    const item = { job_id: 'job_1', queue: 'research', verdict: 'redrive', detail: null };
    expect(() => parsePlan(JSON.stringify({ ...base, items: [item, item] }))).toThrow(/appears twice/);
    expect(() => parsePlan(JSON.stringify({ ...base, items: [{ ...item, queue: 'other' }] }))).toThrow(/is in queue other/);
    expect(() => parsePlan(JSON.stringify({ ...base, items: [{ ...item, verdict: 'purge' }] }))).toThrow(/does not belong to a redrive plan/);
  });

  it('refuses a plan that names no store: the store check could not be made', () => {
    const { store: _store, ...plan } = new PlanBuilder(redrive).finish(meta);
    expect(() => parsePlan(JSON.stringify(plan), 'plan file p.json')).toThrow(/plan file p\.json names no store \(the "store" key\): a plan that does not say which store it was made on is not applied/);
  });

  it('refuses attempts.n 0, as the CLI refuses --extra-attempts 0', () => {
    const plan = new PlanBuilder(redrive).finish({ ...meta, options: { attempts: { kind: 'extra', n: 1 } } });
    expect(parsePlan(serializePlan(plan)).options.attempts).toEqual({ kind: 'extra', n: 1 });
    expect(() => parsePlan(JSON.stringify({ ...plan, options: { attempts: { kind: 'extra', n: 0 } } }))).toThrow(/options\.attempts\.n/);
  });

  it('accepts a UTF-8 byte-order mark (an editor on Windows adds one)', () => {
    const b = new PlanBuilder(redrive);
    b.add(entry());
    const plan = b.finish(meta);
    expect(parsePlan('\uFEFF' + serializePlan(plan))).toEqual(plan);
  });

  it('takes job ids in any case, as the CLI does: a lowercased id is the same job (and a duplicate in another case is one)', () => {
    const b = new PlanBuilder(redrive);
    b.add(entry());
    const plan = b.finish(meta);
    const id = plan.items[0]!.job_id;
    const lower = { ...plan, items: [{ ...plan.items[0]!, job_id: `job_${id.slice(4).toLowerCase()}` }] };
    expect(parsePlan(JSON.stringify(lower)).items[0]!.job_id).toBe(id);
    expect(() => parsePlan(JSON.stringify({ ...plan, items: [plan.items[0]!, lower.items[0]!] }))).toThrow(/appears twice/);
  });

  it('recomputes totals from the items rather than trusting an edited file', () => {
    const b = new PlanBuilder(redrive);
    b.add(entry());
    const plan = b.finish(meta);
    const edited = { ...plan, totals: { total: 99, acting: 99 } };
    expect(parsePlan(JSON.stringify(edited)).totals).toMatchObject({ total: 1, acting: 1 });
  });
});

describe('planTotals', () => {
  it('total is the item count and acting counts exactly the non-skip verdicts (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...VERDICTS)), (vs) => {
        const t = planTotals(vs.map((verdict) => ({ verdict })));
        expect(t.total).toBe(vs.length);
        expect(t.acting).toBe(vs.filter((v) => !v.startsWith('skip:')).length);
        const sum = VERDICTS.reduce((s, v) => s + (t[v] ?? 0), 0);
        expect(sum).toBe(vs.length);
      }),
    );
  });

  it('isActing is false exactly for skips', () => {
    expect(VERDICTS.filter(isActing)).toEqual(['redrive', 'purge', 'expire', 'prune']);
  });
});

