/**
 * SIGKILL fault test of `agentq dlq redrive` on the Redis backend: the same
 * scenario as on SQLite (redrive-kill-scenario.ts), against a throwaway
 * redis-server on a free loopback port. Spawns the built CLI.
 */
import { runRedriveKillScenario } from './redrive-kill-scenario.js';
import { startRedisServer } from '../support/redis-server.js';

let n = 0;
runRedriveKillScenario('redis', async () => {
  const server = await startRedisServer();
  return { url: `${server.url}?prefix=redrivefault${process.pid}x${++n}`, cleanup: () => server.stop() };
});
