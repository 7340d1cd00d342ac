/**
 * A message of one agentq queue's job received from another queue's SQS queue (moved there by
 * hand or by a tool, or sent by someone else with a job id of the store): a worker of that other
 * queue claimed the job and ran it with its own handler; with the job's lease expired, the message
 * reaped the lease too. The store's queue decides: such a message is a duplicate of the job's own
 * (deleted, as any duplicate is), and the job runs from its own queue, on both job stores.
 */
import { GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { sourceQueueName } from '../../src/backend/sqs/names.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
let raw: SQSClient;
const servers = new TestServers();
const dirs: string[] = [];
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
  raw = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint });
});
afterAll(async () => {
  raw?.destroy();
  await servers.stopAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const open: SqsBackend[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

let seq = 0;
function make(kind: 'sqlite' | 'redis', clock: ManualClock): { b: SqsBackend; prefix: string } {
  const prefix = `mr${process.pid}x${++seq}`;
  const dir = mkdtempSync(join(tmpdir(), 'agentq-misrouted-'));
  dirs.push(dir);
  const url =
    kind === 'sqlite'
      ? sqsUrl(sqs.endpoint, prefix, join(dir, 'store.db'), '&autocreate=1&wait=0')
      : `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(`${redis.url}?prefix=${prefix}`)}&autocreate=1&wait=0`;
  const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, random: seededRandom(seq), maxVisibilitySeconds: 0 });
  open.push(b);
  return { b, prefix };
}

const queueUrl = async (name: string) => (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;

/** Sends a copy of the message in `from` (left where it is) to `to`, body and attributes as they are. */
async function copyMessage(from: string, to: string): Promise<void> {
  const got = await raw.send(new ReceiveMessageCommand({ QueueUrl: await queueUrl(from), MessageAttributeNames: ['All'], VisibilityTimeout: 0 }));
  const m = got.Messages![0]!;
  await raw.send(new SendMessageCommand({ QueueUrl: await queueUrl(to), MessageBody: m.Body!, MessageAttributes: m.MessageAttributes }));
}

describe.each(['sqlite', 'redis'] as const)('a message of another queue\'s job (%s job store)', (kind) => {
  it('is never claimed by a worker of the queue it was found in, nor reaps the job\'s lease; the job runs from its own queue', async () => {
    const clock = new ManualClock();
    const { b, prefix } = make(kind, clock);
    await b.setup(['a', 'b']);
    const { job } = await b.submit({ workflow: 'x:v1', queue: 'b' });
    await copyMessage(sourceQueueName(prefix, 'b', 'batch'), sourceQueueName(prefix, 'a', 'batch'));
    // (a job of a's own: a receive comes only from class queues with jobs of that queue pending)
    const { job: own } = await b.submit({ workflow: 'y:v1', queue: 'a' });
    const claimA = () => b.claim({ queue: 'a', workerId: 'wa', max: 10, leaseMs: 60_000 });
    const claimB = () => b.claim({ queue: 'b', workerId: 'wb', max: 10, leaseMs: 60_000 });
    // the defect: [job (of queue b), own]
    expect((await claimA()).map((l) => l.jobId)).toEqual([own.job_id]);
    expect((await b.get(job.job_id))!.state).toBe('queued');
    const [lease] = await claimB();
    expect(lease?.jobId).toBe(job.job_id);

    // Running, its lease expired: a copy found in a's queue does not reap it.
    await copyMessage(sourceQueueName(prefix, 'b', 'batch'), sourceQueueName(prefix, 'a', 'batch'));
    clock.advance(3600_000);
    await b.submit({ workflow: 'y:v1', queue: 'a' });
    await pollUntil(async () => (await claimA()).length > 0, { what: 'a\'s own job claimed' });
    expect((await b.get(job.job_id))!).toMatchObject({ state: 'running', attempt: 1 });
  });
});
