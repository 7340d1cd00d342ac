/**
 * completeAndClaim on Redis: one script call completes a job under its fence
 * and claims the next from the same shard with the same fairness as claim;
 * a lost lease claims nothing; a sharded queue falls back to complete, then
 * claim's rotation over the shards. Calls made in the same turn share one
 * script call, whose index and counter writes are merged (prelude: deferred
 * writes): the end state must be the one the calls one at a time leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { LeaseLostError } from '../../src/core/errors.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let n = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

function open(extra = '') {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=cc${++n}${extra}`), { clock, random: seededRandom(n) });
  return { backend, clock };
}

const claimReq = { queue: 'q', workerId: 'w1', workerVersion: 'v1', max: 1, leaseMs: 60_000 };

describe('Redis completeAndClaim', () => {
  it('completes the job and hands out the next one, in submission order within a tenant', async () => {
    const { backend } = open();
    try {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' })).job.job_id);
      const [first] = await backend.claim(claimReq);
      expect(first!.jobId).toBe(ids[0]);
      const r1 = await backend.completeAndClaim(first!, 'done', claimReq);
      expect(r1.next.map((l) => l.jobId)).toEqual([ids[1]]);
      const second = r1.next[0]!;
      // the lease is a full one: the job is running under it, with its attempt record
      expect(second.job.state).toBe('running');
      expect(second.job.attempt).toBe(1);
      expect(second.job.attempts).toHaveLength(1);
      expect(second.job.lease).toMatchObject({ worker_id: 'w1', fence: second.fence });
      expect(second.envelope.attempt).toBe(1);
      const done = await backend.get(ids[0]!);
      expect(done).toMatchObject({ state: 'succeeded', outcome: 'succeeded', result: 'done', lease: null });
      expect(done!.attempts[0]).toMatchObject({ outcome: 'succeeded' });
      // the next job's record matches what a read returns
      expect(await backend.get(second.jobId)).toEqual(second.job);
      const r2 = await backend.completeAndClaim(second, null, { ...claimReq, max: 5 });
      expect(r2.next.map((l) => l.jobId)).toEqual([ids[2]]);
      const r3 = await backend.completeAndClaim(r2.next[0]!, null, claimReq);
      expect(r3.next).toEqual([]);
      const stats = await backend.stats('q');
      expect(stats.counts).toMatchObject({ succeeded: 3, running: 0, queued: 0 });
      expect(stats.totals).toMatchObject({ attempts: 3, succeeded: 3 });
    } finally {
      await backend.close();
    }
  });

  it('claims nothing when the lease was lost', async () => {
    const { backend, clock } = open();
    try {
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 });
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
      const [first] = await backend.claim({ ...claimReq, leaseMs: 1000 });
      clock.advance(2000);
      // another worker reaps the expired lease (and takes the other job)
      const [other] = await backend.claim({ ...claimReq, workerId: 'w2' });
      await expect(backend.completeAndClaim(first!, 'late', claimReq)).rejects.toBeInstanceOf(LeaseLostError);
      expect((await backend.get(first!.jobId))!.state).toBe('scheduled');
      expect((await backend.stats('q')).counts).toMatchObject({ running: 1 });
      expect(other).toBeDefined();
    } finally {
      await backend.close();
    }
  });

  it('answers a completion re-sent after it applied as done, and claims nothing for it', async () => {
    const { backend } = open();
    try {
      for (let i = 0; i < 3; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
      const [first] = await backend.claim(claimReq);
      const r1 = await backend.completeAndClaim(first!, 'done', claimReq);
      expect(r1.next).toHaveLength(1);
      // the answer of r1 lost: the same call again (batched with another worker's completion)
      const [again, other] = await Promise.all([backend.completeAndClaim(first!, 'done', claimReq), backend.completeAndClaim(r1.next[0]!, null, claimReq)]);
      expect(again.next).toEqual([]);
      expect(other.next).toHaveLength(1);
      expect((await backend.stats('q')).counts).toMatchObject({ succeeded: 2, running: 1, queued: 0 });
    } finally {
      await backend.close();
    }
  });

  it('re-reads a retried job whole (earlier attempts included) and returns its effects', async () => {
    const { backend, clock } = open();
    try {
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
      const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 });
      const [first] = await backend.claim(claimReq);
      // run the second job once: an effect, then a retryable failure
      const r = await backend.completeAndClaim(first!, null, claimReq);
      const l1 = r.next[0]!;
      expect(l1.jobId).toBe(job.job_id);
      await backend.beginEffect(l1, 'email');
      await backend.fail(l1, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      clock.advance(10 * 60_000);
      const [again] = await backend.claim(claimReq);
      expect(again!.jobId).toBe(job.job_id);
      expect(again!.job.attempts.map((a) => a.attempt)).toEqual([1, 2]);
      expect(again!.job.effects.map((e) => e.key)).toEqual(['email']);
      expect(await backend.get(job.job_id)).toEqual(again!.job);
    } finally {
      await backend.close();
    }
  });

  it('on a sharded queue completes, then claims across the shards', async () => {
    const { backend } = open('&shards=3');
    try {
      const tenants = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark'];
      for (const t of tenants) await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: t });
      let [lease] = await backend.claim(claimReq);
      const seen = [lease!.job.tenant_id];
      for (;;) {
        const { next } = await backend.completeAndClaim(lease!, null, claimReq);
        if (next.length === 0) break;
        lease = next[0]!;
        seen.push(lease.job.tenant_id);
      }
      expect(seen.sort()).toEqual([...tenants].sort());
      expect((await backend.stats('q')).counts).toMatchObject({ succeeded: 6, running: 0 });
    } finally {
      await backend.close();
    }
  });

  // The batch's merged writes against the same work done one call at a time: every counter and
  // index the stats and the claims read must come out the same.
  it('completes the calls of one turn in one script call, hands out the next jobs in call order, and leaves the state one-at-a-time calls leave', async () => {
    const tenants = ['acme', 'globex', 'initech'];
    async function run(together: boolean) {
      const { backend, clock } = open();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenants[i % 3], estimated_seconds: 30 + i, max_attempts: 2 });
        ids.push(job.job_id);
      }
      // one to be scheduled later, so the scheduled counters are in play too
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', run_at: new Date(clock.now() + 3_600_000).toISOString() });
      const leases = await backend.claim({ ...claimReq, max: 5 });
      // the third completion comes under a fence that is not the job's (a lost lease)
      leases[2] = { ...leases[2]!, fence: leases[2]!.fence + 1 };
      // script calls so far (EVALSHA, and EVAL for a script this server had not loaded yet)
      const scriptCalls = async () => {
        const info = await backend.redis.info('commandstats');
        return [/cmdstat_evalsha:calls=(\d+)/, /cmdstat_eval:calls=(\d+)/].reduce((sum, re) => sum + Number(re.exec(info)?.[1] ?? 0), 0);
      };
      const before = await scriptCalls();
      let results: Array<PromiseSettledResult<{ next: Array<{ jobId: string }> }>>;
      if (together) results = await Promise.allSettled(leases.map((l, i) => backend.completeAndClaim(l, `r${i}`, { ...claimReq, max: i === 4 ? 2 : 1 })));
      else {
        results = [];
        for (const [i, l] of leases.entries()) results.push(...(await Promise.allSettled([backend.completeAndClaim(l, `r${i}`, { ...claimReq, max: i === 4 ? 2 : 1 })])));
      }
      const after = await scriptCalls();
      const ended = await Promise.all(leases.map((l) => backend.get(l.jobId)));
      const stats = await backend.stats('q');
      const keys = await backend.redis.keys(`{cc${n}:q:0}:*`);
      const kinds: Record<string, string | number> = {};
      for (const k of keys) {
        const suffix = k.slice(k.indexOf('}:') + 2);
        if (/^(j|a|h|e):/.test(suffix) || suffix === 'ev' || suffix === 'fair') continue;
        const type = await backend.redis.type(k);
        kinds[suffix] = type === 'zset' ? await backend.redis.zcard(k) : type === 'hash' ? JSON.stringify(await backend.redis.hgetall(k)) : type === 'list' ? await backend.redis.llen(k) : type;
      }
      await backend.close();
      return { ids, results, scriptCalls: after - before, ended, stats, kinds };
    }
    const one = await run(false);
    const all = await run(true);
    // one script call for the five completions
    expect(all.scriptCalls).toBe(1);
    expect(one.scriptCalls).toBe(5);
    for (const r of [one, all]) {
      expect(r.results.map((x) => x.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((r.results[2] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
      expect(r.ended.map((j) => j!.state)).toEqual(['succeeded', 'succeeded', 'running', 'succeeded', 'succeeded']);
      expect(r.ended.map((j) => j!.result)).toEqual(['r0', 'r1', null, 'r3', 'r4']);
    }
    // the next jobs, in call order: 1 each, 2 for the last; none for the lost one
    const nextOf = (r: typeof all) => r.results.map((x) => (x.status === 'fulfilled' ? x.value.next.map((l) => r.ids.indexOf(l.jobId)) : null));
    expect(nextOf(all)).toEqual([[5], [6], null, [7], [8, 9]]);
    expect(nextOf(one)).toEqual(nextOf(all));
    // every figure of the stats: counts, totals, per class and tenant, samples, recent activity
    expect(all.stats.by_tenant).toHaveLength(3);
    expect(all.stats).toEqual(one.stats);
    expect(all.stats.counts).toMatchObject({ succeeded: 4, running: 6, queued: 2, scheduled: 1 });
    // every index and counter key, by size or content (activity buckets and samples included)
    expect(Object.keys(all.kinds)).toEqual(expect.arrayContaining(['n', 'tot', 'byatt', 'leases', 's:running', 's:succeeded', 'stn', 'sts', 'rt', 'blc', 'blt', 'act', 'tiq', 'exec']));
    expect(all.kinds).toEqual(one.kinds);
    // a success counts no failure: the failures-by-code hash is never written on this path
    expect(Object.keys(all.kinds)).not.toContain('fc');
    // nor the usage hash: a handler that reports no usage costs no command for it
    expect(Object.keys(all.kinds)).not.toContain('use');
  });
});
