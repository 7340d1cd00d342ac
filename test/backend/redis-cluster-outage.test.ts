/**
 * What a Cluster outage looks like to the person at the terminal: a master killed on a real
 * 3-master Cluster (no replicas). A command names the node at fault and the Cluster's state, not
 * "none of its seed nodes could be reached" while two of them answer; a client that was connected
 * when the node died names it too, not just ioredis's "Too many Cluster redirections … Connection is
 * closed.". Real CLI (dist/) and a Cluster of its own (a node is killed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { makeCliHome, runCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { TestServers } from '../support/servers.js';

let cluster: RedisCluster;
let home: CliHome;
const servers = new TestServers();
beforeAll(async () => {
  home = makeCliHome('agentq-cluster-outage-');
  cluster = await servers.start(startRedisCluster(3));
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
  home?.cleanup();
});

/** A queue name whose shard 0 lives on the node at `port`. */
function queueOn(port: number): string {
  for (let i = 0; ; i++) {
    const q = `q${i}`;
    const slot = Number(cluster.cli(port, 'cluster', 'keyslot', `{aq:${q}:0}`).trim());
    const nodes = cluster.cli(port, 'cluster', 'nodes').split('\n').find((l) => l.includes('myself'))!;
    const mine = nodes.split(' ').slice(8).some((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return slot >= lo! && slot <= (hi ?? lo)!;
    });
    if (mine) return q;
  }
}

describe('one master of a Cluster killed', () => {
  it('a connected client, then a new command, each name the node at fault', async () => {
    const dead = cluster.ports[2]!;
    const queue = queueOn(dead);
    const backend = new RedisBackend(parseRedisUrl(cluster.url));
    try {
      await backend.submit({ workflow: 'w:v1', queue, tenant_id: 'acme' });
      await cluster.killNode(dead);
      const e = await backend.submit({ workflow: 'w:v1', queue, tenant_id: 'acme' }).then(() => null, (x: unknown) => x as Error);
      expect(e).toBeInstanceOf(Error);
      expect(e!.message).toContain(`node 127.0.0.1:${dead} refuses connections`);
    } finally {
      await backend.close();
    }
    await pollUntil(async () => /cluster_state:fail/.test(cluster.cli(cluster.ports[0]!, 'cluster', 'info')) || null, { what: 'cluster_state:fail', timeoutMs: 30_000 });
    const r = await runCli(home, ['--url', cluster.url, 'list', '--queue', queue]);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain(`is unavailable: the Cluster is not ready (cluster_state:fail): node 127.0.0.1:${dead} refuses connections (connect ECONNREFUSED 127.0.0.1:${dead})`);
    expect(r.stderr).not.toContain('none of its seed nodes');
  }, 90_000);
});
