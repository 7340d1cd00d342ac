/**
 * A worker whose SQS endpoint accepts connections and never answers (fauxqs replaced, on its
 * port, by a server that holds every connection): its claim waits on SQS, and the worker's watch
 * said "the store is not answering" (store_unavailable), sending on-call to the job store, which
 * answered all along. Now the silent calls are recognised as the broker's: one broker_unavailable
 * naming SQS at its endpoint, no store_unavailable.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { BrokerUnavailableError, createWorker, type WorkerEvent } from '../../src/index.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { pollUntil } from '../support/poll.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
let silent: Server | null = null;
const sockets = new Set<Socket>();
let dir: string;
beforeAll(async () => {
  server = await startSqsServer();
  dir = await mkdtemp(join(tmpdir(), 'agentq-sqs-silent-broker-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  if (silent) await new Promise<void>((r) => silent!.close(() => r()));
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('SQS accepts and never answers: broker_unavailable for SQS at its endpoint, not "the store is not answering"', async () => {
  const url = sqsUrl(server.endpoint, `sb${process.pid}`, join(dir, 'store.db'), '&wait=0');
  const backend = (await openBackend(url)) as SqsBackend;
  await backend.setup(['sb']);
  await backend.workerPreflight('sb'); // the queue URLs are known before SQS goes silent
  await backend.submit({ workflow: 'noop:v1', queue: 'sb' });
  await server.stop();
  silent = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent!.listen(server.port, '127.0.0.1', r));

  const events: WorkerEvent[] = [];
  const worker = createWorker({ backend, queue: 'sb', minIdleMs: 20, maxIdleMs: 100, handler: async () => 'ok', logger: (e) => void events.push(e) });
  const outage = () => events.filter((e) => /^(store|broker)_(un)?available$/.test(e.kind));
  try {
    await worker.start();
    await pollUntil(() => outage().length >= 1, { timeoutMs: 20_000, what: 'the outage to be said' });
    expect(outage()).toEqual([{ kind: 'broker_unavailable', broker: `SQS at ${server.endpoint}`, error: expect.any(BrokerUnavailableError) }]);
    expect((outage()[0] as { error: Error }).error.message).toMatch(/^a call unanswered for \d+ s$/);
  } finally {
    // no more connections held: the worker's calls fail at once and it stops
    await new Promise<void>((r) => {
      silent!.close(() => r());
      for (const s of sockets) s.destroy();
    });
    silent = null;
    await worker.stop();
    await backend.close();
  }
}, 60_000);
