/**
 * A worker on SQS whose broker is down (fauxqs stopped) or frozen (SIGSTOP: connections accepted,
 * never answered) while its job store (SQLite) answers. Each claim fails at ReceiveMessage, before
 * any message reached the store's `consider`, so it cannot have leased a job: there is no orphan
 * to look for. The worker still ran its orphan sweep after every such claim, listing all the
 * queue's running jobs in the store once per failed claim for as long as SQS was away (N workers:
 * N listings per back-off), load on the one system that was fine. Now such a failure says no lease
 * can have been taken (`notSent`), and the sweep runs only after a claim that may have leased.
 * A running job keeps its lease meanwhile and finishes once SQS is back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultCredentials } from '../../src/backend/sqs/credentials.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { ManualClock } from '../../src/core/clock.js';
import { wasNotSent } from '../../src/core/errors.js';
import { createWorker, RetryLaterError, type WorkerEvent } from '../../src/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let dir: string;
let frozen = false;
let stopped = false;
beforeAll(async () => {
  server = await startSqsServer();
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-down-sweep-'));
});
afterAll(async () => {
  if (frozen) server?.signal('SIGCONT');
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

for (const how of ['stopped', 'frozen'] as const) {
  it(`SQS ${how}, its job store fine: failed claims start no orphan sweep, and the running job keeps its lease and finishes once SQS is back`, async () => {
    const queue = `ds${how}`;
    const url = sqsUrl(server.endpoint, `ds${process.pid}${how}`, join(dir, `${how}.db`), '&wait=0&autocreate=1');
    // One try per call, a short time-out: a frozen SQS fails each call in 300 ms, not 3 x 30 s.
    const dataPlane = new SqsWireClient(
      { credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) },
      { region: 'us-east-1', endpoint: server.endpoint, socketTimeoutMs: 300, maxAttempts: 1 },
    );
    const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane });
    let lists = 0;
    const counted = new Proxy(backend, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop === 'list') lists++;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    let finish!: () => void;
    const held = new Promise<void>((r) => (finish = r));
    const events: WorkerEvent[] = [];
    const worker = createWorker({
      backend: counted,
      queue,
      concurrency: 2,
      leaseMs: 60_000,
      minIdleMs: 20,
      maxIdleMs: 100,
      handler: async () => {
        await held;
        return 'done';
      },
      logger: (e) => void events.push(e),
    });
    const failedClaims = () => events.filter((e) => e.kind === 'backend_error' && e.op === 'claim') as Array<{ error: unknown }>;
    try {
      const { job } = await backend.submit({ workflow: 'noop:v1', queue });
      await backend.workerPreflight(queue); // the queue URLs are known before SQS goes away
      await worker.start();
      await pollUntil(() => events.some((e) => e.kind === 'claimed'), { what: 'the job to be claimed' });
      const running = (await backend.get(job.job_id))!;
      expect(running.state).toBe('running');

      if (how === 'stopped') {
        await server.stop();
        stopped = true;
      } else {
        server.signal('SIGSTOP');
        frozen = true;
      }
      const listsBefore = lists;
      await pollUntil(() => failedClaims().length >= 4, { timeoutMs: 30_000, what: 'failed claims' });
      const error = failedClaims()[0]!.error;
      expect(error).toBeInstanceOf(RetryLaterError);
      // Nothing could have been leased: said so, and no sweep listed the store's running jobs.
      expect({ notSent: wasNotSent(error), lists: lists - listsBefore }).toEqual({ notSent: true, lists: 0 });
      expect(events.filter((e) => e.kind === 'backend_error' && e.op === 'orphan sweep')).toEqual([]);
      expect(events.filter((e) => e.kind === 'orphan_released')).toEqual([]);
      // The running job was left alone: same lease, same fence.
      expect((await backend.get(job.job_id))!).toMatchObject({ state: 'running', lease: { fence: running.lease!.fence } });

      if (how === 'stopped') {
        server = await startSqsServer({ port: server.port });
        stopped = false;
      } else {
        server.signal('SIGCONT');
        frozen = false;
      }
      finish();
      await pollUntil(async () => (await backend.get(job.job_id))?.state === 'succeeded', { timeoutMs: 20_000, what: 'the job to finish' });
      expect((await backend.get(job.job_id))!.attempts).toHaveLength(1);
    } finally {
      finish();
      if (frozen) {
        server.signal('SIGCONT');
        frozen = false;
      }
      if (stopped) {
        server = await startSqsServer({ port: server.port });
        stopped = false;
      }
      await worker.stop();
      await backend.close();
      dataPlane.destroy();
    }
  }, 60_000);
}

it('a claim whose SQS failed after a consider leased a job still says it may have leased: that orphan is what the sweep is for', async () => {
  const url = sqsUrl(server.endpoint, `dl${process.pid}`, join(dir, 'leased.db'), '&wait=0&autocreate=1');
  const dataPlane = new SqsWireClient(
    { credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) },
    { region: 'us-east-1', endpoint: server.endpoint, maxAttempts: 1 },
  );
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane, clock: new ManualClock(), maxVisibilitySeconds: 0 });
  try {
    // One job per class: the claim receives from the interactive queue (and leases), then from the batch queue.
    await backend.submit({ workflow: 'noop:v1', queue: 'q', class: 'interactive' });
    await backend.submit({ workflow: 'noop:v1', queue: 'q', class: 'batch' });
    const receive = dataPlane.receiveMessage.bind(dataPlane);
    let receives = 0;
    dataPlane.receiveMessage = async (input) => {
      if (++receives === 1) return receive(input);
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    };
    const err = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(RetryLaterError);
    expect(wasNotSent(err)).toBe(false);
    expect((await backend.list({ queue: 'q', states: ['running'] }, { limit: 10, cursor: null })).items).toHaveLength(1);
  } finally {
    await backend.close();
    dataPlane.destroy();
  }
});
