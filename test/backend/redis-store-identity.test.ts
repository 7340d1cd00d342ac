/**
 * A redrive plan names the Redis it was made on by the identity that Redis keeps (`<prefix>:store`,
 * set once), not by the URL: the same Cluster reached through another seed list (a subset, a seed
 * given twice) or a server reached as `localhost` instead of `127.0.0.1` takes the plan; another
 * key prefix (another store on the same servers) does not, --force or not. A plan made before
 * identities existed (its store is the seed-list id) still applies through the URL it was made with.
 * Real CLI (dist/), real redis-server and 3-master Cluster.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';

let server: RedisServer;
let cluster: RedisCluster;
let home: CliHome;
let n = 0;
const servers = new TestServers();
beforeAll(async () => {
  home = makeCliHome('agentq-store-id-');
  [server, cluster] = await Promise.all([servers.start(startRedisServer()), servers.start(startRedisCluster(3))]);
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
  home?.cleanup();
});

/** A dead job in queue q of the store at `url`; returns its id. */
async function deadJob(url: string): Promise<string> {
  const b = new RedisBackend(parseRedisUrl(url));
  try {
    const { job } = await b.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 1 });
    const [lease] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    await b.fail(lease!, { code: 'VALIDATION', message: 'no', retryable: false });
    return job.job_id;
  } finally {
    await b.close();
  }
}

async function planOn(url: string): Promise<string> {
  const file = join(home.dir, `plan-${++n}.json`);
  await runCliOk(home, ['--url', url, 'dlq', 'redrive', '--queue', 'q', '--all', '--dry-run', '--plan-out', file]);
  return file;
}

const stateOf = async (url: string, id: string) => JSON.parse((await runCliOk(home, ['--url', url, 'inspect', id, '-o', 'json'])).stdout).state as string;

describe('a plan names the Redis it was made on, however it is reached', () => {
  it('a Cluster: a plan made through all seeds applies through one seed given twice', async () => {
    const prefix = `?prefix=sid${++n}`;
    const url = `${cluster.url}${prefix}`;
    const id = await deadJob(url);
    const file = await planOn(url);
    const seed = `127.0.0.1:${cluster.ports[1]}`;
    await runCliOk(home, ['--url', `redis+cluster://${seed},${seed}${prefix}`, 'dlq', 'redrive', '--plan', file, '--yes']);
    expect(await stateOf(url, id)).toBe('queued');
  });

  it('standalone: made through 127.0.0.1, applied through localhost; another prefix is another store, --force or not', async () => {
    const prefix = `?prefix=sid${++n}`;
    const url = `redis://127.0.0.1:${server.port}${prefix}`;
    const id = await deadJob(url);
    const file = await planOn(url);
    for (const extra of [[], ['--force']]) {
      const r = await runCli(home, ['--url', `redis://127.0.0.1:${server.port}?prefix=other${n}`, 'dlq', 'redrive', '--plan', file, '--yes', ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('was made against redis://127.0.0.1:');
    }
    await runCliOk(home, ['--url', `redis://localhost:${server.port}${prefix}`, 'dlq', 'redrive', '--plan', file, '--yes']);
    expect(await stateOf(url, id)).toBe('queued');
  });

  it('a plan made before stores had an identity (the seed-list id) applies through the URL it was made with', async () => {
    const prefix = `?prefix=sid${++n}`;
    const url = `redis://127.0.0.1:${server.port}${prefix}`;
    const id = await deadJob(url);
    const file = await planOn(url);
    const plan = JSON.parse(readFileSync(file, 'utf8')) as { store: string };
    expect(plan.store).toMatch(/^redis:\/\/127\.0\.0\.1:\d+\/0\?prefix=sid\d+#store=[0-9a-f]{24}$/);
    plan.store = plan.store.replace(/#store=.*$/, '');
    writeFileSync(file, JSON.stringify(plan));
    const elsewhere = await runCli(home, ['--url', `redis://localhost:${server.port}${prefix}`, 'dlq', 'redrive', '--plan', file, '--yes']);
    expect(elsewhere.code).toBe(2);
    await runCliOk(home, ['--url', url, 'dlq', 'redrive', '--plan', file, '--yes']);
    expect(await stateOf(url, id)).toBe('queued');
  });
});
