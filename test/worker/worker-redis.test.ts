/**
 * The library worker suite against the Redis backend on a real, standalone
 * `redis-server` spawned for this file; each case gets its own key prefix.
 */
import { afterAll, beforeAll } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { runWorkerSuite } from './worker-cases.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let seq = 0;
runWorkerSuite('redis (standalone)', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=w${process.pid}x${++seq}`), { clock, random: seededRandom(seq) });
  return { backend, clock, cleanup: () => backend.close() };
});
