/**
 * FIFO queues (`fifo=` in the URL) against fauxqs on loopback, which keeps the
 * FIFO rules this relies on: message groups (one message of a group in flight
 * at a time), a 5-minute deduplication window on MessageDeduplicationId, and
 * per-message DelaySeconds refused.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend, type SqsBackendOptions } from '../../src/backend/sqs/index.js';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let raw: SQSClient;
beforeAll(async () => {
  server = await startSqsServer();
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
});
afterAll(async () => {
  raw?.destroy();
  await server?.stop();
});

const open: Array<{ backend: SqsBackend; dir: string }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.backend.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

let seq = 0;
function env(fifo: 'tenant' | 'job' = 'tenant') {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-fifo-'));
  const prefix = `f${process.pid}x${++seq}`;
  const store = join(dir, 'store.db');
  return {
    prefix,
    store,
    src: (queue = 'q') => sourceQueueName(prefix, queue, 'batch', true),
    dlq: (queue = 'q') => dlqName(prefix, queue, true),
    clock: new ManualClock(),
    make(o: Partial<SqsBackendOptions> & { extra?: string } = {}) {
      const url = sqsUrl(server.endpoint, prefix, store, `&autocreate=1&wait=0&fifo=${fifo === 'tenant' ? '1' : 'job'}${o.extra ?? ''}`);
      const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, random: seededRandom(seq), clock: this.clock, maxVisibilitySeconds: 0, ...o });
      open.push({ backend, dir });
      return backend;
    },
  };
}

const queueUrl = async (name: string) => (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;

/** Every message in a queue, read without changing it for later readers (visibility 0), with its FIFO system attributes. */
async function peek(name: string): Promise<Message[]> {
  const url = await queueUrl(name);
  const seen = new Map<string, Message>();
  for (let i = 0; i < 20; i++) {
    const got = await raw.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
    const fresh = (got.Messages ?? []).filter((m) => !seen.has(m.MessageId!));
    if (fresh.length === 0) break;
    for (const m of fresh) seen.set(m.MessageId!, m);
  }
  return [...seen.values()];
}

async function depth(name: string): Promise<number> {
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: await queueUrl(name), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible);
}

const submitReq = (over: Record<string, unknown> = {}) => ({ workflow: 'research_report:v3', queue: 'q', ...over });

describe('agentq sqs setup with fifo=1', () => {
  it('creates .fifo queues (FIFO source queues and a FIFO DLQ, RedrivePolicy between them) and says so', async () => {
    const e = env();
    const actions = await e.make().setup(['q']);
    expect(actions.map((a) => [a.name, a.action])).toEqual([
      [e.dlq(), 'created'],
      [sourceQueueName(e.prefix, 'q', 'interactive', true), 'created'],
      [e.src(), 'created'],
      [sourceQueueName(e.prefix, 'q', 'maintenance', true), 'created'],
    ]);
    expect(actions.every((a) => a.name.endsWith('.fifo') && a.detail.startsWith('FIFO '))).toBe(true);
    const attrs = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: actions[2]!.url, AttributeNames: ['All'] }))).Attributes!;
    expect(attrs.FifoQueue).toBe('true');
    expect(JSON.parse(attrs.RedrivePolicy!).deadLetterTargetArn).toContain(e.dlq());
    const dlqAttrs = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: actions[0]!.url, AttributeNames: ['FifoQueue'] }))).Attributes!;
    expect(dlqAttrs.FifoQueue).toBe('true');
    expect((await e.make().setup(['q'])).map((a) => a.action)).toEqual(['exists', 'exists', 'exists', 'exists']);
  });
});

describe('submit on FIFO queues', () => {
  it('sends each job in its tenant\'s message group with a deduplication id, and no per-message delay even when scheduled', async () => {
    const e = env();
    const b = e.make();
    const a1 = (await b.submit(submitReq({ tenant_id: 'acme' }))).job;
    const later = (await b.submit(submitReq({ tenant_id: 'globex', run_at: new Date(e.clock.now() + 3600_000).toISOString() }))).job;
    expect(await b.outboxStatus()).toMatchObject({ pending: 0, published: 2 });
    const msgs = await peek(e.src());
    const byJob = new Map(msgs.map((m) => [m.MessageAttributes!['agentq-job-id']!.StringValue!, m]));
    expect(byJob.get(a1.job_id)!.Attributes).toMatchObject({ MessageGroupId: 'acme' });
    expect(byJob.get(later.job_id)!.Attributes).toMatchObject({ MessageGroupId: 'globex' });
    const dedup = msgs.map((m) => m.Attributes!.MessageDeduplicationId!);
    expect(dedup.every((d) => d.length > 0 && d.length <= 128)).toBe(true);
    expect(new Set(dedup).size).toBe(2);
  });

  it('fifo=job puts every job in its own group', async () => {
    const e = env('job');
    const b = e.make();
    const j = (await b.submit(submitReq({ tenant_id: 'acme' }))).job;
    const [m] = await peek(e.src());
    expect(m!.Attributes!.MessageGroupId).toBe(j.job_id);
  });

  it('a relay that publishes the same outbox row twice (crash before marking it) is deduplicated by SQS itself', async () => {
    const e = env();
    const b = e.make();
    await b.submit(submitReq());
    const db = new Database(e.store);
    db.prepare('UPDATE sqs_outbox SET published_at = NULL').run();
    db.close();
    expect((await b.relayOutbox()).published).toBe(1);
    // Standard queues would now hold two copies (the consumer dedupes those); FIFO drops the second send.
    expect(await depth(e.src())).toBe(1);
  });
});

describe('workers on FIFO queues', () => {
  it('runs a tenant\'s jobs one at a time in submit order (the group is held while a job runs or waits for its retry)', async () => {
    const e = env();
    const b = e.make();
    const [first, second] = [(await b.submit(submitReq({ tenant_id: 'acme', max_attempts: 3 }))).job, (await b.submit(submitReq({ tenant_id: 'acme' }))).job];
    const other = (await b.submit(submitReq({ tenant_id: 'globex' }))).job;
    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(leases.map((l) => l.jobId).sort()).toEqual([first.job_id, other.job_id].sort());
    // A transient failure: the retry keeps its place at the head of the tenant's group.
    const firstLease = leases.find((l) => l.jobId === first.job_id)!;
    expect((await b.fail(firstLease, { code: 'PROVIDER_429', message: 'slow down', retryable: true })).kind).toBe('retry');
    expect(await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 })).toEqual([]);
    // Once the retry is due it runs, and only after it ends does the tenant's next job.
    e.clock.advance(10 * 60_000);
    const retried = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(retried.map((l) => l.jobId)).toEqual([first.job_id]);
    await b.complete(retried[0]!, 'ok');
    const next = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(next.map((l) => l.jobId)).toEqual([second.job_id]);
  });

  it('lets a foreign message at the head of a FIFO group go at once (hiding it would hold the group), so the backstop moves it to the DLQ and the group flows again', async () => {
    const e = env();
    const b = e.make({ maxVisibilitySeconds: 43_200, extra: '&max_receive_count=2' });
    await b.setup(['q']);
    await raw.send(new SendMessageCommand({ QueueUrl: await queueUrl(e.src()), MessageBody: 'not ours', MessageGroupId: 'acme', MessageDeduplicationId: 'x1' }));
    const job = (await b.submit(submitReq({ tenant_id: 'acme' }))).job;
    // Each claim receives the foreign message once (never runs it, never deletes it); on the
    // third receive SQS moves it to the DLQ and the job behind it in the group is delivered.
    const got = [];
    for (let i = 0; i < 4 && got.length === 0; i++) got.push(...(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })));
    expect(got.map((l) => l.jobId)).toEqual([job.job_id]);
    const [foreign] = await peek(e.dlq());
    expect(foreign!.Body).toBe('not ours');
  });
});

describe('jobs that wait on FIFO queues (fifo=job)', () => {
  it('a job not due yet is received again and again without reaching maxReceiveCount: its message is renewed in its own group, never moved to the DLQ', async () => {
    const e = env('job');
    // max_receive_count=2: SQS moves a message to the DLQ on its third receive
    const b = e.make({ extra: '&max_receive_count=2' });
    const { job } = await b.submit(submitReq({ run_at: new Date(e.clock.now() + 3_600_000).toISOString() }));
    // hidden 0 s each time (maxVisibilitySeconds 0): every claim receives it again
    for (let i = 0; i < 6; i++) expect(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
    // the defect: moved to the DLQ by the backstop on its third receive, and then the sweep ended the live job
    expect(await depth(e.dlq())).toBe(0);
    expect(await depth(e.src())).toBe(1);
    expect((await b.sweepDlq('q')).custody).toEqual([]);
    e.clock.advance(3_600_000);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
    await b.complete(lease!, null);
    expect(await depth(e.src())).toBe(0);
  });
});

describe('the DLQ and redrive on FIFO queues', () => {
  it('a redrive within the 5-minute dedup window is delivered (new deduplication id), in the job\'s original group; DLQ copies get groups of their own', async () => {
    const e = env();
    const b = e.make();
    const clock = e.clock;
    const { job } = await b.submit(submitReq({ tenant_id: 'acme', max_attempts: 3 }));
    const [submitted] = await peek(e.src());
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect((await b.fail(lease!, { code: 'VALIDATION', message: 'bad input', retryable: false })).kind).toBe('dead');
    expect(await depth(e.src())).toBe(0);
    const [copy] = await peek(e.dlq());
    expect(copy!.Attributes!.MessageGroupId).toBe(job.job_id);
    expect(copy!.MessageAttributes!['agentq-error-code']!.StringValue).toBe('VALIDATION');

    // Seconds later (well inside the 5-minute window), redriven.
    const now = clock.now();
    const run = 'run_01JFFFFFFFFFFFFFFFFFFFFFFF';
    await b.createRun(
      { run_id: run, queue: 'q', action: 'redrive', user: 't', context: null, reason: null, filters: {}, options: { attempts: { kind: 'reset' } }, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
      [{ job_id: job.job_id, verdict: 'redrive', detail: null }],
    );
    expect((await b.applyRunItems({ runId: run, jobIds: [job.job_id], now })).map((i) => i.status)).toEqual(['moved']);
    const [redriven] = await peek(e.src());
    expect(redriven).toBeDefined();
    expect(redriven!.Attributes!.MessageGroupId).toBe('acme');
    expect(redriven!.Attributes!.MessageDeduplicationId).not.toBe(submitted!.Attributes!.MessageDeduplicationId);
    const [back] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(back?.jobId).toBe(job.job_id);

    // Dies again: its second DLQ copy is not swallowed by the first one's dedup id either.
    await b.sweepDlq('q');
    expect(await depth(e.dlq())).toBe(0);
    await b.fail(back!, { code: 'VALIDATION', message: 'still bad', retryable: false });
    const [second] = await peek(e.dlq());
    expect(second!.MessageAttributes!['agentq-error-message']!.StringValue).toBe('still bad');
  });

  it('the emulator keeps the dedup window this relies on: the same deduplication id twice inside 5 minutes is one message', async () => {
    const e = env();
    await e.make().setup(['q']);
    const url = await queueUrl(e.src());
    for (let i = 0; i < 2; i++) await raw.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'same' }));
    expect(await depth(e.src())).toBe(1);
  });

  it('takes a natively dead-lettered FIFO message into custody', async () => {
    const e = env();
    const b = e.make({ maxVisibilitySeconds: 43_200 });
    const url = sqsUrl(server.endpoint, e.prefix, e.store, '&autocreate=1&wait=0&fifo=1&max_receive_count=1');
    const low = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock: new ManualClock() });
    open.push({ backend: low, dir: mkdtempSync(join(tmpdir(), 'agentq-sqs-fifo-')) });
    await low.setup(['q']);
    const { job } = await b.submit(submitReq());
    const src = await queueUrl(e.src());
    for (let i = 0; i < 2; i++) await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
    expect(await depth(e.dlq())).toBe(1);
    const report = await b.sweepDlq('q');
    expect(report.custody).toEqual([expect.objectContaining({ job_id: job.job_id, recorded: 'job_dead' })]);
    expect(await depth(e.dlq())).toBe(0);
  });
});
