/**
 * Attempt records on Redis: a job's last one is kept in its hash (field ar), the earlier ones in
 * its attempts list; an open record is closed by text (lua/prelude.ts closeAttempt), and records
 * an older agentq stored (all in the list, or written by cjson in another key order) still close
 * and read back.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

// The attempts list and the record in the job hash together keep a job's last 200 attempt records.
it("keeps a job's last 200 attempt records", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=at1`), { clock: new ManualClock() });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'many', tenant_id: 't' });
  for (let i = 0; i < 204; i++) {
    const [lease] = await backend.claim({ queue: 'many', workerId: `w${i}`, max: 1, leaseMs: 60_000 });
    if (i < 203) await backend.release(lease!);
    else await backend.complete(lease!, null);
  }
  const got = (await backend.get(job.job_id))!;
  expect(got.attempts).toHaveLength(200);
  expect(got.attempts.map((a) => a.worker_id)).toEqual(Array.from({ length: 200 }, (_v, i) => `w${i + 4}`));
  expect(got.attempts.at(-1)!.outcome).toBe('succeeded');
  await backend.close();
});

it('closes and reads back attempt records an older agentq stored', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=at2`), { clock });
  const raw = new Redis(server.url);
  const started = clock.now();
  // a record as cjson wrote it (its own key order), in the hash
  const cjsonRecord = `{"worker_version":"v9","outcome":null,"started_at":${started},"error_message":null,"attempt":1,"ended_at":null,"worker_id":"w","error_code":null}`;
  const inHash = (await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'a' })).job;
  const [l1] = await backend.claim({ queue: 'old', workerId: 'w', max: 1, leaseMs: 60_000 });
  await raw.hset(`{at2:old:0}:j:${inHash.job_id}`, 'ar', cjsonRecord);
  // every record in the list, none in the hash (before ar and na existed)
  const inList = (await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'b' })).job;
  const [l2] = await backend.claim({ queue: 'old', workerId: 'w', max: 1, leaseMs: 60_000 });
  await raw.hdel(`{at2:old:0}:j:${inList.job_id}`, 'ar', 'na');
  await raw.rpush(`{at2:old:0}:a:${inList.job_id}`, cjsonRecord);
  clock.advance(1500);
  for (const lease of [l1!, l2!]) await backend.complete(lease, 'ok');
  for (const id of [inHash.job_id, inList.job_id]) {
    const job = (await backend.get(id))!;
    expect(job.attempts).toEqual([
      {
        attempt: 1, worker_id: 'w', worker_version: 'v9', started_at: new Date(started).toISOString(),
        ended_at: new Date(started + 1500).toISOString(), outcome: 'succeeded', error_code: null, error_message: null,
      },
    ]);
  }
  // both ends counted as successes of a first attempt, with their execution times
  const stats = await backend.stats('old');
  expect(stats.by_attempt).toEqual([{ attempt: 1, succeeded: 2, failed: 0 }]);
  expect(stats.execution_ms).toEqual([1500, 1500]);
  raw.disconnect();
  await backend.close();
});

it('closes a record it opened by text, escaping what the worker and the error say', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=at3`), { clock });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'esc', tenant_id: 'a', max_attempts: 1 });
  const worker = 'w "quoted" ,"started_at":1 \\ \u00e9';
  const [lease] = await backend.claim({ queue: 'esc', workerId: worker, workerVersion: 'v"1', max: 1, leaseMs: 60_000 });
  clock.advance(250);
  await backend.fail(lease!, { code: 'BAD "CODE"', message: 'line\nbreak, "quote" and \u0000', retryable: false });
  const got = (await backend.get(job.job_id))!;
  expect(got.attempts).toEqual([
    {
      attempt: 1, worker_id: worker, worker_version: 'v"1', started_at: new Date(clock.now() - 250).toISOString(),
      ended_at: new Date(clock.now()).toISOString(), outcome: 'failed', error_code: 'BAD "CODE"', error_message: 'line\nbreak, "quote" and \u0000',
    },
  ]);
  await backend.close();
});

it('claims a job whose records an older agentq kept all in its list, and shows every record after', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=at4`), { clock });
  const raw = new Redis(server.url);
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'a', max_attempts: 3 });
  const [first] = await backend.claim({ queue: 'old', workerId: 'w1', max: 1, leaseMs: 60_000 });
  const out = await backend.fail(first!, { code: 'TIMEOUT', message: 'slow', retryable: true });
  expect(out.kind).toBe('retry');
  if (out.kind === 'retry') clock.set(out.runAt);
  // as an older agentq stored it: the closed record in the list, none in the hash
  const jobKey = `{at4:old:0}:j:${job.job_id}`;
  await raw.rpush(`{at4:old:0}:a:${job.job_id}`, (await raw.hget(jobKey, 'ar'))!);
  await raw.hdel(jobKey, 'ar', 'na');
  const [second] = await backend.claim({ queue: 'old', workerId: 'w2', max: 1, leaseMs: 60_000 });
  expect(second!.job.attempts.map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([[1, 'w1', 'failed'], [2, 'w2', null]]);
  await backend.complete(second!, null);
  expect((await backend.get(job.job_id))!.attempts.map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([[1, 'w1', 'failed'], [2, 'w2', 'succeeded']]);
  raw.disconnect();
  await backend.close();
});

it('adds usage to records an older agentq stored (cjson in the hash, all in the list) and to its own, which still close by text', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=at5`), { clock });
  const raw = new Redis(server.url);
  const started = clock.now();
  const cjsonRecord = `{"worker_version":"v9","outcome":null,"started_at":${started},"error_message":null,"attempt":1,"ended_at":null,"worker_id":"w","error_code":null}`;
  const inHash = (await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'a' })).job;
  const [l1] = await backend.claim({ queue: 'old', workerId: 'w', max: 1, leaseMs: 60_000 });
  await raw.hset(`{at5:old:0}:j:${inHash.job_id}`, 'ar', cjsonRecord);
  const inList = (await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'b' })).job;
  const [l2] = await backend.claim({ queue: 'old', workerId: 'w', max: 1, leaseMs: 60_000 });
  await raw.hdel(`{at5:old:0}:j:${inList.job_id}`, 'ar', 'na');
  await raw.rpush(`{at5:old:0}:a:${inList.job_id}`, cjsonRecord);
  // its own record, for a worker whose id looks like the record's own text
  const own = (await backend.submit({ workflow: 'w:v1', queue: 'old', tenant_id: 'c' })).job;
  const worker = 'w ,"usage":{"tokens":9,"cost_usd":9} ,"started_at":1';
  const [l3] = await backend.claim({ queue: 'old', workerId: worker, max: 1, leaseMs: 60_000 });
  for (const lease of [l1!, l2!, l3!]) {
    await backend.addUsage(lease, { tokens: 100, cost_usd: 0.1 });
    await backend.addUsage(lease, { tokens: 23, cost_usd: 0.2 });
  }
  clock.advance(1500);
  for (const lease of [l1!, l2!, l3!]) await backend.complete(lease, 'ok');
  for (const id of [inHash.job_id, inList.job_id, own.job_id]) {
    const [a] = (await backend.get(id))!.attempts;
    expect(a).toMatchObject({ attempt: 1, outcome: 'succeeded', ended_at: new Date(started + 1500).toISOString(), usage: { tokens: 123 } });
    // (a record cjson writes keeps 14 significant digits: 0.3 where the text path keeps 0.30000000000000004)
    expect(a!.usage!.cost_usd).toBeCloseTo(0.3, 12);
  }
  expect((await backend.get(own.job_id))!.attempts[0]!.worker_id).toBe(worker);
  // every end counted once, with its execution time; the usage summed on the shard
  const stats = await backend.stats('old');
  expect(stats.by_attempt).toEqual([{ attempt: 1, succeeded: 3, failed: 0 }]);
  expect(stats.execution_ms).toEqual([1500, 1500, 1500]);
  expect(stats.usage!.tokens).toBe(369);
  expect(stats.usage!.cost_usd).toBeCloseTo(0.9, 12);
  raw.disconnect();
  await backend.close();
});
