// Redis's own work per no-op job, counted in CPU instructions rather than timed: the same
// processing as run.mjs's `process` phase (BullMQ `Worker` against agentq's `createWorker`, jobs
// enqueued beforehand), each against its own redis-server run under `valgrind --tool=callgrind`,
// with counting switched on only while the jobs are processed. Instruction counts do not move
// with the machine's load (this machine's timed ratios swing by a third from run to run), so this
// separates what Redis must do per job from how busy the machine was.
//
//   npm run build && node bench/redis-vs-bullmq/redis-instructions.mjs [jobs=2000] [concurrency=1,50]
//
// Last, the cost of the shared Lua prelude that every shard script starts with: a script that only
// returns, with and without the prelude before it, per call.
//
// Needs valgrind (and callgrind_control). Redis runs about 50 times slower under callgrind, so
// keep the job count small. With a redis-server built with symbols (REDIS_BIN=/path), the output
// files (printed) can be read with `callgrind_annotate` to see where the instructions go.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { openBackend } from '../../dist/backend/open.js';
import { createWorker } from '../../dist/index.js';
import { freePort } from './scratch-redis.mjs';
import { PRELUDE } from '../../dist/backend/redis/lua/prelude.js';

const N = Number(process.argv[2] ?? 2000);
const LEVELS = (process.argv[3] ?? '1,50').split(',').map(Number);
const out = mkdtempSync(join(tmpdir(), 'aq-callgrind-'));

/** Runs prepare, measured and after against a fresh redis-server under callgrind, counting only during measured. */
async function counted(label, prepare, measured, after = async () => {}) {
  const port = await freePort();
  const file = join(out, `${label}.%p`);
  const proc = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${file}`, process.env.REDIS_BIN ?? 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise((r) => proc.on('exit', r));
  const admin = new Redis({ port, retryStrategy: () => 200 });
  admin.on('error', () => {}); // refused while valgrind starts the server
  await admin.ping();
  const url = `redis://127.0.0.1:${port}`;
  const state = await prepare(url, port);
  execFileSync('callgrind_control', ['-i', 'on', String(proc.pid)], { stdio: 'ignore' });
  await measured(state);
  execFileSync('callgrind_control', ['-i', 'off', String(proc.pid)], { stdio: 'ignore' });
  await after(state);
  await admin.shutdown('NOSAVE').catch(() => {}); // the connection closes as the server exits
  admin.disconnect();
  await exited;
  const name = readdirSync(out).find((f) => f.startsWith(`${label}.`));
  // (the header's `summary` counts from the start, when counting was off: the trailer's `totals` has the figure)
  const totals = /^totals:\s*(\d+)/m.exec(readFileSync(join(out, name), 'utf8'));
  return { instructions: Number(totals[1]), file: join(out, name) };
}

const WARM = 50; // jobs run first on another queue, so that loading the scripts is not counted

/** BullMQ: a `Worker` on `queue` until `n` jobs completed. */
async function bullRun(connection, queue, n, concurrency) {
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const worker = new Worker(queue, async () => {}, { connection, concurrency });
  worker.on('completed', () => {
    if (++done === n) finish();
  });
  await all;
  await worker.close();
}

async function bullmq(concurrency) {
  return counted(
    `bullmq-c${concurrency}`,
    async (_url, port) => {
      const connection = { host: '127.0.0.1', port };
      for (const [name, n] of [['warm', WARM], ['bench-process', N]]) {
        const queue = new Queue(name, { connection });
        for (let i = 0; i < n; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, () => ({ name: 'noop', data: {} })));
        await queue.close();
      }
      await bullRun(connection, 'warm', WARM, concurrency);
      return { connection };
    },
    ({ connection }) => bullRun(connection, 'bench-process', N, concurrency),
  );
}

/** agentq: `createWorker` on `queue` until `n` jobs succeeded. */
async function agentqRun(backend, queue, n, concurrency) {
  let done = 0;
  let finish;
  const all = new Promise((r) => (finish = r));
  const worker = createWorker({
    backend,
    queue,
    concurrency,
    handler: async () => {},
    logger: (e) => {
      if (e.kind === 'succeeded' && ++done === n) finish();
    },
  });
  await worker.start();
  await all;
  await worker.stop();
}

async function agentq(concurrency) {
  return counted(
    `agentq-c${concurrency}`,
    async (url) => {
      const backend = await openBackend(url);
      for (const [queue, n] of [['warm', WARM], ['bench-process', N]]) {
        for (let i = 0; i < n; i += 1000) {
          await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_v, k) => backend.submit({ workflow: 'noop:v1', queue, tenant_id: `t${(i + k) % 10}` })));
        }
      }
      await agentqRun(backend, 'warm', WARM, concurrency);
      return { backend };
    },
    ({ backend }) => agentqRun(backend, 'bench-process', N, concurrency),
    async ({ backend }) => {
      const succeeded = (await backend.stats('bench-process')).counts.succeeded;
      await backend.close();
      if (succeeded !== N) throw new Error(`agentq: ${succeeded} of ${N} succeeded`);
    },
  );
}

/** Instructions per call of a script that only returns, with and without the shared prelude before it. */
async function scriptCall(label, body, calls = 2000) {
  const { instructions } = await counted(
    label,
    async (_url, port) => {
      const redis = new Redis({ port });
      const sha = await redis.script('LOAD', body);
      return { redis, sha };
    },
    async ({ redis, sha }) => {
      for (let i = 0; i < calls; i++) await redis.evalsha(sha, 1, '{aq:q:0}:n', '{aq:q:0}:', String(Date.now()), '10000', 'q');
    },
    async ({ redis }) => redis.disconnect(),
  );
  return instructions / calls;
}

const k = (x) => `${Math.round(x / 1000).toLocaleString('en-US')}k`;
for (const c of LEVELS) {
  const b = await bullmq(c);
  const a = await agentq(c);
  console.log(
    `concurrency ${c}, ${N} no-op jobs: Redis instructions per job BullMQ ${k(b.instructions / N)}, agentq ${k(a.instructions / N)}, ` +
      `BullMQ / agentq ${(b.instructions / a.instructions).toFixed(2)}x  (${b.file}, ${a.file})`,
  );
}
const bare = await scriptCall('return', 'return 1');
const prelude = await scriptCall('prelude', PRELUDE + '\nreturn 1');
console.log(`a script that only returns: ${k(bare)} instructions per call; with agentq's prelude before it: ${k(prelude)}`);
