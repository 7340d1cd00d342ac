/**
 * SQS-specific behaviour against fauxqs on loopback: setup, the outbox
 * (crash between commit and publish, duplicate publishes), a consumer that
 * dies mid-job with real visibility timeouts, the app DLQ copy, and custody
 * of what the SQS DLQ holds (native backstop, foreign, malformed).
 */
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend, type SqsBackendOptions } from '../../src/backend/sqs/index.js';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom, type Clock } from '../../src/core/clock.js';
import { ConfigError, ValidationError } from '../../src/core/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../src/core/retry.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { custodyCases } from './sqs-custody-cases.js';
import { pollUntil } from '../support/poll.js';
import { withDb } from '../support/sqlite-db.js';
import { freePort } from '../support/redis-server.js';
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
interface Env {
  prefix: string;
  dir: string;
  store: string;
  /** `store`: another job store file for the same SQS queues (default: the env's). */
  make(o?: { endpoint?: string; extra?: string; clock?: Clock; store?: string } & Partial<SqsBackendOptions>): SqsBackend;
}

function env(): Env {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-'));
  const prefix = `d${process.pid}x${++seq}`;
  const store = join(dir, 'store.db');
  return {
    prefix,
    dir,
    store,
    make(o = {}) {
      const url = sqsUrl(o.endpoint ?? server.endpoint, prefix, o.store ?? store, o.extra ?? '&autocreate=1&wait=0');
      const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, random: seededRandom(seq), ...o });
      open.push({ backend, dir });
      return backend;
    },
  };
}

async function queueUrl(name: string): Promise<string> {
  return (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
}

/** Messages in a queue, visible or not (SQS's approximate counters; exact on the emulator). */
async function depth(name: string): Promise<number> {
  const a = (await raw.send(new GetQueueAttributesCommand({
    QueueUrl: await queueUrl(name),
    AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
  }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed);
}

const submitReq = (over: Record<string, unknown> = {}) => ({ workflow: 'research_report:v3', queue: 'q', ...over });

describe('agentq sqs setup', () => {
  it('creates the DLQ and one queue per class with a RedrivePolicy, then reports them as existing, and fixes a changed policy', async () => {
    const e = env();
    const first = await e.make({ extra: '&max_receive_count=7' }).setup(['research']);
    expect(first.map((a) => [a.name, a.action])).toEqual([
      [dlqName(e.prefix, 'research'), 'created'],
      [sourceQueueName(e.prefix, 'research', 'interactive'), 'created'],
      [sourceQueueName(e.prefix, 'research', 'batch'), 'created'],
      [sourceQueueName(e.prefix, 'research', 'maintenance'), 'created'],
    ]);
    const attrs = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: first[2]!.url, AttributeNames: ['RedrivePolicy'] }))).Attributes!;
    const policy = JSON.parse(attrs.RedrivePolicy!) as { maxReceiveCount: string | number; deadLetterTargetArn: string };
    expect(Number(policy.maxReceiveCount)).toBe(7);
    expect(policy.deadLetterTargetArn).toContain(dlqName(e.prefix, 'research'));

    const again = await e.make({ extra: '&max_receive_count=7' }).setup(['research']);
    expect(again.map((a) => a.action)).toEqual(['exists', 'exists', 'exists', 'exists']);
    const changed = await e.make({ extra: '&max_receive_count=9' }).setup(['research']);
    expect(changed.map((a) => a.action)).toEqual(['exists', 'updated', 'updated', 'updated']);
  });

  it('refuses to publish to a queue that was never set up (without autocreate), and keeps the job for the relay', async () => {
    const e = env();
    const b = e.make({ extra: '&wait=0', clock: new ManualClock() });
    const { job } = await b.submit(submitReq());
    expect((await b.outboxStatus()).pending).toBe(1);
    // Backing off (the store clock stands still): a background relay waits, one by hand tries it now.
    expect((await b.relayOutbox()).failed).toEqual([]);
    const r = await b.relayOutbox({ now: true });
    expect(r.published).toBe(0);
    expect(r.failed).toEqual([{ job_id: job.job_id, code: 'CONFIG', error: expect.stringMatching(/does not exist; run `agentq sqs setup --queue q`/) }]);
    expect(r).toMatchObject({ pending_after: 1, last_error: r.failed[0]!.error, next_try_at: expect.any(Number) });
    expect(await b.unpublished('q')).toEqual({ count: 1, nextTryAt: r.next_try_at, lastError: r.failed[0]!.error });
    expect((await b.unpublished('other')).count).toBe(0);
    expect((await b.get(job.job_id))!.state).toBe('queued');
    // A worker is told why it can never get the job (exit 78, with the command that mends it), not "nothing claimable".
    const err = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 30_000 }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/SQS queue \S+ does not exist, so the batch jobs of queue q cannot be delivered/);
    expect((err as ConfigError).hint).toBe('Run: agentq sqs setup --queue q');
  });
});

describe('queues that vanish mid-run', () => {
  it('a claim from a deleted source queue is a config error whose hint is the setup command of that queue', async () => {
    const e = env();
    const b = e.make({ extra: '&wait=0', clock: new ManualClock() });
    await b.setup(['q']);
    await b.submit(submitReq());
    await raw.send(new DeleteQueueCommand({ QueueUrl: await queueUrl(sourceQueueName(e.prefix, 'q', 'batch')) }));
    const err = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 30_000 }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/does not exist \(ReceiveMessage \S+-q-batch/);
    expect((err as ConfigError).hint).toBe('Run: agentq sqs setup --queue q');
  });
});

describe('scheduling on SQS', () => {
  it('refuses a run_at further ahead than a message may wait in SQS (exit 2), and accepts 13 days', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const day = 24 * 3600_000;
    const err = await b.submit(submitReq({ run_at: new Date(clock.now() + 14 * day).toISOString() })).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/13 days/);
    const ok = await b.submit(submitReq({ run_at: new Date(clock.now() + 13 * day).toISOString() }));
    expect(ok.job.state).toBe('scheduled');
  });
});

describe('outbox', () => {
  it('publishes later what a crash between the store commit and the publish left behind', async () => {
    const e = env();
    const clock = new ManualClock();
    // SQS unreachable at submit time: the commit happens, the publish cannot.
    const dead = `http://127.0.0.1:${await freePort()}`;
    const a = e.make({ endpoint: dead, clock, maxVisibilitySeconds: 0 });
    const { job, created } = await a.submit(submitReq());
    expect(created).toBe(true);
    expect((await a.outboxStatus()).pending).toBe(1);

    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
    clock.advance(60_000); // past the failed row's backoff
    const r = await b.relayOutbox();
    expect(r).toMatchObject({ published: 1, pending_after: 0 });
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
  });

  it('lets a worker heal the outbox: claim runs the relay first', async () => {
    const e = env();
    const clock = new ManualClock();
    const a = e.make({ endpoint: `http://127.0.0.1:${await freePort()}`, clock, maxVisibilitySeconds: 0 });
    const { job } = await a.submit(submitReq());
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    clock.advance(60_000);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
  });

  it('publishes concurrent submits together (SendMessageBatch of up to 10), each submit returning once its job is published', async () => {
    const e = env();
    const client = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
    let batches = 0;
    const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
    (client as unknown as { send: (c: unknown) => Promise<unknown> }).send = (c: unknown) => {
      if (c instanceof SendMessageBatchCommand) batches++;
      return send(c);
    };
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0, client: client as SQSClient });
    await b.setup(['q']);
    const results = await Promise.all(Array.from({ length: 40 }, () => b.submit(submitReq())));
    expect(results.every((r) => r.created)).toBe(true);
    expect(await b.outboxStatus()).toMatchObject({ pending: 0, published: 40 });
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(40);
    // The first submit publishes alone; the rest queue up behind it and go out 10 at a time.
    expect(batches).toBeLessThanOrEqual(1 + Math.ceil(39 / 10) + 2);
    client.destroy();
  });

  it('runs a job once when the relay published it twice, and deletes the duplicate', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    // A relay that crashed after SendMessageBatch and before marking the row: it publishes again.
    const db = new Database(e.store);
    db.prepare('UPDATE sqs_outbox SET published_at = NULL').run();
    db.close();
    expect((await b.relayOutbox()).published).toBe(1);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(2);

    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(leases.map((l) => l.jobId)).toEqual([job.job_id]);
    expect(await b.claim({ queue: 'q', workerId: 'w2', max: 10, leaseMs: 60_000 })).toEqual([]);
    await b.complete(leases[0]!, 'ok');
    // With maxVisibilitySeconds 0 the message is visible again and the emulator rejects the old
    // receipt; a message of an ended job is deleted on its next receive at the latest.
    const { job: next } = await b.submit(submitReq());
    const more = await b.claim({ queue: 'q', workerId: 'w3', max: 10, leaseMs: 60_000 });
    expect(more.map((l) => l.jobId)).toEqual([next.job_id]);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    expect((await b.get(job.job_id))!.attempts).toHaveLength(1);
  });
});

describe('a consumer that dies mid-job (real visibility timeouts)', () => {
  it('gets the message back after the visibility timeout; the next attempt skips the effect already done', async () => {
    const e = env();
    const fast = { ...DEFAULT_RETRY_POLICY, backoff: [{ minMs: 50, maxMs: 100 }] };
    const first = e.make({ retryPolicy: fast });
    const { job } = await first.submit(submitReq({ max_attempts: 3 }));
    const [lease] = await first.claim({ queue: 'q', workerId: 'doomed', max: 1, leaseMs: 1000 });
    expect(lease?.jobId).toBe(job.job_id);
    await first.beginEffect(lease!, 'charge-card');
    await first.finishEffect(lease!, 'charge-card', { charge: 'ch_1' });
    // The consumer dies here: no complete, no delete, no heartbeat.

    const second = e.make({ retryPolicy: fast });
    const again = await pollUntil(
      async () => (await second.claim({ queue: 'q', workerId: 'survivor', max: 1, leaseMs: 30_000 }))[0],
      { timeoutMs: 20_000, intervalMs: 100, what: 'the message to come back after its visibility timeout' },
    );
    expect(again.jobId).toBe(job.job_id);
    expect(again.job.attempt).toBe(2);
    expect(again.job.attempts[0]).toMatchObject({ worker_id: 'doomed', outcome: 'lease_lost' });
    const effect = await second.beginEffect(again, 'charge-card');
    expect(effect).toMatchObject({ status: 'done', result: { charge: 'ch_1' } });
    await second.complete(again, 'done');
    const end = (await second.get(job.job_id))!;
    expect(end.state).toBe('succeeded');
    expect(end.effects).toHaveLength(1);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
  }, 30_000);
});

// The two fairness properties SQS can keep (the tenant-order cases of the shared suite are a
// written exception: see test/conformance/sqs.test.ts and docs/architecture.md).
describe('fairness on SQS', () => {
  it('weights classes 6/3/1 by which class queue it receives from, so batch and maintenance never starve', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    for (const cls of ['interactive', 'batch', 'maintenance'] as const) for (let i = 0; i < 30; i++) await b.submit(submitReq({ class: cls }));
    const order: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [l] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 600_000 });
      order.push(l!.job.class);
    }
    const count = (c: string) => order.filter((x) => x === c).length;
    expect([count('interactive'), count('batch'), count('maintenance')]).toEqual([12, 6, 2]);
    expect(order.slice(0, 10)).toContain('batch');
  });

  it('never runs more than the per-tenant cap, and frees a slot when a job ends', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0, fairness: { tenantConcurrency: 2 } });
    for (let i = 0; i < 5; i++) await b.submit(submitReq({ tenant_id: 'big' }));
    await b.submit(submitReq({ tenant_id: 'small' }));
    const first = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(first.filter((l) => l.job.tenant_id === 'big')).toHaveLength(2);
    expect(first.filter((l) => l.job.tenant_id === 'small')).toHaveLength(1);
    expect(await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 })).toEqual([]);
    await b.complete(first.find((l) => l.job.tenant_id === 'big')!, null);
    const next = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(next.map((l) => l.job.tenant_id)).toEqual(['big']);
  });
});

describe('leases are visibility timeouts (real time)', () => {
  it('a heartbeat extends the message\'s visibility; without one the message comes back when the lease ends', async () => {
    const e = env();
    const b = e.make();
    const kept = (await b.submit(submitReq({ tenant_id: 'kept' }))).job;
    const lapsed = (await b.submit(submitReq({ tenant_id: 'lapsed' }))).job;
    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 2000 });
    expect(leases.map((l) => l.jobId).sort()).toEqual([kept.job_id, lapsed.job_id].sort());
    const t0 = Date.now();
    const [hb] = await b.heartbeat([leases.find((l) => l.jobId === kept.job_id)!], 60_000);
    expect(hb).toMatchObject({ status: 'ok' });
    // Wait (by the clock, no fixed sleep) until both original 2 s visibilities have run out.
    await pollUntil(() => Date.now() > t0 + 3000, { what: 'the original visibility timeout to pass', intervalMs: 50 });
    const src = await queueUrl(sourceQueueName(e.prefix, 'q', 'batch'));
    const got = await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 30, MessageAttributeNames: ['All'] }));
    // Only the job without a heartbeat is visible again.
    expect((got.Messages ?? []).map((m) => m.MessageAttributes?.['agentq-job-id']?.StringValue)).toEqual([lapsed.job_id]);
  }, 20_000);
});

describe('the native backstop and jobs that wait', () => {
  it('a job not due yet is received again and again without reaching maxReceiveCount: its message is renewed, never moved to the DLQ', async () => {
    const e = env();
    const clock = new ManualClock();
    // max_receive_count=2: SQS moves a message to the DLQ on its third receive
    const b = e.make({ clock, maxVisibilitySeconds: 0, extra: '&autocreate=1&wait=0&max_receive_count=2' });
    const { job } = await b.submit(submitReq({ run_at: new Date(clock.now() + 3_600_000).toISOString() }));
    expect(job.state).toBe('scheduled');
    // hidden 0 s each time (maxVisibilitySeconds 0): every claim receives it again
    for (let i = 0; i < 6; i++) expect(await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 })).toEqual([]);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    expect((await b.sweepDlq('q')).custody).toEqual([]);
    clock.advance(3_600_000);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
    await b.complete(lease!, null);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
  });
});

describe('text SQS does not take', () => {
  it('an input with U+FFFF is delivered intact, and an error message with a colour escape still reaches the SQS DLQ', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const input = `a${String.fromCharCode(0xffff)}b${String.fromCharCode(0xfffe)}c`;
    const { job } = await b.submit(submitReq({ input, max_attempts: 1 }));
    expect((await b.relayOutbox()).failed).toEqual([]);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(job.job_id);
    expect(lease!.envelope.input).toBe(input);
    const message = 'boom \x1b[31mred\x1b[0m \x00 done';
    expect((await b.fail(lease!, { code: 'VALIDATION', message, retryable: false })).kind).toBe('dead');
    const got = await raw.send(new ReceiveMessageCommand({ QueueUrl: await queueUrl(dlqName(e.prefix, 'q')), MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'] }));
    expect(got.Messages).toHaveLength(1);
    expect(got.Messages![0]!.MessageAttributes!['agentq-error-message']!.StringValue).toBe('boom \uFFFD[31mred\uFFFD[0m \uFFFD done');
    expect(JSON.parse(got.Messages![0]!.Body!).input).toBe(input);
    // the store keeps the exact text
    expect((await b.dlqGet(job.job_id))!.error_message).toBe(message);
  });
});

describe('the DLQ on SQS', () => {
  custodyCases(() => ({ env, raw }));

  it('sends a permanently failed job to the SQS DLQ with its error attributes, deletes the source, and keeps the copy while the entry is dead', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 3 }));
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    const out = await b.fail(lease!, { code: 'VALIDATION', message: 'input rejected', retryable: false });
    expect(out.kind).toBe('dead');
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
    const got = await raw.send(new ReceiveMessageCommand({ QueueUrl: await queueUrl(dlqName(e.prefix, 'q')), MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'] }));
    expect(got.Messages).toHaveLength(1);
    const attrs = got.Messages![0]!.MessageAttributes!;
    expect(attrs['agentq-job-id']!.StringValue).toBe(job.job_id);
    expect(attrs['agentq-error-code']!.StringValue).toBe('VALIDATION');
    expect(attrs['agentq-error-message']!.StringValue).toBe('input rejected');
    expect(attrs['agentq-dead-reason']!.StringValue).toBe('permanent');
    expect(JSON.parse(got.Messages![0]!.Body!)).toMatchObject({ job_id: job.job_id, workflow: 'research_report:v3' });

    // The store holds the rich entry; the sweep leaves the copy while the entry is dead …
    const s1 = await b.sweepDlq('q');
    expect(s1).toMatchObject({ received: 1, mirror_kept: 1, deleted: 0, custody: [] });
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(1);
    // … and removes it once the entry left the DLQ (here: redriven).
    const now = clock.now();
    await b.createRun(
      { run_id: 'run_01JAAAAAAAAAAAAAAAAAAAAAAA', queue: 'q', action: 'redrive', user: 't', context: null, reason: null, filters: {}, options: { attempts: { kind: 'reset' } }, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
      [{ job_id: job.job_id, verdict: 'redrive', detail: null }],
    );
    const items = await b.applyRunItems({ runId: 'run_01JAAAAAAAAAAAAAAAAAAAAAAA', jobIds: [job.job_id], now });
    expect(items.map((i) => i.status)).toEqual(['moved']);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(1);
    const s2 = await b.sweepDlq('q');
    expect(s2).toMatchObject({ received: 1, deleted: 1 });
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    const [back] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(back?.jobId).toBe(job.job_id);
  });

  it('a purge leaves none of the job in the SQS tables (its delivery and outbox rows); the sweep still deletes its copy', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 1 }));
    expect((await b.republish([job.job_id])).relay.published).toBe(1);
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect((await b.fail(lease!, { code: 'VALIDATION', message: 'no', retryable: false })).kind).toBe('dead');
    const rows = () => withDb(e.store, (db) => ['sqs_deliveries', 'sqs_outbox'].map((t) => (db.prepare(`SELECT count(*) AS n FROM ${t} WHERE job_id = ?`).get(job.job_id) as { n: number }).n));
    expect(rows()).toEqual([1, 2]);
    const now = clock.now();
    const runId = 'run_01JEEEEEEEEEEEEEEEEEEEEEEE';
    await b.createRun(
      { run_id: runId, queue: 'q', action: 'purge', user: 't', context: null, reason: null, filters: {}, options: {}, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 1, moved: 0, skipped: 0, failed: 0 } },
      [{ job_id: job.job_id, verdict: 'purge', detail: null }],
    );
    expect((await b.applyRunItems({ runId, jobIds: [job.job_id], now })).map((i) => i.status)).toEqual(['moved']);
    expect(rows()).toEqual([0, 0]);
    expect(await b.sweepDlq('q')).toMatchObject({ received: 1, deleted: 1, custody: [] });
  });

  it('says once that a dead job\'s copy was not sent when the SQS DLQ does not exist, and keeps the source message', async () => {
    const e = env();
    const clock = new ManualClock();
    await e.make({ clock }).setup(['q']);
    await raw.send(new DeleteQueueCommand({ QueueUrl: await queueUrl(dlqName(e.prefix, 'q')) }));
    const b = e.make({ extra: '&wait=0', clock, maxVisibilitySeconds: 0 });
    const deaths = [];
    for (let i = 0; i < 2; i++) {
      await b.submit(submitReq({ max_attempts: 1 }));
      const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
      deaths.push(await b.fail(lease!, { code: 'VALIDATION', message: 'input rejected', retryable: false }));
    }
    expect(deaths.map((d) => d.kind)).toEqual(['dead', 'dead']);
    expect(deaths[0]).toMatchObject({ warning: expect.stringMatching(/the SQS DLQ \S+-q-dlq does not exist: .*Run: agentq sqs setup --queue q/) });
    expect(deaths[1]).not.toHaveProperty('warning');
    // The source messages stay, so the copies go out once the DLQ exists again.
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(2);
  });

  it('takes an agentq DLQ copy of a job its store does not know into custody byte-exact before deleting it (another store wrote it)', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq({ max_attempts: 1 }));
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect((await b.fail(lease!, { code: 'VALIDATION', message: 'input rejected', retryable: false })).kind).toBe('dead');
    const copy = (await raw.send(new ReceiveMessageCommand({ QueueUrl: await queueUrl(dlqName(e.prefix, 'q')), MaxNumberOfMessages: 1, VisibilityTimeout: 0, MessageAttributeNames: ['All'] }))).Messages![0]!;

    // The same SQS queues, another job store (a wrong store= in a URL): the copy is the only record of the job there.
    const other = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0, store: join(e.dir, 'other.db') });
    const report = await other.sweepDlq('q');
    expect(report.custody).toEqual([expect.objectContaining({ kind: 'agentq', recorded: 'kept', message_id: copy.MessageId })]);
    expect(report.custody[0]!.why).toMatch(new RegExp(`DLQ copy of job ${job.job_id} .*this job store has no such job`));
    expect(report.deleted).toBe(1);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    const kept = report.custody[0]!.job_id;
    expect(await other.ext.custody(kept)).toMatchObject({ kind: 'orphan', body: copy.Body, message_id: copy.MessageId });
    expect(Buffer.from((await other.dlqRaw(kept))!).toString('utf8')).toBe(copy.Body);
    // Listed as malformed: never redriven or purged by the bulk engine.
    expect((await other.dlqGet(kept))!).toMatchObject({ error_code: 'SQS_ORPHAN', malformed: expect.any(String) });
    // The store that knows the job still holds it dead.
    expect((await b.get(job.job_id))!.state).toBe('dead');
  });

  it('takes a natively dead-lettered message into custody and shows the job dead with the reason', async () => {
    const e = env();
    const b = e.make({ extra: '&autocreate=1&wait=0&max_receive_count=2' });
    const { job } = await b.submit(submitReq());
    const src = await queueUrl(sourceQueueName(e.prefix, 'q', 'batch'));
    // Consumers that crash before touching the store: received, never deleted, three times.
    for (let i = 0; i < 3; i++) await raw.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(1);

    const report = await b.sweepDlq('q');
    expect(report.custody).toEqual([expect.objectContaining({ job_id: job.job_id, kind: 'agentq', recorded: 'job_dead' })]);
    expect(report.deleted).toBe(1);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    const entry = (await b.dlqGet(job.job_id))!;
    expect(entry).toMatchObject({ reason: 'custody', error_code: 'SQS_MAX_RECEIVES', malformed: null });
    expect(entry.error_message).toMatch(/maxReceiveCount 2\) after 3 receives/);
    expect((await b.dlqList({ queue: 'q' }, { limit: 10 })).items.map((i) => i.job_id)).toEqual([job.job_id]);
    // A second sweep finds nothing and changes nothing.
    expect(await b.sweepDlq('q')).toMatchObject({ received: 0, custody: [] });
  });

  it('keeps foreign and malformed messages byte-exact with their attributes, lists them as malformed, and never redrives or purges them', async () => {
    const e = env();
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const dlq = await queueUrl(dlqName(e.prefix, 'q'));
    // SQS itself refuses C0 controls in a body; bidi overrides and markup get through.
    const foreignBody = 'order 7 failed \u202e<b>gnp.exe</b> — ünïcödé';
    const malformedBody = '{"job_id":"job_01JXXXXXXXXXXXXXXXXXXXXXXX","workflow":5}';
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: foreignBody, MessageAttributes: { source: { DataType: 'String', StringValue: 'billing' } } }));
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: malformedBody, MessageAttributes: { 'agentq-format': { DataType: 'String', StringValue: 'agentq.envelope.v1' } } }));

    const report = await b.sweepDlq('q');
    expect(report.custody.map((c) => [c.kind, c.recorded]).sort()).toEqual([['foreign', 'kept'], ['malformed', 'kept']]);
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(0);
    const foreign = report.custody.find((c) => c.kind === 'foreign')!;
    const malformed = report.custody.find((c) => c.kind === 'malformed')!;
    expect(Buffer.from((await b.dlqRaw(foreign.job_id))!).toString('utf8')).toBe(foreignBody);
    expect(Buffer.from((await b.dlqRaw(malformed.job_id))!).toString('utf8')).toBe(malformedBody);
    const kept = (await b.ext.custody(foreign.job_id))!;
    expect(kept).toMatchObject({ kind: 'foreign', body: foreignBody, source_queue: dlqName(e.prefix, 'q') });
    expect((kept.attributes.message_attributes as Record<string, { StringValue: string }>).source!.StringValue).toBe('billing');
    const entry = (await b.dlqGet(foreign.job_id))!;
    expect(entry.malformed).toMatch(/foreign|not valid JSON/);
    expect(entry.error_code).toBe('SQS_FOREIGN');

    // The bulk engine's apply step refuses to move or drop them.
    const now = clock.now();
    for (const [runId, action] of [['run_01JBBBBBBBBBBBBBBBBBBBBBBB', 'redrive'], ['run_01JCCCCCCCCCCCCCCCCCCCCCCC', 'purge']] as const) {
      await b.createRun(
        { run_id: runId, queue: 'q', action, user: 't', context: null, reason: null, filters: {}, options: {}, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString(), status: 'planned', counts: { planned: 2, moved: 0, skipped: 0, failed: 0 } },
        [foreign.job_id, malformed.job_id].map((id) => ({ job_id: id, verdict: action, detail: null })),
      );
      const items = await b.applyRunItems({ runId, jobIds: [foreign.job_id, malformed.job_id], now });
      expect(items.map((i) => i.status)).toEqual(['skipped', 'skipped']);
    }
    expect(Buffer.from((await b.dlqRaw(foreign.job_id))!).toString('utf8')).toBe(foreignBody);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(0);
  });

  it('keeps a binary message attribute of a message in custody as its bytes in base64, not as an object of numbered bytes', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(e.prefix, 'q') }))).QueueUrl!;
    const blob = Buffer.from([0, 1, 2, 255]);
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'with a binary attribute', MessageAttributes: { blob: { DataType: 'Binary', BinaryValue: blob } } }));
    const report = await b.sweepDlq('q');
    const kept = (await b.ext.custody(report.custody[0]!.job_id))!;
    expect((kept.attributes.message_attributes as Record<string, unknown>).blob).toEqual({ DataType: 'Binary', BinaryValue: blob.toString('base64') });
  });

  it('with leaveForeign, records foreign messages but leaves them in SQS, and does not record them twice', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    await raw.send(new SendMessageCommand({ QueueUrl: await queueUrl(dlqName(e.prefix, 'q')), MessageBody: 'not ours' }));
    const r1 = await b.sweepDlq('q', { leaveForeign: true });
    expect(r1).toMatchObject({ received: 1, kept_in_sqs: 1, deleted: 0 });
    expect(await depth(dlqName(e.prefix, 'q'))).toBe(1);
    expect(r1.custody.map((c) => c.recorded)).toEqual(['kept']);
    const r2 = await b.sweepDlq('q', { leaveForeign: true });
    expect(r2.custody[0]!.job_id).toBe(r1.custody[0]!.job_id);
    // found again, not taken into custody again: the report says so (a repeated sweep counted it every time)
    expect(r2.custody.map((c) => c.recorded)).toEqual(['already_kept']);
    expect(r2).toMatchObject({ received: 1, already_in_custody: 1, kept_in_sqs: 1, deleted: 0 });
    expect((await b.dlqList({ queue: 'q' }, { limit: 10 })).items).toHaveLength(1);
  });

  it('receives no more than --max messages, however many receive loops run at once (each receive raises a receive count)', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const dlq = await queueUrl(dlqName(e.prefix, 'q'));
    for (let i = 0; i < 20; i++) await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `not ours ${i}` }));
    const r = await b.sweepDlq('q', { max: 3, leaveForeign: true });
    expect(r).toMatchObject({ received: 3, kept_in_sqs: 3, max_reached: true });
    expect(r.custody).toHaveLength(3);
    const all = await raw.send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    const again = await raw.send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    const seen = new Map([...(all.Messages ?? []), ...(again.Messages ?? [])].map((m) => [m.MessageId!, Number(m.Attributes!.ApproximateReceiveCount)]));
    expect(seen.size).toBe(20);
    // Our own receive above adds one to each; the sweep's added one more to exactly three messages.
    expect([...seen.values()].filter((c) => c > 1)).toHaveLength(3);
    // A sweep that empties the DLQ did not stop at its --max.
    expect((await b.sweepDlq('q', { max: 100 })).max_reached).toBeUndefined();
  });

  it('leaves a foreign message in a source queue alone: never run, never deleted', async () => {
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    await raw.send(new SendMessageCommand({ QueueUrl: await queueUrl(sourceQueueName(e.prefix, 'q', 'batch')), MessageBody: 'hello from another system' }));
    await b.submit(submitReq());
    const leases = await b.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    expect(leases).toHaveLength(1);
    expect(await depth(sourceQueueName(e.prefix, 'q', 'batch'))).toBe(2);
  });
});
