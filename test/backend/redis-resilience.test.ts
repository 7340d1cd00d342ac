/**
 * Restarting Redis in the middle of work. The server runs with AOF and
 * `appendfsync always` (every write is on disk before Redis replies), is
 * SIGKILLed mid-run and started again on the same port and AOF. Clients
 * reconnect by themselves and both runs finish:
 * - a library worker processing jobs: every job ends succeeded, and every
 *   completion the worker saw acknowledged before the crash is still there
 *   (its job is not run again);
 * - `agentq dlq redrive` (the built CLI): it finishes on its own, every
 *   planned job moved exactly once (one `redriven` event each), the ledger
 *   and the run's counts agree, the lock is free. The redrive is rate-limited
 *   so the restart lands mid-run on any machine.
 * Lua scripts are gone from the restarted server's cache; ioredis reloads
 * them on NOSCRIPT.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, LedgerItem } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { createWorker } from '../../src/index.js';
import { seedDead } from '../dlq/seed.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const BIN = fileURLToPath(new URL('../../bin/agentq.js', import.meta.url));

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer({ aof: true, appendfsync: 'always' });
});
afterAll(async () => {
  await server?.stop();
});

async function restart(): Promise<void> {
  await server.kill();
  await server.start();
}

describe('redis restart (AOF, appendfsync always)', () => {
  it('a worker run survives a restart: all jobs succeed, acknowledged completions are kept and not re-run', async () => {
    const url = `${server.url}?prefix=resw`;
    const backend: Backend = await openBackend(url);
    const JOBS = 300;
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await backend.submit({ workflow: 'noop:v1', queue: 'res', tenant_id: `t${i % 5}` })).job.job_id);
    const runs = new Map<string, number>();
    const acked = new Set<string>();
    const errors: unknown[] = [];
    const worker = createWorker({
      url,
      queue: 'res',
      concurrency: 8,
      leaseMs: 1500,
      heartbeatMs: 300,
      maxIdleMs: 100,
      handler: async (job) => {
        runs.set(job.job_id, (runs.get(job.job_id) ?? 0) + 1);
        // A little work, so the crash lands with jobs in flight.
        await new Promise((r) => setImmediate(r));
        return { ok: true };
      },
      logger: (e) => {
        if (e.kind === 'succeeded') acked.add(e.jobId);
        if (e.kind === 'backend_error') errors.push(e.error);
      },
    });
    await worker.start();
    await pollUntil(() => acked.size >= JOBS / 3, { what: 'a third of the jobs to succeed', intervalMs: 1 });
    const ackedBeforeCrash = [...acked];
    expect(ackedBeforeCrash.length).toBeLessThan(JOBS);
    await restart();
    await pollUntil(async () => (await backend.stats('res')).counts.succeeded === JOBS, { timeoutMs: 60_000, what: 'every job to succeed after the restart' });
    await worker.stop();
    const stats = await backend.stats('res');
    expect(stats.counts).toMatchObject({ queued: 0, scheduled: 0, running: 0, dead: 0, succeeded: JOBS });
    for (const id of ackedBeforeCrash) {
      expect((await backend.get(id))!.state, id).toBe('succeeded');
      expect(runs.get(id), id).toBe(1);
    }
    for (const id of ids) expect(runs.get(id) ?? 0, id).toBeGreaterThanOrEqual(1);
    console.info(`redis-resilience: worker saw ${errors.length} backend errors across the restart; ${ackedBeforeCrash.length} completions acknowledged before it`);
    await backend.close();
  }, 120_000);

  it('a redrive survives a restart: the CLI finishes by itself and moves every planned job exactly once', async () => {
    const url = `${server.url}?prefix=resr`;
    const backend = await openBackend(url);
    const N = 1500;
    const planned = await seedDead(backend, () => Date.now(), Array.from({ length: N }, () => ({ queue: 'resq' })));
    const proc = spawn(process.execPath, [BIN, '--url', url, '--no-input', 'dlq', 'redrive', '--queue', 'resq', '--all', '--yes', '--rate', '300', '--batch-size', '50', '--reason', 'restart test'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    proc.stdout!.resume();
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const runId = await pollUntil(() => /run (run_[0-9A-Z]{26})/.exec(stderr)?.[1], { timeoutMs: 30_000, what: 'the run id' });
    await pollUntil(async () => ((await backend.getRun(runId))?.counts.moved ?? 0) >= N / 4, { timeoutMs: 60_000, intervalMs: 2, what: 'a quarter moved' });
    // Rate-limited to 300/s, so the restart lands mid-run however fast the machine is.
    expect((await backend.getRun(runId))!.counts.moved).toBeLessThan(N);
    await restart();
    expect(await exit, stderr).toBe(0);

    const run = (await backend.getRun(runId))!;
    expect(run.status).toBe('completed');
    expect(run.counts).toEqual({ planned: 0, moved: N, skipped: 0, failed: 0 });
    expect(await backend.readLock('resq')).toBeNull();
    const ledger: LedgerItem[] = [];
    let cursor: string | null = null;
    do {
      const page = await backend.ledger(runId, { limit: 1000, cursor });
      ledger.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(ledger.map((i) => i.status)).toEqual(Array(N).fill('moved'));
    const redriven = new Map<string, number>();
    for await (const e of backend.events({ queue: 'resq' })) if (e.type === 'redriven') redriven.set(e.job_id, (redriven.get(e.job_id) ?? 0) + 1);
    expect(redriven.size).toBe(N);
    for (const id of planned) expect(redriven.get(id), id).toBe(1);
    await backend.close();
  }, 180_000);
});
