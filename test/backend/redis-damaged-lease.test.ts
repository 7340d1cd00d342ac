/**
 * A running job whose record was edited by hand must not stop the other jobs of its queue. Before:
 * once its lease expired, the claim script's reaping failed on it (an attempt count or maximum that
 * is not a number) on every claim, so nothing of the queue was claimed again, and the jobs the
 * failed call had reaped or picked before it were left half done; a heartbeat batch failed whole on
 * one damaged lease, so the other leases sent with it ran out while their workers were alive.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { MalformedJobError } from '../../src/core/errors.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

async function setUp(prefix: string) {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}`), { clock });
  const raw = new Redis(server.url);
  const submit = async () => (await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 })).job.job_id;
  const key = (id: string) => `{${prefix}:q:0}:j:${id}`;
  return { clock, backend, raw, submit, key };
}

const RUNNING_DAMAGE: Array<[name: string, field: string, value: string]> = [
  ['a maximum of attempts edited to text', 'max', 'x'],
  ['an attempt count edited to text', 'att', 'abc'],
  ['an attempt record that does not parse', 'ar', '{"attempt": broken'],
];

for (const [i, [name, field, value]] of RUNNING_DAMAGE.entries()) {
  it(`regression: a running job with ${name} whose lease expired is moved to the DLQ and reported; the queue's other jobs are reaped and claimed`, async () => {
    const { clock, backend, raw, submit, key } = await setUp(`dl${i}`);
    try {
      const damaged = await submit();
      const healthy = await submit();
      const waiting = await submit();
      const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 1000 });
      expect(leases.map((l) => l.jobId)).toEqual([damaged, healthy]);
      await raw.hset(key(damaged), field, value);
      clock.advance(5000);

      const reported: Error[] = [];
      const got = await backend.claim({ queue: 'q', workerId: 'w2', max: 5, leaseMs: 60_000, onPartialFailure: (e) => reported.push(e) });
      expect(got.map((l) => l.jobId)).toEqual([waiting]);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toBeInstanceOf(MalformedJobError);
      expect(reported[0]!.message).toContain(damaged);
      expect(reported[0]!.message).toContain('moved to the DLQ');
      expect((await backend.get(healthy))!.state).toBe('scheduled');
      expect(await raw.hget(key(damaged), 'st')).toBe('dead');
      expect(await raw.zscore(`{dl${i}:q:0}:dlq`, damaged)).not.toBeNull();
      expect(await raw.zscore(`{dl${i}:q:0}:leases`, damaged)).toBeNull();
      // and the next claims go on as usual
      expect(await backend.claim({ queue: 'q', workerId: 'w2', max: 5, leaseMs: 60_000 })).toEqual([]);
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
}

it('regression: an expired lease whose job key holds another type of value is dropped and reported; the claim goes on', async () => {
  const { clock, backend, raw, submit, key } = await setUp('dlt');
  try {
    const damaged = await submit();
    const waiting = await submit();
    await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 1000 });
    await raw.del(key(damaged));
    await raw.set(key(damaged), 'not a hash');
    clock.advance(5000);
    const reported: Error[] = [];
    const got = await backend.claim({ queue: 'q', workerId: 'w2', max: 5, leaseMs: 60_000, onPartialFailure: (e) => reported.push(e) });
    expect(got.map((l) => l.jobId)).toEqual([waiting]);
    expect(reported.map((e) => e.message)).toEqual([expect.stringContaining(`${damaged} is malformed: the job key holds a string`)]);
    expect(await raw.get(key(damaged))).toBe('not a hash');
  } finally {
    raw.disconnect();
    await backend.close();
  }
});

for (const [name, damage] of [
  ['a lease end edited to text', (raw: Redis, k: string) => raw.hset(k, 'le', 'soon')],
  ['a job key holding another type', (raw: Redis, k: string) => raw.del(k).then(() => raw.set(k, 'not a hash'))],
] as const) {
  it(`regression: a heartbeat sent with a lease whose record has ${name} still extends the other leases`, async () => {
    const { clock, backend, raw, submit, key } = await setUp(`dh${name.length}`);
    try {
      const damaged = await submit();
      const healthy = await submit();
      const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 10_000 });
      await damage(raw, key(damaged));
      clock.advance(5000);
      const beats = await backend.heartbeat(leases, 10_000);
      expect(beats.find((b) => b.jobId === healthy)).toMatchObject({ status: 'ok', expiresAt: clock.now() + 10_000 });
      // (a lease end edited to text is rewritten by the beat that holds the lease; a key of another type is lost)
      expect(beats.find((b) => b.jobId === damaged)!.status).toBe(name.startsWith('a lease') ? 'ok' : 'lost');
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
}

for (const [name, damage] of [
  ['no class', (raw: Redis, k: string) => raw.hdel(k, 'cls')],
  ['an attempt record that does not parse', (raw: Redis, k: string) => raw.hset(k, 'ar', '{"attempt": broken')],
] as const) {
  it(`regression: a completion of a job whose record lost ${name} while it ran is refused alone; the completions batched with it apply whole`, async () => {
    const { backend, raw, submit, key } = await setUp(`dk${name.length}`);
    try {
      const ids = [await submit(), await submit(), await submit()];
      const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 });
      const [damaged, healthy] = leases as [(typeof leases)[0], (typeof leases)[0]];
      await damage(raw, key(damaged.jobId));
      const next = { queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 };
      // the same turn: one batch
      const [a, b] = await Promise.allSettled([backend.completeAndClaim(damaged, 'x', next), backend.completeAndClaim(healthy, 'y', next)]);
      expect(a.status).toBe('rejected');
      expect((a as PromiseRejectedResult).reason).toBeInstanceOf(MalformedJobError);
      expect(String((a as PromiseRejectedResult).reason.message)).toContain(damaged.jobId);
      expect(b.status).toBe('fulfilled');
      expect((b as PromiseFulfilledResult<{ next: Array<{ jobId: string }> }>).value.next.map((l) => l.jobId)).toEqual([ids[2]]);
      expect((await backend.get(healthy.jobId))!.state).toBe('succeeded');
      expect(await raw.hget(key(damaged.jobId), 'st')).toBe('running');
      const stats = await backend.stats('q');
      expect([stats.counts.running, stats.counts.succeeded]).toEqual([2, 1]);
      // alone too
      await expect(backend.complete(damaged, 'x')).rejects.toBeInstanceOf(MalformedJobError);
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
}
