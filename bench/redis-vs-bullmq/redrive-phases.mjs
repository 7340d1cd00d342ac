// Where a Redis redrive's time goes: the plan, the ledger (startRun) and the apply of the bulk engine,
// timed apart in one process, with the client's CPU and Redis's main-thread CPU per phase. The DLQ
// is seeded through the contract as run.mjs does (N entries, 70% PROVIDER_429, 20% TIMEOUT, 10%
// VALIDATION; the first two redriven), on a spawned redis-server (never 6379).
//
//   npm run build && node bench/redis-vs-bullmq/redrive-phases.mjs [N=50000] [dist dir]
//
// Results: BENCHMARKS.md, "Redis, eighth session".
import { distDir, startScratchRedis } from './scratch-redis.mjs';
const N = Number(process.argv[2] ?? 50_000);
const dist = distDir(process.argv[3]);
const { openBackend } = await import(dist + '/backend/open.js');
const { buildPlan, startRun, applyRun } = await import(dist + '/dlq/engine.js');
const { parseSelector } = await import(dist + '/dlq/filter.js');
const { url, admin, stop } = await startScratchRedis();
const redisCpu = async () => {
  const s = await admin.info('cpu');
  const g = (k) => Number(new RegExp(k + ':([\\d.]+)').exec(s)[1]);
  return g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread');
};
const seeder = await openBackend(url);
const codeOf = (i) => (i % 10 < 7 ? 'PROVIDER_429' : i % 10 < 9 ? 'TIMEOUT' : 'VALIDATION');
for (let i = 0; i < N; i += 1000) {
  const m = Math.min(1000, N - i);
  await Promise.all(Array.from({ length: m }, (_v, k) => seeder.submit({ workflow: 'research_report:v3', queue: 'rb', tenant_id: `t${(i + k) % 7}`, max_attempts: 1 })));
  const leases = await seeder.claim({ queue: 'rb', workerId: 'seeder', workerVersion: 'v1.0.0', max: m, leaseMs: 3_600_000 });
  await Promise.all(leases.map((l, k) => seeder.fail(l, { code: codeOf(i + k), message: 'provider said no', retryable: false, workerVersion: 'v1.0.0' })));
}
await seeder.close();

// a fresh backend, as the CLI would have: nothing cached from the seeding
const backend = await openBackend(url);
const clock = { now: () => Date.now() };
const deps = { backend, clock, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), newRunId: () => `run_bench${Date.now()}`, identity: { user: 'bench', host: 'bench', context: null, pid: process.pid } };
const selector = parseSelector({ queue: 'rb', errorCode: ['PROVIDER_429', 'TIMEOUT'] }, Date.now());
const phase = async (name, f) => {
  const c0 = await redisCpu();
  const u0 = process.cpuUsage();
  const t = performance.now();
  const r = await f();
  const ms = performance.now() - t;
  const u = process.cpuUsage(u0);
  const c = (await redisCpu()) - c0;
  console.log(`${name.padEnd(9)} ${ms.toFixed(0).padStart(5)} ms wall, client CPU ${((u.user + u.system) / 1000).toFixed(0).padStart(5)} ms, Redis CPU ${(c * 1000).toFixed(0).padStart(5)} ms`);
  return r;
};
console.log(`redrive phases, ${N.toLocaleString('en-US')} DLQ entries:`);
const { plan } = await phase('plan', () => buildPlan(deps, { action: 'redrive', selector }));
const run = await phase('startRun', () => startRun(deps, plan, { reason: 'bench', rate: null, batchSize: 1000, planBuiltHere: true }));
const res = await phase('apply', () => applyRun(deps, run.run_id, {}));
console.log(`moved ${res.session.moved}, skipped ${res.session.skipped}, failed ${res.session.failed}`);
await backend.close();
stop();
