/** Fair claiming: classes weighted so batch never starves, tenants served round robin, per-tenant caps. */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { req, useFixture, type MakeFixture } from './fixture.js';

async function claimTenants(backend: Backend, n: number, queue = 'default'): Promise<Array<{ tenant: string; cls: string }>> {
  const out: Array<{ tenant: string; cls: string }> = [];
  for (let i = 0; i < n; i++) {
    const [lease] = await backend.claim({ queue, workerId: 'w', max: 1, leaseMs: 600_000 });
    if (!lease) break;
    out.push({ tenant: lease.job.tenant_id, cls: lease.job.class });
  }
  return out;
}

/** Every fairness case: tenants by deficit round robin, then the class weights and per-tenant caps. */
export function fairnessCases(make: MakeFixture): void {
  tenantRoundRobinCases(make);
  classAndCapCases(make);
}

/**
 * Fair share across tenants within a class (deficit round robin). Not run on SQS, which delivers a
 * class queue's messages in its own order (see test/conformance/sqs.test.ts).
 */
export function tenantRoundRobinCases(make: MakeFixture): void {
  describe('fairness', () => {
    const fx = useFixture(make);

    it('does not let a tenant with 10,000 queued jobs hold back another tenant\'s 10', async () => {
      const { backend, clock } = fx();
      for (let i = 0; i < 10_000; i++) await backend.submit(req({ tenant_id: 'whale' }));
      clock.advance(1000);
      for (let i = 0; i < 10; i++) await backend.submit(req({ tenant_id: 'minnow' }));
      const order = await claimTenants(backend, 30);
      const lastMinnow = order.map((o) => o.tenant).lastIndexOf('minnow');
      // Fair share with two tenants is every other claim: all 10 within the first 20, not after 10,000.
      expect(order.filter((o) => o.tenant === 'minnow')).toHaveLength(10);
      expect(lastMinnow).toBeLessThan(20);
    }, 120_000);

    it('serves several tenants in turn within a class', async () => {
      const { backend } = fx();
      for (const t of ['a', 'b', 'c']) for (let i = 0; i < 4; i++) await backend.submit(req({ tenant_id: t }));
      const order = (await claimTenants(backend, 9)).map((o) => o.tenant);
      for (let round = 0; round < 3; round++) expect(new Set(order.slice(round * 3, round * 3 + 3))).toEqual(new Set(['a', 'b', 'c']));
    });

    it('serves 40 tenants in turn through batch claims while tenants run out of jobs', async () => {
      const { backend } = fx();
      // tenant k has (k mod 3) + 1 jobs: each round robin pass serves every tenant with jobs left once,
      // and tenants run dry mid-batch (more tenants than one read of a tenant index, for Redis)
      const tenants = Array.from({ length: 40 }, (_v, k) => `t${String(k).padStart(2, '0')}`);
      const ids = new Set<string>();
      for (const [k, t] of tenants.entries()) for (let i = 0; i <= k % 3; i++) ids.add((await backend.submit(req({ tenant_id: t }))).job.job_id);
      const order: string[] = [];
      const claimed = new Set<string>();
      for (;;) {
        const batch = await backend.claim({ queue: 'default', workerId: 'w', max: 17, leaseMs: 600_000 });
        if (batch.length === 0) break;
        for (const l of batch) {
          expect(claimed.has(l.jobId)).toBe(false);
          claimed.add(l.jobId);
          order.push(l.job.tenant_id);
        }
      }
      expect(claimed).toEqual(ids);
      const passes = [tenants, tenants.filter((_t, k) => k % 3 >= 1), tenants.filter((_t, k) => k % 3 === 2)];
      let at = 0;
      for (const pass of passes) {
        expect(new Set(order.slice(at, at + pass.length))).toEqual(new Set(pass));
        at += pass.length;
      }
    });

    it('keeps the order across claim calls and batch sizes', async () => {
      const { backend } = fx();
      for (const t of ['a', 'b']) for (let i = 0; i < 6; i++) await backend.submit(req({ tenant_id: t }));
      const batch = await backend.claim({ queue: 'default', workerId: 'w', max: 4, leaseMs: 60_000 });
      const rest = await backend.claim({ queue: 'default', workerId: 'w', max: 4, leaseMs: 60_000 });
      const tenants = [...batch, ...rest].map((l) => l.job.tenant_id);
      expect(tenants.filter((t) => t === 'a')).toHaveLength(4);
      expect(tenants.filter((t) => t === 'b')).toHaveLength(4);
    });
  });

}

/** Class weights (batch never starves) and per-tenant concurrency caps: on every backend, SQS included. */
export function classAndCapCases(make: MakeFixture): void {
  describe('class weights', () => {
    const fx = useFixture(make);

    it('weights classes so interactive goes first but batch and maintenance never starve', async () => {
      const { backend } = fx();
      for (let i = 0; i < 50; i++) await backend.submit(req({ class: 'interactive' }));
      for (let i = 0; i < 50; i++) await backend.submit(req({ class: 'batch' }));
      for (let i = 0; i < 50; i++) await backend.submit(req({ class: 'maintenance' }));
      const order = (await claimTenants(backend, 20)).map((o) => o.cls);
      const count = (c: string) => order.filter((x) => x === c).length;
      // Weights 6/3/1 over 20 claims: 12/6/2.
      expect(count('interactive')).toBe(12);
      expect(count('batch')).toBe(6);
      expect(count('maintenance')).toBe(2);
      // Batch appears within the first cycle of 10, not after the interactive backlog.
      expect(order.slice(0, 10)).toContain('batch');
    });
  });

  describe('per-tenant concurrency caps', () => {
    const fx = useFixture(make, { fairness: { tenantConcurrency: 2 } });

    it('never runs more than the cap for one tenant, and frees a slot when a job ends', async () => {
      const { backend } = fx();
      for (let i = 0; i < 5; i++) await backend.submit(req({ tenant_id: 'big' }));
      await backend.submit(req({ tenant_id: 'small' }));
      const first = await backend.claim({ queue: 'default', workerId: 'w', max: 10, leaseMs: 60_000 });
      expect(first.filter((l) => l.job.tenant_id === 'big')).toHaveLength(2);
      expect(first.filter((l) => l.job.tenant_id === 'small')).toHaveLength(1);
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 10, leaseMs: 60_000 })).toEqual([]);
      await backend.complete(first.find((l) => l.job.tenant_id === 'big')!, null);
      const next = await backend.claim({ queue: 'default', workerId: 'w', max: 10, leaseMs: 60_000 });
      expect(next.map((l) => l.job.tenant_id)).toEqual(['big']);
    });
  });
}
