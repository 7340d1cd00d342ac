/**
 * A job that dies while SQS is frozen: its DLQ copy is sent behind. A worker that stops (and its
 * backend's close) before SQS answers gives that send up, but SQS may still carry it out once it
 * answers again (the request was in its socket), unknown to the store; the job's message then
 * comes back and is buried again, so the SQS DLQ held two copies of one entry, each counted by
 * alarms on its depth, and every sweep put both back. A sweep now keeps one copy per entry.
 * In one process there is no such doubt: a dead job's message received while the worker's own
 * burial of it was still waiting on SQS was buried a second time beside it (two copies); it is now
 * buried after that burial, and then only deleted, its copy being confirmed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultCredentials } from '../../src/backend/sqs/credentials.js';
import type { SqsDataPlane } from '../../src/backend/sqs/data-plane.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { createWorker, HandlerError, type WorkerEvent } from '../../src/index.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { TestServers } from '../support/servers.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
let dir: string;
let frozen = false;
const servers = new TestServers();
beforeAll(async () => {
  sqs = await servers.start(startSqsServer());
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-dlq-once-'));
});
afterAll(async () => {
  if (frozen) sqs?.signal('SIGCONT');
  await servers.stopAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function open(prefix: string): SqsBackend {
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(`sqlite:${join(dir, `${prefix}.db`)}`)}&wait=0&autocreate=1`;
  return new SqsBackend({ url: parseSqsUrl(url, url), shown: url });
}

it('a job that died while SQS was frozen, its worker stopped before SQS answered: the SQS DLQ holds its copy once', async () => {
  const queue = `once${process.pid}`;
  const backend = open(queue);
  const events: WorkerEvent[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const worker = createWorker({
    backend,
    queue,
    concurrency: 1,
    leaseMs: 3_000,
    heartbeatMs: 500,
    gracefulMs: 500,
    minIdleMs: 20,
    maxIdleMs: 100,
    handler: async () => {
      await finished;
      throw new HandlerError('BAD_INPUT', 'cannot be done', { retryable: false });
    },
    logger: (e) => void events.push(e),
  });
  const { job } = await backend.submit({ workflow: 'noop:v1', queue });
  await backend.workerPreflight(queue);
  await worker.start();
  await pollUntil(() => events.some((e) => e.kind === 'claimed'), { what: 'the job to be claimed' });
  sqs.signal('SIGSTOP');
  frozen = true;
  finish();
  await pollUntil(() => events.some((e) => e.kind === 'failed' && e.outcome === 'dead'), { timeoutMs: 15_000, what: 'the job to die' });
  await worker.stop();
  await backend.close();
  sqs.signal('SIGCONT');
  frozen = false;

  const later = open(queue);
  try {
    const sourceUrl = (await later.sqsQueues.sourceUrl(queue, job.class))!;
    const dlqUrl = (await later.sqsQueues.dlqUrl(queue))!;
    const data = later.sqsQueues['data'];
    const held = async (url: string) => {
      const a = (await data.getQueueAttributes({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] })).Attributes ?? {};
      return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
    };
    // SQS carried out the send the stopped worker gave up on, unknown to the store.
    await pollUntil(async () => (await held(dlqUrl)) === 1, { what: 'the abandoned DLQ send to land once SQS answers' });
    expect((await later.ext.delivery(job.job_id))?.dlq_sent_at).toBeNull();
    // The job's message comes back (its lease's visibility over) to a worker busy with another
    // job of its class, and is buried: a second copy, since SQS cannot tell it has one.
    await later.submit({ workflow: 'noop:v1', queue });
    await pollUntil(
      async () => {
        await later.claim({ queue, workerId: 'w2', workerVersion: null, max: 1, leaseMs: 60_000 });
        return (await later.ext.delivery(job.job_id))?.dlq_sent_at != null;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: "the dead job's message to come back and be buried" },
    );
    await pollUntil(async () => (await held(dlqUrl)) === 2, { what: 'the second copy' });
    // A sweep keeps one copy of the entry and deletes the other.
    const report = await later.sweepDlq(queue);
    expect(report).toMatchObject({ received: 2, mirror_kept: 1, duplicate_copies: 1, deleted: 1, custody: [] });
    expect(await held(dlqUrl)).toBe(1);
    expect((await later.dlqGet(job.job_id))?.job_id).toBe(job.job_id);
    // and a second sweep leaves that one in place
    expect(await later.sweepDlq(queue)).toMatchObject({ received: 1, mirror_kept: 1, duplicate_copies: 0, deleted: 0 });
  } finally {
    await later.close();
  }
}, 60_000);

it('a dead job\'s message received while the worker\'s own burial of it is still going on behind: the SQS DLQ gets one copy', async () => {
  const queue = `race${process.pid}`;
  const url = `sqs://us-east-1/${queue}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(`sqlite:${join(dir, `${queue}.db`)}`)}&wait=0&autocreate=1`;
  const wire = new SqsWireClient({ credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) }, { region: 'us-east-1', endpoint: sqs.endpoint });
  // The first send to the DLQ (the worker's burial of the job) is held until the test lets it go: SQS slow to answer it.
  let letGo!: () => void;
  const held = new Promise<void>((r) => (letGo = r));
  let dlqSends = 0;
  const dataPlane: SqsDataPlane = Object.assign(Object.create(wire) as SqsDataPlane, {
    sendMessageBatch: async (input: Parameters<SqsDataPlane['sendMessageBatch']>[0]) => {
      if (input.QueueUrl?.endsWith('-dlq') && dlqSends++ === 0) await held;
      return wire.sendMessageBatch(input);
    },
  });
  // (visibility 0: the job's message is visible again at once, as once its lease's visibility ends)
  const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane, maxVisibilitySeconds: 0 });
  try {
    const { job } = await b.submit({ workflow: 'noop:v1', queue });
    const [lease] = await b.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
    const firstReceived = (await b.ext.delivery(job.job_id))!.received_at;
    expect((await b.fail(lease!, { code: 'BAD_INPUT', message: 'cannot be done', retryable: false })).kind).toBe('dead');
    expect(dlqSends).toBe(1);
    // Another job of the class: a claim receives the dead job's message too while its burial waits on SQS.
    await b.submit({ workflow: 'noop:v1', queue });
    const claiming = b.claim({ queue, workerId: 'w2', max: 2, leaseMs: 60_000 });
    await pollUntil(async () => (await b.ext.delivery(job.job_id))!.received_at > firstReceived, { what: 'the dead job\'s message to be received again' });
    letGo();
    expect(await claiming).toHaveLength(1);
    await b.brokerWorkBehind().settled;
    const dlqUrl = (await b.sqsQueues.dlqUrl(queue))!;
    const a = (await wire.getQueueAttributes({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] })).Attributes ?? {};
    expect(Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0)).toBe(1);
    // and the dead job's message is gone: only the other job's is left
    const sourceUrl = (await b.sqsQueues.sourceUrl(queue, job.class))!;
    const s = (await wire.getQueueAttributes({ QueueUrl: sourceUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] })).Attributes ?? {};
    expect(Number(s.ApproximateNumberOfMessages ?? 0) + Number(s.ApproximateNumberOfMessagesNotVisible ?? 0)).toBe(1);
  } finally {
    letGo();
    await b.close();
    wire.destroy();
  }
}, 60_000);
