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
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { sourceQueueName } from '../../src/backend/sqs/names.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { runRedriveKillScenario } from '../fault/redrive-kill-scenario.js';
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
  const redriven: Array<{ url: string; prefix: string }> = [];

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
    // Kept until the SQS check below has run; the temp dir is removed with the OS temp.
    return { url: s.url, cleanup: async () => undefined };
    // 1,000 entries rather than 5,000: seeding through SQS costs ~4 SQS calls per entry
    // (publish, receive, DLQ copy, delete); the 5,000-entry figure is in bench/sqs-redrive.mjs.
  }, { size: 1000 });

  describe(`redrive on SQS after kills (${variant.name})`, () => {
    it('delivered every moved job: the outbox held what a kill interrupted, and each job runs exactly once', async () => {
      const { url, prefix } = redriven[0]!;
      const backend = (await openBackend(url)) as SqsBackend;
      try {
        const queued: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await backend.list({ queue: 'faults', states: ['queued'] }, { limit: 1000, cursor });
          queued.push(...page.items.map((j) => j.job_id));
          cursor = page.next_cursor;
        } while (cursor !== null);
        expect(queued.length).toBeGreaterThan(0);
        // What a SIGKILL left between the store commit and the publish is in the outbox, not lost.
        await backend.relayOutbox();
        expect((await backend.outboxStatus()).pending).toBe(0);

        // A kill between SendMessageBatch and marking the rows may have sent a few twice:
        // consumers must run each job once and delete the extra copies.
        const claimed = new Map<string, number>();
        for (;;) {
          const leases = await backend.claim({ queue: 'faults', workerId: 'check', max: 100, leaseMs: 300_000 });
          if (leases.length === 0) break;
          for (const l of leases) {
            claimed.set(l.jobId, (claimed.get(l.jobId) ?? 0) + 1);
            await backend.complete(l, null);
          }
        }
        expect([...claimed.keys()].sort()).toEqual([...queued].sort());
        expect([...claimed.values()].every((n) => n === 1)).toBe(true);
        const client = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
        const q = (await client.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'faults', 'batch', variant.extra !== '') }))).QueueUrl!;
        const a = (await client.send(new GetQueueAttributesCommand({ QueueUrl: q, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes!;
        expect(Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible)).toBe(0);
        client.destroy();
      } finally {
        await backend.close();
      }
    }, 180_000);
  });
}
