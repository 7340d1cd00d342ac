/**
 * A running job whose message SQS moved to the DLQ by its RedrivePolicy while its worker still
 * holds a live lease (the message came back and was received maxReceiveCount times because its
 * visibility could not be extended: a worker cut off from SQS but not from its store, SQS frozen
 * and thawed several times over a long job). `agentq sqs sweep` took the envelope into custody
 * and ended the job dead (reason custody) under its live worker, whose work was then refused
 * (lease lost): a job ended because its message was out of reach, not because it failed. Now the
 * sweep leaves a job with a live lease running and puts its message back in its source queue
 * (receive count 0); once received, that message carries the job again (heartbeats hide it, the
 * ending deletes it). A job whose lease has run out still goes dead as before (its worker is gone).
 * On both job stores (SQLite, Redis).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let redis: RedisServer;
let raw: SQSClient;
let dir: string;
beforeAll(async () => {
  [server, redis] = await Promise.all([startSqsServer(), startRedisServer()]);
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
  dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-backstop-'));
});
afterAll(async () => {
  raw?.destroy();
  await Promise.all([server?.stop(), redis?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function depth(name: string): Promise<number> {
  const url = (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed);
}

let seq = 0;
const stores: Array<[string, (prefix: string) => string, boolean]> = [
  ['SQLite', (prefix) => `sqlite:${join(dir, `${prefix}.db`)}`, false],
  ['Redis', (prefix) => `${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=${prefix}`, false],
  ['SQLite, FIFO queues (fifo=job)', (prefix) => `sqlite:${join(dir, `${prefix}.db`)}`, true],
];

for (const [storeName, storeFor, fifo] of stores) {
  describe(`${storeName} job store`, () => {
    const open = (clock: ManualClock) => {
      const prefix = `bs${process.pid}x${++seq}`;
      const store = storeFor(prefix);
      const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(server.endpoint)}&store=${encodeURIComponent(store)}&autocreate=1&wait=0&max_receive_count=3${fifo ? '&fifo=job' : ''}`;
      return { prefix, backend: new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock }) };
    };

    /** The job's message, received and never deleted until SQS moves it to the DLQ (maxReceiveCount 3). */
    async function driveToDlq(b: SqsBackend, prefix: string, jobId: string): Promise<void> {
      const src = (await raw.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'q', 'batch', fifo) }))).QueueUrl!;
      const d = (await b.ext.delivery(jobId))!;
      // Its visibility was not extended: the message is visible again.
      await raw.send(new ChangeMessageVisibilityCommand({ QueueUrl: src, ReceiptHandle: d.receipt, VisibilityTimeout: 0 }));
      for (let i = 0; i < 3; i++) await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
      expect(await depth(dlqName(prefix, 'q', fifo))).toBe(1);
    }

    it('a live lease: the sweep leaves the job running, its message back in the source queue, and the worker finishes it', async () => {
      const clock = new ManualClock();
      const { prefix, backend: b } = open(clock);
      try {
        const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
        expect(lease!.jobId).toBe(job.job_id);
        await driveToDlq(b, prefix, job.job_id);

        const report = await b.sweepDlq('q');
        expect(report.custody).toEqual([expect.objectContaining({ job_id: job.job_id, kind: 'agentq', recorded: 'requeued' })]);
        expect(report).toMatchObject({ requeued: 1, deleted: 1 });
        expect(await depth(dlqName(prefix, 'q', fifo))).toBe(0);
        expect(await b.get(job.job_id)).toMatchObject({ state: 'running', lease: { fence: lease!.fence } });
        expect(await b.dlqGet(job.job_id)).toBeNull();
        // Its message is back, and the next receive makes it the job's delivery again (hidden while the lease lives).
        expect(await depth(sourceQueueName(prefix, 'q', 'batch', fifo))).toBe(1);
        expect(await b.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 60_000 })).toEqual([]);
        expect(await b.ext.delivery(job.job_id)).not.toBeNull();
        // The worker's work counts, and the ending deletes the message.
        expect(await b.heartbeat([lease!], 600_000)).toEqual([expect.objectContaining({ status: 'ok' })]);
        expect((await b.complete(lease!, 'done')).state).toBe('succeeded');
        expect(await depth(sourceQueueName(prefix, 'q', 'batch', fifo))).toBe(0);
      } finally {
        await b.close();
      }
    });

    it('a running job\'s message one receive short of the backstop is renewed, as a waiting job\'s is: it never reaches the DLQ', async () => {
      const clock = new ManualClock();
      const prefix = `bs${process.pid}x${++seq}`;
      const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(server.endpoint)}&store=${encodeURIComponent(storeFor(prefix))}&autocreate=1&wait=0&max_receive_count=3${fifo ? '&fifo=job' : ''}`;
      // (visibility 0: hidden messages come straight back, so the copy is received at once)
      const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, maxVisibilitySeconds: 0 });
      try {
        const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
        const src = (await raw.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'q', 'batch', fifo) }))).QueueUrl!;
        // Received once more by a consumer that crashed: one receive short of maxReceiveCount 3.
        await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
        // Other workers receive it while the lease lives, again and again.
        for (let i = 0; i < 4; i++) expect(await b.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 60_000 })).toEqual([]);
        expect(await depth(dlqName(prefix, 'q', fifo))).toBe(0);
        expect(await depth(sourceQueueName(prefix, 'q', 'batch', fifo))).toBe(1);
        expect(await b.get(job.job_id)).toMatchObject({ state: 'running', lease: { fence: lease!.fence } });
        expect((await b.complete(lease!, 'done')).state).toBe('succeeded');
        // Its message, wherever the renewals left it, is deleted when next received (the next job's claim).
        const { job: next } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        expect((await b.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 60_000 })).map((l) => l.jobId)).toEqual([next.job_id]);
        expect(await depth(sourceQueueName(prefix, 'q', 'batch', fifo))).toBe(1);
      } finally {
        await b.close();
      }
    });

    it('a lease that ran out: the job goes dead with reason custody, as before', async () => {
      const clock = new ManualClock();
      const { prefix, backend: b } = open(clock);
      try {
        const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
        await driveToDlq(b, prefix, job.job_id);
        clock.advance(600_001);
        const report = await b.sweepDlq('q');
        expect(report.custody).toEqual([expect.objectContaining({ job_id: job.job_id, recorded: 'job_dead' })]);
        expect((await b.dlqGet(job.job_id))!).toMatchObject({ reason: 'custody', error_code: 'SQS_MAX_RECEIVES' });
      } finally {
        await b.close();
      }
    });
  });
}
