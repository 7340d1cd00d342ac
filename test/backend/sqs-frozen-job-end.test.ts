/**
 * A worker on SQS whose SQS freezes (SIGSTOP: connections accepted, never answered) after it
 * claimed a job, while its job store (SQLite, Redis) answers. The job's end (complete, fail into
 * the DLQ) was recorded in the store at once, then the worker waited for SQS to delete the message
 * (and, for a dead job, to take its DLQ copy): with a frozen SQS for its time-outs, holding the
 * worker's slot, and its stop, all along. Now the end answers once the store has it, after a short
 * wait for SQS, and the SQS work goes on behind (one call at a time per job); a stop waits for it
 * within its grace, then says what it left, and nothing is lost (the store is the truth).
 * A dead job's source message is still deleted only once its DLQ copy is confirmed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { defaultCredentials } from '../../src/backend/sqs/credentials.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { createWorker, HandlerError, type WorkerEvent } from '../../src/index.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { collect, makeCliHome, spawnCli } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
let dir: string;
let frozen = false;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-frozen-end-'));
});
afterAll(async () => {
  if (frozen) sqs?.signal('SIGCONT');
  await servers.stopAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let seq = 0;
const stores: Array<{ name: string; store: (prefix: string) => string }> = [
  { name: 'SQLite store', store: (prefix) => `sqlite:${join(dir, `${prefix}.db`)}` },
  { name: 'Redis store', store: (prefix) => `${redis.url}?prefix=${prefix}` },
];

function freeze(): void {
  sqs.signal('SIGSTOP');
  frozen = true;
}
function thaw(): void {
  if (!frozen) return;
  sqs.signal('SIGCONT');
  frozen = false;
}

/** A backend whose SQS calls time out only after 10 minutes: whatever waits on a frozen SQS waits that long. */
function open(store: (prefix: string) => string) {
  const prefix = `fe${process.pid}x${++seq}`;
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(store(prefix))}&wait=0&autocreate=1`;
  const dataPlane = new SqsWireClient(
    { credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) },
    { region: 'us-east-1', endpoint: sqs.endpoint, socketTimeoutMs: 600_000, maxAttempts: 1 },
  );
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane });
  return { backend, dataPlane, queue: prefix };
}

/** Resolves when the returned `stopped` flag is set: a stop that hangs is seen by pollUntil, not by the test's timeout. */
function stopping(stop: () => Promise<void>): { done: () => boolean } {
  let done = false;
  void stop().then(() => (done = true));
  return { done: () => done };
}

/**
 * A worker of concurrency 1 on a fresh queue of `store`, its events collected; `close` thaws SQS
 * and ends the worker, the backend and the test's own SQS client (each case's finally).
 */
function frozenWorker(store: (prefix: string) => string, handler: Parameters<typeof createWorker>[0]['handler']) {
  const { backend, dataPlane, queue } = open(store);
  const events: WorkerEvent[] = [];
  const worker = createWorker({
    backend,
    queue,
    concurrency: 1,
    leaseMs: 60_000,
    heartbeatMs: 100,
    gracefulMs: 1_000,
    minIdleMs: 20,
    maxIdleMs: 100,
    handler,
    logger: (e) => void events.push(e),
  });
  const close = async () => {
    thaw();
    await worker.stop();
    await backend.close();
    dataPlane.destroy();
  };
  /** Submits a job, lets the worker claim it, then freezes SQS: the job as submitted. */
  const claimedThenFrozen = async () => {
    const { job } = await backend.submit({ workflow: 'noop:v1', queue });
    await backend.workerPreflight(queue);
    await worker.start();
    await pollUntil(() => events.some((e) => e.kind === 'claimed'), { what: 'the job to be claimed' });
    freeze();
    return job;
  };
  return { backend, dataPlane, queue, events, worker, close, claimedThenFrozen };
}

/** A handler's gate: the handler waits on `finished` until the test calls `finish`. */
function gate(): { finished: Promise<void>; finish: () => void } {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  return { finished, finish };
}

for (const { name, store } of stores) {
  describe(`SQS frozen after the claim (${name})`, () => {
    it('a completed job frees the slot once the store has it; the stop says what SQS work it left', async () => {
      const { finished, finish } = gate();
      const { backend, events, worker, close, claimedThenFrozen } = frozenWorker(store, async () => {
        await finished;
        return 'done';
      });
      try {
        const job = await claimedThenFrozen();
        finish();
        await pollUntil(() => events.some((e) => e.kind === 'succeeded'), { timeoutMs: 15_000, what: 'the slot to be freed (succeeded) while SQS is frozen' });
        expect((await backend.get(job.job_id))?.state).toBe('succeeded');
        const stop = stopping(() => worker.stop());
        await pollUntil(stop.done, { timeoutMs: 15_000, what: 'the stop to finish while SQS is frozen' });
        const left = events.find((e) => e.kind === 'broker_work_left');
        expect(left).toMatchObject({ kind: 'broker_work_left', jobs: 1 });
      } finally {
        await close();
      }
    }, 60_000);

    it('a cancelled job frees the slot once the store has it', async () => {
      const { backend, events, close, claimedThenFrozen } = frozenWorker(store, async (_env, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        throw ctx.signal.reason;
      });
      try {
        const job = await claimedThenFrozen();
        expect((await backend.cancel(job.job_id, 'customer withdrew')).status).toBe('cancel_requested');
        await pollUntil(() => events.some((e) => e.kind === 'aborted'), { timeoutMs: 15_000, what: 'the slot to be freed (aborted) while SQS is frozen' });
        expect((await backend.get(job.job_id))?.state).toBe('cancelled');
      } finally {
        await close();
      }
    }, 60_000);

    it('a job whose attempt fails for a retry frees the slot once the store has it', async () => {
      const { finished, finish } = gate();
      const { backend, events, close, claimedThenFrozen } = frozenWorker(store, async () => {
        await finished;
        throw new HandlerError('UPSTREAM_DOWN', 'try again later', { retryable: true });
      });
      try {
        const job = await claimedThenFrozen();
        finish();
        await pollUntil(() => events.some((e) => e.kind === 'failed' && e.outcome === 'retry'), { timeoutMs: 15_000, what: 'the slot to be freed (retry) while SQS is frozen' });
        expect((await backend.get(job.job_id))?.state).toBe('scheduled');
      } finally {
        await close();
      }
    }, 60_000);

    it('a job that dies frees the slot once the store has it; its DLQ copy is sent behind, then its message deleted', async () => {
      const { finished, finish } = gate();
      const { backend, dataPlane, queue, events, close, claimedThenFrozen } = frozenWorker(store, async () => {
        await finished;
        throw new HandlerError('BAD_INPUT', 'cannot be done', { retryable: false });
      });
      try {
        const job = await claimedThenFrozen();
        finish();
        await pollUntil(() => events.some((e) => e.kind === 'failed' && e.outcome === 'dead'), { timeoutMs: 15_000, what: 'the slot to be freed (dead) while SQS is frozen' });
        expect((await backend.get(job.job_id))?.state).toBe('dead');
        // SQS answers again: the copy reaches the SQS DLQ, and only then is the message deleted.
        thaw();
        const dlqUrl = (await dataPlane.getQueueUrl({ QueueName: backend.sqsQueues.dlqName(queue) })).QueueUrl!;
        const copy = await pollUntil(
          async () => (await dataPlane.receiveMessage({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 0 })).Messages?.[0],
          { timeoutMs: 15_000, what: 'the DLQ copy once SQS answers' },
        );
        expect(copy.Body).toContain(job.job_id);
        const sourceUrl = (await backend.sqsQueues.sourceUrl(queue, job.class))!;
        const held = async () => {
          const a = (await dataPlane.getQueueAttributes({ QueueUrl: sourceUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] })).Attributes ?? {};
          return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
        };
        await pollUntil(async () => (await held()) === 0, { timeoutMs: 15_000, what: 'the source message to be deleted' });
      } finally {
        await close();
      }
    }, 60_000);
  });
}

it('agentq worker: SIGTERM with SQS frozen after a job ended exits 0 within --grace and says on stderr what SQS work it left', async () => {
  const home = makeCliHome('agentq-sqs-frozen-end-cli-');
  const prefix = `fc${process.pid}`;
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(`sqlite:${join(dir, 'cli.db')}`)}&wait=0&autocreate=1`;
  const env = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
  const go = join(home.dir, 'go');
  const child = spawnCli(home, ['worker', '--url', url, '--queue', prefix, '--grace', '1s', '--', 'sh', '-c', `while [ ! -f '${go}' ]; do sleep 0.1; done`], { env });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = collect(child, 60_000);
  try {
    const producer = await openBackend(url);
    await producer.submit({ workflow: 'noop:v1', queue: prefix });
    await producer.close();
    await pollUntil(() => / started$/m.test(stderr), { timeoutMs: 20_000, what: 'the job to start' });
    freeze();
    await writeFile(go, '');
    await pollUntil(() => / succeeded in /.test(stderr), { timeoutMs: 15_000, what: 'the job to succeed while SQS is frozen' });
    child.kill('SIGTERM');
    const r = await exited;
    expect(r.code).toBe(0);
    expect(stderr).toContain(`SQS at ${sqs.endpoint} did not finish within --grace what the ends of 1 job left it to do (deleting its message, sending DLQ copies); left undone: nothing is lost`);
  } finally {
    thaw();
    child.kill('SIGKILL');
    home.cleanup();
  }
}, 90_000);
