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
import { makeCliHome, runCli, type CliHome } from '../support/cli.js';

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
