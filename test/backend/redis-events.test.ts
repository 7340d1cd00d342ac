/**
 * Following events on Redis: every queue's stream is tailed with a blocking
 * read, including queues created after following began, and each stream
 * resumes from its own position (stream ids of different streams are not
 * comparable at the millisecond).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import type { JobEvent } from '../../src/core/schemas.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

it('follows every queue, also one created after following began, and misses nothing of the existing ones', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ev1&shards=2`), { clock: new ManualClock() });
  await backend.submit({ workflow: 'w:v1', queue: 'alpha', tenant_id: 'a' });
  await backend.submit({ workflow: 'w:v1', queue: 'alpha', tenant_id: 'b' });
  const ac = new AbortController();
  const seen: JobEvent[] = [];
  const done = (async () => {
    for await (const e of backend.events({ follow: true, signal: ac.signal })) seen.push(e);
  })();
  await pollUntil(() => seen.length === 2, { what: 'the existing events' });
  const later = (await backend.submit({ workflow: 'w:v1', queue: 'beta', tenant_id: 'a' })).job;
  const again = (await backend.submit({ workflow: 'w:v1', queue: 'alpha', tenant_id: 'c' })).job;
  await pollUntil(() => seen.length === 4, { what: 'events of the new queue and the old one' });
  expect(seen.slice(2).map((e) => e.job_id).sort()).toEqual([later.job_id, again.job_id].sort());
  expect(new Set(seen.map((e) => e.seq + e.job_id)).size).toBe(4);
  ac.abort();
  await done;
  await backend.close();
});
