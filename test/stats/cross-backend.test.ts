/**
 * One mixed workload (submits, a cancel, claims, successes, a retried 429, dead-letters, a lost
 * lease, an expiry past the deadline, a scheduled job, a redrive that then succeeds, a purge,
 * three tenants and classes) on every backend: SQLite, Redis standalone, a Redis Cluster queue in
 * 3 shards, SQS on a SQLite and on a Redis store. Every figure of `stats -o json` and every line of
 * the Prometheus text must be what happened (worked out by hand below), and the same everywhere.
 * Time in queue is left out of the comparison: a retry's wait counts from its jittered run_at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { buildStatsReport } from '../../src/core/stats.js';
import { renderPrometheus } from '../../src/metrics/prometheus.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { runRecord } from '../conformance/fixture.js';
import { TestServers } from '../support/servers.js';

let redis: RedisServer;
let cluster: RedisCluster;
let sqs: SqsServer;
const servers = new TestServers();
const dirs: string[] = [];
beforeAll(async () => {
  [redis, cluster, sqs] = await Promise.all([servers.start(startRedisServer()), servers.start(startRedisCluster(3)), servers.start(startSqsServer())]);
}, 120_000);
afterAll(async () => {
  await servers.stopAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const W = 'research_report:v3';

async function workload(backend: Backend, clock: ManualClock) {
  const sub = async (o: Record<string, unknown>) => (await backend.submit({ workflow: W, queue: 'q', ...o } as never)).job;
  const a = await sub({ class: 'interactive', tenant_id: 'acme', estimated_seconds: 30 });
  const b = await sub({ class: 'batch', tenant_id: 'globex', max_attempts: 3, estimated_seconds: 100 });
  const c = await sub({ class: 'batch', tenant_id: 'globex' });
  const e = await sub({ class: 'batch', tenant_id: 'acme', max_attempts: 1 });
  const f = await sub({ class: 'batch', tenant_id: 'acme', max_attempts: 1 });
  const g = await sub({ class: 'interactive', tenant_id: 'initech', run_at: new Date(T0 + 2 * 3_600_000).toISOString() });
  const h = await sub({ class: 'maintenance', tenant_id: 'initech', max_attempts: 2 });
  await backend.cancel(c.job_id, 'nope');
  clock.advance(1000);
  const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
  const by = (id: string) => leases.find((l) => l.jobId === id)!;
  expect(leases.map((l) => l.jobId).sort()).toEqual([a, b, e, f, h].map((j) => j.job_id).sort());
  clock.advance(5000);
  await backend.addUsage(by(a.job_id), { tokens: 100, cost_usd: 0.25 });
  await backend.complete(by(a.job_id), null);
  await backend.fail(by(b.job_id), { code: 'PROVIDER_429', message: 'slow', retryable: true });
  await backend.fail(by(e.job_id), { code: 'VALIDATION', message: 'bad', retryable: false });
  await backend.fail(by(f.job_id), { code: 'VALIDATION', message: 'bad', retryable: false });
  const d = await sub({ class: 'maintenance', tenant_id: 'initech', deadline_at: new Date(clock.now() + 1000).toISOString() });
  // past h's lease, b's retry and d's deadline: this claim reaps h (a retry), expires d and takes b
  clock.set(T0 + 30 * 60_000);
  const second = await backend.claim({ queue: 'q', workerId: 'w2', max: 10, leaseMs: 60_000 });
  expect(second.map((l) => l.jobId)).toEqual([b.job_id]);
  clock.advance(3000);
  await backend.complete(second[0]!, null);
  clock.set(T0 + 90 * 60_000);
  const third = await backend.claim({ queue: 'q', workerId: 'w2', max: 10, leaseMs: 60_000 });
  expect(third.map((l) => l.jobId)).toEqual([h.job_id]);
  clock.advance(4000);
  await backend.fail(third[0]!, { code: 'TIMEOUT', message: 't', retryable: true }); // last attempt: dead
  // bulk runs on the DLQ: redrive e (it then succeeds), purge f
  const RUNS = { redrive: 'run_01JRUNAAAAAAAAAAAAAAAAAAAA', purge: 'run_01JRUNCCCCCCCCCCCCCCCCCCCC' } as const;
  for (const [action, job] of [['redrive', e], ['purge', f]] as const) {
    await backend.createRun(runRecord({ run_id: RUNS[action], queue: 'q', action }, clock.now()), [{ job_id: job.job_id, verdict: action, detail: null }]);
    const [item] = await backend.applyRunItems({ runId: RUNS[action], jobIds: [job.job_id], now: clock.now() });
    expect(item).toMatchObject({ status: 'moved' });
  }
  clock.advance(1000);
  const [re] = await backend.claim({ queue: 'q', workerId: 'w3', max: 10, leaseMs: 60_000 });
  expect(re!.jobId).toBe(e.job_id);
  clock.advance(2000);
  await backend.complete(re!, null);
  return { d, g };
}

/** The report without what depends on the wall clock or on the retry jitter. */
function normal(s: Awaited<ReturnType<Backend['stats']>>) {
  const r = buildStatsReport(s);
  return { ...r, at: null, time_in_queue: r.time_in_queue && { count: r.time_in_queue.count }, ends: s.ends };
}

// What happened, by hand: 8 jobs submitted (a b c d e f g h); attempts: a b e f h, then b, h, and e
// after its redrive (8). Ended: a, b and the redriven e succeeded; e, f and h died (e's death counts
// though it was redriven); d expired; c was cancelled: 8 ends, 3 dead. Retried: b (429) and h (lost
// lease). Left: g scheduled (interactive, initech, 60 s of backlog), h in the DLQ (maintenance,
// initech); e succeeded, f purged.
const EXPECTED = {
  queue: 'q',
  queued: 0,
  scheduled: 1,
  running: 0,
  lease_expired: 0,
  dlq_size: 1,
  oldest_queued_age_ms: null,
  backlog_seconds: 60,
  totals: { submitted: 8, attempts: 8, succeeded: 3, retried: 2, dead: 3, expired: 1, cancelled: 1 },
  retry_rate: 2 / 8,
  dlq_rate: 3 / 8,
  // attempt 1: a and the redriven e (its attempts reset) succeeded; b, e, f, h failed. Attempt 2: b succeeded, h failed.
  success_rate_by_attempt: [
    { attempt: 1, succeeded: 2, failed: 4, rate: 2 / 6 },
    { attempt: 2, succeeded: 1, failed: 1, rate: 1 / 2 },
  ],
  failures_by_code: [
    { code: 'VALIDATION', count: 2 },
    { code: 'LEASE_EXPIRED', count: 1 },
    { code: 'PROVIDER_429', count: 1 },
    { code: 'TIMEOUT', count: 1 },
  ],
  usage: { tokens: 100, cost_usd: 0.25 },
  cost_per_job_usd: 0.25 / 8,
  tokens_per_job: 100 / 8,
  // a, b, e, f: 5 s each; h's lost lease: its 60 s lease (not the half hour to the claim that reaped
  // it); b 3 s, h 4 s, e 2 s
  execution: { count: 8, sum_ms: 4 * 5000 + 60_000 + 3000 + 4000 + 2000, p50_ms: 5000, max_ms: 60_000 },
  time_in_queue: { count: 8 },
  // the last 5 minutes (and the minute they start in): h's death and e's success
  recent_window_ms: 5 * 60_000 + 7000,
  throughput_per_s: 2 / 307,
  by_tenant: [{ key: 'initech', queued: 0, scheduled: 1, running: 0, dlq_size: 1, oldest_queued_age_ms: null, backlog_seconds: 60 }],
  tenants_total: 1,
  // the last hour from T0+30m: b succeeded, d expired (at T0+30m), h died, e succeeded
  ends: { window_ms: 3_600_000 + 7000, ended: 4, dead: 1 },
};

describe('the same mixed workload gives the same, right figures on every backend', () => {
  let reference: { report: unknown; prom: string } | undefined;
  const run = async (make: (clock: ManualClock) => Backend) => {
    const clock = new ManualClock(T0);
    const backend = make(clock);
    try {
      await workload(backend, clock);
      const s = await backend.stats('q', { endsWindowMs: 3_600_000 });
      const report = normal(s);
      expect(report).toMatchObject(EXPECTED);
      expect(report.by_class?.map((c) => [c.key, c.scheduled, c.dlq_size])).toEqual([['interactive', 1, 0], ['batch', 0, 0], ['maintenance', 0, 1]]);
      // (the time-in-queue gauges depend on the retry jitter)
      const prom = renderPrometheus([s]).split('\n').filter((l) => !l.includes('time_in_queue')).join('\n');
      expect(prom).toContain('agentq_jobs_total{queue="q",outcome="dead"} 3');
      expect(prom).toContain('agentq_attempt_failures_total{queue="q",code="LEASE_EXPIRED"} 1');
      if (reference === undefined) reference = { report, prom };
      else {
        expect(report).toEqual(reference.report);
        expect(prom).toEqual(reference.prom);
      }
    } finally {
      await backend.close();
    }
  };
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'aq-cross-'));
    dirs.push(d);
    return d;
  };
  const sqsBackend = (clock: ManualClock, prefix: string, store: string) => {
    useEmulatorCredentials();
    const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(store)}&autocreate=1&wait=0&max_receive_count=1000`;
    return new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, random: seededRandom(1), maxVisibilitySeconds: 0 });
  };
  const withPrefix = (url: string, params: string) => `${url}${url.includes('?') ? '&' : '?'}${params}`;

  it('sqlite', () => run((clock) => new SqliteBackend({ path: join(tmp(), 'a.db'), clock, random: seededRandom(1) })));
  it('redis (standalone)', () => run((clock) => new RedisBackend(parseRedisUrl(withPrefix(redis.url, `prefix=x${process.pid}`)), { clock, random: seededRandom(1) })));
  it('redis (cluster, the queue in 3 shards)', () =>
    run((clock) => new RedisBackend(parseRedisUrl(withPrefix(cluster.url, `prefix=x${process.pid}&shards=3`)), { clock, random: seededRandom(1) })));
  it('sqs (SQLite store)', () => run((clock) => sqsBackend(clock, `xs${process.pid}`, `sqlite:${join(tmp(), 's.db')}`)));
  it('sqs (Redis store)', () => run((clock) => sqsBackend(clock, `xr${process.pid}`, withPrefix(redis.url, `prefix=xr${process.pid}`))));
});
