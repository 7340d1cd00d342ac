/**
 * A queue shard's slot migrated to another master while agentq works on it (CLUSTER SETSLOT
 * IMPORTING/MIGRATING, then MIGRATE key by key, as `redis-cli --cluster reshard` does), on a real
 * 3-master Cluster. Before: Redis checks only a script's declared key, so a script run on the node
 * importing the slot found the keys not moved yet empty and created them there (the migration then
 * stopped on BUSYKEY, the shard split over two nodes), and one run on the node exporting it failed
 * half way ("Script attempted to access a non local key") with its writes before kept. Now every
 * shard script stops before writing while its slot is in migration and answers TRYAGAIN, which the
 * client retries until the slot has moved: the migration completes and every job runs once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { RetryLaterError } from '../../src/core/errors.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { TestServers } from '../support/servers.js';

let cluster: RedisCluster;
const servers = new TestServers();
beforeAll(async () => {
  cluster = await servers.start(startRedisCluster(3));
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
});

/** The slot of a queue shard's hash tag, and the port of the master serving it. */
function slotOf(prefix: string, queue: string): { slot: number; owner: number } {
  const slot = Number(cluster.cli(cluster.ports[0]!, 'cluster', 'keyslot', `{${prefix}:${queue}:0}`).trim());
  for (const port of cluster.ports) {
    const me = cluster.cli(port, 'cluster', 'nodes').split('\n').find((l) => l.includes('myself'))!;
    const serves = me.split(' ').slice(8).some((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return slot >= lo! && slot <= (hi ?? lo)!;
    });
    if (serves) return { slot, owner: port };
  }
  throw new Error(`no master serves slot ${slot}`);
}

/**
 * Moves `slot` from the master on `from` to the one on `to` as redis-cli --cluster reshard does,
 * one key per MIGRATE (the longest window with the keys on both nodes). `between` runs after the
 * slot is marked and after each key moved. Throws what MIGRATE answers (BUSYKEY: the target holds
 * a key of that name already).
 */
async function migrateSlot(slot: number, from: number, to: number, between: () => Promise<void> = async () => {}): Promise<number> {
  const src = new Redis({ host: '127.0.0.1', port: from });
  const dst = new Redis({ host: '127.0.0.1', port: to });
  try {
    const srcId = (await src.call('CLUSTER', 'MYID')) as string;
    const dstId = (await dst.call('CLUSTER', 'MYID')) as string;
    await dst.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', srcId);
    await src.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', dstId);
    await between();
    let moved = 0;
    for (;;) {
      const keys = (await src.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[];
      if (keys.length === 0) break;
      await src.migrate('127.0.0.1', to, '', 0, 5000, 'KEYS', ...keys);
      moved++;
      await between();
    }
    for (const port of cluster.ports) {
      const node = new Redis({ host: '127.0.0.1', port });
      await node.call('CLUSTER', 'SETSLOT', slot, 'NODE', dstId).finally(() => node.disconnect());
    }
    return moved;
  } finally {
    src.disconnect();
    dst.disconnect();
  }
}

it('regression: a claim sent while its slot is being imported waits for the migration instead of writing on the importing node; the migration completes', async () => {
  const prefix = 'mg1';
  const backend = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
  try {
    // a first job run, so the shard's keys (counters, fairness state) exist on the exporting node
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const [first] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    await backend.complete(first!, 'ok');
    const job = (await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' })).job.job_id;
    const { slot, owner } = slotOf(prefix, 'q');
    const to = cluster.ports.find((p) => p !== owner)!;

    // The claim's declared key (the lease set) does not exist: the exporting node sends it to the
    // importing one (ASK), where none of the shard's keys are yet.
    let claim: Promise<Array<{ jobId: string }>> | null = null;
    const moved = await migrateSlot(slot, owner, to, async () => {
      claim ??= backend.claim({ queue: 'q', workerId: 'w', max: 5, leaseMs: 60_000 });
    });
    expect(moved).toBeGreaterThan(3);
    expect((await claim!).map((l) => l.jobId)).toEqual([job]);
    expect((await backend.stats('q')).counts).toMatchObject({ queued: 0, running: 1, succeeded: 1 });
  } finally {
    await backend.close();
  }
}, 60_000);

it('regression: workers claiming, heartbeating and completing while their slot moves key by key run every job once, and the migration completes', async () => {
  const prefix = 'mg2';
  const backend = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
  const n = 40;
  try {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${i % 4}` })).job.job_id);
    const { slot, owner } = slotOf(prefix, 'q');
    const to = cluster.ports.find((p) => p !== owner)!;

    const runs = new Map<string, number>();
    const errors: string[] = [];
    let migrated = false;
    const worker = async (w: number) => {
      while (!migrated || runs.size < n) {
        let leases;
        try {
          leases = await backend.claim({ queue: 'q', workerId: `w${w}`, max: 2, leaseMs: 60_000 });
        } catch (e) {
          errors.push(`claim: ${(e as Error).message}`);
          return;
        }
        if (leases.length === 0 && migrated) return;
        for (const l of leases) {
          runs.set(l.jobId, (runs.get(l.jobId) ?? 0) + 1);
          try {
            await backend.heartbeat([l], 60_000);
            await backend.complete(l, 'ok');
          } catch (e) {
            errors.push(`complete: ${(e as Error).message}`);
          }
        }
      }
    };
    const workers = [0, 1, 2].map(worker);
    // (each step lets the workers' calls in between)
    await migrateSlot(slot, owner, to, () => new Promise((r) => setImmediate(r)));
    migrated = true;
    await Promise.all(workers);

    expect(errors).toEqual([]);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect([...runs.values()].every((v) => v === 1)).toBe(true);
    expect((await backend.stats('q')).counts).toMatchObject({ queued: 0, running: 0, succeeded: n });
  } finally {
    await backend.close();
  }
}, 60_000);

it('regression: a call whose slot stays in migration fails with exit 75 saying so, not that a node that answers "is not answering"', async () => {
  const prefix = 'mg3';
  const backend = new RedisBackend(parseRedisUrl(`${cluster.url}?prefix=${prefix}`));
  try {
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const { slot, owner } = slotOf(prefix, 'q');
    const to = cluster.ports.find((p) => p !== owner)!;
    // a reshard stopped after its first key: the slot stays migrating
    let stopped = false;
    const migration = migrateSlot(slot, owner, to, async () => {
      if (stopped) return;
      stopped = true;
      for (const call of [() => backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' }), () => backend.stats('q')]) {
        const e = await call().then(() => null, (x: unknown) => x as Error);
        expect(e).toBeInstanceOf(RetryLaterError);
        expect((e as RetryLaterError).exitCode).toBe(75);
        expect(e!.message).toContain('its keys are in a hash slot being migrated between nodes');
        expect(e!.message).toContain(`slot ${slot} from 127.0.0.1:${owner} to 127.0.0.1:${to}`);
        expect(e!.message).not.toContain('not answering');
        expect((e as RetryLaterError).hint).toContain('redis-cli --cluster fix');
      }
    });
    await migration;
    // once it is done, calls go through
    expect((await backend.stats('q')).counts.queued).toBe(1);
  } finally {
    await backend.close();
  }
}, 90_000);
