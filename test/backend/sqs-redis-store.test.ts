/**
 * The SQS backend with a Redis job store (`store=redis://…`): what the
 * conformance suite does not cover — the derived outbox across a crash, a
 * refused submit that has nothing to publish, a double publish, and custody
 * (native backstop, foreign and malformed messages). fauxqs and a spawned
 * redis-server on loopback.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { SqsBackend, type SqsBackendOptions } from '../../src/backend/sqs/index.js';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { custodyCases } from './sqs-custody-cases.js';
import { keptAfterPurge, keysMentioning } from '../support/redis-mentions.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { TestServers } from '../support/servers.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
let raw: SQSClient;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
  raw = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint });
});
afterAll(async () => {
  raw?.destroy();
  await servers.stopAll();
});

const open: SqsBackend[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

let seq = 0;
function env() {
  const prefix = `rs${process.pid}x${++seq}`;
  return {
    prefix,
    make(o: { endpoint?: string; extra?: string } & Partial<SqsBackendOptions> = {}): SqsBackend {
      const store = `${redis.url}?prefix=${prefix}`;
      const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(o.endpoint ?? sqs.endpoint)}&store=${encodeURIComponent(store)}${o.extra ?? '&autocreate=1&wait=0'}`;
      const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, random: seededRandom(seq), ...o });
      open.push(b);
      return b;
    },
  };
}

async function depth(name: string): Promise<number> {
  const q = (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: q, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed);
}

const submitReq = (over: Record<string, unknown> = {}) => ({ workflow: 'research_report:v3', queue: 'q', ...over });

describe('outbox on a Redis job store', () => {
  it('publishes later what a crash between the store write and the publish left behind, and a worker heals it', async () => {
    const e = env();
    const clock = new ManualClock();
    // SQS unreachable at submit time: the Redis write happens, the publish cannot.
    const a = e.make({ endpoint: `http://127.0.0.1:${await freePort()}`, clock, maxVisibilitySeconds: 0 });
    const { job, created } = await a.submit(submitReq());
    expect(created).toBe(true);
    expect((await a.outboxStatus()).pending).toBe(1);
    // Per queue, with this process's backoff: worker --drain waits for it.
    expect(await a.unpublished('q')).toMatchObject({ count: 1, nextTryAt: clock.now() + 1000, lastError: expect.stringMatching(/unreachable/) });
    expect(await a.unpublished('other')).toEqual({ count: 0, nextTryAt: null, lastError: null });

    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
    expect(await b.relayOutbox()).toMatchObject({ published: 1, pending_after: 0 });
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    expect((await b.outboxStatus()).published).toBe(1);

    const { job: second } = await a.submit(submitReq());
    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(leases.map((l) => l.jobId).sort()).toEqual([job.job_id, second.job_id].sort());
  });

  it('publishes nothing for a duplicate submit (same idempotency key)', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    const first = await b.submit(submitReq({ idempotency_key: 'k1' }));
    const again = await b.submit(submitReq({ idempotency_key: 'k1' }));
    expect(again).toMatchObject({ created: false, job: { job_id: first.job.job_id } });
    expect(await b.relayOutbox()).toMatchObject({ published: 0, pending_after: 0 });
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
  });

  it('runs a job once when the relay published it twice, and deletes the duplicate', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    // A relay that crashed after SendMessageBatch and before recording the generation: it publishes again.
    // Through a connection of its own: the backend's Redis store is opened lazily (open-store.ts), behind a proxy.
    const direct = new Redis(redis.url);
    const shard = (await direct.get(`${e.prefix}:loc:${job.job_id}`))!.split('\t');
    await direct.hdel(`{${e.prefix}:${shard[0]}:${shard[1]}}:sqs:pub`, job.job_id);
    direct.disconnect();
    expect((await b.relayOutbox()).published).toBe(1);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(2);

    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(leases.map((l) => l.jobId)).toEqual([job.job_id]);
    expect(await b.claim({ queue: 'q', workerId: 'w2', max: 10, leaseMs: 60_000 })).toEqual([]);
    await b.complete(leases[0]!, 'ok');
    expect((await b.get(job.job_id))!.attempts).toHaveLength(1);
  });
});

describe('waiting jobs on a Redis job store', () => {
  it('a job not due yet keeps one message: renewed near maxReceiveCount, never moved to the DLQ, never published again', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0, extra: '&autocreate=1&wait=0&max_receive_count=2' });
    const { job } = await b.submit(submitReq({ run_at: new Date(clock.now() + 3_600_000).toISOString() }));
    for (let i = 0; i < 6; i++) expect(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
    // the outbox still counts it as published (renewing it did not make the relay send it again)
    expect((await b.outboxStatus()).pending).toBe(0);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    clock.advance(3_600_000);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
  });
});

describe('the DLQ on SQS with a Redis job store', () => {
  it('writes the store entry and the SQS DLQ copy before it deletes the source; a redrive is a new generation, published and run', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 3 }));
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    const out = await b.fail(lease!, { code: 'VALIDATION', message: 'input rejected', retryable: false });
    expect(out.kind).toBe('dead');
    expect((await b.dlqGet(job.job_id))!).toMatchObject({ reason: 'permanent', error_code: 'VALIDATION' });
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(1);
    expect((await b.ext.delivery(job.job_id))!.dlq_sent_at).not.toBeNull();

    const now = clock.now();
    await b.createRun(
      { run_id: 'run_01JAAAAAAAAAAAAAAAAAAAAAAA', queue: 'q', action: 'redrive', user: 't', context: null, reason: null, filters: {}, options: { attempts: { kind: 'reset' } }, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
      [{ job_id: job.job_id, verdict: 'redrive', detail: null }],
    );
    const items = await b.applyRunItems({ runId: 'run_01JAAAAAAAAAAAAAAAAAAAAAAA', jobIds: [job.job_id], now });
    expect(items.map((i) => i.status)).toEqual(['moved']);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    expect((await b.outboxStatus()).pending).toBe(0);
    expect(await b.sweepDlq('q')).toMatchObject({ received: 1, deleted: 1 });
    const [back] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(back?.jobId).toBe(job.job_id);
  });

  it('a purge leaves none of the job in the SQS hashes (published mark, delivery, republish count)', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 1 }));
    // republished once (sqs:rep), published again (sqs:pub), received (sqs:dlv), then dead with its DLQ copy sent
    expect((await b.republish([job.job_id])).relay.published).toBe(1);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect((await b.fail(lease!, { code: 'VALIDATION', message: 'no', retryable: false })).kind).toBe('dead');
    const direct = new Redis(redis.url);
    try {
      const [queue, shard] = (await direct.get(`${e.prefix}:loc:${job.job_id}`))!.split('\t');
      const hashes = ['sqs:pub', 'sqs:dlv', 'sqs:rep'].map((h) => `{${e.prefix}:${queue}:${shard}}:${h}`);
      const held = async () => Promise.all(hashes.map((h) => direct.hexists(h, job.job_id)));
      expect(await held()).toEqual([1, 1, 1]);

      const now = clock.now();
      const runId = 'run_01JEEEEEEEEEEEEEEEEEEEEEEE';
      await b.createRun(
        { run_id: runId, queue: 'q', action: 'purge', user: 't', context: null, reason: null, filters: {}, options: {}, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
        [{ job_id: job.job_id, verdict: 'purge', detail: null }],
      );
      expect((await b.applyRunItems({ runId, jobIds: [job.job_id], now })).map((i) => i.status)).toEqual(['moved']);
      expect(await held()).toEqual([0, 0, 0]);
      // nor in any other key but those a purge keeps on purpose
      expect((await keysMentioning(direct, e.prefix, job.job_id)).filter((m) => !keptAfterPurge(e.prefix, job.job_id, [runId])(m))).toEqual([]);
      // and the purged job's SQS DLQ copy is still judged gone by a sweep
      expect(await b.sweepDlq('q')).toMatchObject({ received: 1, deleted: 1, custody: [] });
    } finally {
      direct.disconnect();
    }
  });
});

describe('custody on a Redis job store', () => {
  custodyCases(() => ({ env, raw }));

  it('takes a natively dead-lettered message into custody and shows the job dead with the reason', async () => {
    const e = env();
    const b = e.make({ extra: '&autocreate=1&wait=0&max_receive_count=2' });
    const { job } = await b.submit(submitReq());
    const src = (await raw.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(e.prefix, 'q', 'batch') }))).QueueUrl!;
    for (let i = 0; i < 3; i++) await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(1);

    const report = await b.sweepDlq('q');
    expect(report.custody).toEqual([expect.objectContaining({ job_id: job.job_id, kind: 'agentq', recorded: 'job_dead' })]);
    expect(report.deleted).toBe(1);
    const entry = (await b.dlqGet(job.job_id))!;
    expect(entry).toMatchObject({ reason: 'custody', error_code: 'SQS_MAX_RECEIVES', malformed: null });
    expect(entry.error_message).toMatch(/maxReceiveCount 2\) after 3 receives/);
    expect((await b.stats('q')).counts.dead).toBe(1);
    expect(await b.sweepDlq('q')).toMatchObject({ received: 0, custody: [] });
  });

  it('deletes the SQS DLQ copy of a purged job, and keeps byte-exact the copy of a job the store never had', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 1 }));
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect((await b.fail(lease!, { code: 'VALIDATION', message: 'no', retryable: false })).kind).toBe('dead');
    const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(e.prefix, 'q') }))).QueueUrl!;
    const copy = (await raw.send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 1, VisibilityTimeout: 0, MessageAttributeNames: ['All'] }))).Messages![0]!;
    // The same copy for a job id this store never had (as another store would have written it).
    const stranger = 'job_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const strangerBody = copy.Body!.replace(job.job_id, stranger);
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: strangerBody, MessageAttributes: { ...copy.MessageAttributes!, 'agentq-job-id': { DataType: 'String', StringValue: stranger } } }));
    const now = clock.now();
    const runId = 'run_01JDDDDDDDDDDDDDDDDDDDDDDD';
    await b.createRun(
      { run_id: runId, queue: 'q', action: 'purge', user: 't', context: null, reason: null, filters: {}, options: {}, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
      [{ job_id: job.job_id, verdict: 'purge', detail: null }],
    );
    expect((await b.applyRunItems({ runId, jobIds: [job.job_id], now })).map((i) => i.status)).toEqual(['moved']);

    const report = await b.sweepDlq('q');
    expect(report).toMatchObject({ received: 2, deleted: 2 });
    expect(report.custody).toEqual([expect.objectContaining({ kind: 'agentq', recorded: 'kept' })]);
    expect((await b.ext.custody(report.custody[0]!.job_id))!).toMatchObject({ kind: 'orphan', body: strangerBody });
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
  });

  it('lists custody records of one SQS DLQ (sqs custody --queue) from the one index of every queue, paging within it', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q', 'r']);
    for (const [q, n] of [['q', 3], ['r', 2]] as const) {
      const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(e.prefix, q) }))).QueueUrl!;
      for (let i = 0; i < n; i++) await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `foreign ${i} of ${q}` }));
      await b.sweepDlq(q);
    }
    const onlyR = await b.ext.listCustody(10, null, dlqName(e.prefix, 'r'));
    expect(onlyR.map((c) => c.body).sort()).toEqual(['foreign 0 of r', 'foreign 1 of r']);
    const first = await b.ext.listCustody(1, null, dlqName(e.prefix, 'r'));
    const next = await b.ext.listCustody(1, first[0]!.job_id, dlqName(e.prefix, 'r'));
    expect([...first, ...next].map((c) => c.job_id)).toEqual(onlyR.map((c) => c.job_id));
    expect(await b.ext.listCustody(1, next[0]!.job_id, dlqName(e.prefix, 'r'))).toEqual([]);
    expect(await b.ext.listCustody(10, null, dlqName(e.prefix, 'nope'))).toEqual([]);
  });

  it('keeps foreign and malformed messages byte-exact with their attributes, lists them as malformed, and never redrives or purges them', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(e.prefix, 'q') }))).QueueUrl!;
    const foreignBody = 'order 7 failed \u202e<b>gnp.exe</b> — ünïcödé';
    const malformedBody = '{"job_id":"job_01JXXXXXXXXXXXXXXXXXXXXXXX","workflow":5}';
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: foreignBody, MessageAttributes: { source: { DataType: 'String', StringValue: 'billing' } } }));
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: malformedBody, MessageAttributes: { 'agentq-format': { DataType: 'String', StringValue: 'agentq.envelope.v1' } } }));

    const report = await b.sweepDlq('q');
    expect(report.custody.map((c) => [c.kind, c.recorded]).sort()).toEqual([['foreign', 'kept'], ['malformed', 'kept']]);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    const foreign = report.custody.find((c) => c.kind === 'foreign')!;
    const malformed = report.custody.find((c) => c.kind === 'malformed')!;
    const kept = (await b.ext.custody(foreign.job_id))!;
    expect(kept).toMatchObject({ kind: 'foreign', body: foreignBody, source_queue: dlqName(e.prefix, 'q') });
    expect((kept.attributes.message_attributes as Record<string, { StringValue: string }>).source!.StringValue).toBe('billing');
    expect((await b.ext.custody(malformed.job_id))!.body).toBe(malformedBody);
    expect((await b.ext.listCustody(10, null)).map((c) => c.job_id).sort()).toEqual([foreign.job_id, malformed.job_id].sort());
    const entry = (await b.dlqGet(foreign.job_id))!;
    expect(entry.malformed).not.toBeNull();
    expect(entry.error_code).toBe('SQS_FOREIGN');

    const now = clock.now();
    for (const [runId, action] of [['run_01JBBBBBBBBBBBBBBBBBBBBBBB', 'redrive'], ['run_01JCCCCCCCCCCCCCCCCCCCCCCC', 'purge']] as const) {
      await b.createRun(
        { run_id: runId, queue: 'q', action, user: 't', context: null, reason: null, filters: {}, options: {}, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 2, moved: 0, skipped: 0, failed: 0 } },
        [foreign.job_id, malformed.job_id].map((id) => ({ job_id: id, verdict: action, detail: null })),
      );
      const items = await b.applyRunItems({ runId, jobIds: [foreign.job_id, malformed.job_id], now });
      expect(items.map((i) => i.status)).toEqual(['skipped', 'skipped']);
    }
    expect((await b.ext.custody(foreign.job_id))!.body).toBe(foreignBody);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);

    // Sweeping the same message again (a kill between the store write and the delete) records it once.
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'not ours' }));
    const r1 = await b.sweepDlq('q', { leaveForeign: true });
    const r2 = await b.sweepDlq('q', { leaveForeign: true });
    expect(r2.custody[0]!.job_id).toBe(r1.custody[0]!.job_id);
    expect([r1.custody[0]!.recorded, r2.custody[0]!.recorded]).toEqual(['kept', 'already_kept']);
    expect(r2).toMatchObject({ received: 1, already_in_custody: 1, kept_in_sqs: 1 });
    expect((await b.dlqList({ queue: 'q' }, { limit: 10 })).items).toHaveLength(3);
  });

});
