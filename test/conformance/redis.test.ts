/**
 * The shared conformance suite against the Redis backend on a real,
 * standalone `redis-server` spawned for this file (free loopback port, own
 * temp dir). Each case gets its own key prefix, so cases never see each other.
 */
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { runConformanceSuite } from './suite.js';
import { redisFixtureFactory } from './redis-fixture.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

runConformanceSuite('redis (standalone)', redisFixtureFactory(() => server.url));

