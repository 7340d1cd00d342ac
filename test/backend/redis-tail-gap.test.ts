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
  await real.close();
});
