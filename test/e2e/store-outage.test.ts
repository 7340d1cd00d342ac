/**
 * Everyday commands when the store goes away under them, through the built CLI
 * against a real `redis-server` that the test kills: `submit --wait` says the
 * job was submitted (never "retry", which would submit it twice) and prints it
 * as last seen.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../src/core/schemas.js';
import { collect, makeCliHome, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let home: CliHome;
let server: RedisServer;
beforeAll(async () => {
  home = makeCliHome();
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
  home?.cleanup();
});

describe('the store lost while a command runs', () => {
  // (first: it empties the server, which the later tests then fill afresh)
  it('submit --wait -o json: a job that vanishes from the store (FLUSHALL) stops the wait with exit 5, rather than waiting for ever on "queued"', async () => {
    const url = `${server.url}?prefix=vanish${process.pid}`;
    const waiter = spawnCli(home, ['submit', 'x:v1', '--url', url, '--queue', 'nobody-claims', '--wait', '-o', 'json']);
    waiter.stdin.end();
    const done = collect(waiter, 30_000);
    await pollUntil(async () => (await runCliOk(home, ['list', '--url', url, '--queue', 'nobody-claims', '-o', 'json'])).stdout.includes('job_') || undefined, {
      what: 'the job in the store',
    });
    server.cli('FLUSHALL');
    const r = await done;
    expect(r.code).toBe(5);
    const job = Job.parse(JSON.parse(r.stdout));
    expect(r.stderr).toContain(`stopped waiting for ${job.job_id}: it is no longer in the store`);
    expect(r.stderr).not.toContain('it stays queued');
  });

  it('submit --wait -o json: exit 75 with the job as last seen, saying it WAS submitted and pointing at inspect', async () => {
    const url = `${server.url}?prefix=outage${process.pid}`;
    const waiter = spawnCli(home, ['submit', 'x:v1', '--url', url, '--queue', 'nobody-claims', '--wait', '-o', 'json']);
    waiter.stdin.end();
    const done = collect(waiter, 60_000);
    await pollUntil(async () => (await runCliOk(home, ['list', '--url', url, '--queue', 'nobody-claims', '-o', 'json'])).stdout.includes('job_') || undefined, {
      what: 'the job in the store',
    });
    await server.kill();
    const r = await done;
    expect(r.code).toBe(75);
    const job = Job.parse(JSON.parse(r.stdout));
    expect(job.state).toBe('queued');
    expect(r.stderr).toContain(`${job.job_id}`);
    expect(r.stderr).toContain('WAS submitted and is unaffected');
    expect(r.stderr).toContain(`agentq inspect ${job.job_id}`);
    expect(r.stderr).not.toMatch(/then retry/);
    await server.start();
  }, 90_000);

  it('worker stopped (SIGTERM) while the store is down: the release is not waited for past --grace; stderr says how many leases were left and when they expire', async () => {
    // Each release waited one reconnect cycle of the client (about 10 s) past --grace.
    const url = `${server.url}?prefix=stopdown${process.pid}`;
    const h = join(home.dir, 'long.sh');
    writeFileSync(h, '#!/usr/bin/env bash\nexec sleep 60\n');
    chmodSync(h, 0o755);
    const id = (await runCliOk(home, ['submit', 'x:v1', '--url', url, '--queue', 'stopdown'])).stdout.trim();
    const worker = spawnCli(home, ['worker', '--url', url, '--queue', 'stopdown', '--grace', '0s', '--kill-grace', '1s', '--', h]);
    worker.stdin.end();
    let stderr = '';
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const done = collect(worker, 60_000);
    await pollUntil(() => stderr.includes(`${id} attempt 1: started`) || undefined, { what: 'the job to run' });
    await server.kill();
    worker.kill('SIGTERM');
    const r = await done;
    await server.start();
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/worker: 1 lease not released within --grace \(the store did not answer\): it expires by \d{4}-\d\d-\d\dT[\d:.]+Z, then its job is claimed again/);
    expect(r.stderr).not.toContain(`${id} attempt 1: lease released`);
  }, 90_000);
});
