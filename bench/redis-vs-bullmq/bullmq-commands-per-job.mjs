// BullMQ's Redis commands per no-op job, for comparison with commands-per-job.mjs (agentq's): a
// BullMQ `Worker` (default options, as run.mjs's `process` phase) processes N jobs added beforehand
// with `addBulk`, at each concurrency given; the count is INFO commandstats before and after (the
// script calls and the commands they run; INFO itself left out). Counts do not depend on the
// machine's load.
//
//   npm install --prefix bench/redis-vs-bullmq && node bench/redis-vs-bullmq/bullmq-commands-per-job.mjs [jobs=2000] [concurrency=1,50]
//
// A spawned redis-server on a random loopback port (never 6379). Results: BENCHMARKS.md, "Redis".
import { Queue, Worker } from 'bullmq';
import { startScratchRedis } from './scratch-redis.mjs';

const N = Number(process.argv[2] ?? 2000);
const LEVELS = (process.argv[3] ?? '1,50').split(',').map(Number);
const { port, admin, stop } = await startScratchRedis();
const connection = { host: '127.0.0.1', port };

/** Calls per command name so far (commandstats), INFO left out. */
async function calls() {
  const byName = new Map();
  for (const line of (await admin.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([\w|]+):calls=(\d+)/.exec(line);
    if (m && m[1] !== 'info') byName.set(m[1], Number(m[2]));
  }
  return byName;
}

for (const concurrency of LEVELS) {
  const name = `bench-c${concurrency}`;
  const queue = new Queue(name, { connection });
  for (let i = 0; i < N; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, N - i) }, () => ({ name: 'noop', data: {} })));
  await queue.close();
  const before = await calls();
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const worker = new Worker(name, async () => {}, { connection, concurrency });
  worker.on('completed', () => {
    if (++done === N) finish();
  });
  await all;
  await worker.close();
  const after = await calls();
  let total = 0;
  let scripts = 0;
  for (const [cmd, n] of after) {
    const d = n - (before.get(cmd) ?? 0);
    total += d;
    if (cmd === 'evalsha' || cmd === 'eval') scripts += d;
  }
  console.log(`BullMQ concurrency ${concurrency}, ${N} no-op jobs: ${(total / N).toFixed(1)} commands per job, of which ${(scripts / N).toFixed(2)} script calls`);
}
stop();
