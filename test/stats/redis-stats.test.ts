/**
 * The Redis adapter keeps every optional stats figure (the conformance cases
 * check each is right; this pins that Redis has them all), `agentq stats
 * --by class|tenant` and `-o prometheus` show them, a queue over several
 * shards adds its shards up, and the tenant list is capped at the contract's
 * limit. A real `redis-server` spawned for this file.
 */
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATS_MAX_TENANTS } from '../../src/backend/contract.js';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { completionCandidates } from '../../src/cli/completion/dynamic.js';
import { main } from '../../src/cli/main.js';
import { ManualClock } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { parseAndValidate, sampleValue } from './prom-validate.js';

let server: RedisServer;
let seq = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

function open(clock: ManualClock, params = '') {
  const url = `${server.url}?prefix=stats${process.pid}x${++seq}${params}`;
  return { url, make: () => new RedisBackend(parseRedisUrl(url), { clock }) };
}

/** Runs the CLI in-process against `make()`'s backend; returns exit code and stdout. */
async function cli(args: string[], make: () => RedisBackend, clock: ManualClock): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: { isTTY: false, write: (s: string) => (out.push(s), true) },
    stderr: { isTTY: false, write: (s: string) => (err.push(s), true) },
    stdin: Object.assign(new PassThrough(), { isTTY: false }),
  };
  const code = await main([...args, '--color', 'never'], { io, env: {}, cwd: process.cwd(), clock, openBackend: async () => make() });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('Redis stats', () => {
  it('provides every optional figure for a queue that has jobs', async () => {
    const clock = new ManualClock();
    const backend = open(clock).make();
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', class: 'interactive' });
    clock.advance(2000);
    const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    clock.advance(3000);
    await backend.complete(lease!, null);
    const s = await backend.stats('q');
    expect(s).toMatchObject({
      at: clock.now(),
      backlog_seconds: 0,
      totals: { submitted: 1, attempts: 1, succeeded: 1 },
      by_attempt: [{ attempt: 1, succeeded: 1, failed: 0 }],
      time_in_queue_ms: [2000],
      execution_ms: [3000],
      recent: { submitted: 1, succeeded: 1, failed: 0 },
      failures_by_code: [],
    });
    expect(s.by_class?.map((b) => b.key)).toEqual(['interactive', 'batch', 'maintenance']);
    expect(s.by_tenant).toEqual([]);
    await backend.close();
  });

  it(`lists at most ${STATS_MAX_TENANTS} tenants, the deepest, and says how many there are (stats --by tenant notes the cut)`, async () => {
    const clock = new ManualClock();
    const { make } = open(clock);
    const backend = make();
    // Tenant i has i + 1 jobs: the deepest are the highest numbers.
    const n = STATS_MAX_TENANTS + 10;
    for (let i = 0; i < n; i++) {
      await Promise.all(Array.from({ length: i + 1 }, () => backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${String(i).padStart(3, '0')}` })));
    }
    const s = await backend.stats('q');
    expect(s.by_tenant).toHaveLength(STATS_MAX_TENANTS);
    expect(s.by_tenant![0]).toMatchObject({ key: `t${String(n - 1).padStart(3, '0')}`, queued: n });
    expect(s.by_tenant!.map((b) => b.queued)).toEqual(Array.from({ length: STATS_MAX_TENANTS }, (_v, i) => n - i));
    expect(s.tenants_total).toBe(n);
    const cut = await cli(['stats', '--queue', 'q', '--by', 'tenant', '-o', 'json'], make, clock);
    expect(JSON.parse(cut.stdout)[0]).toMatchObject({ tenants_total: n, by_tenant_truncated: true });
    expect(cut.stderr).toContain(`queue q: showing the ${STATS_MAX_TENANTS} deepest of ${n} tenants`);
    await backend.close();
  });

  it('adds the shards of a queue up, tenant by tenant', async () => {
    const clock = new ManualClock();
    const backend = open(clock, '&shards=4').make();
    for (let i = 0; i < 40; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: i % 4 === 0 ? 'globex' : 'acme', class: i % 2 ? 'batch' : 'interactive' });
    const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 5, leaseMs: 60_000 });
    const s = await backend.stats('q');
    const acme = s.by_tenant!.find((b) => b.key === 'acme')!;
    const globex = s.by_tenant!.find((b) => b.key === 'globex')!;
    expect(acme.queued + acme.running).toBe(30);
    expect(globex.queued + globex.running).toBe(10);
    expect(acme.running + globex.running).toBe(leases.length);
    expect(s.by_class!.find((b) => b.key === 'batch')!.queued + s.by_class!.find((b) => b.key === 'batch')!.running).toBe(20);
    expect(s.recent).toMatchObject({ submitted: 40 });
    await backend.close();
  });

  it('shows the Redis figures in `agentq stats --by class|tenant` and `-o prometheus`', async () => {
    const clock = new ManualClock();
    const { make } = open(clock);
    const seed = make();
    await seed.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'acme', class: 'interactive', estimated_seconds: 30 });
    await seed.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'acme', class: 'batch', estimated_seconds: 60 });
    await seed.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'globex', class: 'batch', estimated_seconds: 90 });
    clock.advance(10_000);
    await seed.close();

    const byTenant = await cli(['stats', '--queue', 'research', '--by', 'tenant', '-o', 'plain'], make, clock);
    expect(byTenant.code).toBe(0);
    // QUEUE TENANT QUEUED SCHED RUNNING DLQ OLDEST(s) BACKLOG(s)
    expect(byTenant.stdout.trim().split('\n').map((l) => l.split('\t'))).toEqual([
      ['research', 'acme', '2', '0', '0', '0', '10', '90'],
      ['research', 'globex', '1', '0', '0', '0', '10', '90'],
    ]);
    const byClass = await cli(['stats', '--queue', 'research', '--by', 'class', '-o', 'plain'], make, clock);
    expect(byClass.stdout.trim().split('\n').map((l) => l.split('\t').slice(1, 3))).toEqual([
      ['interactive', '1'],
      ['batch', '2'],
      ['maintenance', '0'],
    ]);

    const prom = await cli(['stats', '-o', 'prometheus'], make, clock);
    expect(prom.code).toBe(0);
    const fams = parseAndValidate(prom.stdout);
    expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'research', class: 'batch', state: 'queued' })).toBe(2);
    expect(sampleValue(fams, 'agentq_tenant_queue_depth', { queue: 'research', tenant: 'acme', state: 'queued' })).toBe(2);
    expect(sampleValue(fams, 'agentq_backlog_seconds', { queue: 'research', class: 'interactive' })).toBe(30);
    expect(sampleValue(fams, 'agentq_oldest_age_seconds', { queue: 'research', class: 'batch' })).toBe(10);
  });

  it('a damaged counter (a field holding text) fails the read naming where it is, instead of NaN figures', async () => {
    const clock = new ManualClock();
    const { url, make } = open(clock);
    const prefix = new URL(url).searchParams.get('prefix')!;
    const backend = make();
    for (let i = 0; i < 2; i++) await backend.submit({ workflow: 'w:v1', queue: 'q' });
    const raw = new Redis(server.url);
    try {
      await raw.hset(`{${prefix}:q:0}:n`, 'batch:queued', 'abc');
      await expect(backend.stats('q')).rejects.toMatchObject({
        code: 'STATS_DAMAGED',
        message: 'queue q: the stats of shard 0 are damaged: n field "batch:queued" holds "abc", not a number (written by something other than agentq)',
      });
      const json = await cli(['stats', '--queue', 'q', '-o', 'json'], make, clock);
      expect(json.code).toBe(1);
      expect(json.stdout).toBe('[]\n');
      expect(json.stderr).toContain('error: queue q: the stats of shard 0 are damaged: n field "batch:queued"');
      const prom = await cli(['stats', '--queue', 'q', '-o', 'prometheus'], make, clock);
      expect(prom.code).toBe(1);
      expect(prom.stdout).not.toMatch(/NaN/);
      // A sample that is not a number is named too.
      await raw.hset(`{${prefix}:q:0}:n`, 'batch:queued', '2');
      await raw.rpush(`{${prefix}:q:0}:tiq`, 'hello');
      await expect(backend.stats('q')).rejects.toThrow(/a tiq sample holds "hello", not a number/);
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });

  it('a damaged counter in one queue does not hide the others: stats shows them and names the damaged one, exit 1; prometheus marks it agentq_queue_stats_up 0', async () => {
    const clock = new ManualClock();
    const { url, make } = open(clock);
    const prefix = new URL(url).searchParams.get('prefix')!;
    const backend = make();
    await backend.submit({ workflow: 'w:v1', queue: 'broken' });
    for (let i = 0; i < 2; i++) await backend.submit({ workflow: 'w:v1', queue: 'good' });
    await backend.submit({ workflow: 'w:v1', queue: 'fine' });
    const raw = new Redis(server.url);
    try {
      await raw.hset(`{${prefix}:broken:0}:n`, 'batch:queued', 'abc');
      const json = await cli(['stats', '-o', 'json'], make, clock);
      expect(json.code).toBe(1);
      const reports = JSON.parse(json.stdout) as Array<{ queue: string; queued: number }>;
      expect(reports.map((r) => [r.queue, r.queued]).sort()).toEqual([['fine', 1], ['good', 2]]);
      expect(json.stderr).toContain('queue broken: the stats of shard 0 are damaged: n field "batch:queued" holds "abc"');
      const table = await cli(['stats'], make, clock);
      expect(table.code).toBe(1);
      expect(table.stdout).toMatch(/^good\s+2\b/m);
      expect(table.stdout).not.toMatch(/^broken/m);
      expect(table.stderr).toContain('queue broken: the stats of shard 0 are damaged');

      const prom = await cli(['stats', '-o', 'prometheus'], make, clock);
      expect(prom.code).toBe(1);
      expect(prom.stderr).toContain('queue broken: the stats of shard 0 are damaged');
      const fams = parseAndValidate(prom.stdout);
      expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'good', class: 'batch', state: 'queued' })).toBe(2);
      expect(sampleValue(fams, 'agentq_queue_stats_up', { queue: 'good' })).toBe(1);
      expect(sampleValue(fams, 'agentq_queue_stats_up', { queue: 'fine' })).toBe(1);
      expect(sampleValue(fams, 'agentq_queue_stats_up', { queue: 'broken' })).toBe(0);
      expect(prom.stdout).not.toMatch(/agentq_queue_depth\{queue="broken"/);

      // Two damaged queues: each is named.
      await raw.hset(`{${prefix}:fine:0}:n`, 'batch:queued', 'xyz');
      const two = await cli(['stats', '-o', 'json'], make, clock);
      expect(two.code).toBe(1);
      expect((JSON.parse(two.stdout) as Array<{ queue: string }>).map((r) => r.queue)).toEqual(['good']);
      expect(two.stderr).toContain('queue broken: the stats of shard 0 are damaged');
      expect(two.stderr).toContain('queue fine: the stats of shard 0 are damaged');
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });

  it("tenant completion still offers the other queues' tenants when one queue's stats are damaged", async () => {
    const clock = new ManualClock();
    const { url, make } = open(clock);
    const prefix = new URL(url).searchParams.get('prefix')!;
    const backend = make();
    await backend.submit({ workflow: 'w:v1', queue: 'broken', tenant_id: 'initech' });
    await backend.submit({ workflow: 'w:v1', queue: 'good', tenant_id: 'acme' });
    const raw = new Redis(server.url);
    try {
      await raw.hset(`{${prefix}:broken:0}:n`, 'batch:queued', 'abc');
      const got = await completionCandidates('tenants', ['list', '--tenant'], { backend: async () => backend, contexts: () => [] });
      expect(got).toEqual(['acme']);
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });

  it('dlq check judges the other queues and fails the damaged one as a check of its own, naming the damage (-o json gives it an entry)', async () => {
    const clock = new ManualClock();
    const { url, make } = open(clock);
    const prefix = new URL(url).searchParams.get('prefix')!;
    const backend = make();
    await backend.submit({ workflow: 'w:v1', queue: 'broken' });
    await backend.submit({ workflow: 'w:v1', queue: 'good' });
    const raw = new Redis(server.url);
    try {
      await raw.hset(`{${prefix}:broken:0}:n`, 'batch:queued', 'abc');
      const json = await cli(['dlq', 'check', '-o', 'json'], make, clock);
      expect(json.code).toBe(1);
      const result = JSON.parse(json.stdout) as { ok: boolean; queues: Array<Record<string, unknown>>; reasons: string[] };
      expect(result.ok).toBe(false);
      const byQueue = new Map(result.queues.map((q) => [q.queue, q]));
      // The good queue was judged as usual.
      expect(byQueue.get('good')).toEqual({ queue: 'good', ok: true, dlq_size: 0, dlq_rate: null, ended: 0, dead: 0, aged_entry_age_ms: null, reason: null });
      // The damaged one has an entry of the same keys, its figures unknown, the reason naming the damage.
      const broken = byQueue.get('broken')!;
      expect(Object.keys(broken).sort()).toEqual(Object.keys(byQueue.get('good')!).sort());
      expect(broken).toMatchObject({ ok: false, dlq_size: null, dlq_rate: null, ended: null, dead: null, aged_entry_age_ms: null });
      expect(broken.reason).toBe(
        'queue broken: its DLQ could not be checked: the stats of shard 0 are damaged: n field "batch:queued" holds "abc", not a number (written by something other than agentq)',
      );
      expect(result.reasons).toEqual([broken.reason]);
      expect(json.stderr).toContain('error: queue broken: its DLQ could not be checked: the stats of shard 0 are damaged');
      expect(json.stderr).not.toMatch(/\n\s+at /);
      // What to do about the key, as `agentq stats` says it.
      expect(json.stderr).toContain('hint: agentq leaves it as it is: restore the key from a backup, or correct the value with redis-cli.');

      // A DLQ entry in the good queue is still reported, next to the damaged one.
      await backend.submit({ workflow: 'w:v1', queue: 'good', max_attempts: 1 });
      const [lease] = await backend.claim({ queue: 'good', workerId: 'w', max: 2, leaseMs: 60_000 });
      await backend.fail(lease!, { code: 'X', message: 'boom', retryable: false });
      const table = await cli(['dlq', 'check', '--queue', 'good'], make, clock);
      expect(table.code).toBe(1);
      expect(table.stderr).toContain('queue good: DLQ holds 1 job');
      const both = await cli(['dlq', 'check'], make, clock);
      expect(both.code).toBe(1);
      expect(both.stderr).toMatch(/\(and 1 more queue\)/);
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
});
