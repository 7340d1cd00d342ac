/**
 * The shared kill -9 fault scenarios on the SQS backend, against fauxqs on
 * loopback with real visibility timeouts and the system clock:
 * - a worker SIGKILLed mid-job: its messages reappear after the visibility
 *   timeout (= the lease), the store reaps the lease and the job runs again,
 *   every effect applied exactly once (worker-kill-scenario.ts);
 * - `agentq dlq redrive` SIGKILLed mid-run and resumed: every planned job
 *   moved exactly once (redrive-kill-scenario.ts, 1,000 entries), and then — the SQS part —
 *   every moved job is delivered (what a kill left between commit and publish
 *   waits in the outbox for the relay) and runs exactly once (a copy sent twice
 *   by a kill between SendMessageBatch and marking the row is deleted).
 * Both run twice: on standard queues and on FIFO queues (`fifo=job`), where a
 * resend after a kill reuses the outbox row's deduplication id (SQS drops the
 * copy) and the resumed run's sends carry new ones.
 * Spawns the built library and CLI (dist/): `npm test` builds first.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { runRedriveKillScenario } from '../fault/redrive-kill-scenario.js';
import { expectRedrivenDeliveredOnce } from '../fault/sqs-redrive-delivered.js';
import { runWorkerKillScenario } from '../fault/worker-kill-scenario.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let server: SqsServer;
beforeAll(async () => {
  server = await startSqsServer();
});
afterAll(async () => {
  await server?.stop();
});

let seq = 0;

for (const variant of [{ name: 'sqs', extra: '' }, { name: 'sqs-fifo', extra: '&fifo=job' }]) {
  const redriven: Array<{ url: string; prefix: string; cleanup: () => Promise<void> }> = [];

  const fresh = async (kind: string) => {
    const dir = await mkdtemp(join(tmpdir(), `agentq-sqs-${kind}-`));
    const prefix = `f${process.pid}x${++seq}`;
    const url = sqsUrl(server.endpoint, prefix, join(dir, 'store.db'), `&autocreate=1&wait=1${variant.extra}`);
    return { url, prefix, cleanup: () => rm(dir, { recursive: true, force: true }) };
  };

  runWorkerKillScenario(variant.name, () => fresh('worker'));

  runRedriveKillScenario(variant.name, async () => {
    const s = await fresh('redrive');
    redriven.push(s);
    // Kept until the SQS check below has run, which removes it.
    return { url: s.url, cleanup: async () => undefined };
    // 1,000 entries rather than 5,000: seeding through SQS costs ~4 SQS calls per entry
    // (publish, receive, DLQ copy, delete); the 5,000-entry figure is in bench/sqs-redrive.mjs.
  }, { size: 1000 });

  describe(`redrive on SQS after kills (${variant.name})`, () => {
    afterAll(async () => {
      await Promise.all(redriven.map((s) => s.cleanup()));
    });
    it('delivered every moved job: the outbox held what a kill interrupted, and each job runs exactly once', async () => {
      const { url, prefix } = redriven[0]!;
      await expectRedrivenDeliveredOnce(url, prefix, server.endpoint, variant.extra !== '');
    }, 180_000);
  });
}
