/**
 * A one-shot command whose first CLUSTER SLOTS is answered late: on a busy machine (many CLIs
 * started at once, a CPU hog) ioredis's 1 s limit for loading the slots ran out on a healthy
 * Cluster, and `agentq submit` exited 75 "could not load the Cluster's slots (timeout)". The late
 * answer is made deterministic here with a seed node frozen (SIGSTOP) after the request reached it
 * and resumed once more than ioredis's default (1 s) and the old first-connection window (2 s)
 * have passed. A Cluster that is really down still fails with a clear message. Real CLI (dist/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, spawnCli, runCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { TestServers } from '../support/servers.js';
import { requestPendingAt } from '../support/tcp-sockets.js';

let cluster: RedisCluster;
let home: CliHome;
const servers = new TestServers();
beforeAll(async () => {
  home = makeCliHome('agentq-cluster-slow-slots-');
  cluster = await servers.start(startRedisCluster(3));
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
  home?.cleanup();
});

function exited(child: ReturnType<typeof spawnCli>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('the first slot load of a one-shot command', () => {
  it('waits for a seed that answers CLUSTER SLOTS late, instead of exiting 75 after 1 s', async () => {
    const seed = cluster.ports[0]!;
    cluster.signalNode(seed, 'SIGSTOP');
    let resumed = false;
    try {
      const child = spawnCli(home, ['--url', `redis+cluster://127.0.0.1:${seed}`, 'submit', 'w:v1', '--queue', 'slow']);
      const done = exited(child);
      let over = false;
      void done.then(() => (over = true));
      // The CLI has connected and sent CLUSTER SLOTS: the frozen node holds it unread.
      await pollUntil(() => requestPendingAt(seed) || over, { what: 'CLUSTER SLOTS sent to the frozen seed', timeoutMs: 30_000 });
      // Not a timing assertion: the node stays frozen for at least this long, past ioredis's 1 s
      // default for the answer and the 2 s first-connection window (the old failure was certain).
      const frozenUntil = Date.now() + 2_500;
      await pollUntil(() => Date.now() >= frozenUntil || over, { what: 'the freeze to last', timeoutMs: 10_000 });
      cluster.signalNode(seed, 'SIGCONT');
      resumed = true;
      const r = await done;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^job_/);
    } finally {
      if (!resumed) cluster.signalNode(seed, 'SIGCONT');
    }
  }, 60_000);

  it('a seed that stays frozen still ends in exit 75 naming it, not a hang', async () => {
    const seed = cluster.ports[1]!;
    cluster.signalNode(seed, 'SIGSTOP');
    try {
      const r = await runCli(home, ['--url', `redis+cluster://127.0.0.1:${seed}`, 'list', '--queue', 'slow'], { timeoutMs: 60_000 });
      expect(r.code).toBe(75);
      expect(r.stderr).toContain(`127.0.0.1:${seed}: no answer within 1 s`);
    } finally {
      cluster.signalNode(seed, 'SIGCONT');
    }
  }, 60_000);
});
