// Worker throughput on the embedded SQLite store, end to end through the
// backend contract: submit N jobs, then process them as no-op jobs with the
// library worker in this one process, and report jobs/s for each phase.
// The figure judged against the 5,000 jobs/s target (issue 3, item 12) is
// submit+process: N jobs over the wall time of both phases. Submit is the
// library producer's bulk path (`backend.submit`, 500 calls in flight, which
// the store group-commits); process is `createWorker` (concurrency 50).
//
//   npm run build && node bench/worker-sqlite.mjs            # N=20000 CONCURRENCY=50
//   N=50000 CONCURRENCY=100 node bench/worker-sqlite.mjs
//   node --cpu-prof --cpu-prof-dir=.tmp/prof bench/worker-sqlite.mjs   # where the time goes
//   MODE=backend node bench/worker-sqlite.mjs   # the same claim/complete calls without the worker:
//                                               # the store's own ceiling, to separate its cost from the worker's
//
// Results (with the machine and the command) go to BENCHMARKS.md, "Worker (SQLite)".
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorker } from '../dist/index.js';
import { openBackend } from '../dist/backend/open.js';

const N = Number(process.env.N ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const QUEUE = 'bench';
/** Issue 3, item 12: jobs/s end to end (submit + process). */
const TARGET = 5000;

const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-'));
const url = `sqlite:${join(dir, 'bench.db')}`;
const backend = await openBackend(url);
// CPU time of this process (better-sqlite3 runs in the main thread, so the store's work is in it too):
// on a shared, loaded machine wall-clock rates understate what one free core does; both are reported.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

try {
  // ---- submit
  let t = performance.now();
  let c = cpuMs();
  // Bulk: 500 submits in flight at a time (a producer with Promise.all; the store may group-commit them).
  for (let i = 0; i < N; i += 500) {
    const chunk = [];
    for (let j = i; j < Math.min(i + 500, N); j++) {
      chunk.push(backend.submit({ workflow: 'noop:v1', queue: QUEUE, tenant_id: `t${j % 8}`, input: String(j) }));
    }
    await Promise.all(chunk);
  }
  const submitMs = performance.now() - t;
  const submitCpuMs = cpuMs() - c;

  // ---- process
  let done = 0;
  let failed = 0;
  let finish;
  const allDone = new Promise((r) => (finish = r));
  if (process.env.MODE === 'backend') {
    // Claim in batches of CONCURRENCY and complete every lease, all from one loop, as fast as the store allows.
    t = performance.now();
    c = cpuMs();
    for (;;) {
      const leases = await backend.claim({ queue: QUEUE, workerId: 'bench', max: CONCURRENCY, leaseMs: 60_000 });
      if (leases.length === 0) break;
      await Promise.all(leases.map((l) => backend.complete({ jobId: l.jobId, fence: l.fence }, null)));
      done += leases.length;
    }
    finish();
  }
  const worker = createWorker({
    backend,
    queue: QUEUE,
    concurrency: CONCURRENCY,
    leaseMs: 60_000,
    minIdleMs: 1,
    maxIdleMs: 20,
    handler: async () => null,
    logger: (e) => {
      if (e.kind === 'succeeded' && ++done === N) finish();
      if (e.kind === 'failed' || e.kind === 'backend_error' || e.kind === 'lease_lost') {
        failed++;
        console.error(e);
      }
    },
  });
  if (process.env.MODE !== 'backend') {
    t = performance.now();
    c = cpuMs();
    await worker.start();
  }
  await allDone;
  const processMs = performance.now() - t;
  const processCpuMs = cpuMs() - c;
  await worker.stop();

  const stats = await backend.stats(QUEUE);
  const row = {
    bench: process.env.MODE === 'backend' ? 'worker-sqlite (backend only)' : 'worker-sqlite',
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? '?',
    jobs: N,
    concurrency: CONCURRENCY,
    submit_jobs_per_s: Math.round(N / (submitMs / 1000)),
    process_jobs_per_s: Math.round(N / (processMs / 1000)),
    end_to_end_jobs_per_s: Math.round(N / ((submitMs + processMs) / 1000)),
    submit_cpu_us_per_job: Math.round((submitCpuMs * 1000) / N),
    process_cpu_us_per_job: Math.round((processCpuMs * 1000) / N),
    process_jobs_per_cpu_s: Math.round(N / (processCpuMs / 1000)),
    loadavg_1m: Number(loadavg()[0].toFixed(2)),
    succeeded: stats.counts.succeeded,
    errors: failed,
  };
  row.target_jobs_per_s = TARGET;
  row.target_met = row.end_to_end_jobs_per_s >= TARGET;
  console.log(JSON.stringify(row));
  console.log(
    `END TO END (submit+process, judged): ${row.end_to_end_jobs_per_s} jobs/s, target ≥ ${TARGET}: ${row.target_met ? 'met' : 'MISSED'}\n` +
      `  submit ${row.submit_jobs_per_s} jobs/s (${row.submit_cpu_us_per_job} µs CPU/job) · process ${row.process_jobs_per_s} jobs/s ` +
      `(${row.process_cpu_us_per_job} µs CPU/job, ${row.process_jobs_per_cpu_s} jobs per CPU-second) · ` +
      `${N} jobs, concurrency ${CONCURRENCY}, ${row.succeeded} succeeded, load ${row.loadavg_1m}`,
  );
  if (row.succeeded !== N) process.exitCode = 1;
} finally {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
}
