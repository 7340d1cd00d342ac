/**
 * The shared conformance suite against the Redis backend on a real local
 * Redis Cluster of 3 masters, spawned once for this file. Every queue (and
 * every case's key prefix) hashes to its own slot, so the cases spread over
 * the three nodes and every script is checked for single-slot access by a
 * real Cluster. Queues split into several shards are covered by
 * test/backend/redis-shards.test.ts (the fairness cases here assume one
 * shard: across shards, tenants alternate by shard, see docs/architecture.md).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { dlqRowsCases } from './cases-dlq-rows.js';
import { redisFixtureFactory } from './redis-fixture.js';
import { runConformanceSuite } from './suite.js';
import { TestServers } from '../support/servers.js';

let cluster: RedisCluster;
const servers = new TestServers();
beforeAll(async () => {
  cluster = await servers.start(startRedisCluster(3));
});
afterAll(async () => {
  await servers.stopAll();
});

runConformanceSuite('redis (cluster, 3 masters)', redisFixtureFactory(() => cluster.url));

// The light DLQ listing merges every shard's dead set in job-id order: checked on queues split in 3.
describe('redis (cluster, queues in 3 shards)', () => {
  dlqRowsCases(redisFixtureFactory(() => cluster.url, '&shards=3'));
});
