/**
 * A worker on SQS whose Redis job store refuses connections (nothing listens at its port): each
 * claim fails before it can lease anything, as on the Redis backend, and, as there, starts no
 * orphan sweep. It did: the SQS side of the store talks to Redis past the adapter's guard, so its
 * failures were raw ioredis errors, never marked as never sent, and every failed claim was
 * followed by a sweep that failed too (a second error line per claim, a listing of the queue's
 * running jobs after each blip).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { wasNotSent } from '../../src/core/errors.js';
import { RetryLaterError, createWorker, type WorkerEvent } from '../../src/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
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

/** A store call that failed without reaching the store (as RedisBackend.guard marks one). */
function neverSent(): RetryLaterError {
  const e = new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE');
  e.notSent = true;
  return e;
}

it('a claim whose store call failed unsent says so only while no lease can have been taken: after a consider that leased, the failure may have left an orphan', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-unsent-'));
  const url = sqsUrl(sqs.endpoint, `us${process.pid}`, join(dir, 'store.db'), '&autocreate=1&wait=0');
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock: new ManualClock(), maxVisibilitySeconds: 0 });
  try {
    for (let i = 0; i < 2; i++) await backend.submit({ workflow: 'noop:v1', queue: 'q' });
    const ext = backend.ext;
    const consider = ext.consider.bind(ext);
    const claim = () => backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 }).then(() => null, (e: unknown) => e);
    // The first consider is refused: nothing leased, the failure is still "never sent".
    (ext as { consider: typeof consider }).consider = async () => Promise.reject(neverSent());
    const first = await claim();
    expect(first).toBeInstanceOf(RetryLaterError);
    expect(wasNotSent(first)).toBe(true);
    // One consider leases a job, the next is refused: the claim fails with a lease taken (an orphan).
    let calls = 0;
    (ext as { consider: typeof consider }).consider = async (...a: Parameters<typeof consider>) => (++calls === 1 ? consider(...a) : Promise.reject(neverSent()));
    const second = await claim();
    expect(second).toBeInstanceOf(RetryLaterError);
    expect(wasNotSent(second)).toBe(false);
    expect((await backend.list({ queue: 'q', states: ['running'] }, { limit: 10, cursor: null })).items).toHaveLength(1);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
