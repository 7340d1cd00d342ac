/**
 * What a DLQ purge leaves behind on the Redis backend: after it, no key of the
 * store may still name the purged job, except what is kept on purpose — the
 * events stream (capped), the job's history list (expiring), the run's ledger
 * (the audit of the run that purged it) and the job's location key (a purge is
 * told from "never here" by it: `inspect`, the SQS DLQ sweep). Every key is
 * read whole (SCAN of a test server of its own), so a new index that forgets
 * the purge shows up here.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import type { RunRecord } from '../../src/backend/contract.js';
import { ManualClock } from '../../src/core/clock.js';
import { keptAfterPurge, keysMentioning } from '../support/redis-mentions.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const run = (runId: string, action: RunRecord['action'], now: number): RunRecord => ({
  run_id: runId,
  queue: 'q',
  action,
  user: 't',
  context: null,
  reason: null,
  filters: {},
  options: { attempts: { kind: 'reset' }, maxRedrives: 3, minRemainingMs: 0, includePartial: true },
  created_at: new Date(now).toISOString(),
  updated_at: new Date(now).toISOString(),
  status: 'planned',
  counts: { planned: 1, moved: 0, skipped: 0, failed: 0 },
});

it.each([1, 3])('a purged dead job is named by no key but its location, its expiring history, the events and its run ledger (%i shards)', async (shards) => {
  const prefix = `pl${shards}x${process.pid}`;
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=${prefix}&shards=${shards}`), { clock });
  const raw = new Redis(server.url);
  try {
    // A job with everything a job can gather: an idempotency key, a checkpoint, an effect, usage,
    // several attempts (the attempts list), a redrive (lineage), then dead again.
    const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', idempotency_key: 'order-7', max_attempts: 2 });
    const id = job.job_id;
    const die = async () => {
      for (;;) {
        const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
        expect(lease?.jobId).toBe(id);
        await backend.checkpoint(lease!, { step: 2 });
        await backend.beginEffect(lease!, 'send-email');
        await backend.finishEffect(lease!, 'send-email', { sent: true });
        await backend.addUsage(lease!, { tokens: 10, cost_usd: 0.01 });
        const out = await backend.fail(lease!, { code: 'PROVIDER_500', message: 'down', retryable: true, workerVersion: 'v1' });
        if (out.kind === 'dead') return;
        expect(out.kind).toBe('retry');
        if (out.kind === 'retry') clock.set(out.runAt);
      }
    };
    await die();
    const redrive = 'run_01JREDR1VE00000000000000R1';
    await backend.createRun(run(redrive, 'redrive', clock.now()), [{ job_id: id, verdict: 'redrive', detail: null }]);
    expect((await backend.applyRunItems({ runId: redrive, jobIds: [id], now: clock.now() })).map((i) => i.status)).toEqual(['moved']);
    await die();

    const purge = 'run_01JPURGE00000000000000000P';
    await backend.createRun(run(purge, 'purge', clock.now()), [{ job_id: id, verdict: 'purge', detail: null }]);
    expect((await backend.applyRunItems({ runId: purge, jobIds: [id], now: clock.now() })).map((i) => i.status)).toEqual(['moved']);
    expect(await backend.get(id)).toBeNull();

    const left = await keysMentioning(raw, prefix, id);
    expect(left.map((m) => m.key)).toContain(`${prefix}:loc:${id}`);
    expect(left.filter((m) => !keptAfterPurge(prefix, id, [redrive, purge])(m))).toEqual([]);
    // and the idempotency key makes a new job
    expect((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', idempotency_key: 'order-7' })).created).toBe(true);
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
