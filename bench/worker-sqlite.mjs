// Worker throughput on the embedded SQLite store, end to end through the
// backend contract: submit N jobs, then process them as no-op jobs with the
// library worker in this one process, and report jobs/s for each phase.
//
//   npm run build && node bench/worker-sqlite.mjs            # N=20000 CONCURRENCY=50
//   N=50000 CONCURRENCY=100 node bench/worker-sqlite.mjs
//   node --cpu-prof --cpu-prof-dir=.tmp/prof bench/worker-sqlite.mjs   # where the time goes
//
// Results (with the machine and the command) go to BENCHMARKS.md, "Worker (SQLite)".
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorker } from '../dist/index.js';
import { openBackend } from '../dist/backend/open.js';

const N = Number(process.env.N ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const QUEUE = 'bench';

const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-'));
const url = `sqlite:${join(dir, 'bench.db')}`;
const backend = await openBackend(url);

try {
  // ---- submit
  let t = performance.now();
  for (let i = 0; i < N; i++) {
    await backend.submit({ workflow: 'noop:v1', queue: QUEUE, tenant_id: `t${i % 8}`, input: String(i) });
  }
  const submitMs = performance.now() - t;

  // ---- process
  let done = 0;
  let failed = 0;
  let finish;
  const allDone = new Promise((r) => (finish = r));
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
  t = performance.now();
  await worker.start();
  await allDone;
  const processMs = performance.now() - t;
  await worker.stop();

  const stats = await backend.stats(QUEUE);
  const row = {
    bench: 'worker-sqlite',
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? '?',
    jobs: N,
    concurrency: CONCURRENCY,
    submit_jobs_per_s: Math.round(N / (submitMs / 1000)),
    process_jobs_per_s: Math.round(N / (processMs / 1000)),
    end_to_end_jobs_per_s: Math.round(N / ((submitMs + processMs) / 1000)),
    succeeded: stats.counts.succeeded,
    errors: failed,
  };
  console.log(JSON.stringify(row));
  console.log(
    `submit ${row.submit_jobs_per_s} jobs/s · process ${row.process_jobs_per_s} jobs/s (target ≥ 5000) · ` +
      `submit+process ${row.end_to_end_jobs_per_s} jobs/s · ${N} jobs, concurrency ${CONCURRENCY}, ${row.succeeded} succeeded`,
  );
  if (row.succeeded !== N) process.exitCode = 1;
} finally {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
}
