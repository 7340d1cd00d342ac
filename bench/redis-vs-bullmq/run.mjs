// agentq's Redis backend against BullMQ, on the same spawned redis-server, in one run.
//
//   npm run build && npm install --prefix bench/redis-vs-bullmq && node bench/redis-vs-bullmq/run.mjs
//   PHASES=enqueue,process ENQUEUE_N=50000 node bench/redis-vs-bullmq/run.mjs
//
// Phases (PHASES, comma list; default all):
//   enqueue  bulk enqueue of ENQUEUE_N jobs: BullMQ `addBulk` in chunks of 1000 against agentq
//            `submit` with 1000 in flight (ioredis auto-pipelining batches them); jobs/s and ratio.
//   process  end-to-end no-op processing, jobs enqueued beforehand: BullMQ `Worker` against the
//            agentq library worker (`createWorker`), at concurrency 1 (PROC1_N jobs) and 50
//            (PROC50_N jobs), from worker start to the last completion; jobs/s and ratio.
//   redrive  REDRIVE_N DLQ entries (70% PROVIDER_429, 20% TIMEOUT, 10% VALIDATION), redriven by
//            the built CLI with filters and no rate limit, timed end to end (process start to
//            exit: plan, ledger, apply, audit): selected entries/s.
//   list     `agentq dlq list --all` walks a LIST_N-entry DLQ (NDJSON to a drained pipe) while
//            a probe PINGs Redis every 5 ms on its own connection and SLOWLOG records every
//            command slower than 1 ms: the worst PING round trip and the slowest command show
//            how long Redis was blocked. The DLQ is 1,000 entries made through the contract, then
//            copied in Redis under fresh ids (bench only) up to LIST_N.
//
// Each line also gives the Redis main-thread CPU per job (INFO cpu): the work Redis did, which
// does not depend on what else the machine is running, unlike jobs/s on a shared machine.
// Both libraries use the server as configured here (no persistence, `--save ''`), default
// options otherwise (BullMQ keeps completed jobs, as agentq does). Every phase starts from an
// empty server (FLUSHALL). Results go to BENCHMARKS.md, section "Redis".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { monotonicFactory } from 'ulid';
import { openBackend } from '../../dist/backend/open.js';
import { createWorker } from '../../dist/index.js';

const env = (k, d) => (process.env[k] !== undefined ? Number(process.env[k]) : d);
const PHASES = new Set((process.env.PHASES ?? 'enqueue,process,redrive,list').split(','));
const ENQUEUE_N = env('ENQUEUE_N', 50_000);
const PROC1_N = env('PROC1_N', 5_000);
const PROC50_N = env('PROC50_N', 30_000);
const REDRIVE_N = env('REDRIVE_N', 50_000);
const LIST_N = env('LIST_N', 1_000_000);
const BIN = fileURLToPath(new URL('../../bin/agentq.js', import.meta.url));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-redis-'));
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
  let probe;
  for (let i = 0; ; i++) {
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      probe = c;
      break;
    } catch {
      c.disconnect();
      if (i > 200) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    admin: probe,
    version: (await probe.info('server')).match(/redis_version:(\S+)/)[1],
    async stop() {
      probe.disconnect();
      proc.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const rate = (n, ms) => Math.round((n / ms) * 1000);

/** Redis main-thread CPU seconds so far: work done by Redis, whatever else the machine is doing. */
async function redisCpu(redis) {
  const info = await redis.admin.info('cpu');
  const g = (k) => Number(info.match(new RegExp(`${k}:([\\d.]+)`))[1]);
  return g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread');
}
const cpuSecs = (u) => (u.user + u.system) / 1e6;
const usPerJob = (secs, n) => ((secs * 1e6) / n).toFixed(0);
const fmt = (n) => n.toLocaleString('en-US');
const results = [];
function report(line) {
  results.push(line);
  console.log(line);
}

async function benchEnqueue(redis) {
  await redis.admin.flushall();
  const chunk = 1000;
  const bullConn = { host: '127.0.0.1', port: redis.port };
  const bq = new Queue('bench-enqueue', { connection: bullConn });
  await bq.waitUntilReady();
  let c0 = await redisCpu(redis);
  let u0 = process.cpuUsage();
  let t = performance.now();
  for (let i = 0; i < ENQUEUE_N; i += chunk) {
    const n = Math.min(chunk, ENQUEUE_N - i);
    await bq.addBulk(Array.from({ length: n }, (_v, k) => ({ name: 'research_report', data: { tenant: `t${(i + k) % 10}`, input_ref: 's3://bucket/in/doc' } })));
  }
  const bullMs = performance.now() - t;
  const bullClient = cpuSecs(process.cpuUsage(u0));
  const bullCpu = (await redisCpu(redis)) - c0;
  await bq.close();

  await redis.admin.flushall();
  const backend = await openBackend(redis.url);
  await backend.submit({ workflow: 'warmup:v1', queue: 'warmup' });
  c0 = await redisCpu(redis);
  u0 = process.cpuUsage();
  t = performance.now();
  for (let i = 0; i < ENQUEUE_N; i += chunk) {
    const n = Math.min(chunk, ENQUEUE_N - i);
    await Promise.all(
      Array.from({ length: n }, (_v, k) =>
        backend.submit({ workflow: 'research_report:v1', queue: 'bench-enqueue', tenant_id: `t${(i + k) % 10}`, input_ref: 's3://bucket/in/doc', input_sha256: 'a'.repeat(64) }),
      ),
    );
  }
  const aqMs = performance.now() - t;
  const aqClient = cpuSecs(process.cpuUsage(u0));
  const aqCpu = (await redisCpu(redis)) - c0;
  await backend.close();
  const bull = rate(ENQUEUE_N, bullMs);
  const aq = rate(ENQUEUE_N, aqMs);
  report(
    `enqueue ${fmt(ENQUEUE_N)} jobs: BullMQ addBulk ${fmt(bull)} jobs/s, agentq submit ${fmt(aq)} jobs/s, ratio ${(aq / bull).toFixed(2)}x; ` +
      `Redis CPU per job: BullMQ ${usPerJob(bullCpu, ENQUEUE_N)} us, agentq ${usPerJob(aqCpu, ENQUEUE_N)} us; ` +
      `producer process CPU per job: BullMQ ${usPerJob(bullClient, ENQUEUE_N)} us, agentq ${usPerJob(aqClient, ENQUEUE_N)} us; ` +
      `Redis + producer CPU ratio (BullMQ / agentq) ${((bullCpu + bullClient) / (aqCpu + aqClient)).toFixed(2)}x`,
  );
}

async function benchProcess(redis, concurrency, n) {
  // BullMQ
  await redis.admin.flushall();
  const bullConn = { host: '127.0.0.1', port: redis.port };
  const bq = new Queue('bench-process', { connection: bullConn });
  for (let i = 0; i < n; i += 1000) await bq.addBulk(Array.from({ length: Math.min(1000, n - i) }, () => ({ name: 'noop', data: {} })));
  let done = 0;
  let finish;
  const allDone = new Promise((r) => (finish = r));
  let c0 = await redisCpu(redis);
  let u0 = process.cpuUsage();
  let t = performance.now();
  const bw = new Worker('bench-process', async () => {}, { connection: bullConn, concurrency });
  bw.on('completed', () => {
    if (++done === n) finish();
  });
  await allDone;
  const bullMs = performance.now() - t;
  const bullClient = cpuSecs(process.cpuUsage(u0));
  const bullCpu = (await redisCpu(redis)) - c0;
  await bw.close();
  await bq.close();

  // agentq
  await redis.admin.flushall();
  const backend = await openBackend(redis.url);
  for (let i = 0; i < n; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_v, k) => backend.submit({ workflow: 'noop:v1', queue: 'bench-process', tenant_id: `t${(i + k) % 10}` })));
  }
  let aqDone = 0;
  let aqFinish;
  const aqAllDone = new Promise((r) => (aqFinish = r));
  c0 = await redisCpu(redis);
  u0 = process.cpuUsage();
  t = performance.now();
  const worker = createWorker({
    backend,
    queue: 'bench-process',
    concurrency,
    handler: async () => {},
    logger: (e) => {
      if (e.kind === 'succeeded' && ++aqDone === n) aqFinish();
    },
  });
  await worker.start();
  await aqAllDone;
  const aqMs = performance.now() - t;
  const aqClient = cpuSecs(process.cpuUsage(u0));
  const aqCpu = (await redisCpu(redis)) - c0;
  await worker.stop();
  const counts = (await backend.stats('bench-process')).counts;
  if (counts.succeeded !== n) throw new Error(`agentq: ${counts.succeeded} of ${n} succeeded`);
  await backend.close();
  const bull = rate(n, bullMs);
  const aq = rate(n, aqMs);
  report(
    `process ${fmt(n)} no-op jobs at concurrency ${concurrency}: BullMQ ${fmt(bull)} jobs/s, agentq ${fmt(aq)} jobs/s, ratio ${(aq / bull).toFixed(2)}x; ` +
      `Redis CPU per job: BullMQ ${usPerJob(bullCpu, n)} us, agentq ${usPerJob(aqCpu, n)} us; ` +
      `worker process CPU per job: BullMQ ${usPerJob(bullClient, n)} us, agentq ${usPerJob(aqClient, n)} us; ` +
      `Redis + worker CPU ratio (BullMQ / agentq) ${((bullCpu + bullClient) / (aqCpu + aqClient)).toFixed(2)}x`,
  );
}

/** Puts `n` entries into the DLQ of `queue` through the contract (submit, claim, permanent failure), many in flight. */
async function seedDlq(backend, queue, n, codeOf) {
  const chunk = 1000;
  for (let i = 0; i < n; i += chunk) {
    const m = Math.min(chunk, n - i);
    await Promise.all(Array.from({ length: m }, (_v, k) => backend.submit({ workflow: 'research_report:v3', queue, tenant_id: `t${(i + k) % 7}`, max_attempts: 1 })));
    const leases = await backend.claim({ queue, workerId: 'seeder', workerVersion: 'v1.0.0', max: m, leaseMs: 3_600_000 });
    await Promise.all(leases.map((l, k) => backend.fail(l, { code: codeOf(i + k), message: 'provider said no', retryable: false, workerVersion: 'v1.0.0' })));
    if (n >= 100_000 && (i / chunk) % 100 === 0) process.stderr.write(`  seeded ${fmt(i + m)} / ${fmt(n)}\r`);
  }
  if (n >= 100_000) process.stderr.write('\n');
}

function runCli(url, args, { discardStdout = true } = {}) {
  return new Promise((resolve) => {
    const t = performance.now();
    const p = spawn(process.execPath, [BIN, '--url', url, '--no-input', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    let bytes = 0;
    p.stdout.on('data', (d) => (bytes += d.length));
    if (!discardStdout) p.stdout.resume();
    p.stderr.on('data', (d) => (stderr += d.toString()));
    p.on('exit', (code) => resolve({ code, ms: performance.now() - t, stderr, bytes }));
  });
}

async function benchRedrive(redis) {
  await redis.admin.flushall();
  const backend = await openBackend(redis.url);
  const codeOf = (i) => (i % 10 < 7 ? 'PROVIDER_429' : i % 10 < 9 ? 'TIMEOUT' : 'VALIDATION');
  let t = performance.now();
  await seedDlq(backend, 'rb', REDRIVE_N, codeOf);
  const seedMs = performance.now() - t;
  const selected = Array.from({ length: REDRIVE_N }, (_v, i) => codeOf(i)).filter((c) => c !== 'VALIDATION').length;
  const c0 = await redisCpu(redis);
  const r = await runCli(redis.url, ['dlq', 'redrive', '--queue', 'rb', '--error-code', 'PROVIDER_429', '--error-code', 'TIMEOUT', '--yes', '--rate', '0', '--batch-size', '1000', '--reason', 'bench']);
  if (r.code !== 0) throw new Error(`redrive exited ${r.code}: ${r.stderr}`);
  const cpuSecs = (await redisCpu(redis)) - c0;
  const counts = (await backend.stats('rb')).counts;
  if (counts.queued !== selected) throw new Error(`redrive moved ${counts.queued}, expected ${selected}`);
  await backend.close();
  report(`redrive ${fmt(selected)} of ${fmt(REDRIVE_N)} DLQ entries (filter: 2 error codes, no rate limit, CLI end to end): ${fmt(rate(selected, r.ms))} entries/s (${(r.ms / 1000).toFixed(2)} s; Redis CPU ${usPerJob(cpuSecs, selected)} us per redriven entry, plan and ledger included; seeding through the contract ${fmt(rate(REDRIVE_N, seedMs))} entries/s)`);
}

// Bench only: copies a DLQ entry's stored form (job hash, attempts list, state indexes, location
// key, counters) under fresh job ids, so a 1,000,000-entry DLQ takes seconds to build instead of
// the half hour the contract path (submit, claim, fail) needs on a shared 2-core machine.
const CLONE = `
local p, src = ARGV[1], ARGV[2]
local h = redis.call('HGETALL', p .. 'j:' .. src)
local att = redis.call('LRANGE', p .. 'a:' .. src, 0, -1)
for i = 3, #ARGV do
  local id = ARGV[i]
  local fields = {}
  for k = 1, #h, 2 do
    fields[#fields + 1] = h[k]
    -- the envelope and the events kept in the hash (h0 .. h3) name the job: the copy's name its own id
    if h[k] == 'env' or string.match(h[k], '^h%d$') then fields[#fields + 1] = (string.gsub(h[k + 1], src, id)) else fields[#fields + 1] = h[k + 1] end
  end
  redis.call('HSET', p .. 'j:' .. id, unpack(fields))
  if #att > 0 then redis.call('RPUSH', p .. 'a:' .. id, unpack(att)) end
  redis.call('ZADD', p .. 's:dead', 0, id)
  redis.call('ZADD', p .. 'dlq', tonumber(redis.call('HGET', p .. 'j:' .. src, 'dat')), id)
  redis.call('SET', KEYS[1] .. id, 'big\t0')
end
redis.call('HINCRBY', p .. 'n', 'dead', #ARGV - 2)
return #ARGV - 2
`;

async function benchList(redis) {
  await redis.admin.flushall();
  const backend = await openBackend(redis.url);
  let t = performance.now();
  const TEMPLATE = Math.min(1000, LIST_N);
  await seedDlq(backend, 'big', TEMPLATE, () => 'PROVIDER_429');
  const templates = (await backend.dlqList({ queue: 'big' }, { limit: TEMPLATE })).items.map((e) => e.job_id);
  await backend.close();
  const nextId = monotonicFactory();
  const prefix = '{aq:big:0}:';
  for (let made = TEMPLATE; made < LIST_N; ) {
    const n = Math.min(1000, LIST_N - made);
    const src = templates[made % templates.length];
    await redis.admin.eval(CLONE, 1, 'aq:loc:', prefix, src, ...Array.from({ length: n }, () => 'job_' + nextId()));
    made += n;
    if (made % 100_000 === 0) process.stderr.write(`  cloned ${fmt(made)} / ${fmt(LIST_N)}\r`);
  }
  process.stderr.write('\n');
  const seedMs = performance.now() - t;
  const mem = (await redis.admin.info('memory')).match(/used_memory_human:(\S+)/)[1];
  await redis.admin.config('SET', 'slowlog-log-slower-than', '1000');
  await redis.admin.config('SET', 'slowlog-max-len', '100000');
  // The probe: a PING every 5 ms on its own connection. A command that blocks Redis delays the PING.
  const probe = new Redis({ port: redis.port, host: '127.0.0.1' });
  await probe.ping();
  const sample = async (whileRunning) => {
    const rtts = [];
    let probing = true;
    const loop = (async () => {
      while (probing) {
        const s = performance.now();
        await probe.ping();
        rtts.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const out = await whileRunning();
    probing = false;
    await loop;
    rtts.sort((a, b) => a - b);
    const q = (x) => rtts[Math.min(rtts.length - 1, Math.floor(x * rtts.length))].toFixed(2);
    return { out, text: `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${rtts[rtts.length - 1].toFixed(2)} ms over ${fmt(rtts.length)} probes` };
  };
  // Baseline: the same probe for 3 s with Redis idle, to tell this machine's scheduling noise from blocking.
  const idle = await sample(() => new Promise((r) => setTimeout(r, 3000)));
  const cpu = async () => {
    const info = await redis.admin.info('everything');
    const g = (k) => Number(info.match(new RegExp(`${k}:([\\d.]+)`))[1]);
    const calls = [...info.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)].filter((m) => m[1] !== 'info' && m[1] !== 'ping' && !m[1].startsWith('slowlog') && !m[1].startsWith('config')).reduce((a, m) => a + Number(m[2]), 0);
    return { secs: g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread'), calls };
  };
  await redis.admin.config('RESETSTAT');
  await redis.admin.slowlog('RESET');
  const before = await cpu();
  t = performance.now();
  const walk = await sample(() => runCli(redis.url, ['dlq', 'list', '--queue', 'big', '--all', '-o', 'ndjson']));
  const after = await cpu();
  probe.disconnect();
  const r = walk.out;
  if (r.code !== 0) throw new Error(`dlq list exited ${r.code}: ${r.stderr}`);
  const slow = await redis.admin.slowlog('GET', 100000);
  const slowest = slow.reduce((m, e) => Math.max(m, Number(e[2])), 0);
  const calls = after.calls - before.calls;
  report(
    `dlq list --all over ${fmt(LIST_N)} entries: ${(r.ms / 1000).toFixed(1)} s (${fmt(rate(LIST_N, r.ms))} entries/s, ${(r.bytes / 1e6).toFixed(0)} MB NDJSON); ` +
      `Redis main-thread CPU ${((after.secs - before.secs) * 1000).toFixed(0)} ms over ${fmt(calls)} commands = ${(((after.secs - before.secs) * 1e6) / Math.max(calls, 1)).toFixed(0)} us per command on average (each a single-key read of one job record); ` +
      `PING round trip during the walk: ${walk.text} (idle baseline: ${idle.text}); ` +
      `SLOWLOG (wall time, includes time Redis was descheduled): ${fmt(slow.length)} commands over 1 ms, slowest ${(slowest / 1000).toFixed(2)} ms; used_memory ${mem}; DLQ built in ${(seedMs / 1000).toFixed(0)} s`,
  );
}

const redis = await startRedis();
console.log(`redis-server ${redis.version} on 127.0.0.1:${redis.port}, node ${process.version}, ${cpus().length} x ${cpus()[0].model}`);
try {
  if (PHASES.has('enqueue')) await benchEnqueue(redis);
  if (PHASES.has('process')) {
    await benchProcess(redis, 1, PROC1_N);
    await benchProcess(redis, 50, PROC50_N);
  }
  if (PHASES.has('redrive')) await benchRedrive(redis);
  if (PHASES.has('list') && LIST_N > 0) await benchList(redis);
} finally {
  await redis.stop();
}

