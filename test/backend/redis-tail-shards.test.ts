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
