/**
 * A worker on SQS whose broker goes away while its job store (SQLite) answers: fauxqs stopped, then
 * started again on its port. The worker's store watch called that "the store is unavailable", and
 * took any answer of the job store (the orphan sweep's list, right after each failed claim) for
 * recovery: "the store answers again (after 150ms)", then the same two lines again every 10 s for
 * as long as SQS was away. Now: the broker is named (SQS at its endpoint), said once, and said back
 * only once SQS itself answers. (The store answers here are the heartbeats of a running job: a
 * claim that failed at SQS starts no orphan sweep any more, see sqs-broker-down-sweep.test.ts.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { BrokerUnavailableError, createWorker, type WorkerEvent } from '../../src/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let dir: string;
beforeAll(async () => {
  server = await startSqsServer();
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-broker-'));
});
afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('SQS down, its job store fine: one "SQS at ENDPOINT is unavailable", no recovery until SQS answers, then one', async () => {
  const url = sqsUrl(server.endpoint, `bo${process.pid}`, join(dir, 'store.db'), '&wait=0');
  const backend = (await openBackend(url)) as SqsBackend;
  await backend.setup(['bo']);
  await backend.workerPreflight('bo');
  const { job: held } = await backend.submit({ workflow: 'noop:v1', queue: 'bo' });
  let release!: () => void;
  const holding = new Promise<void>((r) => (release = r));

  // The job store's answers the worker gets while SQS is away (the heartbeats of the held job).
  let heartbeats = 0;
  const counted = new Proxy(backend as Backend, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      if (prop !== 'heartbeat') return (v as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        heartbeats++;
        return r;
      };
    },
  });
  const events: WorkerEvent[] = [];
  const worker = createWorker({
    backend: counted,
    queue: 'bo',
    concurrency: 2,
    leaseMs: 60_000,
    heartbeatMs: 50,
    minIdleMs: 20,
    maxIdleMs: 100,
    handler: async (env) => {
      if (env.job_id === held.job_id) await holding;
      return 'ok';
    },
    logger: (e) => void events.push(e),
  });
  const outage = () => events.filter((e) => /^(store|broker)_(un)?available$/.test(e.kind));
  const failedClaims = () => events.filter((e) => e.kind === 'backend_error' && e.op === 'claim').length;
  try {
    await worker.start();
    await pollUntil(() => events.some((e) => e.kind === 'claimed'), { what: 'the held job to run' });
    await server.stop();
    const { job } = await backend.submit({ workflow: 'noop:v1', queue: 'bo' }); // waits in the outbox
    const answeredBefore = heartbeats;
    await pollUntil(() => heartbeats >= answeredBefore + 2 && failedClaims() >= 3, { what: 'failed claims and answered heartbeats' });
    expect(outage()).toEqual([{ kind: 'broker_unavailable', broker: `SQS at ${server.endpoint}`, error: expect.any(BrokerUnavailableError) }]);

    server = await startSqsServer({ port: server.port });
    await backend.setup(['bo']);
    await pollUntil(() => outage().length >= 2, { timeoutMs: 20_000, what: 'the broker back' });
    await backend.relayOutbox({ now: true });
    await pollUntil(async () => (await backend.get(job.job_id))?.state === 'succeeded', { timeoutMs: 20_000, what: 'the job to run' });
    release();
    await pollUntil(async () => (await backend.get(held.job_id))?.state === 'succeeded', { timeoutMs: 20_000, what: 'the held job to finish' });
    expect(outage()).toEqual([
      { kind: 'broker_unavailable', broker: `SQS at ${server.endpoint}`, error: expect.any(BrokerUnavailableError) },
      { kind: 'broker_available', broker: `SQS at ${server.endpoint}`, downMs: expect.any(Number) },
    ]);
  } finally {
    release();
    await worker.stop();
    await backend.close();
  }
}, 60_000);
