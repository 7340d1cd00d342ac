/**
 * A damaged entry in a Redis event stream or a job's history (not JSON, or no time: written by
 * another program, hand-edited) is one event that cannot be shown, not the end of `tail` or
 * `inspect`: it is skipped with a warning naming where it is, and the events around it are shown.
 * It ended the command with "internal error … This is a bug in agentq" (a `tail --follow` too).
 */
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { main } from '../../src/cli/main.js';
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

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: (s: string) => (err.push(s), true) }, stdin: Object.assign(new PassThrough(), { isTTY: false }) },
  };
}

it('tail skips a damaged stream entry with a warning and shows the events around it', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=de1`));
  const a = (await backend.submit({ workflow: 'w:v1', queue: 'dq', tenant_id: 'a' })).job.job_id;
  const bad1 = await raw.xadd('{de1:dq:0}:ev', '*', 'e', 'not json');
  const bad2 = await raw.xadd('{de1:dq:0}:ev', '*', 'e', '{"type":"submitted","at":"x"}');
  const b = (await backend.submit({ workflow: 'w:v1', queue: 'dq', tenant_id: 'b' })).job.job_id;
  for (const args of [[], ['--since', '1h'], ['--events', 'all']]) {
    const t = io();
    // (each command closes the backend it opened)
    const open = async () => new RedisBackend(parseRedisUrl(`${server.url}?prefix=de1`));
    expect(await main(['tail', '--queue', 'dq', '-o', 'ndjson', ...args], { io: t.io, env: {}, cwd: process.cwd(), openBackend: open })).toBe(0);
    expect(t.out.join('').trim().split('\n').map((l) => (JSON.parse(l) as { job_id: string }).job_id)).toEqual([a, b]);
    const warnings = t.err.join('').trim().split('\n');
    expect(warnings).toEqual([
      `warning: tail: event ${bad1} of queue dq is damaged (not JSON): skipped`,
      `warning: tail: event ${bad2} of queue dq is damaged (its time "at" is not a time in epoch ms): skipped`,
    ]);
  }
  await backend.close();
});

it('tail --follow goes on past a damaged entry', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=de2`));
  await backend.submit({ workflow: 'w:v1', queue: 'fq', tenant_id: 'a' });
  const t = io();
  const ctl = new AbortController();
  const run = main(['tail', '--queue', 'fq', '--follow', '-o', 'ndjson'], { io: t.io, env: {}, cwd: process.cwd(), signal: ctl.signal, openBackend: async () => backend });
  await pollUntil(() => t.out.length > 0 || undefined, { what: 'the first event' });
  const bad = await raw.xadd('{de2:fq:0}:ev', '*', 'e', '[1,2');
  const b = (await backend.submit({ workflow: 'w:v1', queue: 'fq', tenant_id: 'b' })).job.job_id;
  await pollUntil(() => t.out.join('').includes(b) || undefined, { what: 'the event after the damaged one' });
  ctl.abort();
  expect(await run).toBe(0);
  expect(t.err.join('')).toContain(`warning: tail: event ${bad} of queue fq is damaged (not JSON): skipped`);
  await backend.close();
});

it("inspect and tail --job skip a damaged line of the job's history with a warning", async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=de3`));
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'hq', tenant_id: 'a' });
  // the history list beside the inline slots, as the scripts write it: '<seq>|<event JSON>'
  await raw.rpush(`{de3:hq:0}:h:${job.job_id}`, `${Date.now() + 1}-0|{"oops"`);
  await backend.cancel(job.job_id, null);
  const t = io();
  const open = async () => new RedisBackend(parseRedisUrl(`${server.url}?prefix=de3`));
  expect(await main(['inspect', job.job_id, '-o', 'plain'], { io: t.io, env: {}, cwd: process.cwd(), openBackend: open })).toBe(0);
  expect(t.out.join('')).toMatch(/# recent events \(2\)/);
  expect(t.err.join('')).toMatch(new RegExp(`^warning: inspect: event \\d+-0 of job ${job.job_id} is damaged \\(not JSON\\): skipped\\n$`));
  const t2 = io();
  expect(await main(['tail', '--job', job.job_id, '-o', 'ndjson'], { io: t2.io, env: {}, cwd: process.cwd(), openBackend: open })).toBe(0);
  expect(t2.out.join('').trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['submitted', 'cancelled']);
  expect(t2.err.join('')).toMatch(/^warning: tail: event \d+-0 of job \S+ is damaged \(not JSON\): skipped\n$/);
  await backend.close();
});

it('a stored entry of another program whose type is "gap" is damaged: never written as a gap record, nor dropped silently', async () => {
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=de4`));
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'gq', tenant_id: 'a' });
  const odd = await raw.xadd('{de4:gq:0}:ev', '*', 'e', JSON.stringify({ type: 'gap', at: Date.now(), job_id: job.job_id, queue: 'gq', tenant_id: 'a', from_state: null, to_state: null, attempt: 0, data: null }));
  for (const format of ['plain', 'ndjson']) {
    const t = io();
    const open = async () => new RedisBackend(parseRedisUrl(`${server.url}?prefix=de4`));
    expect(await main(['tail', '--queue', 'gq', '-o', format], { io: t.io, env: {}, cwd: process.cwd(), openBackend: open })).toBe(0);
    expect(t.out.join('').trim().split('\n')).toHaveLength(1);
    expect(t.out.join('')).not.toMatch(/gap/);
    expect(t.err.join('')).toBe(`warning: tail: event ${odd} of queue gq is damaged ("gap" is not an event type): skipped\n`);
  }
  await backend.close();
});
