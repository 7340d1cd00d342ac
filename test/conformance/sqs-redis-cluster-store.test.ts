/**
 * The shared conformance suite on the SQS backend with a Redis Cluster job
 * store (`store=redis+cluster://…`, 3 masters spawned for this file): every
 * store script is checked for single-slot access by a real Cluster. Also on
 * queues split into 3 shards, so the relay's scan and the per-class counts
 * cover several shards. Same exception as test/conformance/sqs.test.ts.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
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
let cluster: RedisCluster;
const servers = new TestServers();
beforeAll(async () => {
  [sqs, cluster] = await Promise.all([servers.start(startSqsServer()), servers.start(startRedisCluster(3))]);
});
afterAll(async () => {
  await servers.stopAll();
});

describe('sqs backend conformance, Redis Cluster job store', () => {
  const make = sqsRedisStoreFixtureFactory(() => sqs.endpoint, () => cluster.url);
  jobCases(make);
  workerCases(make);
  lifecycleCases(make);
  classAndCapCases(make);
  dlqCases(make);
  dlqRowsCases(make);
  runCases(make);
  pruneCases(make);
  statsCases(make);
});

describe('sqs backend conformance, Redis Cluster job store, queues in 3 shards', () => {
  const make = sqsRedisStoreFixtureFactory(() => sqs.endpoint, () => cluster.url, '', '&shards=3');
  jobCases(make);
  workerCases(make);
  runCases(make);
});
