/**
 * A running job whose delivery the store had forgotten because its message was replaced — renewed
 * one receive short of the backstop, or put back in its source queue by a DLQ sweep (`requeued`) —
 * and which died before the new message was received: the worker's burial found no message on
 * record and sent no DLQ copy, and the new message, once received, was deleted as a message of a
 * dead job. The SQS DLQ never got a copy of that death (alarms on it never saw it), though the
 * README promises every death its copy. Now that message carries the death to the SQS DLQ, as a
 * dead job's own message does: the copy is sent, then the message deleted. On both job stores.
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
  dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-dead-forgotten-'));
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

const permanent = { code: 'BAD_INPUT', message: 'cannot be done', retryable: false } as const;

for (const [storeName, storeFor, fifo] of stores) {
  describe(`${storeName} job store`, () => {
    const open = (maxVisibilitySeconds?: number) => {
      const prefix = `df${process.pid}x${++seq}`;
      const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(server.endpoint)}&store=${encodeURIComponent(storeFor(prefix))}&autocreate=1&wait=0&max_receive_count=3${fifo ? '&fifo=job' : ''}`;
      const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock: new ManualClock(), ...(maxVisibilitySeconds === undefined ? {} : { maxVisibilitySeconds }) });
      return { prefix, backend, src: sourceQueueName(prefix, 'q', 'batch', fifo), dlq: dlqName(prefix, 'q', fifo) };
    };

    /** Another job of the class, so that a worker's claim receives from its queue; the copy of the death is made then. */
    async function receiveAgain(b: SqsBackend): Promise<void> {
      const { job: next } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
      for (let i = 0; i < 5 && (await b.ext.delivery(next.job_id)) === null; i++) await b.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 60_000 });
      await b.claim({ queue: 'q', workerId: 'w3', max: 1, leaseMs: 60_000 });
    }

    it('a job that dies while its message, put back by a DLQ sweep (requeued), waits in the source queue: the SQS DLQ gets its copy', async () => {
      const { backend: b, src, dlq } = open();
      try {
        const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
        // Its visibility not extended (its worker cut off from SQS), it is received until SQS moves it to the DLQ.
        const srcUrl = (await raw.send(new GetQueueUrlCommand({ QueueName: src }))).QueueUrl!;
        await raw.send(new ChangeMessageVisibilityCommand({ QueueUrl: srcUrl, ReceiptHandle: (await b.ext.delivery(job.job_id))!.receipt, VisibilityTimeout: 0 }));
        for (let i = 0; i < 3; i++) await raw.send(new ReceiveMessageCommand({ QueueUrl: srcUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
        expect(await b.sweepDlq('q')).toMatchObject({ requeued: 1 });
        // The job dies before a worker receives the message put back.
        expect((await b.fail(lease!, permanent)).kind).toBe('dead');
        await receiveAgain(b);
        expect(await depth(dlq)).toBe(1);
        expect((await b.ext.delivery(job.job_id))?.dlq_sent_at).not.toBeNull();
        // the job's message is gone from the source queue; the other job's is held by its lease
        expect(await depth(src)).toBe(1);
        // a sweep keeps that copy in place: it mirrors the entry
        expect(await b.sweepDlq('q')).toMatchObject({ received: 1, mirror_kept: 1, custody: [] });
      } finally {
        await b.close();
      }
    });

    it('a job that dies after its message was renewed one receive short of the backstop, before the copy was received: the SQS DLQ gets its copy', async () => {
      // (visibility 0: every message comes straight back)
      const { backend: b, src, dlq } = open(0);
      try {
        const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
        const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
        const srcUrl = (await raw.send(new GetQueueUrlCommand({ QueueName: src }))).QueueUrl!;
        await raw.send(new ReceiveMessageCommand({ QueueUrl: srcUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
        // Another worker receives it one receive short of maxReceiveCount 3: renewed, the store forgets the old one.
        const before = (await b.ext.delivery(job.job_id))!.message_id;
        expect(await b.claim({ queue: 'q', workerId: 'w2', max: 1, leaseMs: 60_000 })).toEqual([]);
        expect(await b.ext.delivery(job.job_id)).toBeNull();
        expect((await b.fail(lease!, permanent)).kind).toBe('dead');
        await receiveAgain(b);
        expect(await depth(dlq)).toBe(1);
        const d = await b.ext.delivery(job.job_id);
        expect(d?.message_id).not.toBe(before);
        expect(d?.dlq_sent_at).not.toBeNull();
        expect(await depth(src)).toBe(1);
      } finally {
        await b.close();
      }
    });
  });
}
