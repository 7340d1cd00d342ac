/**
 * `events({ since })` on Redis seeks each shard's capped stream to about T (stream ids are Redis's
 * clock in ms) instead of walking it from its start, and still never skips an event whose `at`
 * (the writer's clock) is at or after T, also when that clock runs ahead of Redis's.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import type { JobEvent } from '../../src/core/schemas.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
let raw: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

/** How many times Redis ran each command since the last call. */
async function calls(): Promise<Record<string, number>> {
  const text = (await raw.info('commandstats')) as string;
  await raw.config('RESETSTAT');
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** The queue's one stream holding `n` events of an hour ago and before, a ms apart, stamped as Redis stamped them. */
async function olderEvents(key: string, queue: string, n: number): Promise<void> {
  await raw.del(key);
  const t0 = Date.now() - 3_600_000 - n;
  for (let i = 0; i < n; i += 1000) {
    const p = raw.pipeline();
    for (let k = i; k < Math.min(n, i + 1000); k++) {
      const ev = { type: 'submitted', at: t0 + k, job_id: `job_01M8QJB537DKTRP0J7V${String(k).padStart(7, '0')}`, queue, tenant_id: 'old', from_state: null, to_state: 'queued', attempt: 0, data: null };
      p.xadd(key, `${t0 + k}-0`, 'e', JSON.stringify(ev));
    }
    await p.exec();
  }
}

const read = async (backend: RedisBackend, q: Parameters<RedisBackend['events']>[0]) => {
  const out: JobEvent[] = [];
  for await (const e of backend.events(q)) out.push(e);
  return out;
};

it('reads the events from T on without walking the older ones before them', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ss1`));
  await backend.submit({ workflow: 'w:v1', queue: 'big', tenant_id: 'a' });
  await olderEvents('{ss1:big:0}:ev', 'big', 20_000);
  const since = Date.now() - 1;
  const fresh = [];
  for (let i = 0; i < 3; i++) fresh.push((await backend.submit({ workflow: 'w:v1', queue: 'big', tenant_id: `n${i}` })).job.job_id);
  await calls();
  expect((await read(backend, { queue: 'big', since })).map((e) => e.job_id)).toEqual(fresh);
  // a walk reads 20,000 entries 500 at a time: 40 XRANGEs
  const c = await calls();
  expect(c.xrange ?? 0).toBeLessThanOrEqual(2);
  expect(c.xrevrange ?? 0).toBeLessThanOrEqual(2);
  await backend.close();
});

it('never skips an event at or after T written by a clock far ahead of Redis’s', async () => {
  // The writer's clock is 20 minutes ahead: its events' `at` are 20 minutes after their stream ids.
  const clock = new ManualClock(Date.now() + 20 * 60_000);
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ss2`), { clock });
  await backend.submit({ workflow: 'w:v1', queue: 'ahead', tenant_id: 'a' });
  await olderEvents('{ss2:ahead:0}:ev', 'ahead', 1000);
  const ids = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await backend.submit({ workflow: 'w:v1', queue: 'ahead', tenant_id: `n${i}` })).job.job_id);
    clock.advance(60_000);
  }
  const since = Date.parse((await backend.get(ids[1]!))!.created_at);
  expect((await read(backend, { queue: 'ahead', since })).map((e) => e.job_id)).toEqual(ids.slice(1));
  await backend.close();
});

it('follows on after the events from T, waiting for new ones rather than reading again and again', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ss3`));
  await backend.submit({ workflow: 'w:v1', queue: 'live', tenant_id: 'a' });
  await olderEvents('{ss3:live:0}:ev', 'live', 5000);
  const since = Date.now() + 60_000; // nothing yet
  const ac = new AbortController();
  const seen: JobEvent[] = [];
  await calls();
  const done = (async () => {
    for await (const e of backend.events({ queue: 'live', since, follow: true, signal: ac.signal })) seen.push(e);
  })();
  // (an hour on: new events are at or after T)
  const later = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ss3`), { clock: new ManualClock(Date.now() + 3_600_000) });
  // (a follower that reads again at once, never waiting, is never a blocked client)
  await pollUntil(async () => /^blocked_clients:[1-9]/m.test(await raw.info('clients')) || undefined, { what: 'the follower waiting in XREAD BLOCK', timeoutMs: 5000 });
  await calls();
  const { job } = await later.submit({ workflow: 'w:v1', queue: 'live', tenant_id: 'b' });
  await pollUntil(() => seen.length > 0 || undefined, { what: 'the new event' });
  expect(seen.map((e) => e.job_id)).toEqual([job.job_id]);
  // one wait per second at most (BLOCK 1000), not a loop of reads that return at once
  expect((await calls()).xread ?? 0).toBeLessThan(10);
  ac.abort();
  await done;
  await later.close();
  await backend.close();
});
