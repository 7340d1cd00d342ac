/**
 * Failover on a Cluster with replicas (3 masters, 1 replica each): a replica promoted by a manual
 * `CLUSTER FAILOVER` while clients are connected. Redis ends a blocking read on the master that
 * turns replica with `UNBLOCKED … instance state changed (master -> replica?)`: `tail --follow`
 * took that for a bug of agentq (exit 70, "This is a bug in agentq"), where nothing was lost and
 * the read only had to be made again on the new master. Real CLI (dist/), a Cluster of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { TestServers } from '../support/servers.js';

let cluster: RedisCluster;
let home: CliHome;
const servers = new TestServers();
beforeAll(async () => {
  home = makeCliHome('agentq-cluster-failover-');
  cluster = await servers.start(startRedisCluster(3, undefined, { replicas: 1 }));
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
  home?.cleanup();
});

/** The ports of the master that holds `key` and of its replica, as the Cluster sees them now. */
function masterAndReplica(key: string): { master: number; replica: number } {
  const at = cluster.ports[0]!;
  const slot = Number(cluster.cli(at, 'cluster', 'keyslot', key).trim());
  const lines = cluster.cli(at, 'cluster', 'nodes').split('\n').map((l) => l.split(' ')).filter((f) => f.length > 7);
  const port = (f: string[]) => Number(f[1]!.split('@')[0]!.split(':')[1]);
  const master = lines.find((f) => f[2]!.includes('master') && f.slice(8).some((r) => {
    const [lo, hi] = r.split('-').map(Number);
    return slot >= lo! && slot <= (hi ?? lo)!;
  }))!;
  const replica = lines.find((f) => f[3] === master[0])!;
  return { master: port(master), replica: port(replica) };
}

describe('a replica promoted by CLUSTER FAILOVER', () => {
  it('tail --follow goes on reading from the new master (no "bug in agentq")', async () => {
    const queue = 'fo';
    const { master, replica } = masterAndReplica(`{aq:${queue}:0}`);
    const first = (await runCliOk(home, ['--url', cluster.url, 'submit', 'w:v1', '--queue', queue])).stdout.trim();
    const tail = spawnCli(home, ['--url', cluster.url, 'tail', '--queue', queue, '--follow']);
    const done = collect(tail, 120_000);
    let out = '';
    tail.stdout.on('data', (b: Buffer) => (out += b.toString()));
    try {
      await pollUntil(() => out.includes(first), { what: 'the first job in the tail', timeoutMs: 30_000 });
      // the follower's XREAD BLOCK waits on the master
      await pollUntil(() => /cmd=xread/.test(cluster.cli(master, 'client', 'list')), { what: 'a blocked XREAD on the master', timeoutMs: 30_000 });
      cluster.cli(replica, 'cluster', 'failover');
      await pollUntil(() => /^role:master/m.test(cluster.cli(replica, 'info', 'replication')), { what: 'the replica promoted', timeoutMs: 30_000 });
      const second = (await runCliOk(home, ['--url', cluster.url, 'submit', 'w:v1', '--queue', queue])).stdout.trim();
      await pollUntil(() => out.includes(second) || tail.exitCode !== null, { what: 'the second job in the tail', timeoutMs: 60_000 });
      expect(tail.exitCode).toBeNull();
      expect(out).toContain(second);
    } finally {
      tail.kill('SIGINT');
    }
    const r = await done;
    expect(r.stderr).not.toContain('bug in agentq');
  }, 120_000);
});

describe('a master killed (SIGKILL), its replica promoted after cluster-node-timeout', () => {
  it('a worker runs on by itself: jobs from before and after run once each; a command during the outage succeeds or exits 75 saying why', async () => {
    const queue = 'killed';
    const { master, replica } = masterAndReplica(`{aq:${queue}:0}`);
    const worker = spawnCli(home, ['--url', cluster.url, 'worker', '--queue', queue, '--lease', '60s', '--', 'sh', '-c', 'echo ran']);
    const workerDone = collect(worker, 180_000);
    const state = async (id: string) => {
      const r = await runCliOk(home, ['--url', cluster.url, 'inspect', id, '--json']);
      return JSON.parse(r.stdout) as { state: string; attempt: number };
    };
    try {
      const before = (await runCliOk(home, ['--url', cluster.url, 'submit', 'w:v1', '--queue', queue])).stdout.trim();
      await pollUntil(async () => (await state(before)).state === 'succeeded', { what: 'the job before the kill to run', timeoutMs: 30_000 });
      // (replication is asynchronous: the test waits until the replica has everything, as the
      // README says a real failover does not)
      const offset = (port: number) => /^master_repl_offset:(\d+)/m.exec(cluster.cli(port, 'info', 'replication'))?.[1];
      await pollUntil(() => offset(master) === offset(replica), { what: 'the replica caught up', timeoutMs: 30_000 });
      await cluster.killNode(master);
      const during = await runCli(home, ['--url', cluster.url, 'submit', 'w:v1', '--queue', queue], { timeoutMs: 60_000 });
      expect([0, 75]).toContain(during.code);
      expect(during.stderr).not.toContain('bug in agentq');
      if (during.code === 75) expect(during.stderr).toContain('is unavailable');
      await pollUntil(() => /^role:master/m.test(cluster.cli(replica, 'info', 'replication')), { what: 'the replica promoted', timeoutMs: 60_000 });
      const after = (await runCliOk(home, ['--url', cluster.url, 'submit', 'w:v1', '--queue', queue])).stdout.trim();
      const ids = [before, after, ...(during.code === 0 ? [during.stdout.trim()] : [])];
      for (const id of ids) await pollUntil(async () => (await state(id)).state === 'succeeded', { what: `${id} to run`, timeoutMs: 60_000 });
      for (const id of ids) expect((await state(id)).attempt).toBe(1);
      expect(worker.exitCode).toBeNull();
    } finally {
      worker.kill('SIGTERM');
    }
    const w = await workerDone;
    expect(w.stderr).not.toContain('bug in agentq');
  }, 240_000);
});
