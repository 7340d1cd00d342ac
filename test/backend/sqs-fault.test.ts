/**
 * The shared kill -9 fault scenarios on the SQS backend, against fauxqs on
 * loopback with real visibility timeouts and the system clock:
 * - a worker SIGKILLed mid-job: its messages reappear after the visibility
 *   timeout (= the lease), the store reaps the lease and the job runs again,
 *   every effect applied exactly once (worker-kill-scenario.ts);
 * - `agentq dlq redrive` SIGKILLed mid-run and resumed: every planned job
 *   moved exactly once (redrive-kill-scenario.ts, 1,000 entries), and then — the SQS part —
 *   exactly one message per moved job reached its SQS queue (nothing lost,
 *   nothing doubled by the resumes).
 * Spawns the built library and CLI (dist/): `npm test` builds first.
 */
import { DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
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
const redriven: Array<{ url: string; prefix: string }> = [];

async function fresh(kind: string) {
  const dir = await mkdtemp(join(tmpdir(), `agentq-sqs-${kind}-`));
  const prefix = `f${process.pid}x${++seq}`;
  const url = sqsUrl(server.endpoint, prefix, join(dir, 'store.db'), '&autocreate=1&wait=1');
  return { url, prefix, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

runWorkerKillScenario('sqs', () => fresh('worker'));

runRedriveKillScenario('sqs', async () => {
  const s = await fresh('redrive');
  redriven.push(s);
  // Kept until the SQS check below has run; the temp dir is removed with the OS temp.
  return { url: s.url, cleanup: async () => undefined };
  // 1,000 entries rather than 5,000: seeding through SQS costs ~4 SQS calls per entry
  // (publish, receive, DLQ copy, delete); the 5,000-entry figure is in bench/sqs-redrive.mjs.
}, { size: 1000 });

describe('redrive on SQS after kills', () => {
  it('sent exactly one SQS message per moved job', async () => {
    const { url, prefix } = redriven[0]!;
    const backend = await openBackend(url);
    try {
      const client = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
      const queueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'faults', 'batch') }))).QueueUrl!;
      const perJob = new Map<string, number>();
      for (;;) {
        const out = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300, MessageAttributeNames: ['All'] }));
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) break;
        for (const m of msgs) {
          const id = m.MessageAttributes?.['agentq-job-id']?.StringValue ?? '?';
          perJob.set(id, (perJob.get(id) ?? 0) + 1);
        }
        await client.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: msgs.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) }));
      }
      const queued = [];
      let cursor: string | null = null;
      do {
        const page = await backend.list({ queue: 'faults', states: ['queued'] }, { limit: 1000, cursor });
        queued.push(...page.items.map((j) => j.job_id));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(queued.length).toBeGreaterThan(0);
      expect([...perJob.keys()].sort()).toEqual([...queued].sort());
      expect([...perJob.values()].every((n) => n === 1)).toBe(true);
      client.destroy();
    } finally {
      await backend.close();
    }
  }, 120_000);
});
