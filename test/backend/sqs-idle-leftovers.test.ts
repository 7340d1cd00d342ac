/**
 * A worker receives from a class queue only while the store holds jobs of that class waiting or
 * running. A message an ended job left in SQS — a dead job's, whose DLQ copy could not be sent
 * (the SQS DLQ missing at its death, a send a stop gave up on), or an ended job's whose delete
 * failed — is dealt with when it is next received: on a queue with no further jobs of its class,
 * never. So a death while the SQS DLQ was missing never reached it after `agentq sqs setup` made
 * it (the README promises it is sent once the DLQ exists), and the message lay in the source queue
 * until SQS's retention dropped it, counted by alarms on the queue's depth and oldest age. An idle
 * worker now receives from its class queues once a minute (store clock) to deal with such leftovers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let raw: SQSClient;
let dir: string;
beforeAll(async () => {
  server = await startSqsServer();
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
  dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-idle-leftovers-'));
});
afterAll(async () => {
  raw?.destroy();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function depth(name: string): Promise<number> {
  const url = (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed);
}

it('a job that died while the SQS DLQ was missing: once it exists, an idle worker sends the copy and deletes the message, with no other job to come', async () => {
  const prefix = `il${process.pid}`;
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(server.endpoint)}&store=${encodeURIComponent(`sqlite:${join(dir, 'a.db')}`)}&wait=0`;
  const clock = new ManualClock();
  // (visibility 0: the dead job's message is visible again at once, as after its lease)
  const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, maxVisibilitySeconds: 0 });
  // the operator's backend: sqs setup
  const ops = new SqsBackend({ url: parseSqsUrl(url, url), shown: url });
  try {
    await ops.setup(['q']);
    await raw.send(new DeleteQueueCommand({ QueueUrl: (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(prefix, 'q', false) }))).QueueUrl! }));
    expect(await b.workerPreflight('q')).toEqual([expect.stringContaining('does not exist')]);
    const { job } = await b.submit({ workflow: 'noop:v1', queue: 'q' });
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    const out = await b.fail(lease!, { code: 'BAD_INPUT', message: 'cannot be done', retryable: false });
    expect(out).toMatchObject({ kind: 'dead', warning: expect.stringContaining('does not exist') });
    expect(await depth(sourceQueueName(prefix, 'q', 'batch', false))).toBe(1);

    // The operator makes the DLQ; the worker has nothing else to do.
    await ops.setup(['q']);
    expect(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
    clock.advance(60_000);
    expect(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
    expect(await depth(dlqName(prefix, 'q', false))).toBe(1);
    expect(await depth(sourceQueueName(prefix, 'q', 'batch', false))).toBe(0);
    expect((await b.ext.delivery(job.job_id))?.dlq_sent_at).not.toBeNull();
  } finally {
    await b.close();
    await ops.close();
  }
});
