/**
 * A waiting job whose stored record is not its own (a hash copied or renamed by hand over its key,
 * holding another job's envelope or another queue's), or that cannot be handed out (a count edited
 * to text, an envelope that does not parse, a key of another type), is moved aside into the DLQ by
 * the claim and reported, never handed to a worker as another job, and never stops the claim of the
 * other jobs of its queue. Before: a copied record was run twice under the other job's id (the own
 * job left running with no one holding it); a count edited to text failed the claim script half way
 * on every claim (the jobs picked before it left running, handed to no one): the queue stalled.
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

type Damage = (raw: Redis, key: (id: string) => string, ids: { a: string; b: string }) => Promise<unknown>;

const DAMAGES: Array<[name: string, damage: Damage, why: string]> = [
  ['a copy of another job’s hash over its key', (raw, k, { a, b }) => raw.copy(k(a), k(b), 'REPLACE'), 'is the record of'],
  [
    'an envelope naming another queue',
    async (raw, k, { b }) => {
      const env = JSON.parse((await raw.hget(k(b), 'env'))!) as Record<string, unknown>;
      await raw.hset(k(b), 'env', JSON.stringify({ ...env, queue: 'elsewhere' }));
    },
    'says queue "elsewhere"',
  ],
  ['an attempt count edited to text', (raw, k, { b }) => raw.hset(k(b), 'att', 'abc'), 'field att'],
  ['no envelope', (raw, k, { b }) => raw.hdel(k(b), 'env'), 'no envelope'],
  // starts as submit writes it (the script's quick check passes), then does not parse: set aside by the client
  [
    'an envelope cut short',
    async (raw, k, { b }) => {
      const env = (await raw.hget(k(b), 'env'))!;
      await raw.hset(k(b), 'env', env.slice(0, env.indexOf('"workflow"')));
    },
    'in JSON at position',
  ],
  ['a key of another type', async (raw, k, { b }) => raw.del(k(b)).then(() => raw.set(k(b), 'not a hash')), 'not a job hash'],
  ['no record at all (evicted, or deleted by hand)', (raw, k, { b }) => raw.del(k(b)), 'the job record is missing'],
];

for (const [i, [name, damage, why]] of DAMAGES.entries()) {
  for (const via of ['claim', 'completeAndClaim'] as const) {
    it(`regression: a waiting job with ${name} is moved to the DLQ and reported by ${via}; the other jobs are each handed out once`, async () => {
      const prefix = `dc${i}${via[1]}`;
      const clock = new ManualClock();
      const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}`), { clock });
      const raw = new Redis(server.url);
      const k = (id: string) => `{${prefix}:q:0}:j:${id}`;
      try {
        const submit = async () => (await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 })).job.job_id;
        // (completeAndClaim: a first job to complete, whose completion asks for the next three)
        const first = via === 'completeAndClaim' ? await submit() : null;
        const ids = [await submit(), await submit(), await submit()];
        const [a, b, c] = ids as [string, string, string];
        await damage(raw, k, { a, b });

        const reported: Error[] = [];
        const req = { queue: 'q', workerId: 'w', max: 3, leaseMs: 60_000, onPartialFailure: (e: Error) => reported.push(e) };
        let leases;
        if (first !== null) {
          const [lease] = await backend.claim({ ...req, max: 1 });
          expect(lease!.jobId).toBe(first);
          leases = (await backend.completeAndClaim(lease!, null, req)).next;
        } else {
          leases = await backend.claim(req);
        }
        expect(leases.map((l) => l.jobId)).toEqual([a, c]);
        expect(leases.map((l) => l.job.job_id)).toEqual([a, c]);
        expect(reported).toHaveLength(1);
        expect(reported[0]).toBeInstanceOf(MalformedJobError);
        expect(reported[0]!.message).toContain(b);
        expect(reported[0]!.message).toContain(why);
        expect(reported[0]!.message).toContain('moved to the DLQ');

        // Out of the claim's way: nothing more to claim, and it is a malformed DLQ entry, left as found.
        expect(await backend.claim(req)).toEqual([]);
        const entry = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items.find((e) => e.job_id === b);
        expect(entry?.malformed, JSON.stringify(entry)).toEqual(expect.any(String));
        // its reason says what happened (set aside: permanent, as SQLite shows a malformed entry), not `custody`,
        // which is an SQS backstop's; the light listing agrees
        expect(entry?.reason).toBe('permanent');
        const row = (await backend.dlqRows({ queue: 'q' }, { limit: 10 })).items.find((r) => r.job_id === b);
        expect([row?.reason, row?.malformed]).toEqual(['permanent', true]);
        expect((await backend.dlqList({ queue: 'q', reason: 'custody' }, { limit: 10 })).items).toEqual([]);
        expect(await raw.zscore(`{${prefix}:q:0}:s:dead`, b)).not.toBeNull();
        const stats = await backend.stats('q');
        expect(stats.dlq_size).toBe(1);
        expect([stats.counts.queued, stats.counts.scheduled, stats.counts.running]).toEqual([0, 0, 2]);
        // the others finish as usual
        for (const l of leases) expect((await backend.complete(l, 'done')).state).toBe('succeeded');
      } finally {
        raw.disconnect();
        await backend.close();
      }
    });
  }
}

it('regression: a job record naming another class than the waiting set it is in is moved aside, not picked again until the claim gives up', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=dcx`), { clock: new ManualClock() });
  const raw = new Redis(server.url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 })).job.job_id);
    const [a, b, c] = ids as [string, string, string];
    await raw.hset(`{dcx:q:0}:j:${a}`, 'cls', 'interactive');
    const reported: Error[] = [];
    const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 3, leaseMs: 60_000, onPartialFailure: (e) => reported.push(e) });
    expect(leases.map((l) => l.jobId)).toEqual([b, c]);
    expect(reported.map((e) => e.message)).toEqual([expect.stringContaining(`${a} is malformed: the job record says class "interactive"`)]);
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
