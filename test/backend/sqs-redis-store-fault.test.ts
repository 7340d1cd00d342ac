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
import { afterAll, beforeAll, describe, it } from 'vitest';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { runRedriveKillScenario } from '../fault/redrive-kill-scenario.js';
import { expectRedrivenDeliveredOnce } from '../fault/sqs-redrive-delivered.js';
import { runWorkerKillScenario } from '../fault/worker-kill-scenario.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { TestServers } from '../support/servers.js';

useEmulatorCredentials();
let sqs: SqsServer;
let redis: RedisServer;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
});
afterAll(async () => {
  await servers.stopAll();
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
      await expectRedrivenDeliveredOnce(url, prefix, sqs.endpoint, variant.extra !== '');
    }, 180_000);
  });
}
