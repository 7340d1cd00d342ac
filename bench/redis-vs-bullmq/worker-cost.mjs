// Cost per job of the agentq library worker on Redis, end to end (no-op handler), at concurrency
// 1 and 50: Redis commands and script calls per job (INFO commandstats: independent of the
// machine), Redis main-thread CPU per job and the worker process's own CPU per job
// (process.cpuUsage: less sensitive to other load than wall time), plus jobs/s (wall, noisy).
//
//   npm run build && node bench/redis-vs-bullmq/worker-cost.mjs [N1] [N50] [dist dir]
//
// A/B of two builds: copy the other build's dist into this checkout (so it finds node_modules),
// e.g. `cp -r dist dist-before`, then run the two in turn a few times:
//   for i in 1 2 3 4 5; do node bench/redis-vs-bullmq/worker-cost.mjs 0 10000 dist-before; node bench/redis-vs-bullmq/worker-cost.mjs 0 10000; done
import { distDir, startScratchRedis } from './scratch-redis.mjs';

const dist = distDir(process.argv[4]);
const { openBackend } = await import(dist + '/backend/open.js');
const { createWorker } = await import(dist + '/index.js');

const N1 = Number(process.argv[2] ?? 2000);
const N50 = Number(process.argv[3] ?? 10000);
const { port, admin, stop } = await startScratchRedis();
const cpu = async () => { const s = await admin.info('cpu'); const g = (k) => Number(new RegExp(k + ':([\\d.]+)').exec(s)[1]); return g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread'); };
const calls = async () => { const s = await admin.info('commandstats'); let n = 0, scripts = 0; for (const l of s.split('\n')) { const m = /^cmdstat_(\w+):calls=(\d+)/.exec(l); if (m && m[1] !== 'info') { n += Number(m[2]); if (m[1].startsWith('eval')) scripts += Number(m[2]); } } return { n, scripts }; };

async function run(concurrency, n) {
  await admin.flushall();
  const backend = await openBackend(`redis://127.0.0.1:${port}`);
  for (let i = 0; i < n; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_v, k) => backend.submit({ workflow: 'noop:v1', queue: 'q', tenant_id: `t${(i + k) % 10}` })));
  let done = 0, finish;
  const all = new Promise((r) => (finish = r));
  const c0 = await cpu(), k0 = await calls(), u0 = process.cpuUsage(), t0 = performance.now();
  const w = createWorker({ backend, queue: 'q', concurrency, handler: async () => {}, logger: (e) => { if (e.kind === 'succeeded' && ++done === n) finish(); } });
  await w.start();
  await all;
  const ms = performance.now() - t0, u = process.cpuUsage(u0), k = await calls(), c = await cpu();
  await w.stop();
  await backend.close();
  console.log(`concurrency ${concurrency}, ${n} jobs: ${((k.n - k0.n) / n).toFixed(1)} commands/job (${((k.scripts - k0.scripts) / n).toFixed(2)} script calls), Redis CPU ${(((c - c0) * 1e6) / n).toFixed(0)} us/job, worker CPU ${((u.user + u.system) / n).toFixed(0)} us/job, ${Math.round((n / ms) * 1000)} jobs/s wall`);
}
if (N1 > 0) await run(1, N1);
if (N50 > 0) await run(50, N50);
stop();
