import { describe, expect, it } from 'vitest';
import { admissionDecision, classLimit } from '../../src/core/admission.js';

const base = { queue: 'q', class: 'batch' as const, tenant: 'acme', estimatedSeconds: 60, classBacklogSeconds: 0, tenantBacklogSeconds: 0 };

describe('admission control', () => {
  it('admits everything when no limits are set', () => {
    expect(admissionDecision({ ...base, classBacklogSeconds: 1e9 }, {})).toEqual({ admit: true });
  });

  it('admits up to the limit and refuses past it, saying why and when', () => {
    const limits = { batchMaxBacklogSeconds: 600 };
    expect(admissionDecision({ ...base, classBacklogSeconds: 540 }, limits)).toEqual({ admit: true });
    const d = admissionDecision({ ...base, classBacklogSeconds: 570 }, limits);
    expect(d).toMatchObject({ admit: false, code: 'BACKLOG_FULL', retryAfterMs: 30_000 });
    if (!d.admit) {
      expect(d.message).toContain('batch backlog of queue q is 570s');
      expect(d.message).toContain('limit 600s');
      expect(d.message).toContain('retry in about 30s');
    }
  });

  it('refuses batch before interactive with the usual lower batch limit', () => {
    const limits = { batchMaxBacklogSeconds: 300, interactiveMaxBacklogSeconds: 900 };
    expect(admissionDecision({ ...base, classBacklogSeconds: 400 }, limits).admit).toBe(false);
    expect(admissionDecision({ ...base, class: 'interactive', classBacklogSeconds: 400 }, limits).admit).toBe(true);
  });

  it('applies the tenant limit across classes and bounds the retry hint', () => {
    const d = admissionDecision({ ...base, class: 'interactive', tenantBacklogSeconds: 100_000 }, { tenantMaxBacklogSeconds: 1000 });
    expect(d).toMatchObject({ admit: false, retryAfterMs: 300_000 });
    if (!d.admit) expect(d.message).toContain('tenant acme');
  });

  // Regression: a job whose estimate alone was over the limit got BACKLOG_FULL and "retry in about
  // 300s" (exit 75) even on an empty queue, so a producer that backs off retried it for ever.
  it('refuses a job larger than the limit by itself as one that can never be admitted, not "retry later"', () => {
    const d = admissionDecision({ ...base, estimatedSeconds: 700 }, { batchMaxBacklogSeconds: 600 });
    expect(d).toMatchObject({ admit: false, code: 'ESTIMATE_OVER_LIMIT' });
    if (!d.admit) {
      expect(d.message).toBe('refused: this job alone is 700s of estimated work, more than the batch backlog limit of queue q (600s): it can never be admitted');
      expect(d).not.toHaveProperty('retryAfterMs');
    }
    const t = admissionDecision({ ...base, estimatedSeconds: 700 }, { tenantMaxBacklogSeconds: 500 });
    expect(t).toMatchObject({ admit: false, code: 'ESTIMATE_OVER_LIMIT' });
    // exactly the limit fits an empty queue
    expect(admissionDecision({ ...base, estimatedSeconds: 600 }, { batchMaxBacklogSeconds: 600 })).toEqual({ admit: true });
  });

  it('limits maintenance like batch unless told otherwise', () => {
    expect(classLimit('maintenance', { batchMaxBacklogSeconds: 10 })).toBe(10);
    expect(classLimit('maintenance', { batchMaxBacklogSeconds: 10, maintenanceMaxBacklogSeconds: 5 })).toBe(5);
  });
});
