// Redis memory per job of the agentq Redis backend: used_memory per job after 20,000 submits,
// after claiming and completing them, and for 20,000 more failed into the DLQ (the events they
// put on the stream included). Deterministic apart from allocator noise; compare two builds by
// passing their dist directories.
//
//   npm run build && node bench/redis-vs-bullmq/memory-per-job.mjs [dist dir] [N]
import { distDir, startScratchRedis } from './scratch-redis.mjs';

const dist = distDir(process.argv[2]);
const N = Number(process.argv[3] ?? 20000);
const { openBackend } = await import(dist + '/backend/open.js');
const { port, admin, stop } = await startScratchRedis();
const mem = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))[1]);

const backend = await openBackend(`redis://127.0.0.1:${port}`);
await backend.submit({ workflow: 'warmup:v1', queue: 'warmup' });
const m0 = await mem();
for (let i = 0; i < N; i += 1000) {
  await Promise.all(Array.from({ length: Math.min(1000, N - i) }, (_v, k) => backend.submit({ workflow: 'research_report:v1', queue: 'q', tenant_id: `t${(i + k) % 10}` })));
}
const mSubmitted = await mem();
for (let done = 0; done < N; ) {
  const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 500, leaseMs: 60_000 });
  await Promise.all(leases.map((l) => backend.complete(l, null)));
  done += leases.length;
}
const mSucceeded = await mem();
for (let i = 0; i < N; i += 1000) {
  const n = Math.min(1000, N - i);
  await Promise.all(Array.from({ length: n }, (_v, k) => backend.submit({ workflow: 'research_report:v1', queue: 'd', tenant_id: `t${(i + k) % 10}` })));
  const leases = await backend.claim({ queue: 'd', workerId: 'w', workerVersion: 'v1', max: n, leaseMs: 60_000 });
  await Promise.all(leases.map((l) => backend.fail(l, { code: 'TIMEOUT', message: 'provider said no', retryable: false })));
}
const mDead = await mem();
console.log(`${process.argv[2] ?? 'dist'}: bytes per job: submitted ${((mSubmitted - m0) / N).toFixed(0)}, succeeded ${((mSucceeded - m0) / N).toFixed(0)}, dead ${((mDead - mSucceeded) / N).toFixed(0)}`);
await backend.close();
stop();
