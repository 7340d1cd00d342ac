/**
 * The package's public entry (src/index.ts): a producer and a worker written
 * the way the README shows, each opening the store from a URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createClient, createWorker, HandlerError, VERSION, type Backend, type WorkerEvent } from '../../src/index.js';
import { pollUntil } from '../support/poll.js';

let dir: string;
let client: Backend;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-lib-'));
  client = await createClient({ url: `sqlite:${join(dir, 'store.db')}` });
});
afterEach(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

it('createClient submits; a createWorker opened from the same URL processes and closes its own store', async () => {
  expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  const ok = (await client.submit({ workflow: 'lib:v1', queue: 'lib', input: 'fine' })).job;
  const bad = (await client.submit({ workflow: 'lib:v1', queue: 'lib', input: 'bad' })).job;
  const events: WorkerEvent[] = [];
  const worker = createWorker({
    url: `sqlite:${join(dir, 'store.db')}`,
    queue: 'lib',
    workerVersion: 'lib-1',
    handler: async (job) => {
      if (job.input === 'bad') throw new HandlerError('VALIDATION', 'bad input');
      return { echoed: job.input };
    },
    logger: (e) => events.push(e),
  });
  await worker.start();
  await pollUntil(async () => (await client.get(bad.job_id))?.state === 'dead', { what: 'bad job dead' });
  await pollUntil(async () => (await client.get(ok.job_id))?.state === 'succeeded', { what: 'ok job succeeded' });
  await worker.stop();
  await worker.done;
  expect(JSON.parse((await client.get(ok.job_id))!.result!)).toEqual({ echoed: 'fine' });
  expect((await client.dlqGet(bad.job_id))).toMatchObject({ error_code: 'VALIDATION', worker_version: 'lib-1' });
  expect(events.at(-1)).toEqual({ kind: 'stopped' });
});

it('refuses options that cannot work, naming the rule', () => {
  const handler = () => null;
  expect(() => createWorker({ queue: 'q', handler })).toThrow(/either `backend` or `url`/);
  expect(() => createWorker({ url: 'sqlite::memory:', queue: 'bad queue!', handler })).toThrow(/not a valid queue name/);
  expect(() => createWorker({ url: 'sqlite::memory:', queue: 'q', handler, concurrency: 0 })).toThrow(/concurrency must be/);
  expect(() => createWorker({ url: 'sqlite::memory:', queue: 'q', handler, leaseMs: 1000, heartbeatMs: 1000 })).toThrow(
    /heartbeatMs must be less than leaseMs/,
  );
});
