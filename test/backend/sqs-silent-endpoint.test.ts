/**
 * An SQS endpoint that accepts connections and never answers (a stalled proxy, a firewall that
 * holds connections). A submit stores its job with its outbox row first, so it need not wait for
 * SQS long: it waited for the transport's time-outs and retries (3 × 30 s, about 90 s) before
 * saying "stored but not yet published", and close() waited for that round too. Now a submit
 * gives up publishing after a few seconds (the outbox relay publishes the job later) and close()
 * does not wait for the abandoned round.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { collect, makeCliHome, runCli, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';

useEmulatorCredentials();
const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
let server: Server;
const sockets = new Set<Socket>();
let endpoint: string;
let home: CliHome;
beforeAll(async () => {
  server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  home = makeCliHome('agentq-sqs-silent-');
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  home?.cleanup();
});

it('agentq submit gives up publishing after a few seconds, exits 0 and says the job waits in the outbox', async () => {
  const url = sqsUrl(endpoint, `silent${process.pid}`, join(home.dir, 'cli.db'));
  const started = Date.now();
  // (the time-out is the safety net: the 90 s submit failed it)
  const r = await runCli(home, ['--url', url, 'submit', 'noop:v1', '--queue', 'q'], { env: CREDS, timeoutMs: 30_000 });
  const tookMs = Date.now() - started;
  expect(r.code, r.stderr).toBe(0);
  const jobId = r.stdout.trim();
  expect(jobId).toMatch(/^job_/);
  expect(r.stderr).toContain(`${jobId} is stored but not yet published (SQS did not answer within 5 s)`);
  expect(tookMs).toBeLessThan(20_000);
  const backend = await openBackend(url);
  try {
    expect((await (backend as SqsBackend).outboxStatus()).pending).toBe(1);
  } finally {
    await backend.close();
  }
}, 40_000);

it('close() after a submit that gave up does not wait for the publish round it left running', async () => {
  const url = sqsUrl(endpoint, `silentlib${process.pid}`, join(home.dir, 'lib.db'));
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, publishWaitMs: 300 });
  let closed = false;
  try {
    const res = await backend.submit({ workflow: 'noop:v1', queue: 'q' });
    expect(res.unpublished).toBe('SQS did not answer within 0.3 s');
    const started = Date.now();
    await backend.close();
    closed = true;
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    if (!closed) await backend.close();
  }
}, 40_000);

it('agentq worker does not sit silent for minutes looking up its queues: it says SQS did not answer, starts, and names SQS as unavailable', async () => {
  const url = sqsUrl(endpoint, `silentw${process.pid}`, join(home.dir, 'worker.db'));
  // a job waiting in the outbox: the worker's claims publish and receive through SQS
  expect((await runCli(home, ['--url', url, 'submit', 'noop:v1', '--queue', 'q'], { env: CREDS })).code).toBe(0);
  const worker = spawnCli(home, ['--url', url, 'worker', '--queue', 'q', '--', 'true'], { env: CREDS });
  const done = collect(worker, 60_000);
  let stderr = '';
  worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    // (before: nothing for 90 s, the first look-up's time-outs, and then more look-ups)
    await pollUntil(() => stderr.includes('is unavailable'), { timeoutMs: 30_000, what: 'the worker to say SQS is unavailable' });
    expect(stderr).toContain(`warning: could not check that queue q can be delivered (SQS at ${endpoint} did not answer within 5s); starting anyway`);
    expect(stderr).toContain(`worker: SQS at ${endpoint} is unavailable (a call unanswered for`);
    expect(stderr).not.toContain('the store is not answering');
  } finally {
    worker.kill('SIGKILL');
    await done;
  }
}, 60_000);
