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

// Regression: it threw RetryLaterError "unavailable: Connection is closed" where SQLite ends quietly.
it('ends a following iteration quietly when the backend is closed', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ev3`), { clock: new ManualClock() });
  await backend.submit({ workflow: 'w:v1', queue: 'closing' });
  const seen: JobEvent[] = [];
  const each = async (query: Parameters<RedisBackend['events']>[0]) => {
    for await (const e of backend.events(query)) seen.push(e);
    return 'ended';
  };
  const byQueue = each({ queue: 'closing', follow: true });
  const all = each({ follow: true });
  await pollUntil(() => seen.length === 2, { what: 'the existing event, twice' });
  await backend.close();
  expect(await Promise.all([byQueue, all])).toEqual(['ended', 'ended']);
});

// A job's first event is kept in its hash (field h0), the later ones in its history list, trimmed to
// the last HISTORY_KEEP; together they must read as one list of the job's last HISTORY_KEEP events.
it("gives a job's last 200 events, its first one included while it is among them", async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ev2`), { clock });
  const stream = async (jobId: string) => {
    const all: JobEvent[] = [];
    for await (const e of backend.events({ queue: 'hist' })) if (e.job_id === jobId) all.push(e);
    return all;
  };
  const history = async (jobId: string) => {
    const all: JobEvent[] = [];
    for await (const e of backend.events({ jobId })) all.push(e);
    return all;
  };
  // checkpoints after the claim: 198 makes 200 events in all (submitted, claimed, 198), 199 makes 201
  for (const checkpoints of [0, 198, 199, 230]) {
    const { job } = await backend.submit({ workflow: 'w:v1', queue: 'hist', tenant_id: `t${checkpoints}` });
    const [lease] = await backend.claim({ queue: 'hist', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease!.job.job_id).toBe(job.job_id);
    for (let i = 0; i < checkpoints; i++) await backend.checkpoint(lease!, { step: i });
    const all = await stream(job.job_id);
    expect(all).toHaveLength(checkpoints + 2);
    const got = await history(job.job_id);
    expect(got.map((e) => e.seq)).toEqual(all.slice(-200).map((e) => e.seq));
    if (checkpoints + 2 <= 200) expect(got[0]!.type).toBe('submitted');
    else expect(got.map((e) => e.type)).not.toContain('submitted');
    await backend.complete(lease!, null);
  }
  await backend.close();
});

// The first events of a job ride in its hash (inline slots h0 .. h3, written by submit, claim and
// complete), the others go to its history list; the history merges the two by stream id. Through
// releases, retries and checkpoints (which use the list) and past the last slot, a job's history
// must stay exactly its events of the queue's stream, and its attempts every attempt record, in order.
it('keeps the history in order whichever events ride in the job hash, and every attempt record', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=ev3`), { clock });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'mix', tenant_id: 't', max_attempts: 5 });
  const check = async () => {
    const streamed: JobEvent[] = [];
    for await (const e of backend.events({ queue: 'mix' })) if (e.job_id === job.job_id) streamed.push(e);
    const history: JobEvent[] = [];
    for await (const e of backend.events({ jobId: job.job_id })) history.push(e);
    expect(history.map((e) => `${e.seq} ${e.type}`)).toEqual(streamed.map((e) => `${e.seq} ${e.type}`));
    return history.map((e) => e.type);
  };
  const claim = async () => {
    const [lease] = await backend.claim({ queue: 'mix', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease!.jobId).toBe(job.job_id);
    await check();
    return lease!;
  };
  // claimed (a slot), released (the list), three times: the fourth claim finds the slots used
  for (let i = 0; i < 3; i++) {
    await backend.release(await claim());
    await check();
  }
  let lease = await claim();
  await backend.checkpoint(lease, { step: 1 });
  const out = await backend.fail(lease, { code: 'TIMEOUT', message: 'slow', retryable: true });
  expect(out.kind).toBe('retry');
  if (out.kind === 'retry') clock.set(out.runAt);
  lease = await claim();
  expect(lease.job.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'released'], [1, 'released'], [1, 'released'], [1, 'failed'], [2, null]]);
  await backend.complete(lease, 'done');
  expect(await check()).toEqual([
    'submitted', 'claimed', 'released', 'claimed', 'released', 'claimed', 'released',
    'claimed', 'checkpoint', 'retry_scheduled', 'claimed', 'succeeded',
  ]);
  const done = (await backend.get(job.job_id))!;
  expect(done.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'released'], [1, 'released'], [1, 'released'], [1, 'failed'], [2, 'succeeded']]);
  expect(done.attempts.every((a) => a.worker_id === 'w' && a.ended_at !== null)).toBe(true);
  await backend.close();
});
