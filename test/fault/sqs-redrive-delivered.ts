/**
 * The SQS part of the redrive kill scenario, shared by the SQLite-store and
 * Redis-store fault tests: after the killed and resumed redrive, every moved
 * job is delivered (what a kill left between the store commit and the publish
 * waits in the outbox for the relay) and runs exactly once (a copy sent twice
 * by a kill between SendMessageBatch and marking the row is deleted), and the
 * source queue is left empty.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { expect } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { sourceQueueName } from '../../src/backend/sqs/names.js';

export async function expectRedrivenDeliveredOnce(url: string, prefix: string, endpoint: string, fifo: boolean): Promise<void> {
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
    const client = new SQSClient({ region: 'us-east-1', endpoint });
    try {
      const q = (await client.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'faults', 'batch', fifo) }))).QueueUrl!;
      const a = (await client.send(new GetQueueAttributesCommand({ QueueUrl: q, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes!;
      expect(Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible)).toBe(0);
    } finally {
      client.destroy();
    }
  } finally {
    await backend.close();
  }
}
