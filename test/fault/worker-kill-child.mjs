// A worker process for the kill -9 fault test. Uses the built library
// (dist/), exactly as an application would. Each job's handler performs one
// external effect against the test's side channel (an idempotent HTTP API),
// then does a little more "work". The sleeps are the workload, not test
// synchronisation: they give SIGKILL something to land in the middle of.
//
// argv: STORE_URL QUEUE SIDE_CHANNEL_URL CONCURRENCY LEASE_MS
import { createWorker } from '../../dist/index.js';

const [url, queue, side, concurrency, leaseMs] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const jitter = (min, max) => min + Math.floor(Math.random() * (max - min));

const worker = createWorker({
  url,
  queue,
  concurrency: Number(concurrency),
  leaseMs: Number(leaseMs),
  heartbeatMs: Math.floor(Number(leaseMs) / 4),
  workerVersion: 'fault-test',
  gracefulMs: 5_000,
  maxIdleMs: 100,
  handler: async (job, ctx) => {
    const receipt = await ctx.effect('charge', async (idempotencyKey) => {
      const res = await fetch(`${side}/effect?key=${encodeURIComponent(idempotencyKey)}`, { method: 'POST' });
      if (!res.ok) throw Object.assign(new Error(`side channel said ${res.status}`), { status: res.status });
      const body = await res.json();
      // A window between the external call and the `done` record: a kill here
      // leaves the effect `started`, and the next attempt must call again with
      // the same idempotency key.
      await sleep(jitter(0, 30));
      return body;
    });
    await sleep(jitter(10, 60));
    return JSON.stringify({ receipt: receipt.receipt });
  },
  logger: (e) => {
    if (e.kind === 'backend_error') process.stderr.write(`backend_error ${e.op} ${e.jobId ?? ''} ${e.error?.message ?? e.error}\n`);
  },
});

const stop = () => {
  void worker.stop();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
await worker.start();
process.stdout.write('ready\n');
await worker.done;
