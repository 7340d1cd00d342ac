/**
 * A worker on SQS whose Redis job store refuses connections (nothing listens at its port): each
 * claim fails before it can lease anything, as on the Redis backend, and, as there, starts no
 * orphan sweep. It did: the SQS side of the store talks to Redis past the adapter's guard, so its
 * failures were raw ioredis errors, never marked as never sent, and every failed claim was
 * followed by a sweep that failed too (a second error line per claim, a listing of the queue's
 * running jobs after each blip).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { RetryLaterError, createWorker, type WorkerEvent } from '../../src/index.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { freePort } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
beforeAll(async () => {
  sqs = await startSqsServer();
});
afterAll(async () => {
  await sqs?.stop();
});

it('regression: a claim its Redis store refused (never sent) starts no orphan sweep: no second error line, no listing of the running jobs', async () => {
  const store = `redis://127.0.0.1:${await freePort()}?prefix=rs${process.pid}`;
  const url = `sqs://us-east-1/rs${process.pid}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(store)}&autocreate=1&wait=0`;
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url });
  let lists = 0;
  const counting = new Proxy(backend, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (prop === 'list') lists++;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const events: WorkerEvent[] = [];
  const worker = createWorker({ backend: counting, queue: 'refused', handler: async () => 'ok', minIdleMs: 5, maxIdleMs: 20, logger: (e) => void events.push(e) });
  try {
    await worker.start();
    const claimErrors = () => events.filter((e) => e.kind === 'backend_error' && e.op === 'claim');
    await pollUntil(() => claimErrors().length >= 3, { timeoutMs: 30_000, what: 'three refused claims' });
    const first = (claimErrors()[0] as { error: Error }).error;
    expect(first).toBeInstanceOf(RetryLaterError);
    expect(first.message).toContain('ECONNREFUSED');
    expect(events.filter((e) => e.kind === 'backend_error' && e.op !== 'claim')).toEqual([]);
    expect(lists).toBe(0);
  } finally {
    await worker.stop();
    await backend.close();
  }
}, 60_000);
