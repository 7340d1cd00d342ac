/**
 * What `agentq prune` leaves of a finished job on the Redis backend: nothing but the events stream
 * (capped) and the ledger of the run that pruned it (its audit). Unlike a purge, neither the
 * job's location key nor its history list is kept: retention is what was asked. Every key is read
 * whole (SCAN of a test server of its own), so a new per-job key that a prune forgets shows here.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import type { RunRecord } from '../../src/backend/contract.js';
import { ManualClock } from '../../src/core/clock.js';
import { keysMentioning } from '../support/redis-mentions.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

it.each([1, 3])('a pruned finished job is named by no key but the events stream and its run ledger (%i shards)', async (shards) => {
  const prefix = `pr${shards}x${process.pid}`;
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}&shards=${shards}`), { clock });
  const raw = new Redis(server.url);
  try {
    // A job with what a finished job gathers: an idempotency key, a checkpoint, an effect, usage,
    // a retried attempt (the attempts list), more events than the hash's history slots, a result.
    const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', idempotency_key: 'order-7', max_attempts: 3 });
    const id = job.job_id;
    for (let attempt = 1; ; attempt++) {
      const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
      expect(lease?.jobId).toBe(id);
      await backend.checkpoint(lease!, { step: attempt });
      await backend.beginEffect(lease!, `send-email-${attempt}`);
      await backend.finishEffect(lease!, `send-email-${attempt}`, { sent: true });
      await backend.addUsage(lease!, { tokens: 10, cost_usd: 0.01 });
      if (attempt === 2) {
        await backend.complete(lease!, 'done');
        break;
      }
      const out = await backend.fail(lease!, { code: 'PROVIDER_500', message: 'down', retryable: true, workerVersion: 'v1' });
      if (out.kind !== 'retry') throw new Error(`expected a retry, got ${out.kind}`);
      clock.set(out.runAt);
    }
    const ended = Date.parse((await backend.get(id))!.ended_at!);
    clock.advance(86_400_000);
    const runId = 'run_01JPRVNE000000000000000001';
    const at = new Date(clock.now()).toISOString();
    const record: RunRecord = {
      run_id: runId, queue: 'q', action: 'prune', user: 't', context: null, reason: null, filters: {},
      options: { prune: { states: ['succeeded'], before: new Date(ended + 1).toISOString() } },
      created_at: at, updated_at: at, status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 },
    };
    await backend.createRun(record, [{ job_id: id, verdict: 'prune', detail: null }]);
    expect((await backend.applyRunItems({ runId, jobIds: [id], now: clock.now() })).map((i) => i.status)).toEqual(['moved']);
    expect(await backend.get(id)).toBeNull();

    const left = await keysMentioning(raw, prefix, id);
    const kept = (m: { key: string; type: string }) => (m.type === 'stream' && m.key.endsWith(':ev')) || m.key.endsWith(`:L:${runId}`) || m.key.includes(`:Li:${runId}:`);
    expect(left.filter((m) => !kept(m))).toEqual([]);
    // the stats still count its end; the state count no longer counts it
    const stats = await backend.stats('q');
    expect(stats.counts.succeeded).toBe(0);
    expect(stats.totals?.succeeded).toBe(1);
    // and the idempotency key makes a new job
    expect((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', idempotency_key: 'order-7' })).created).toBe(true);
  } finally {
    raw.disconnect();
    await backend.close();
  }
});

/**
 * A prune deletes a job in its shard's script, then the job's location key (`<prefix>:loc:<id>`,
 * a key of no shard, so not the script's on a Cluster) with a DEL from the client. A crash in
 * between left that key for ever. Simulated here by running the delete script alone (the
 * backend's own slice call, without what follows it): the run's next call, resumed, or a prune run
 * of the same queue later on, deletes it.
 */
it.each([
  [1, 'resumed'],
  [3, 'resumed'],
  [1, 'a later run'],
  [3, 'a later run'],
] as const)('a location key left by a crash after the delete script is deleted by the next apply of the queue (%i shards, %s)', async (shards, next) => {
  const prefix = `pc${shards}${next === 'resumed' ? 'r' : 'l'}x${process.pid}`;
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}&shards=${shards}`), { clock });
  const raw = new Redis(server.url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${i}` });
      ids.push(job.job_id);
    }
    for (let left = ids.length; left > 0; ) {
      const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
      for (const l of leases) await backend.complete(l, null);
      left -= leases.length;
    }
    clock.advance(86_400_000);
    const at = new Date(clock.now()).toISOString();
    const run = (runId: string, n: number): RunRecord => ({
      run_id: runId, queue: 'q', action: 'prune', user: 't', context: null, reason: null, filters: {},
      options: { prune: { states: ['succeeded'], before: at } },
      created_at: at, updated_at: at, status: 'planned', counts: { planned: n, moved: 0, skipped: 0, failed: 0 },
    });
    const crashed = ids.slice(0, 3);
    const firstRun = 'run_01JPRVNE000000000000000011';
    await backend.createRun(run(firstRun, next === 'resumed' ? ids.length : crashed.length), (next === 'resumed' ? ids : crashed).map((id) => ({ job_id: id, verdict: 'prune', detail: null })));
    // The delete script alone for the first three, as a crash right after it leaves them.
    const record = (await backend.getRun(firstRun))!;
    const internals = backend as unknown as { pruneSlice(p: string, run: RunRecord, ids: string[], runId: string): Promise<unknown> };
    for (const id of crashed) {
      const [queue, shard] = (await raw.get(`${prefix}:loc:${id}`))!.split('\t');
      await internals.pruneSlice(`{${prefix}:${queue}:${shard}}:`, record, [id], firstRun);
    }
    for (const id of crashed) expect(await backend.get(id)).toBeNull();
    expect(await raw.exists(...crashed.map((id) => `${prefix}:loc:${id}`))).toBe(crashed.length);

    if (next === 'resumed') {
      // what a resumed run sends: its items still planned
      await backend.applyRunItems({ runId: firstRun, jobIds: ids.slice(3), now: clock.now() });
    } else {
      const laterRun = 'run_01JPRVNE000000000000000012';
      await backend.createRun(run(laterRun, 1), [{ job_id: ids[5]!, verdict: 'prune', detail: null }]);
      await backend.applyRunItems({ runId: laterRun, jobIds: [ids[5]!], now: clock.now() });
    }
    const keptAfterPrune = (m: { key: string; type: string }) => (m.type === 'stream' && m.key.endsWith(':ev')) || /:L:run_|:Li:run_/.test(m.key);
    for (const id of crashed) expect((await keysMentioning(raw, prefix, id)).filter((m) => !keptAfterPrune(m))).toEqual([]);
    // and the jobs not pruned keep theirs
    if (next === 'a later run') for (const id of ids.slice(3, 5)) expect((await backend.get(id))?.state).toBe('succeeded');
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
