/**
 * An SQS endpoint that accepts connections and never answers (a stalled proxy, a firewall that
 * holds connections). A submit stores its job with its outbox row first, so it need not wait for
 * SQS long: it waited for the transport's time-outs and retries (3 × 30 s, about 90 s) before
 * saying "stored but not yet published", and close() waited for that round too. Now a submit
 * gives up publishing after a few seconds (the outbox relay publishes the job later) and close()
 * does not wait for the abandoned round.
 */
import { createServer as createHttpServer, request as httpRequest, type ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { defaultCredentials } from '../../src/backend/sqs/credentials.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { sendBatch } from '../../src/backend/sqs/batch-send.js';
import { runRecord } from '../conformance/fixture.js';
import { startSqsServer } from '../support/sqs-server.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { collect, makeCliHome, runCli, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';

useEmulatorCredentials();
const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
let server: Server;
const sockets = new Set<Socket>();
let endpoint: string;
let home: CliHome;
/** Requests the silent server was sent (it reads them, and never answers). */
let requests = 0;
beforeAll(async () => {
  server = createServer((s) => {
    sockets.add(s);
    s.on('data', (d: Buffer) => (requests += (d.toString('latin1').match(/^POST /gm) ?? []).length));
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
  // (the harness's deadline is the safety net: the 90 s submit failed it; the message says the 5 s watch gave up)
  const r = await runCli(home, ['--url', url, 'submit', 'noop:v1', '--queue', 'q'], { env: CREDS, timeoutMs: 30_000 });
  expect(r.code, r.stderr).toBe(0);
  const jobId = r.stdout.trim();
  expect(jobId).toMatch(/^job_/);
  expect(r.stderr).toContain(`${jobId} is stored but not yet published (SQS did not answer within 5 s)`);
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
    // (waiting for the round would wait out the transport's time-outs, 3 x 30 s: past this test's deadline)
    await backend.close();
    closed = true;
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

it('a redrive in parts against SQS that stopped answering does not wait out every part: the parts after the first wait in the outbox', async () => {
  const fauxqs = await startSqsServer();
  const path = join(home.dir, 'redrive.db');
  const prefix = `silentr${process.pid}`;
  const ids: string[] = [];
  const live = (await openBackend(sqsUrl(fauxqs.endpoint, prefix, path, '&wait=0'))) as SqsBackend;
  try {
    await live.setup(['q']);
    for (let i = 0; i < 250; i++) ids.push((await live.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 })).job.job_id);
    let dead = 0;
    for (let round = 0; round < 100 && dead < ids.length; round++) {
      for (const l of await live.claim({ queue: 'q', workerId: 'seed', max: 10, leaseMs: 60_000 })) {
        await live.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: false });
        dead++;
      }
    }
    expect(dead).toBe(250);
  } finally {
    await live.close();
    await fauxqs.stop();
  }
  // The same job store; SQS now accepts and never answers (each call given 300 ms here, one attempt).
  const url = sqsUrl(endpoint, prefix, path, '&wait=0');
  const requestsBefore = requests;
  const dataPlane = new SqsWireClient({ credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) }, { region: 'us-east-1', endpoint, socketTimeoutMs: 300, maxAttempts: 1 });
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane });
  try {
    const runId = 'run_01JSILENTSILENTSILENTSILEN';
    await backend.createRun(runRecord({ run_id: runId, queue: 'q', action: 'redrive' }, Date.now()), ids.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })));
    const items = await backend.applyRunItems({ runId, jobIds: ids, now: Date.now() });
    expect(items.every((i) => i.status === 'moved')).toBe(true);
    expect((await backend.outboxStatus()).pending).toBe(250);
    // one look-up SQS left unanswered, not one per part (three parts of 100, 100 and 50)
    expect(requests - requestsBefore).toBe(1);
  } finally {
    await backend.close();
    dataPlane.destroy();
  }
}, 120_000);

it('a SendMessageBatch SQS never answers is not sent again on top of the client\'s own tries (4 x 3 time-outs: 6 minutes)', async () => {
  const dataPlane = new SqsWireClient({ credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) }, { region: 'us-east-1', endpoint, socketTimeoutMs: 200, maxAttempts: 1 });
  const before = requests;
  try {
    const out = await sendBatch(dataPlane, `${endpoint}/000000000000/q`, [{ key: 'a', body: 'x', attributes: {} }], { sleep: async () => {} });
    expect(out.sent).toEqual([]);
    expect(out.failed).toEqual([{ key: 'a', error: expect.stringMatching(/^SQS is unreachable \(SendMessageBatch: TimeoutError/) }]);
    expect(requests - before).toBe(1);
  } finally {
    dataPlane.destroy();
  }
});

it('the outbox relay does not wait out SQS once per queue: after one look-up SQS leaves unanswered, the other queues\' rows wait for the next try', async () => {
  const prefix = `silento${process.pid}`;
  const url = sqsUrl(endpoint, prefix, join(home.dir, 'relay.db'), '&wait=0');
  const dataPlane = new SqsWireClient({ credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('not used')) }, { region: 'us-east-1', endpoint, socketTimeoutMs: 200, maxAttempts: 1 });
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, dataPlane });
  try {
    // three SQS source queues: two agentq queues, and another class
    for (const [queue, cls] of [['a', 'batch'], ['b', 'batch'], ['a', 'interactive']] as const) await backend.submit({ workflow: 'noop:v1', queue, class: cls });
    // (each submit's own publish failed at its 200 ms time-out)
    const before = requests;
    const r = await backend.relayOutbox({ now: true });
    expect(r.failed.map((f) => f.code)).toEqual(['BACKEND_UNAVAILABLE', 'BACKEND_UNAVAILABLE', 'BACKEND_UNAVAILABLE']);
    expect(requests - before).toBe(1);
  } finally {
    await backend.close();
    dataPlane.destroy();
  }
});

it('sqs setup and sqs sweep give up after a few seconds with exit 75, naming SQS that does not answer', async () => {
  const url = sqsUrl(endpoint, `silentops${process.pid}`, join(home.dir, 'ops.db'));
  for (const args of [['sqs', 'setup', '--queue', 'q'], ['sqs', 'sweep', '--queue', 'q', '--yes']]) {
    // (the harness's deadline is the safety net: each took about 90 s)
    const r = await runCli(home, ['--url', url, ...args], { env: CREDS, timeoutMs: 40_000 });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(75);
    expect(r.stderr).toContain(`error: SQS at ${endpoint} did not answer within 5 s`);
  }
}, 90_000);

/**
 * An SQS endpoint that answers its first `answered` requests (forwarded to a live fauxqs) and then
 * goes silent: it reads every later request and never answers it.
 */
async function answersThenSilent(answered: number): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const fauxqs = await startSqsServer();
  let seen = 0;
  const held = new Set<ServerResponse>();
  const proxy = createHttpServer((req, res) => {
    if (++seen > answered) {
      held.add(res);
      return;
    }
    const out = httpRequest(`${fauxqs.endpoint}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 500, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    stop: async () => {
      for (const res of held) res.destroy();
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
      await fauxqs.stop();
    },
  };
}

it('sqs setup against SQS that answers its first look-up and then goes silent gives up as the other commands do (exit 75), not after the SDK\'s time-outs', async () => {
  const sqs = await answersThenSilent(1);
  try {
    const url = sqsUrl(sqs.endpoint, `silentsetup${process.pid}`, join(home.dir, 'setup.db'));
    // (the time-out is the safety net: it took about 90 s, the SDK's 3 x 30 s on a call after the first)
    const r = await runCli(home, ['--url', url, 'sqs', 'setup', '--queue', 'q'], { env: CREDS, timeoutMs: 40_000 });
    expect(r.code, r.stderr).toBe(75);
    expect(r.stderr).toContain(`error: SQS at ${sqs.endpoint} did not answer within 5 s (setting up its queues)`);
  } finally {
    await sqs.stop();
  }
}, 90_000);

/**
 * A store whose queue q was set up and seeded (`seed`, returning a job id) against a live fauxqs,
 * which then goes away: the URL returned points the same store at the endpoint that never answers.
 */
async function seededThenSilent(name: string, seed: (b: SqsBackend) => Promise<string>): Promise<{ url: string; jobId: string }> {
  const fauxqs = await startSqsServer();
  const path = join(home.dir, `${name}.db`);
  const prefix = `silent${name}${process.pid}`;
  const live = (await openBackend(sqsUrl(fauxqs.endpoint, prefix, path, '&wait=0'))) as SqsBackend;
  try {
    await live.setup(['q']);
    return { url: sqsUrl(endpoint, prefix, path, '&wait=0'), jobId: await seed(live) };
  } finally {
    await live.close();
    await fauxqs.stop();
  }
}

/** The job is queued again and its message waits in the outbox (nothing lost, nothing sent). */
async function expectQueuedInOutbox(url: string, jobId: string): Promise<void> {
  const backend = (await openBackend(url)) as SqsBackend;
  try {
    expect((await backend.get(jobId))!.state).toBe('queued');
    expect((await backend.outboxStatus()).pending).toBe(1);
  } finally {
    await backend.close();
  }
}

it('a single-part dlq redrive and its SQS DLQ sweep give up on SQS that stopped answering after a few seconds (exit 75), the moved jobs waiting in the outbox', async () => {
  const { url, jobId } = await seededThenSilent('r1', async (live) => {
    const id = (await live.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 })).job.job_id;
    const [l] = await live.claim({ queue: 'q', workerId: 'seed', max: 1, leaseMs: 60_000 });
    await live.fail(l!, { code: 'PROVIDER_429', message: 'rate limited', retryable: false });
    return id;
  });
  // (the harness's deadline is the safety net)
  const r = await runCli(home, ['--url', url, 'dlq', 'redrive', '--queue', 'q', '--yes'], { env: CREDS, timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(75);
  expect(r.stderr).toContain(`SQS at ${endpoint} did not answer within 5 s`);
  await expectQueuedInOutbox(url, jobId);
}, 90_000);

it('sqs republish against SQS that stopped answering gives up after a few seconds (exit 75), the job waiting in the outbox', async () => {
  const { url, jobId } = await seededThenSilent('rp', async (live) => {
    const id = (await live.submit({ workflow: 'research_report:v3', queue: 'q' })).job.job_id;
    expect((await live.outboxStatus()).pending).toBe(0);
    return id;
  });
  // (the harness's deadline is the safety net)
  const r = await runCli(home, ['--url', url, 'sqs', 'republish', '--queue', 'q', '--yes'], { env: CREDS, timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(75);
  expect(r.stderr).toContain(`failed: ${jobId}: SQS at ${endpoint} did not answer within 5 s (publishing)`);
  expect(r.stderr).toContain('republished 1 of 1: 0 published to SQS, 1 waiting in the outbox');
  await expectQueuedInOutbox(url, jobId);
}, 90_000);

it('agentq outbox relay against SQS that never answers gives up after a few seconds (exit 75), the rows still pending', async () => {
  const url = sqsUrl(endpoint, `silentrelay${process.pid}`, join(home.dir, 'outbox-relay.db'));
  expect((await runCli(home, ['--url', url, 'submit', 'noop:v1', '--queue', 'q'], { env: CREDS, timeoutMs: 30_000 })).code).toBe(0);
  // (the harness's deadline is the safety net: it took about 90 s)
  const r = await runCli(home, ['--url', url, 'outbox', 'relay'], { env: CREDS, timeoutMs: 40_000 });
  expect(r.code, r.stderr).toBe(75);
  expect(r.stderr).toContain(`error: SQS at ${endpoint} did not answer within 5 s (publishing the outbox)`);
  const backend = (await openBackend(url)) as SqsBackend;
  try {
    expect((await backend.outboxStatus()).pending).toBe(1);
  } finally {
    await backend.close();
  }
}, 90_000);
