/**
 * A worker on SQS whose SQS freezes (SIGSTOP: connections accepted, never answered) while its job
 * store answers. A heartbeat extended the lease in the store, then waited for SQS to extend the
 * message's visibility: with a frozen SQS for its time-outs (3 x 30 s by default), so the cancel
 * the store had answered at once reached the handler only then, and no further heartbeat went out
 * meanwhile (the lease in the store could run out under a healthy worker). Now the heartbeat
 * answers with the store's result after a short wait for SQS, and the extension goes on behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultCredentials } from '../../src/backend/sqs/credentials.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { createWorker, type WorkerEvent } from '../../src/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let dir: string;
let frozen = false;
beforeAll(async () => {
  server = await startSqsServer();
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-frozen-hb-'));
});
afterAll(async () => {
  if (frozen) server?.signal('SIGCONT');
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('SQS frozen: a cancel reaches the running job at its next heartbeat, not once SQS calls time out', async () => {
  const url = sqsUrl(server.endpoint, `fh${process.pid}`, join(dir, 'store.db'), '&wait=0&autocreate=1');
  // SQS calls time out only after 10 minutes here: whatever waits on a frozen SQS waits that long.
  const dataPlane = new SqsWireClient(
    { credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) },
    { region: 'us-east-1', endpoint: server.endpoint, socketTimeoutMs: 600_000, maxAttempts: 1 },
  );
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane });
  const events: WorkerEvent[] = [];
  let aborted = false;
  const worker = createWorker({
    backend,
    queue: 'fh',
    leaseMs: 60_000,
    heartbeatMs: 100,
    minIdleMs: 20,
    maxIdleMs: 100,
    handler: async (_env, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      aborted = true;
      throw ctx.signal.reason;
    },
    logger: (e) => void events.push(e),
  });
  try {
    const { job } = await backend.submit({ workflow: 'noop:v1', queue: 'fh' });
    await backend.workerPreflight('fh');
    await worker.start();
    await pollUntil(() => events.some((e) => e.kind === 'claimed'), { what: 'the job to be claimed' });
    server.signal('SIGSTOP');
    frozen = true;
    // Heartbeats go on extending the lease in the store, one after another.
    const expiry = async () => (await backend.get(job.job_id))!.lease!.expires_at;
    const e0 = await expiry();
    let e1 = e0;
    await pollUntil(async () => (e1 = await expiry()) !== e0, { timeoutMs: 15_000, what: 'a heartbeat while SQS is frozen' });
    await pollUntil(async () => (await expiry()) !== e1, { timeoutMs: 15_000, what: 'another heartbeat while SQS is frozen' });
    expect((await backend.cancel(job.job_id, 'customer withdrew')).status).toBe('cancel_requested');
    await pollUntil(() => aborted, { timeoutMs: 15_000, what: 'the handler to see the cancel' });
    await pollUntil(async () => (await backend.get(job.job_id))?.state === 'cancelled', { timeoutMs: 15_000, what: 'the job to end cancelled' });
  } finally {
    if (frozen) {
      server.signal('SIGCONT');
      frozen = false;
    }
    await worker.stop();
    await backend.close();
    dataPlane.destroy();
  }
}, 60_000);
