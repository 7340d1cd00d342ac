/**
 * Redis dlqList with a dead_at range (since/until): the DLQ is walked in job-id order, so a range
 * that matches nothing used to read every entry, ten ids a page (`dlq check --max-age` on a healthy
 * DLQ of 100,000 entries: 10,000 short pages). A shard whose dead_at index has nothing in the range
 * is now skipped: one page, with no cursor, says there is none.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';

const servers = new TestServers();
let redis: RedisServer;
beforeAll(async () => {
  redis = await servers.start(startRedisServer());
}, 60_000);
afterAll(() => servers.stopAll());

it('answers a dead_at range with no entry in one page, and still finds the one entry in it', async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 30, 10));
  const sep = redis.url.includes('?') ? '&' : '?';
  const backend = new RedisBackend(parseRedisUrl(`${redis.url}${sep}prefix=range${process.pid}&shards=2`), { clock });
  try {
    const die = async (n: number) => {
      for (let i = 0; i < n; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', max_attempts: 1 });
      for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: n, leaseMs: 60_000 })) {
        await backend.fail(lease, { code: 'X', message: 'x', retryable: false });
      }
    };
    await die(25);
    const none = await backend.dlqList({ queue: 'q', until: clock.now() - 60_000 }, { limit: 1 });
    expect(none).toEqual({ items: [], next_cursor: null });
    // An entry in the range is still found (here: in the first ones walked).
    clock.advance(3_600_000);
    await die(1);
    const found = await backend.dlqList({ queue: 'q', since: clock.now() - 60_000 }, { limit: 5 });
    expect(found.items).toHaveLength(1);
    const aged = await backend.dlqList({ queue: 'q', until: clock.now() - 60_000 }, { limit: 1 });
    expect(aged.items).toHaveLength(1);
  } finally {
    await backend.close();
  }
});

it('a malformed entry whose record gives no time of death (a key of another type) died when the DLQ index says, not in 1970', async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 30, 10));
  const diedAt = clock.now();
  const backend = new RedisBackend(parseRedisUrl(`${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=timeless${process.pid}`), { clock });
  const raw = new Redis(redis.url);
  try {
    await backend.submit({ workflow: 'w:v1', queue: 'q', max_attempts: 1 });
    const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    await backend.fail(lease!, { code: 'X', message: 'x', retryable: false });
    const key = `{timeless${process.pid}:q:0}:j:${lease!.jobId}`;
    await raw.del(key);
    await raw.set(key, 'not a job hash');
    clock.advance(2 * 3_600_000);
    const [listed] = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items;
    expect(listed).toMatchObject({ job_id: lease!.jobId, dead_at: new Date(diedAt).toISOString() });
    expect(listed!.malformed).toMatch(/another type/);
    expect((await backend.dlqGet(lease!.jobId))?.dead_at).toBe(new Date(diedAt).toISOString());
    // The range filters read the same time: an hour-old limit finds it, a three-hour one does not.
    expect((await backend.dlqList({ queue: 'q', until: clock.now() - 3_600_000 }, { limit: 1 })).items).toHaveLength(1);
    expect((await backend.dlqList({ queue: 'q', until: clock.now() - 3 * 3_600_000 }, { limit: 1 })).items).toHaveLength(0);
  } finally {
    raw.disconnect();
    await backend.close();
  }
});

it('the light rows of the TUI (dlqRows) take the same time from the DLQ index for a record of another type or with damaged times, not 1970', async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 30, 10));
  const diedAt = clock.now();
  const prefix = `rows${process.pid}`;
  const backend = new RedisBackend(parseRedisUrl(`${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=${prefix}`), { clock });
  const raw = new Redis(redis.url);
  try {
    for (let i = 0; i < 2; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', max_attempts: 1 });
    const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 });
    for (const lease of leases) await backend.fail(lease, { code: 'X', message: 'x', retryable: false });
    const [other, damaged] = leases.map((l) => l.jobId).sort();
    const otherKey = `{${prefix}:q:0}:j:${other}`;
    await raw.del(otherKey);
    await raw.set(otherKey, 'not a job hash');
    await raw.hset(`{${prefix}:q:0}:j:${damaged}`, 'dat', 'soon', 'upd', 'later');
    clock.advance(2 * 3_600_000);
    const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 10 })).items;
    expect(rows.map((r) => [r.job_id, r.malformed, r.dead_at_ms])).toEqual([
      [other, true, diedAt],
      [damaged, true, diedAt],
    ]);
    // The range filters read the same time, as dlqList's do.
    expect((await backend.dlqRows({ queue: 'q', until: clock.now() - 3_600_000 }, { limit: 10 })).items).toHaveLength(2);
    expect((await backend.dlqRows({ queue: 'q', until: clock.now() - 3 * 3_600_000 }, { limit: 10 })).items).toHaveLength(0);
    expect((await backend.dlqRows({ queue: 'q', since: clock.now() - 3 * 3_600_000 }, { limit: 10 })).items).toHaveLength(2);
    // And agree with the full entries.
    const entries = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items;
    expect(entries.map((e) => Date.parse(e.dead_at))).toEqual([diedAt, diedAt]);
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
