/**
 * The shared kill -9 fault tests against Redis: the worker scenario (a
 * library worker SIGKILLed mid-run, every job done once, every effect applied
 * once) and the redrive scenario (`agentq dlq redrive` SIGKILLed at random
 * points and resumed: every planned job moved exactly once) on a spawned
 * standalone redis-server and on a real 3-master Redis Cluster.
 * Runs the built library and CLI (dist/): `npm test` builds first.
 */
import { afterAll, beforeAll } from 'vitest';
import { runRedriveKillScenario } from '../fault/redrive-kill-scenario.js';
import { runWorkerKillScenario } from '../fault/worker-kill-scenario.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';

let server: RedisServer;
let cluster: RedisCluster;
let n = 0;
const servers = new TestServers();
beforeAll(async () => {
  [server, cluster] = await Promise.all([servers.start(startRedisServer()), servers.start(startRedisCluster(3))]);
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
});

/** A fresh store: the same server, a key prefix of its own. */
const fresh = (url: () => string, extra = '') => async () => ({ url: `${url()}?prefix=fault${process.pid}x${++n}${extra}`, cleanup: async () => {} });

runWorkerKillScenario('redis (standalone)', fresh(() => server.url));
runWorkerKillScenario('redis (cluster, 3 shards)', fresh(() => cluster.url, '&shards=3'));
runRedriveKillScenario('redis (standalone)', fresh(() => server.url));
runRedriveKillScenario('redis (cluster)', fresh(() => cluster.url));
