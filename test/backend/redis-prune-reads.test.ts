/**
 * What a prune's ledger and deletes read on Redis, counted by the server itself (INFO
 * commandstats of a test server of its own). A queue of one shard keeps every job on shard 0, so
 * the ledger and the apply need no job's location: a GET per job of `<prefix>:loc:<id>` was a
 * third of a 100,000-job prune's plan and ledger (BENCHMARKS.md, "Prune"). A queue of several
 * shards still looks each job up: its ledger item must sit on the job's shard.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import type { RunRecord } from '../../src/backend/contract.js';
import { ManualClock } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const JOBS = 60;

async function getCalls(raw: Redis): Promise<number> {
  return Number(/cmdstat_get:calls=(\d+)/.exec(await raw.info('commandstats'))?.[1] ?? 0);
}

it.each([
  [1, 'no location look-up', (gets: number) => expect(gets).toBeLessThan(10)],
  [3, 'each job looked up, to put its ledger item on its shard', (gets: number) => expect(gets).toBeGreaterThanOrEqual(JOBS)],
])('a prune of a queue of %i shard(s): %s; every job is pruned', async (shards, _what, expectGets) => {
  const prefix = `rd${shards}x${process.pid}`;
  const url = `${server.url}?prefix=${prefix}&shards=${shards}`;
  const clock = new ManualClock();
  const seeder = new RedisBackend(parseRedisUrl(url), { clock });
  const raw = new Redis(server.url);
  // (a backend of its own for the prune, as the CLI has: nothing in its location cache)
  const backend = new RedisBackend(parseRedisUrl(url), { clock });
  try {
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const { job } = await seeder.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${i % 7}` });
      ids.push(job.job_id);
    }
    for (let left = JOBS; left > 0; ) {
      const leases = await seeder.claim({ queue: 'q', workerId: 'w', max: 20, leaseMs: 60_000 });
      for (const l of leases) await seeder.complete(l, null);
      left -= leases.length;
    }
    clock.advance(86_400_000);
    const runId = `run_01JPRVNE00000000000000000${shards}`;
    const at = new Date(clock.now()).toISOString();
    const record: RunRecord = {
      run_id: runId, queue: 'q', action: 'prune', user: 't', context: null, reason: null, filters: {},
      options: { prune: { states: ['succeeded'], before: at } },
      created_at: at, updated_at: at, status: 'planned', counts: { planned: JOBS, moved: 0, skipped: 0, failed: 0 },
    };
    await raw.config('RESETSTAT');
    await backend.createRun(record, ids.map((id) => ({ job_id: id, verdict: 'prune', detail: null })));
    const items = await backend.applyRunItems({ runId, jobIds: ids, now: clock.now() });
    expectGets(await getCalls(raw));
    expect(items.map((i) => i.status)).toEqual(ids.map(() => 'moved'));
    expect((await Promise.all(ids.map((id) => seeder.get(id)))).filter((j) => j !== null)).toEqual([]);
    expect((await backend.getRun(runId))!.counts).toMatchObject({ moved: JOBS, planned: 0 });
  } finally {
    raw.disconnect();
    await backend.close();
    await seeder.close();
  }
});
