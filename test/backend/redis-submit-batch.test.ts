/**
 * Batched submit on Redis: submits issued in the same turn of the event loop
 * go to their shard in script calls of up to 64 jobs. Each job is still
 * inserted (or found by its idempotency key) exactly as a lone submit would
 * be, in call order, so a key repeated within one batch finds the first job.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { AgentqError, IdempotencyConflictError } from '../../src/core/errors.js';
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
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=sb${++n}${extra}`), { clock, random: seededRandom(n) });
  return { backend, clock };
}

describe('Redis batched submit', () => {
  it('inserts 300 concurrent submits (several batches, two shards) as 300 findable jobs with one event each', async () => {
    const { backend } = open('&shards=2');
    try {
      const results = await Promise.all(
        Array.from({ length: 300 }, (_v, i) => backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${i % 7}`, input: `job ${i}` })),
      );
      expect(results.every((r) => r.created)).toBe(true);
      expect(new Set(results.map((r) => r.job.job_id)).size).toBe(300);
      const stats = await backend.stats('q');
      expect(stats.counts.queued).toBe(300);
      expect(stats.totals?.submitted).toBe(300);
      for (const r of results.slice(0, 20)) expect(await backend.get(r.job.job_id)).toEqual(r.job);
      const events = [];
      for await (const e of backend.events({ queue: 'q' })) events.push(e);
      expect(events.filter((e) => e.type === 'submitted')).toHaveLength(300);
      const listed = await backend.list({ queue: 'q' }, { limit: 1000 });
      expect(listed.items).toHaveLength(300);
    } finally {
      await backend.close();
    }
  });

  it('resolves an idempotency key repeated within one batch to the first job, and a changed body to a conflict', async () => {
    const { backend } = open();
    try {
      const req = { workflow: 'w:v1', queue: 'q', tenant_id: 'acme', idempotency_key: 'order-1' };
      const [a, b, other, c] = await Promise.allSettled([
        backend.submit(req),
        backend.submit(req),
        backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' }),
        backend.submit({ ...req, input: 'something else' }),
      ]);
      expect(a.status === 'fulfilled' && a.value.created).toBe(true);
      expect(b.status === 'fulfilled' && !b.value.created).toBe(true);
      if (a.status !== 'fulfilled' || b.status !== 'fulfilled') throw new Error('unreachable');
      expect(b.value.job.job_id).toBe(a.value.job.job_id);
      expect(other.status).toBe('fulfilled');
      expect(c.status === 'rejected' && c.reason).toBeInstanceOf(IdempotencyConflictError);
      expect((await backend.stats('q')).counts.queued).toBe(2);
    } finally {
      await backend.close();
    }
  });

  it('sends the submits and completions still waiting for the end of the turn when the backend is closed', async () => {
    const { backend } = open();
    const prefix = `sb${n}`;
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    // issued, then closed in the same turn: both batches are still waiting for their flush
    const submits = Array.from({ length: 5 }, () => backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' }));
    const completion = backend.completeAndClaim(lease!, 'ok', { queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    const closed = backend.close();
    const created = await Promise.all(submits);
    const { next } = await completion;
    await closed;
    expect(created.every((r) => r.created)).toBe(true);
    expect(next).toHaveLength(1);
    const again = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}`), { clock: new ManualClock() });
    try {
      expect((await again.get(lease!.jobId))!.state).toBe('succeeded');
      for (const r of created) expect(await again.get(r.job.job_id)).not.toBeNull();
    } finally {
      await again.close();
    }
  });

  // Regression: a counter hash edited by hand (`HSET … tot submitted abc`) made submit an
  // "internal error" (ERR hash value is not an integer) after the script had written the job: a
  // job that no counter knew about. The script now checks the counters it will write first.
  it.each([
    ['tot', ['HSET', 'submitted', 'abc'], 'submitted'],
    ['n', ['HSET', 'batch:queued', '1.5'], 'batch:queued'],
    ['blt', ['HSET', 'acme', 'lots'], 'acme'],
    ['stn', ['SET', 'x'], null],
  ] as const)('refuses a submit whose counter %s is damaged, naming the key, before writing anything', async (counter, [cmd, ...cmdArgs], field) => {
    const { backend } = open();
    const raw = new Redis(server.url);
    try {
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
      const key = `{sb${n}:q:0}:${counter}`;
      if (cmd === 'SET') await raw.del(key);
      await raw.call(cmd, key, ...cmdArgs);
      const before = await raw.dbsize();
      const err = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(AgentqError);
      expect(err).toMatchObject({ code: 'STORE_DAMAGED', exitCode: 78 });
      const message = (err as Error).message;
      expect(message).toContain(`the counter ${key}`);
      if (field) expect(message).toContain(`field ${JSON.stringify(field)}`);
      expect(message).toContain('nothing was written');
      expect(await raw.dbsize()).toBe(before);
      expect(await raw.zcard(`{sb${n}:q:0}:s:queued`)).toBe(1);
      // Batches are checked the same way.
      const batch = await Promise.allSettled([1, 2, 3].map(() => backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' })));
      expect(batch.every((r) => r.status === 'rejected' && (r.reason as AgentqError).code === 'STORE_DAMAGED')).toBe(true);
      expect(await raw.dbsize()).toBe(before);
      // A script without the check first (claim) still says what is wrong, not "internal error".
      if (counter === 'n') {
        await expect(backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 10_000 })).rejects.toMatchObject({
          code: 'STORE_DAMAGED',
          message: expect.stringContaining('hash value is not an integer'),
        });
      }
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
});
