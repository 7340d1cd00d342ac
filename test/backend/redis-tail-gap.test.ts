/**
 * `agentq tail --follow` on Redis when the queue goes on past the stream cap while the tail cannot
 * read (its connection gone for a while): the events trimmed meanwhile are said on stderr, once,
 * where following resumes, never skipped silently. In-process through `main`, real redis-server.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import type { EventQuery } from '../../src/backend/contract.js';
import { main } from '../../src/cli/main.js';
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

it('says on stderr that events were trimmed while it could not read, then follows on', async () => {
  const real = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tg1&events_maxlen=100`));
  const first = (await real.submit({ workflow: 'w:v1', queue: 'busy' })).job.job_id;
  const outage = { on: false, failed: 0 };
  const flaky = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'events') {
        return (q: EventQuery) => {
          if (q.follow && outage.on) {
            outage.failed++;
            return (async function* () {
              throw new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE');
            })();
          }
          return target.events(q);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: (s: string) => (err.push(s), true) }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const ctl = new AbortController();
  outage.on = true;
  const run = main(['tail', '--queue', 'busy', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => flaky });
  await pollUntil(() => (out.join('').includes(first) && outage.failed > 0) || undefined, { what: 'the first event, then a failed follow read' });
  // The queue goes on past the cap while the tail cannot read.
  for (let i = 0; i < 400; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => real.submit({ workflow: 'w:v1', queue: 'busy', tenant_id: `t${i + k}` })));
  const last = (await real.submit({ workflow: 'w:v1', queue: 'busy' })).job.job_id;
  outage.on = false;
  await pollUntil(() => out.join('').includes(last) || undefined, { what: 'the last event after the store answers' });
  ctl.abort();
  expect(await run).toBe(0);
  const lines = out.join('').trim().split('\n');
  for (const l of lines) JSON.parse(l); // stdout stays one event per line
  const warnings = err.join('').split('\n').filter((l) => l.startsWith('warning: tail: events of'));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/^warning: tail: events of queue busy after seq \d+-\d+ were trimmed from the store before they were read; some may be missing \(the stream keeps the last events_maxlen per shard\); going on from seq \d+-\d+$/);
  expect(lines.length).toBeLessThan(402);
  // and a program reading stdout sees the hole where it is: how many is not known after an outage
  const gaps = lines.map((l) => JSON.parse(l) as { type: string }).filter((r) => r.type === 'gap');
  expect(gaps).toEqual([{ type: 'gap', gap: { queue: 'busy', shard: 0, job_id: null, after_seq: expect.stringMatching(/^\d+-\d+$/), resumed_seq: expect.stringMatching(/^\d+-\d+$/), lost: null } }]);
  await real.close();
});

it('-o ndjson --follow puts a gap record on stdout where events were trimmed before a slow reader got them, counted', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tg2&events_maxlen=100`), { followBuffer: 5 });
  // stdout a pipe nobody reads yet: once it holds the first event the tail waits for it to drain,
  // and the backend reads at most 5 events ahead of it
  const stdout = new PassThrough({ highWaterMark: 1 });
  const err: string[] = [];
  const io = { stdout: Object.assign(stdout, { isTTY: false }), stderr: { isTTY: false, write: (s: string) => (err.push(s), true) }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const ctl = new AbortController();
  const run = main(['tail', '--queue', 'slow', '--events', '0', '--follow', '-o', 'ndjson'], { io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => backend });
  await pollUntil(() => err.join('').includes('waiting for its events') || undefined, { what: 'the tail following' });
  const first = (await backend.submit({ workflow: 'w:v1', queue: 'slow', tenant_id: 'first' })).job.job_id;
  await pollUntil(() => stdout.writableNeedDrain || undefined, { what: 'the first event written, the pipe full' });
  const MORE = 400;
  for (let i = 0; i < MORE; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => backend.submit({ workflow: 'w:v1', queue: 'slow', tenant_id: `t${i + k}` })));
  const last = (await backend.submit({ workflow: 'w:v1', queue: 'slow', tenant_id: 'last' })).job.job_id;
  let text = '';
  stdout.on('data', (b: Buffer) => (text += b.toString()));
  await pollUntil(() => text.includes(last) || undefined, { what: 'the last event' });
  ctl.abort();
  expect(await run).toBe(0);
  const records = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records[0]).toMatchObject({ type: 'submitted', job_id: first });
  const gaps = records.filter((r) => r.type === 'gap');
  const events = records.filter((r) => r.type !== 'gap');
  expect(gaps.length).toBeGreaterThan(0);
  for (const g of gaps) {
    // nothing of an event's shape: a consumer reading .seq, .job_id or .at gets null
    expect(Object.keys(g).sort()).toEqual(['gap', 'type']);
    expect(g.gap).toEqual({ queue: 'slow', shard: 0, job_id: null, after_seq: expect.stringMatching(/^\d+-\d+$/), resumed_seq: expect.stringMatching(/^\d+-\d+$/), lost: expect.any(Number) });
    // just before the first event after the hole
    const at = records.indexOf(g);
    expect(records[at + 1]).toMatchObject({ seq: (g.gap as { resumed_seq: string }).resumed_seq });
  }
  // every event either shown or counted in a gap record, none twice
  expect(new Set(events.map((e) => e.seq)).size).toBe(events.length);
  expect(events.length + gaps.reduce((n, g) => n + (g.gap as { lost: number }).lost, 0)).toBe(MORE + 2);
  // stderr still says it, for the human watching
  expect(err.join('').split('\n').filter((l) => /^warning: tail: \d+ events of queue slow after seq/.test(l))).toHaveLength(gaps.length);
  await backend.close();
});

it("-o json of a job whose earliest events were trimmed from its history starts the array with a gap record", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=tg3&shards=2`));
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'long', tenant_id: 'a' });
  const [lease] = await backend.claim({ queue: 'long', workerId: 'w', max: 1, leaseMs: 60_000 });
  // 201 events: the job's history keeps its last 200
  for (let i = 0; i < 199; i++) await backend.checkpoint(lease!, { step: i });
  const out: string[] = [];
  const io = { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: () => true }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  expect(await main(['tail', '--job', job.job_id, '-o', 'json'], { io, env: {}, cwd: process.cwd(), openBackend: async () => backend })).toBe(0);
  const records = JSON.parse(out.join('')) as Array<{ type: string; seq?: string }>;
  expect(records).toHaveLength(201);
  expect(records[0]).toEqual({ type: 'gap', gap: { queue: 'long', shard: expect.any(Number), job_id: job.job_id, after_seq: null, resumed_seq: records[1]!.seq, lost: null } });
  expect(records[1]!.type).toBe('claimed');
  await backend.close();
});
