/**
 * The shared conformance suite on the SQS backend with a Redis job store
 * (`store=redis://…`): fauxqs on loopback as the broker, a spawned
 * redis-server as the store, a fresh queue prefix and key prefix per case.
 * Same exception as test/conformance/sqs.test.ts (no tenant-fairness cases:
 * SQS delivers a class queue in its own order) and the same manual-clock
 * arrangement (`maxVisibilitySeconds: 0`, see sqs-fixture.ts). Run on standard
 * queues and on FIFO queues (`fifo=job`: deduplication ids from the job's generation).
 * The Redis Cluster store: sqs-redis-cluster-store.test.ts.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { argCases, sizeCases } from './cases-args.js';
import { dlqCases } from './cases-dlq.js';
import { dlqRowsCases } from './cases-dlq-rows.js';
import { classAndCapCases } from './cases-fairness.js';
import { jobCases } from './cases-jobs.js';
import { lifecycleCases } from './cases-lifecycle.js';
import { pruneCases } from './cases-prune.js';
import { runCases } from './cases-runs.js';
import { statsCases } from './cases-stats.js';
import { workerCases } from './cases-worker.js';
import { sqsRedisStoreFixtureFactory } from './sqs-redis-store-fixture.js';
import { TestServers } from '../support/servers.js';

let sqs: SqsServer;
let redis: RedisServer;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, redis] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisServer())]);
});
afterAll(async () => {
  await servers.stopAll();
});

for (const [name, extra] of [['standard queues', ''], ['FIFO queues', '&fifo=job']] as const) {
  describe(`sqs backend conformance, Redis job store (${name})`, () => {
    const make = sqsRedisStoreFixtureFactory(() => sqs.endpoint, () => redis.url, extra);
    jobCases(make);
  argCases(make);
  sizeCases(make);
    workerCases(make);
    lifecycleCases(make);
    classAndCapCases(make);
    dlqCases(make);
    dlqRowsCases(make);
    runCases(make);
    pruneCases(make);
    statsCases(make);
  });
}
