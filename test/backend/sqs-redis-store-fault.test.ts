/**
 * The shared kill -9 fault scenarios on the SQS backend with a Redis job
 * store (`store=redis://…`): fauxqs and a spawned redis-server on loopback,
 * real visibility timeouts, the system clock. As test/backend/sqs-fault.test.ts:
 * - a worker SIGKILLed mid-job: its messages reappear after the visibility
 *   timeout, `consider` reaps the lease in Redis and the job runs again, every
 *   effect applied exactly once;
 * - `agentq dlq redrive` SIGKILLed mid-run and resumed: every planned job
 *   moved exactly once, then every moved job is delivered (a redriven job is
 *   an unpublished generation until the relay records it, so a kill between
 *   the Redis move and the publish loses nothing) and runs exactly once.
 * Both run on standard queues and on FIFO queues (`fifo=job`: a resend of one
 * generation shares its deduplication id).
 * Spawns the built library and CLI (dist/): `npm test` builds first.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { sourceQueueName } from '../../src/backend/sqs/names.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { runRedriveKillScenario } from '../fault/redrive-kill-scenario.js';
import { runWorkerKillScenario } from '../fault/worker-kill-scenario.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
beforeAll(async () => {
  [sqs, redis] = await Promise.all([startSqsServer(), startRedisServer()]);
});
afterAll(async () => {
  await Promise.all([sqs?.stop(), redis?.stop()]);
});

let seq = 0;

for (const variant of [{ name: 'sqs-redis-store', extra: '' }, { name: 'sqs-fifo-redis-store', extra: '&fifo=job' }]) {
  const redriven: Array<{ url: string; prefix: string }> = [];

  const fresh = async () => {
    const prefix = `fr${process.pid}x${++seq}`;
    const store = `${redis.url}?prefix=${prefix}`;
    const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(store)}&autocreate=1&wait=1${variant.extra}`;
    return { url, prefix, cleanup: async () => undefined };
  };

  runWorkerKillScenario(variant.name, fresh);

  runRedriveKillScenario(variant.name, async () => {
    const s = await fresh();
    redriven.push(s);
    return { url: s.url, cleanup: async () => undefined };
  }, { size: 1000 });

  describe(`redrive on SQS after kills (${variant.name})`, () => {
    it('delivered every moved job: the derived outbox held what a kill interrupted, and each job runs exactly once', async () => {
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
        await backend.relayOutbox();
        expect((await backend.outboxStatus()).pending).toBe(0);
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
        const client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint });
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
