// Redis commands (and main-thread CPU) per job for agentq's hot path, straight through the backend:
// 10,000 submits (1,000 in flight), then 2,000 claim(max 1)+complete one after another, then
// 8,000 claim(max 50)+complete, then (when the backend has it) 5,000 completeAndClaim(max 1) in a row. Commands per job come from INFO commandstats (script calls and
// the commands they run) and do not depend on the machine's load; the CPU figures do.
//
//   npm run build && node bench/redis-vs-bullmq/commands-per-job.mjs [dist dir] [label]
//
// A spawned redis-server on a random loopback port (never 6379). Results: BENCHMARKS.md, "Redis".
import { distDir, startScratchRedis } from './scratch-redis.mjs';
const dist = distDir(process.argv[2]);
const label = process.argv[3] ?? process.argv[2] ?? 'dist';
const { openBackend } = await import(dist + '/backend/open.js');
const { port, admin, stop } = await startScratchRedis();
const cpu = async () => { const s = await admin.info('cpu'); const g = (k) => Number(new RegExp(k + ':([\\d.]+)').exec(s)[1]); return g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread'); };
const calls = async () => { const s = await admin.info('commandstats'); let n = 0; for (const l of s.split('\n')) { const m = /^cmdstat_(\w+):calls=(\d+)/.exec(l); if (m && m[1] !== 'info') n += Number(m[2]); } return n; };
const b = await openBackend(`redis://127.0.0.1:${port}`);
const N = 10000, out = [];
let c0 = await cpu(); let k0 = await calls();
for (let i = 0; i < N; i += 1000) await Promise.all(Array.from({ length: 1000 }, (_v, k) => b.submit({ workflow: 'noop:v1', queue: 'q', tenant_id: `t${k % 10}` })));
out.push(['submit', ((await cpu()) - c0) * 1e6 / N, ((await calls()) - k0) / N]);
c0 = await cpu(); k0 = await calls();
for (let i = 0; i < 2000; i++) { const [l] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60000 }); await b.complete(l, null); }
out.push(['claim1+complete', ((await cpu()) - c0) * 1e6 / 2000, ((await calls()) - k0) / 2000]);
c0 = await cpu(); k0 = await calls();
for (let i = 0; i < 8000; i += 50) { const ls = await b.claim({ queue: 'q', workerId: 'w', max: 50, leaseMs: 60000 }); await Promise.all(ls.map((l) => b.complete(l, null))); }
out.push(['claim50+complete', ((await cpu()) - c0) * 1e6 / 8000, ((await calls()) - k0) / 8000]);
if (b.completeAndClaim) {
  // the worker's path for a busy slot: complete and claim the next in one call
  for (let i = 0; i < N; i += 1000) await Promise.all(Array.from({ length: 1000 }, (_v, k) => b.submit({ workflow: 'noop:v1', queue: 'q2', tenant_id: `t${k % 10}` })));
  c0 = await cpu(); k0 = await calls();
  let [l] = await b.claim({ queue: 'q2', workerId: 'w', max: 1, leaseMs: 60000 });
  for (let i = 0; i < 5000; i++) ({ next: [l] } = await b.completeAndClaim(l, null, { queue: 'q2', workerId: 'w', max: 1, leaseMs: 60000 }));
  out.push(['completeAndClaim', ((await cpu()) - c0) * 1e6 / 5000, ((await calls()) - k0) / 5000]);
}
console.log(label, out.map(([k, v, c]) => `${k} ${v.toFixed(1)}us ${c.toFixed(1)}cmd`).join('  '));
await b.close(); stop();
