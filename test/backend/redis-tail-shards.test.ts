/**
 * `agentq tail --follow` of a queue of several shards on Redis: each shard's stream goes on from
 * its own position when following starts after the history. Stream ids are clock times: a stream
 * whose ids ran ahead (a Redis host's clock stepped back, XADD keeps the stream's last id; a
 * Cluster node whose clock is ahead) must not hide the other shards' new events.
 * In-process through `main`, real redis-server.
 */
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { main } from '../../src/cli/main.js';
import type { EventQuery } from '../../src/backend/contract.js';
import { RetryLaterError } from '../../src/core/errors.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

it("shows a shard's new events when another shard's stream ids ran ahead of the clock", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tsk&shards=2`));
  const raw = new Redis(server.url);
  const stream = (s: number) => `{tsk:skew:${s}}:ev`;
  // jobs on both shards
  for (let i = 0; (await raw.xlen(stream(0))) === 0 || (await raw.xlen(stream(1))) === 0; i++) {
    await backend.submit({ workflow: 'w:v1', queue: 'skew', tenant_id: `t${i}` });
  }
  // Shard 0's stream ran an hour ahead (its last event again, under an id of then).
  const [, fields] = ((await raw.xrevrange(stream(0), '+', '-', 'COUNT', 1)) as Array<[string, string[]]>)[0]!;
  const ahead = `${Date.now() + 3_600_000}-0`;
  await raw.xadd(stream(0), ahead, ...fields);
  const out: string[] = [];
  const io = { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: () => true }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const ctl = new AbortController();
  const run = main(['tail', '--queue', 'skew', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => backend });
  await pollUntil(() => out.join('').includes(ahead) || undefined, { what: 'the history, up to the entry ahead' });
  // New jobs on shard 1, whose ids are of now: before the one ahead.
  const before = await raw.xlen(stream(1));
  const added: string[] = [];
  for (let i = 0; (await raw.xlen(stream(1))) === before; i++) added.push((await backend.submit({ workflow: 'w:v1', queue: 'skew', tenant_id: `n${i}` })).job.job_id);
  await pollUntil(() => added.every((id) => out.join('').includes(id)) || undefined, { what: 'the events of the new jobs, shard 1 too' });
  ctl.abort();
  expect(await run).toBe(0);
  const seqs = out.join('').trim().split('\n').map((l) => (JSON.parse(l) as { seq: string; job_id: string }).seq + (JSON.parse(l) as { job_id: string }).job_id);
  expect(new Set(seqs).size).toBe(seqs.length); // nothing shown twice
  raw.disconnect();
  await backend.close();
});

it('after an outage, goes on from where each shard was: the shard behind the last seq shown loses nothing', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tso&shards=2`));
  const raw = new Redis(server.url);
  const stream = (s: number) => `{tso:out:${s}}:ev`;
  for (let i = 0; (await raw.xlen(stream(0))) === 0 || (await raw.xlen(stream(1))) === 0; i++) {
    await backend.submit({ workflow: 'w:v1', queue: 'out', tenant_id: `t${i}` });
  }
  // The store goes away: the follow under way fails as a lost Redis fails it, and so does reading again, until it answers.
  const lost = () => new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE');
  const outage = { on: false, cuts: [] as Array<() => void> };
  const flaky = new Proxy(backend, {
    get(target, prop, receiver) {
      if (prop === 'events') {
        return (q: EventQuery) =>
          (async function* () {
            if (q.follow && outage.on) throw lost();
            // (the reading cut stops too, as one whose connection is gone reads nothing more)
            const stop = new AbortController();
            const it = target.events({ ...q, signal: stop.signal })[Symbol.asyncIterator]();
            try {
              for (;;) {
                const r = await Promise.race([it.next(), new Promise<never>((_, reject) => outage.cuts.push(() => (stop.abort(), reject(lost()))))]);
                if (r.done) return;
                yield r.value;
              }
            } finally {
              void it.return?.();
            }
          })();
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const out: string[] = [];
  const io = { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: () => true }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const ctl = new AbortController();
  const run = main(['tail', '--queue', 'out', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => flaky });
  // Shard 0 ran ahead (see above) and its event is the last shown; then the store goes away.
  const [, fields] = ((await raw.xrevrange(stream(0), '+', '-', 'COUNT', 1)) as Array<[string, string[]]>)[0]!;
  const ahead = `${Date.now() + 3_600_000}-0`;
  await raw.xadd(stream(0), ahead, ...fields);
  await pollUntil(() => out.join('').includes(ahead) || undefined, { what: 'the entry ahead' });
  outage.on = true;
  for (const cut of outage.cuts.splice(0)) cut();
  // Meanwhile jobs on shard 1, whose ids are of now: before the one shown last.
  const before = await raw.xlen(stream(1));
  const added: string[] = [];
  for (let i = 0; (await raw.xlen(stream(1))) === before; i++) added.push((await backend.submit({ workflow: 'w:v1', queue: 'out', tenant_id: `n${i}` })).job.job_id);
  outage.on = false;
  await pollUntil(() => added.every((id) => out.join('').includes(id)) || undefined, { what: 'the events of the jobs submitted during the outage, shard 1 too' });
  ctl.abort();
  expect(await run).toBe(0);
  const lines = out.join('').trim().split('\n');
  expect(new Set(lines).size).toBe(lines.length); // nothing shown twice
  raw.disconnect();
  await backend.close();
});

it("shows each job's events in their order on a queue of several shards, also while the shards' ids disagree", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tsj&shards=3`));
  const raw = new Redis(server.url);
  await backend.submit({ workflow: 'w:v1', queue: 'jobs', tenant_id: 'seed' });
  // Shard 0's ids run an hour ahead: merged by seq, its events would sort after every other shard's.
  const s0 = '{tsj:jobs:0}:ev';
  await raw.xadd(s0, `${Date.now() + 3_600_000}-0`, 'e', JSON.stringify({ type: 'submitted', at: Date.now(), job_id: 'job_01M8QJB537DKTRP0J7VGXPFJX2', queue: 'jobs', tenant_id: 'x', from_state: null, to_state: 'queued', attempt: 0, data: null }));
  // stdout a pipe read only once the jobs have run: their events pile up in the follower, read from
  // the three streams, and come out in the order it puts them in
  const stdout = new PassThrough({ highWaterMark: 1 });
  const out: string[] = [];
  const io = { stdout: Object.assign(stdout, { isTTY: false }), stderr: { isTTY: false, write: () => true }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const ctl = new AbortController();
  const run = main(['tail', '--queue', 'jobs', '--events', '0', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => backend });
  await pollUntil(async () => /^blocked_clients:3/m.test(await raw.info('clients')) || undefined, { what: 'a follower on each shard' });
  const ids: string[] = [];
  // jobs on every shard, run one step at a time, interleaved
  for (let i = 0; i < 12; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'jobs', tenant_id: `t${i}` })).job.job_id);
  for (;;) {
    const leases = await backend.claim({ queue: 'jobs', workerId: 'w', max: 4, leaseMs: 60_000 });
    if (leases.length === 0) break;
    for (const l of leases) await backend.complete(l, null);
  }
  stdout.on('data', (b: Buffer) => out.push(b.toString()));
  const shown = () => out.join('').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; job_id: string; seq: string });
  await pollUntil(() => ids.every((id) => shown().some((e) => e.job_id === id && e.type === 'succeeded')) || undefined, { what: 'every job succeeded' });
  ctl.abort();
  expect(await run).toBe(0);
  for (const id of ids) expect(shown().filter((e) => e.job_id === id).map((e) => e.type)).toEqual(['submitted', 'claimed', 'succeeded']);
  // the jobs were on every shard
  expect(new Set(await Promise.all(ids.map(async (id) => (await raw.get(`tsj:loc:${id}`))!.split('\t')[1]))).size).toBe(3);
  raw.disconnect();
  await backend.close();
});
