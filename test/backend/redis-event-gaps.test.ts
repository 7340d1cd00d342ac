/**
 * A reader that falls behind a capped event stream (events_maxlen) finds the events after its
 * position trimmed: the loss must be reported through `onGap`, never skipped silently.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import type { EventGap } from '../../src/backend/contract.js';
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

// events_maxlen=100 trims whole stream nodes of 100 entries: 400 more events trim past the reader.
const MORE = 400;
const submitMany = async (backend: RedisBackend, queue: string, n: number) => {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, k) => backend.submit({ workflow: 'w:v1', queue, tenant_id: `t${i + k}` })));
  }
};

it('reports how many events a slow follower lost to the stream cap, and reads on after them', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=gap1&events_maxlen=100`), { clock: new ManualClock(), followBuffer: 5 });
  await backend.submit({ workflow: 'w:v1', queue: 'slow', tenant_id: 'first' });
  const ac = new AbortController();
  const gaps: EventGap[] = [];
  const it = backend.events({ queue: 'slow', follow: true, signal: ac.signal, onGap: (g) => gaps.push(g) })[Symbol.asyncIterator]();
  const seen: JobEvent[] = [(await it.next()).value as JobEvent];
  // The reader stops taking events while the queue goes on.
  await submitMany(backend, 'slow', MORE);
  const last = (await backend.submit({ workflow: 'w:v1', queue: 'slow', tenant_id: 'last' })).job.job_id;
  while (seen.at(-1)!.job_id !== last) seen.push((await it.next()).value as JobEvent);
  expect(gaps.length).toBeGreaterThan(0);
  for (const g of gaps) {
    expect(g).toMatchObject({ where: 'queue slow', queue: 'slow', shard: 0, jobId: null });
    expect(g.lost).toBeGreaterThan(0);
  }
  // every event either shown or counted as lost, none twice
  expect(new Set(seen.map((e) => e.seq)).size).toBe(seen.length);
  expect(seen.length + gaps.reduce((n, g) => n + g.lost!, 0)).toBe(MORE + 2);
  ac.abort();
  await it.return?.();
  await backend.close();
});

it('reports that events after a resumed cursor may be missing when the cap trimmed past it', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=gap2&events_maxlen=100`), { clock: new ManualClock() });
  const first = (await backend.submit({ workflow: 'w:v1', queue: 'resume', tenant_id: 'first' })).job.job_id;
  let cursor = '';
  for await (const e of backend.events({ queue: 'resume' })) if (e.job_id === first) cursor = e.seq;
  await submitMany(backend, 'resume', MORE);
  const gaps: EventGap[] = [];
  const seen: JobEvent[] = [];
  for await (const e of backend.events({ queue: 'resume', afterSeq: cursor, onGap: (g) => gaps.push(g) })) {
    if (seen.length === 0) expect(gaps).toHaveLength(1); // told before the first event after the gap
    seen.push(e);
  }
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.length).toBeLessThan(MORE);
  expect(gaps).toEqual([{ where: 'queue resume', queue: 'resume', shard: 0, jobId: null, afterSeq: cursor, resumedSeq: seen[0]!.seq, lost: null }]);
  await backend.close();
});

it('reports no gap to a reader that keeps up, nor for history older than the cap read from the start', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=gap3&events_maxlen=100&shards=2`), { clock: new ManualClock() });
  const ac = new AbortController();
  const gaps: EventGap[] = [];
  const seen: JobEvent[] = [];
  const done = (async () => {
    for await (const e of backend.events({ queue: 'kept', follow: true, signal: ac.signal, onGap: (g) => gaps.push(g) })) seen.push(e);
  })();
  await backend.submit({ workflow: 'w:v1', queue: 'kept', tenant_id: 'a' });
  await pollUntil(() => seen.length === 1, { what: 'the first event' });
  await submitMany(backend, 'kept', 60);
  await pollUntil(() => seen.length === 61, { what: 'every event' });
  await submitMany(backend, 'kept', MORE);
  const all: JobEvent[] = [];
  for await (const e of backend.events({ queue: 'kept', onGap: (g) => gaps.push(g) })) all.push(e);
  expect(all.length).toBeLessThan(MORE);
  ac.abort();
  await done;
  expect(gaps).toEqual([]);
  await backend.close();
});

it("says that a job's earliest events were trimmed when its history holds only its last 200", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=gap4`), { clock: new ManualClock() });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'long', tenant_id: 'a' });
  const [lease] = await backend.claim({ queue: 'long', workerId: 'w', max: 1, leaseMs: 60_000 });
  const history = async (id: string) => {
    const gaps: EventGap[] = [];
    const all: JobEvent[] = [];
    for await (const e of backend.events({ jobId: id, onGap: (g) => gaps.push(g) })) all.push(e);
    return { gaps, all };
  };
  for (let i = 0; i < 198; i++) await backend.checkpoint(lease!, { step: i });
  // 200 events: all of them, submitted first, nothing to report
  expect(await history(job.job_id)).toMatchObject({ gaps: [], all: { length: 200 } });
  await backend.checkpoint(lease!, { step: 198 });
  const { gaps, all } = await history(job.job_id);
  expect(all).toHaveLength(200);
  expect(all[0]!.type).toBe('claimed');
  expect(gaps).toEqual([{ where: `job ${job.job_id}`, queue: 'long', shard: 0, jobId: job.job_id, afterSeq: null, resumedSeq: all[0]!.seq, lost: null }]);
  await backend.close();
});

it("a job's follower that fell behind its shard's stream still gets the job's events the cap trimmed, its end too", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=gap5&events_maxlen=100`), { clock: new ManualClock(), followBuffer: 5 });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'busy', tenant_id: 'a' });
  const ac = new AbortController();
  const gaps: EventGap[] = [];
  const it = backend.events({ jobId: job.job_id, follow: true, signal: ac.signal, onGap: (g) => gaps.push(g) })[Symbol.asyncIterator]();
  expect(((await it.next()).value as JobEvent).type).toBe('submitted');
  // The job runs and ends among many other events while its follower does not read.
  const [lease] = await backend.claim({ queue: 'busy', workerId: 'w', max: 1, leaseMs: 60_000 });
  await submitMany(backend, 'busy', MORE);
  await backend.complete(lease!, null);
  await submitMany(backend, 'busy', MORE);
  const types: string[] = [];
  while (types.at(-1) !== 'succeeded') types.push(((await it.next()).value as JobEvent).type);
  expect(types).toEqual(['claimed', 'succeeded']);
  expect(gaps).toEqual([]); // nothing of the job was lost
  ac.abort();
  await it.return?.();
  await backend.close();
});
