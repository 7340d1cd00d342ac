/**
 * A dead job's DLQ copy was sent but its message's delete failed (SQS answered the send, not the
 * delete), and the job was redriven. Its old message, received before the redrive's new one, carries
 * the job again — but the store kept the mark "DLQ copy sent" on it, from the earlier death. When
 * the job died again and its worker could not send the new copy (SQS refused it), the message's
 * return was taken for that of a death already copied, and deleted: the second death never reached
 * the SQS DLQ. A message received for a job that is not dead is recorded afresh, the mark cleared.
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
import { runRecord } from '../conformance/fixture.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
let dir: string;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-redriven-old-'));
});
afterAll(async () => {
  await servers.stopAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const stores: Array<[string, (prefix: string) => string]> = [
  ['SQLite', (prefix) => `sqlite:${join(dir, `${prefix}.db`)}`],
  ['Redis', (prefix) => `${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=${prefix}`],
];

it.each(stores)('%s job store: a redriven job run by its old message (its delete had failed) and dead again: its second death reaches the SQS DLQ', async (name, storeFor) => {
  const queue = `old${process.pid}${name.slice(0, 1)}`;
  const url = `sqs://us-east-1/${queue}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(storeFor(queue))}&wait=0&autocreate=1`;
  const wire = new SqsWireClient({ credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) }, { region: 'us-east-1', endpoint: sqs.endpoint });
  const refuse = { deletes: 0, sourceSends: false, dlqSends: false };
  const fault = Object.assign(new Error('InternalError: refused by the test'), { name: 'InternalError', $fault: 'server' });
  const dataPlane: SqsDataPlane = Object.assign(Object.create(wire) as SqsDataPlane, {
    deleteMessage: async (input: Parameters<SqsDataPlane['deleteMessage']>[0]) => {
      if (refuse.deletes > 0) {
        refuse.deletes--;
        throw fault;
      }
      return wire.deleteMessage(input);
    },
    sendMessageBatch: async (input: Parameters<SqsDataPlane['sendMessageBatch']>[0]) => {
      const dlq = input.QueueUrl!.endsWith('-dlq');
      if ((dlq && refuse.dlqSends) || (!dlq && refuse.sourceSends)) {
        return { Successful: [], Failed: input.Entries!.map((e) => ({ Id: e.Id!, Code: 'InternalError', Message: 'refused by the test', SenderFault: true })) };
      }
      return wire.sendMessageBatch(input);
    },
  });
  // (visibility 0: a message is visible again at once)
  const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane, maxVisibilitySeconds: 0 });
  const dlqDepth = async () => {
    const a = (await wire.getQueueAttributes({ QueueUrl: (await b.sqsQueues.dlqUrl(queue))!, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] })).Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  };
  const permanent = { code: 'BAD_INPUT', message: 'cannot be done', retryable: false } as const;
  try {
    const { job } = await b.submit({ workflow: 'noop:v1', queue, max_attempts: 1 });
    const [first] = await b.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
    // The first death: its copy sent, its message's delete refused.
    refuse.deletes = 1;
    expect((await b.fail(first!, permanent)).kind).toBe('dead');
    expect(await dlqDepth()).toBe(1);
    const old = (await b.ext.delivery(job.job_id))!;
    // Redriven; its new message not published (SQS refuses it for now): the old one carries the job.
    refuse.sourceSends = true;
    const runId = `run_${queue}`;
    await b.createRun(runRecord({ run_id: runId, queue, action: 'redrive' }, Date.now()), [{ job_id: job.job_id, verdict: 'redrive', detail: null }]);
    expect((await b.applyRunItems({ runId, jobIds: [job.job_id], now: Date.now() })).map((i) => i.status)).toEqual(['moved']);
    const [second] = await b.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(second?.jobId).toBe(job.job_id);
    expect((await b.ext.delivery(job.job_id))?.message_id).toBe(old.message_id);
    // The second death: SQS refuses its copy, so the message stays for the next receive to bury.
    refuse.dlqSends = true;
    const out = await b.fail(second!, permanent);
    expect(out.kind).toBe('dead');
    refuse.dlqSends = false;
    // The old message comes back (to a worker that receives: another job of its class waits).
    await b.submit({ workflow: 'noop:v1', queue });
    for (let i = 0; i < 5 && (await dlqDepth()) < 2; i++) await b.claim({ queue, workerId: 'w2', max: 1, leaseMs: 60_000 });
    expect(await dlqDepth()).toBe(2);
  } finally {
    await b.close();
    wire.destroy();
  }
}, 60_000);
