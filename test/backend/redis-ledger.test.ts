/**
 * Ledger items on Redis are JSON text with the status first (lua/dlq.ts ledgerItem); an item an
 * older agentq stored, in cjson's key order, must still be read and applied exactly once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { runRecord } from '../conformance/fixture.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const RUN = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';

it('applies a planned item stored in the key order of an older agentq, once', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg1`), { clock });
  const raw = new Redis(server.url);
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a', max_attempts: 1 });
  const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  await backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive' }, clock.now()), [{ job_id: job.job_id, verdict: 'redrive', detail: 'a "quoted" detail' }]);
  const key = `{lg1:q:0}:L:${RUN}`;
  const stored = await raw.hget(key, job.job_id);
  expect(JSON.parse(stored!)).toMatchObject({ status: 'planned', verdict: 'redrive', detail: 'a "quoted" detail' });
  await raw.hset(key, job.job_id, `{"verdict":"redrive","detail":null,"updated_at":${clock.now()},"status":"planned"}`);
  clock.advance(1000);
  const [first] = await backend.applyRunItems({ runId: RUN, jobIds: [job.job_id], now: clock.now() });
  expect(first).toMatchObject({ status: 'moved', verdict: 'redrive', detail: null, updated_at: new Date(clock.now()).toISOString() });
  const [again] = await backend.applyRunItems({ runId: RUN, jobIds: [job.job_id], now: clock.now() });
  expect(again).toMatchObject({ status: 'moved' });
  expect((await backend.get(job.job_id))!).toMatchObject({ state: 'queued', lineage: { redrive_count: 1 } });
  expect((await backend.ledger(RUN, { limit: 10 }, 'moved')).items.map((i) => i.job_id)).toEqual([job.job_id]);
  raw.disconnect();
  await backend.close();
});
