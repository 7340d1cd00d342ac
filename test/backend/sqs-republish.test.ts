/**
 * `agentq sqs republish` at the backend (SqsBackend.republish) on both job
 * stores (SQLite file, Redis), against fauxqs on loopback: a job whose SQS
 * message was lost (the queue purged) is stuck until republished, then runs;
 * a job whose message was not lost runs once after a republish, its second
 * message deleted as a duplicate; a job still waiting in the outbox, or not
 * waiting, is left alone.
 */
import { readFileSync, existsSync } from 'node:fs';
import { GetQueueAttributesCommand, GetQueueUrlCommand, PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend, type SqsBackendOptions } from '../../src/backend/sqs/index.js';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { makeCliHome, runCli, runCliOk } from '../support/cli.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
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
type StoreKind = 'sqlite' | 'redis';
function env(kind: StoreKind, extra = '') {
  const prefix = `rp${process.pid}x${++seq}`;
  const dir = mkdtempSync(join(tmpdir(), 'agentq-republish-'));
  dirs.push(dir);
  return {
    prefix,
    make(o: { endpoint?: string } & Partial<SqsBackendOptions> = {}): SqsBackend {
      const endpoint = o.endpoint ?? sqs.endpoint;
      const url =
        kind === 'sqlite'
          ? sqsUrl(endpoint, prefix, join(dir, 'store.db'), `&autocreate=1&wait=0${extra}`)
          : `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint)}&store=${encodeURIComponent(`${redis.url}?prefix=${prefix}`)}&autocreate=1&wait=0${extra}`;
      const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, random: seededRandom(seq), ...o });
      open.push(b);
      return b;
    },
  };
}

async function queueUrl(name: string): Promise<string> {
  return (await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
}

async function depth(name: string): Promise<number> {
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: await queueUrl(name), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }))).Attributes!;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible) + Number(a.ApproximateNumberOfMessagesDelayed);
}

/**
 * A receive comes only from class queues with jobs to deliver, so the copy left of an ended job
 * waits for the next job: with one running, every stale copy is received and deleted, and the
 * queue holds that job's message alone; the ended job never ran again.
 */
async function expectOnlyCopiesOf(b: SqsBackend, source: string): Promise<void> {
  const { job } = await b.submit(submitReq());
  const leases: string[] = [];
  await pollUntil(async () => {
    for (const l of await claim(b, 'flush')) leases.push(l.jobId);
    return leases.length > 0 && (await depth(source)) === 1;
  }, { what: 'the stale copies deleted' });
  expect(leases).toEqual([job.job_id]);
  await b.cancel(job.job_id);
}

/** Empties an SQS queue, as an operator's purge (or SQS restarted empty) does: its messages are lost. */
async function purge(queueName: string): Promise<void> {
  await raw.send(new PurgeQueueCommand({ QueueUrl: await queueUrl(queueName) }));
  await pollUntil(async () => (await depth(queueName)) === 0, { what: 'the purge' });
}

const submitReq = () => ({ workflow: 'research_report:v3', queue: 'q' });
const claim = (b: SqsBackend, w = 'w') => b.claim({ queue: 'q', workerId: w, max: 10, leaseMs: 60_000 });

describe.each<StoreKind>(['sqlite', 'redis'])('sqs republish (%s job store)', (kind) => {
  it('runs a job whose message SQS lost after a retry (its old delivery forgotten, not taken for a live one)', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const [lease] = await claim(b);
    expect(lease?.jobId).toBe(job.job_id);
    // A retry: queued again, carried by the same message (the store records it as the job's delivery).
    expect((await b.fail(lease!, { code: 'TRANSIENT', message: 'flaky', retryable: true })).kind).toBe('retry');
    const source = sourceQueueName(e.prefix, 'q', 'batch');
    await purge(source);
    clock.advance(3600_000);
    // The defect: the store says queued and published, SQS has nothing; no claim ever finds it.
    expect(await claim(b)).toEqual([]);
    expect((await b.get(job.job_id))!.state).toBe('scheduled');

    const r = await b.republish([job.job_id]);
    expect(r.outcomes).toEqual([{ job_id: job.job_id, result: 'republished', state: 'scheduled' }]);
    expect(r.relay).toMatchObject({ published: 1, failed: [] });
    const [again] = await claim(b);
    expect(again?.jobId).toBe(job.job_id);
    await b.complete(again!, 'ok');
    expect((await b.get(job.job_id))!.attempts).toHaveLength(2);
  });

  it('runs a job whose worker died and whose message SQS lost (running, its lease expired): the new message reaps the lease', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const [lease] = await claim(b);
    expect(lease?.jobId).toBe(job.job_id);
    const source = sourceQueueName(e.prefix, 'q', 'batch');
    await purge(source);
    // a live lease is left alone
    expect((await b.republish([job.job_id])).outcomes[0]).toMatchObject({ result: 'not_waiting', state: 'running' });
    clock.advance(24 * 3600_000);
    // the defect: running for ever, its lease long expired, nothing to receive
    expect(await claim(b)).toEqual([]);
    expect((await b.get(job.job_id))!.state).toBe('running');

    const r = await b.republish([job.job_id]);
    expect(r.outcomes[0]).toMatchObject({ result: 'republished', state: 'running' });
    expect(r.relay.published).toBe(1);
    // received: the lease is reaped (a retry), the message hidden until it is due
    expect(await claim(b)).toEqual([]);
    expect((await b.get(job.job_id))!.state).toBe('scheduled');
    clock.advance(3600_000);
    const [again] = await claim(b);
    expect(again?.jobId).toBe(job.job_id);
    await b.complete(again!, 'ok');
    expect((await b.get(job.job_id))!.attempts.map((a) => a.outcome)).toEqual(['lease_lost', 'succeeded']);
  });

  it('runs a job once when its message was not lost: the message received second is deleted as a duplicate', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const source = sourceQueueName(e.prefix, 'q', 'batch');
    expect((await b.republish([job.job_id])).relay.published).toBe(1);
    expect(await depth(source)).toBe(2);
    const leases = await claim(b);
    expect(leases.map((l) => l.jobId)).toEqual([job.job_id]);
    expect(await claim(b, 'w2')).toEqual([]);
    await b.complete(leases[0]!, 'ok');
    expect((await b.get(job.job_id))!.attempts).toHaveLength(1);
    await expectOnlyCopiesOf(b, source);

    // republished while a retry waits on the old message (its delivery): the two still run it once
    const { job: j2 } = await b.submit(submitReq());
    const [l2] = await claim(b);
    expect(l2?.jobId).toBe(j2.job_id);
    await b.fail(l2!, { code: 'TRANSIENT', message: 'flaky', retryable: true });
    expect((await b.republish([j2.job_id])).outcomes[0]!.result).toBe('republished');
    clock.advance(3600_000);
    const got = [...(await claim(b)), ...(await claim(b, 'w2'))];
    expect(got.map((l) => l.jobId)).toEqual([j2.job_id]);
    await b.complete(got[0]!, 'ok');
    expect((await b.get(j2.job_id))!.attempts).toHaveLength(2);
    await expectOnlyCopiesOf(b, source);
  });

  it('on FIFO queues, a republish within the 5-minute dedup window of the last publish is a new message (not dropped as a copy of it), and a second republish too', async () => {
    const e = env(kind, '&fifo=1');
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const source = sourceQueueName(e.prefix, 'q', 'batch', true);
    expect(await depth(source)).toBe(1);
    await purge(source);
    // (fauxqs keeps its dedup window in real time: this runs well inside 5 minutes of the submit)
    for (let round = 1; round <= 2; round++) {
      const r = await b.republish([job.job_id]);
      expect(r.outcomes[0]).toMatchObject({ result: 'republished' });
      expect(r.relay).toMatchObject({ published: 1, failed: [] });
      // the defect: SQS took the send and dropped it (same deduplication id as the submit's), so nothing arrived
      expect(await depth(source)).toBe(1);
      if (round === 1) await purge(source);
    }
    const [lease] = await claim(b);
    expect(lease?.jobId).toBe(job.job_id);
    await b.complete(lease!, 'ok');
  });

  it('a relay that sends the same republished message twice (its answer lost) is deduplicated by SQS on FIFO queues', async () => {
    const e = env(kind, '&fifo=1');
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const source = sourceQueueName(e.prefix, 'q', 'batch', true);
    await purge(source);
    // The republish's rows, sent twice as a relay whose first answer was lost would send them.
    await b.ext.republish([job.job_id]);
    const rows = await b.ext.pendingOutbox(0, [job.job_id]);
    expect(rows).toHaveLength(1);
    const again = await b.ext.pendingOutbox(0, [job.job_id]);
    expect((await b.relay.publish(rows)).published).toBe(1);
    expect((await b.relay.publish(again)).published).toBe(1);
    expect(await depth(source)).toBe(1);
  });

  it('a running job whose lease expired, republished with no attempts left, dies with its copy in the SQS DLQ (as every death)', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const { job } = await b.submit({ ...submitReq(), max_attempts: 1 });
    const [lease] = await claim(b);
    expect(lease?.jobId).toBe(job.job_id);
    const source = sourceQueueName(e.prefix, 'q', 'batch');
    await purge(source);
    clock.advance(24 * 3600_000);
    expect((await b.republish([job.job_id])).outcomes[0]).toMatchObject({ result: 'republished', state: 'running' });
    // received: the lease is reaped, no attempt left, so the job dies
    expect(await claim(b)).toEqual([]);
    const dead = (await b.get(job.job_id))!;
    expect(dead.state).toBe('dead');
    expect(dead.dead).toMatchObject({ reason: 'lease_lost' });
    // the defect: the store's DLQ had it, the SQS DLQ had no copy (and the message was deleted)
    await pollUntil(async () => (await depth(dlqName(e.prefix, 'q'))) === 1, { what: 'the copy in the SQS DLQ' });
    expect(await depth(source)).toBe(0);
  });

  it('a republished running job (its lease expired) whose publish failed is published by the relay later, and counted as waiting meanwhile', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    const { job } = await b.submit(submitReq());
    const [lease] = await claim(b);
    expect(lease?.jobId).toBe(job.job_id);
    await purge(sourceQueueName(e.prefix, 'q', 'batch'));
    clock.advance(24 * 3600_000);
    // republished while SQS cannot be reached: the row waits in the outbox
    const down = e.make({ endpoint: `http://127.0.0.1:${await freePort()}`, clock, maxVisibilitySeconds: 0, random: seededRandom(4242) });
    const r = await down.republish([job.job_id]);
    expect(r.outcomes[0]).toMatchObject({ result: 'republished', state: 'running' });
    expect(r.relay.published).toBe(0);
    // the defect (Redis store): the relay looked for waiting jobs among queued and scheduled ones only
    expect((await b.outboxStatus()).pending).toBe(1);
    expect((await b.unpublished('q')).count).toBe(1);
    expect(await b.relayOutbox({ now: true })).toMatchObject({ published: 1, pending_after: 0 });
    // received: the lease is reaped (a retry)
    expect(await claim(b)).toEqual([]);
    expect((await b.get(job.job_id))!.state).toBe('scheduled');
  });

  it('leaves a job waiting in the outbox to the relay, and one that is not waiting alone', async () => {
    const e = env(kind);
    const clock = new ManualClock();
    const dead = e.make({ endpoint: `http://127.0.0.1:${await freePort()}`, clock, maxVisibilitySeconds: 0, random: seededRandom(9999) });
    const { job: unpublished } = await dead.submit(submitReq());
    const b = e.make({ clock, maxVisibilitySeconds: 0 });
    expect((await b.republish([unpublished.job_id])).outcomes.map((o) => o.result)).toEqual(['pending']);
    // (another queue: a claim's catch-up may publish the pending row meanwhile)
    const { job: running } = await b.submit({ ...submitReq(), queue: 'q2' });
    const [lease] = await b.claim({ queue: 'q2', workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease?.jobId).toBe(running.job_id);
    const r = await b.republish([running.job_id, 'job_01JZZZZZZZZZZZZZZZZZZZZZZZ']);
    expect(r.outcomes.map((o) => o.result)).toEqual(['not_waiting', 'unknown']);
    expect(r.relay.published).toBe(0);
    // the running job's delivery is untouched: completing it deletes its message
    await b.complete(lease!, 'ok');
    await pollUntil(async () => (await depth(sourceQueueName(e.prefix, 'q2', 'batch'))) === 0, { what: 'the message deleted' });
  });
});

describe('agentq sqs republish (built CLI)', () => {
  const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
  it('worker --drain names running jobs whose leases expired and whose messages SQS lost (their workers gone), with the republish that runs them', async () => {
    const home = makeCliHome('agentq-republish-lapsed-');
    try {
      const prefix = `rl${process.pid}`;
      const url = sqsUrl(sqs.endpoint, prefix, join(home.dir, 'store.db'), '&wait=0');
      const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url });
      let expiresAt: number;
      try {
        await b.setup(['z']);
        await b.submit({ workflow: 'x:v1', queue: 'z' });
        // a worker that took it and died: its lease runs out, and SQS then loses the message
        const [lease] = await b.claim({ queue: 'z', workerId: 'gone', max: 1, leaseMs: 500 });
        expiresAt = lease!.expiresAt;
      } finally {
        await b.close();
      }
      await purge(sourceQueueName(prefix, 'z', 'batch'));
      await pollUntil(() => Date.now() > expiresAt, { what: 'the lease to run out' });
      const drained = await runCliOk(home, ['--url', url, 'worker', '-q', 'z', '--drain', '--', 'true'], { env: CREDS });
      // the defect: exit 0 and nothing said, the job running for ever
      expect(drained.stderr).toContain('warning: 1 job(s) of queue z are running in the store with expired leases, and SQS delivered none of their messages');
      expect(drained.stderr).toContain('`agentq sqs republish --queue z --dry-run`');
      const plan = await runCliOk(home, ['--url', url, 'sqs', 'republish', '--queue', 'z', '--dry-run'], { env: CREDS });
      expect(plan.stderr).toContain('dry run: would give 1 waiting job(s) of z a new SQS message');
    } finally {
      home.cleanup();
    }
  }, 60_000);

  it('republishes a job whose message was purged (plan, dry run, confirmation), and runs a job whose message was not lost once', async () => {
    const home = makeCliHome('agentq-republish-');
    try {
      const prefix = `rc${process.pid}`;
      const url = sqsUrl(sqs.endpoint, prefix, join(home.dir, 'store.db'), '&wait=0');
      const cli = (args: string[], expectCode = 0) => runCliOk(home, ['--url', url, ...args], { env: CREDS, expectCode });
      const runs = join(home.dir, 'runs');
      const count = () => (existsSync(runs) ? readFileSync(runs, 'utf8').length : 0);
      const work = ['worker', '-q', 'z', '--drain', '--', process.execPath, '-e', `require('fs').appendFileSync(${JSON.stringify(runs)}, 'x')`];

      await cli(['sqs', 'setup', '--queue', 'z']);
      const { job_id } = JSON.parse((await cli(['submit', 'x:v1', '-q', 'z', '-o', 'json'])).stdout) as { job_id: string };
      const source = sourceQueueName(prefix, 'z', 'batch');
      await purge(source);
      // the defect: nothing claimable, exit 0, the job queued for ever
      const stuck = await cli(work);
      expect(count()).toBe(0);
      // said, with the way out (exit 0 stays: the store's side is drained)
      expect(stuck.stderr).toContain('warning: 1 job(s) of queue z are queued in the store but SQS delivered none of them');
      expect(stuck.stderr).toContain('`agentq sqs republish --queue z --dry-run`');

      const dry = await cli(['sqs', 'republish', '--queue', 'z', '--dry-run']);
      expect(dry.stdout).toContain(job_id);
      expect(dry.stderr).toContain('dry run: would give 1 waiting job(s) of z a new SQS message; nothing changed');
      expect(await depth(source)).toBe(0);
      // a job newer than --older-than is not in the plan
      expect((await cli(['sqs', 'republish', '--queue', 'z', '--older-than', '1h', '--yes'])).stderr).toContain('nothing to republish');
      // in a script without --yes: declined (exit 3), nothing sent
      const declined = await runCli(home, ['--url', url, 'sqs', 'republish', '--queue', 'z'], { env: CREDS });
      expect(declined.code).toBe(3);
      expect(declined.stderr).toContain('deleted as a duplicate when received');
      expect(await depth(source)).toBe(0);
      // an id that is not a job id: exit 2
      expect((await cli(['sqs', 'republish', '--queue', 'z', '--job', 'nope', '--yes'], 2)).stderr).toContain('--job must be a job id');

      const done = JSON.parse((await cli(['sqs', 'republish', '--queue', 'z', '--yes', '-o', 'json'])).stdout) as { republished: number; published: number; jobs: Array<{ job_id: string; result: string }> };
      expect(done).toMatchObject({ republished: 1, published: 1, jobs: [{ job_id, result: 'republished' }] });
      expect((await cli(work)).stderr).not.toContain('SQS delivered none');
      expect(count()).toBe(1);
      expect(JSON.parse((await cli(['inspect', job_id, '-o', 'json'])).stdout)).toMatchObject({ state: 'succeeded' });

      // not lost: two messages for one job; it runs once
      const { job_id: second } = JSON.parse((await cli(['submit', 'x:v1', '-q', 'z', '-o', 'json'])).stdout) as { job_id: string };
      expect((await cli(['sqs', 'republish', '--queue', 'z', '--job', second, '--yes'])).stderr).toContain('republished 1 of 1: 1 published to SQS');
      expect(await depth(source)).toBe(2);
      await cli(work);
      await cli(work);
      expect(count()).toBe(2);
      expect(JSON.parse((await cli(['inspect', second, '-o', 'json'])).stdout)).toMatchObject({ state: 'succeeded', attempts: [expect.anything()] });
    } finally {
      home.cleanup();
    }
  }, 120_000);
});
