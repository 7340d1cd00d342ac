/**
 * A queue split into shards (`shards=3`) on a real 3-master Redis Cluster:
 * a tenant's jobs live on one shard, the shards spread over the nodes, and
 * every read that spans shards (lists, DLQ pages, events, stats) merges them
 * with no duplicates or gaps. Claims reach every shard and hand each job out
 * once; per-tenant caps stay exact because a tenant never spans shards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { shardOf } from '../../src/backend/redis/keys.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';

import { runRecord } from '../conformance/fixture.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { pollUntil } from '../support/poll.js';
import { TestServers } from '../support/servers.js';

let cluster: RedisCluster;
let n = 0;
const servers = new TestServers();
beforeAll(async () => {
  cluster = await servers.start(startRedisCluster(3));
});
afterAll(async () => {
  await servers.stopAll();
});

const TENANTS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark'];

function open(extra = '', deps: ConstructorParameters<typeof RedisBackend>[1] = {}) {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${cluster.url}?shards=3&prefix=sh${++n}${extra}`), { clock, random: seededRandom(n), ...deps });
  return { backend, clock };
}

async function all<T>(page: (cursor: string | null) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const p = await page(cursor);
    out.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor !== null);
  return out;
}

describe('a queue in 3 shards on a 3-master cluster', () => {
  it('spreads tenants over the shards and the shards over the nodes', async () => {
    const shards = new Set(TENANTS.map((t) => shardOf(t, 3)));
    expect(shards.size).toBeGreaterThan(1);
    // Each shard's hash tag maps to a slot; the three shards of this queue are not all on one node.
    const slots = [0, 1, 2].map((s) => Number(cluster.cli(cluster.ports[0]!, 'cluster', 'keyslot', `{aq:research:${s}}`).trim()));
    const owners = new Set(slots.map((slot) => cluster.ports.find((p) => nodeOwns(cluster, p, slot))));
    expect(owners.has(undefined)).toBe(false);
    expect(owners.size).toBeGreaterThan(1);
  });

  it('lists and pages across shards in job-id order with no duplicates or gaps', async () => {
    const { backend, clock } = open();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      ids.push((await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: TENANTS[i % TENANTS.length]! })).job.job_id);
      clock.advance(1);
    }
    const seen = (await all((cursor) => backend.list({ queue: 'research' }, { limit: 7, cursor }))).map((j) => j.job_id);
    expect(seen).toEqual(ids);
    const acme = (await all((cursor) => backend.list({ queue: 'research', tenant: 'acme' }, { limit: 3, cursor }))).map((j) => j.job_id);
    expect(acme).toEqual(ids.filter((_id, i) => TENANTS[i % TENANTS.length] === 'acme'));
    await backend.close();
  });

  it('claims every job exactly once across shards, and merges DLQ pages, events and stats', async () => {
    const { backend } = open();
    const N = 90;
    for (let i = 0; i < N; i++) await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: TENANTS[i % TENANTS.length]!, max_attempts: 1 });
    const claimed = new Map<string, number>();
    for (let round = 0; round < 100 && claimed.size < N; round++) {
      const leases = await backend.claim({ queue: 'research', workerId: `w${round % 3}`, max: 7, leaseMs: 60_000 });
      for (const l of leases) {
        claimed.set(l.jobId, (claimed.get(l.jobId) ?? 0) + 1);
        await backend.addUsage(l, { tokens: 10, cost_usd: 0.5 });
        if (claimed.size % 2) await backend.complete(l, null);
        else await backend.fail(l, { code: 'VALIDATION', message: 'bad', retryable: false });
      }
    }
    expect(claimed.size).toBe(N);
    expect([...claimed.values()].every((c) => c === 1)).toBe(true);
    const stats = await backend.stats('research');
    const dlq = await all((cursor) => backend.dlqList({ queue: 'research' }, { limit: 10, cursor }));
    expect(stats.counts.succeeded + stats.counts.dead).toBe(N);
    expect(dlq).toHaveLength(stats.counts.dead);
    expect(new Set(dlq.map((e) => e.job_id)).size).toBe(dlq.length);
    expect(stats.totals?.submitted).toBe(N);
    // Each shard counts the failures of its jobs by code: the queue's figure is their sum.
    expect(stats.failures_by_code).toEqual([{ code: 'VALIDATION', count: stats.counts.dead }]);
    // Each shard sums the usage of its jobs' attempts (its 'use' hash): the queue's figure is their sum.
    expect(stats.usage).toEqual({ tokens: 10 * N, cost_usd: 0.5 * N });
    // Each shard counts its jobs' ends per minute: the window's figures are their sum (dlq check --window).
    expect((await backend.stats('research', { endsWindowMs: 3_600_000 })).ends).toMatchObject({ ended: N, dead: stats.counts.dead });
    const events = [];
    for await (const e of backend.events({ queue: 'research' })) events.push(e);
    expect(events.filter((e) => e.type === 'submitted')).toHaveLength(N);
    expect(events.filter((e) => e.type === 'claimed')).toHaveLength(N);
    await backend.close();
  });

  it('keeps a per-tenant concurrency cap exact on a sharded queue', async () => {
    const { backend } = open('', { fairness: { tenantConcurrency: 2 } });
    for (let i = 0; i < 30; i++) await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: TENANTS[i % 3]! });
    const leases = await backend.claim({ queue: 'research', workerId: 'w', max: 30, leaseMs: 60_000 });
    const byTenant = new Map<string, number>();
    for (const l of leases) byTenant.set(l.job.tenant_id, (byTenant.get(l.job.tenant_id) ?? 0) + 1);
    expect([...byTenant.values()]).toEqual([2, 2, 2]);
    await backend.complete(leases[0]!, null);
    const more = await backend.claim({ queue: 'research', workerId: 'w', max: 30, leaseMs: 60_000 });
    expect(more.map((l) => l.job.tenant_id)).toEqual([leases[0]!.job.tenant_id]);
    await backend.close();
  });

  it('scopes idempotency keys per (queue, tenant): tenants sharing a shard do not collide, a resend returns the same job', async () => {
    const { backend } = open();
    // two tenants on one shard, and one on another
    const names = Array.from({ length: 40 }, (_v, i) => `tenant${i}`);
    const a = names[0]!;
    const b = names.find((t) => t !== a && shardOf(t, 3) === shardOf(a, 3))!;
    const c = names.find((t) => shardOf(t, 3) !== shardOf(a, 3))!;
    const ids = new Map<string, string>();
    for (const tenant of [a, b, c]) {
      const r = await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: tenant, idempotency_key: 'order-1', input: 'x' });
      expect(r.created, tenant).toBe(true);
      ids.set(tenant, r.job.job_id);
    }
    for (const tenant of [a, b, c]) {
      const again = await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: tenant, idempotency_key: 'order-1', input: 'x' });
      expect(again).toMatchObject({ created: false, job: { job_id: ids.get(tenant), tenant_id: tenant } });
    }
    await backend.close();
  });

  it('a purge frees the key of its job for its tenant only (the key scoped by tenant on a sharded queue)', async () => {
    const { backend, clock } = open();
    const a = 'tenant0';
    const b = Array.from({ length: 40 }, (_v, i) => `tenant${i}`).find((t) => t !== a && shardOf(t, 3) === shardOf(a, 3))!;
    const body = (tenant: string) => ({ workflow: 'w:v1', queue: 'research', tenant_id: tenant, idempotency_key: 'order-1', input: 'x', max_attempts: 1 });
    const dead = (await backend.submit(body(a))).job;
    const kept = (await backend.submit(body(b))).job;
    const [lease] = await backend.claim({ queue: 'research', workerId: 'w', max: 1, leaseMs: 1000 });
    expect(lease!.jobId).toBe(dead.job_id);
    await backend.fail(lease!, { code: 'VALIDATION', message: 'bad', retryable: false });
    const runId = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';
    await backend.createRun(runRecord({ run_id: runId, queue: 'research', action: 'purge' }, clock.now()), [{ job_id: dead.job_id, verdict: 'purge', detail: null }]);
    expect((await backend.applyRunItems({ runId, jobIds: [dead.job_id], now: clock.now() }))[0]).toMatchObject({ status: 'moved' });
    const again = await backend.submit(body(a));
    expect(again.created).toBe(true);
    expect(await backend.submit(body(b))).toMatchObject({ created: false, job: { job_id: kept.job_id } });
    await backend.close();
  });

  it('a key stored under the key alone (before keys were scoped by tenant) still returns its job to its tenant, and only to it', async () => {
    const { backend } = open();
    const a = 'tenant0';
    const b = Array.from({ length: 40 }, (_v, i) => `tenant${i}`).find((t) => t !== a && shardOf(t, 3) === shardOf(a, 3))!;
    const first = await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: a, idempotency_key: 'old-1', input: 'x' });
    // as an earlier agentq stored it: the field is the key alone
    const p = `{sh${n}:research:${shardOf(a, 3)}}:`;
    const stored = (await backend.redis.hget(`${p}idem`, `${a}\u0000old-1`))!;
    await backend.redis.hdel(`${p}idem`, `${a}\u0000old-1`);
    await backend.redis.hset(`${p}idem`, 'old-1', stored);
    const again = await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: a, idempotency_key: 'old-1', input: 'x' });
    expect(again).toMatchObject({ created: false, job: { job_id: first.job.job_id } });
    const other = await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: b, idempotency_key: 'old-1', input: 'x' });
    expect(other.created).toBe(true);
    await backend.close();
  });

  it('serves tenants on different shards in turn', async () => {
    const { backend } = open();
    // Two tenants that land on different shards.
    const a = TENANTS.find((t) => shardOf(t, 3) === 0)!;
    const b = TENANTS.find((t) => shardOf(t, 3) !== 0)!;
    for (let i = 0; i < 20; i++) await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: a });
    for (let i = 0; i < 5; i++) await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: b });
    const order: string[] = [];
    for (let i = 0; i < 10; i++) {
      const [l] = await backend.claim({ queue: 'research', workerId: 'w', max: 1, leaseMs: 60_000 });
      order.push(l!.job.tenant_id);
    }
    // Alternating: all five of b's jobs within the first ten claims, not after a's twenty.
    expect(order.filter((t) => t === b)).toHaveLength(5);
    await backend.close();
  });

  it('a shard that fails its claim (its node down) does not stop the others, nor drop the leases they gave, and claims move past it', async () => {
    const { backend, clock } = open();
    // shard 0 (umbrella, hooli), shard 1 (acme …) and shard 2 (stark) each hold jobs
    for (const t of ['umbrella', 'acme', 'stark']) for (let i = 0; i < 3; i++) await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: t });
    // Shard 1's claim fails as a call to a node that is down would: its lease set is the wrong type.
    const leasesKey = `{sh${n}:research:1}:leases`;
    await backend.redis.set(leasesKey, 'not a sorted set');
    const errors: Error[] = [];
    const req = { queue: 'research', workerId: 'w', max: 9, leaseMs: 60_000, onPartialFailure: (e: Error) => errors.push(e) };
    const got = await backend.claim(req);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/WRONGTYPE/)]);
    expect(new Set(got.map((l) => l.job.tenant_id))).toEqual(new Set(['umbrella', 'stark']));
    // every job leased is in the caller's hands: none left running unknown to it
    const running = (await backend.list({ queue: 'research', states: ['running'] }, { limit: 50 })).items.map((j) => j.job_id);
    expect(running.sort()).toEqual(got.map((l) => l.jobId).sort());
    // the failing shard rests: the next claims do not wait for it…
    await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'umbrella' });
    expect(await backend.claim(req)).toHaveLength(1);
    expect(errors).toHaveLength(1);
    // …then it is asked again, and serves once it works
    await backend.redis.del(leasesKey);
    clock.advance(1_001);
    const later = await backend.claim(req);
    expect(later.map((l) => l.job.tenant_id)).toEqual(['acme', 'acme', 'acme']);
    expect(errors).toHaveLength(1);
    await backend.close();
  });

  it('a claim that leases nothing while a shard cannot be asked throws (a worker backs off, --drain does not stop)', async () => {
    const { backend, clock } = open();
    const errors: Error[] = [];
    const req = { queue: 'research', workerId: 'w', max: 3, leaseMs: 60_000, onPartialFailure: (e: Error) => errors.push(e) };
    await backend.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'umbrella' });
    await backend.redis.set(`{sh${n}:research:1}:leases`, 'x');
    expect(await backend.claim(req)).toHaveLength(1);
    expect(errors).toHaveLength(1);
    // shard 1 rests, the others are empty: not "nothing to claim"
    await expect(backend.claim(req)).rejects.toThrow(/WRONGTYPE/);
    clock.advance(5_000);
    await expect(backend.claim(req)).rejects.toThrow(/WRONGTYPE/);
    expect(errors).toHaveLength(1);
    await backend.close();
  });
});

describe('following a queue that does not exist yet', () => {
  it('gets the events of every shard once the queue is created with more shards than the follower\'s URL says (tail -q Q -f started first)', async () => {
    const prefix = `late${++n}`;
    // the follower's URL has no shards=: a queue it does not know looks like 1 shard to it
    const follower = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
    const producer = new RedisBackend(parseRedisUrl(`${cluster.url}?shards=3&prefix=${prefix}`));
    const ac = new AbortController();
    const seen = new Set<string>();
    const following = (async () => {
      for await (const e of follower.events({ queue: 'late', follow: true, signal: ac.signal })) if (e.type === 'submitted') seen.add(e.job_id);
    })();
    try {
      // the follower is blocked reading (XREAD) before the queue exists
      await pollUntil(() => cluster.ports.some((p) => cluster.cli(p, 'CLIENT', 'LIST').includes('cmd=xread')), { what: 'the follower to block on XREAD' });
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add((await producer.submit({ workflow: 'w:v1', queue: 'late', tenant_id: TENANTS[i % TENANTS.length]! })).job.job_id);
      const shards = new Set<number>();
      for (const t of TENANTS) shards.add(shardOf(t, 3));
      expect(shards.size).toBeGreaterThan(1);
      await pollUntil(() => seen.size === ids.size, { timeoutMs: 15_000, what: 'every submitted event' });
      expect([...seen].sort()).toEqual([...ids].sort());
    } finally {
      ac.abort();
      await following;
      await follower.close();
      await producer.close();
    }
  });
});

function nodeOwns(c: RedisCluster, port: number, slot: number): boolean {
  const out = c.cli(port, 'cluster', 'myid').trim();
  const nodes = c.cli(port, 'cluster', 'nodes');
  const line = nodes.split('\n').find((l) => l.startsWith(out));
  if (!line) return false;
  return line
    .split(' ')
    .slice(8)
    .some((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return slot >= lo! && slot <= (hi ?? lo)!;
    });
}


describe('the shard count a queue was created with', () => {
  it('a client whose URL says another shards=N uses the stored count: jobs submitted over 4 shards are all claimed by a worker opened with shards=2', async () => {
    const prefix = `shc${++n}`;
    const four = new RedisBackend(parseRedisUrl(`${cluster.url}?shards=4&prefix=${prefix}`));
    const two = new RedisBackend(parseRedisUrl(`${cluster.url}?shards=2&prefix=${prefix}`));
    try {
      const ids: string[] = [];
      for (const tenant of TENANTS) ids.push((await four.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenant })).job.job_id);
      expect(new Set(TENANTS.map((t) => shardOf(t, 4))).size).toBeGreaterThan(2);
      const leases = await two.claim({ queue: 'q', workerId: 'w', max: 50, leaseMs: 60_000 });
      expect(leases.map((l) => l.jobId).sort()).toEqual([...ids].sort());
    } finally {
      await four.close();
      await two.close();
    }
  });

  it('regression: a stored shard count edited outside agentq is refused (exit 78, naming the key), not read as NaN shards that hid the queue and sent submits where nothing looks', async () => {
    const prefix = `shd${++n}`;
    const backend = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
    try {
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
      for (const bad of ['abc', '0', '99999']) {
        cluster.cli(cluster.ports[0]!, '-c', 'hset', `${prefix}:q:q`, 'shards', bad);
        const fresh = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
        try {
          for (const call of [
            () => fresh.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' }),
            () => fresh.claim({ queue: 'q', workerId: 'w', max: 5, leaseMs: 60_000 }),
            () => fresh.stats('q'),
          ]) {
            const e = (await call().then(() => null, (x: unknown) => x)) as { code?: string; exitCode?: number; message?: string } | null;
            expect(e?.code, bad).toBe('STORE_DAMAGED');
            expect(e?.exitCode).toBe(78);
            expect(e?.message).toContain(`${prefix}:q:q field shards`);
          }
        } finally {
          await fresh.close();
        }
      }
    } finally {
      await backend.close();
    }
  });
});
