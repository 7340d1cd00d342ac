/**
 * kill -9 fault test on Redis (see worker-kill-scenario.ts): a real
 * redis-server spawned for this file; the store is a fresh key prefix.
 */
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { runWorkerKillScenario } from './worker-kill-scenario.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let n = 0;
runWorkerKillScenario('redis (standalone)', async () => ({
  url: `${server.url}?prefix=fault${process.pid}x${++n}`,
  cleanup: async () => {},
}));
