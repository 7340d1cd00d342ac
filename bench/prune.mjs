// `agentq prune` throughput, and what it costs a worker on the same store.
//
//   npm run build && node bench/prune.mjs sqlite:///tmp/prune-bench.db 100000
//   node bench/prune.mjs redis://127.0.0.1:21801 100000
//
// Seeds N jobs of queue `bench` that succeeded ten days ago (through the backend contract, a
// clock set back: submit, claim, complete), then times the built CLI end to end
// (`agentq prune --older-than 1d --queue bench --yes [--batch-size B]`, process start to exit:
// plan, ledger, apply, audit). While it runs, a probe in this process submits, claims and completes
// one job at a time on queue `probe` and records each claim's latency: the worst is how long a
// worker was held up by a prune batch (SQLite: the write lock). BATCH sets --batch-size.
// Results (with the machine and the command) go to BENCHMARKS.md, "Prune".
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { openBackend } from '../dist/backend/open.js';
import { ManualClock } from '../dist/core/clock.js';

const URL_ = process.argv[2];
const N = Number(process.argv[3] ?? 100_000);
const BATCH = process.env.BATCH;
const BIN = fileURLToPath(new URL('../bin/agentq.js', import.meta.url));
const DAY = 86_400_000;

async function seed() {
  const past = await openBackend(URL_, { clock: new ManualClock(Date.now() - 10 * DAY) });
  const t0 = performance.now();
  for (let done = 0; done < N; ) {
    const n = Math.min(500, N - done);
    await Promise.all(Array.from({ length: n }, () => past.submit({ workflow: 'w:v1', queue: 'bench', tenant_id: 'acme' })));
    let left = n;
    while (left > 0) {
      const leases = await past.claim({ queue: 'bench', workerId: 'seed', max: Math.min(left, 100), leaseMs: 600_000 });
      await Promise.all(leases.map((l) => past.complete(l, null)));
      left -= leases.length;
    }
    done += n;
  }
  await past.close();
  return performance.now() - t0;
}

async function main() {
  const seedMs = await seed();
  console.log(`seeded ${N} succeeded jobs in ${(seedMs / 1000).toFixed(1)} s`);
  const probe = await openBackend(URL_);
  const lat = [];
  const worst = [];
  let t0 = performance.now();
  let running = true;
  const probing = (async () => {
    while (running) {
      await probe.submit({ workflow: 'w:v1', queue: 'probe', tenant_id: 'acme' });
      const t = performance.now();
      const [lease] = await probe.claim({ queue: 'probe', workerId: 'probe', max: 1, leaseMs: 60_000 });
      lat.push(performance.now() - t);
      worst.push([performance.now() - t, t - t0]);
      if (lease) await probe.complete(lease, null);
    }
  })();
  const args = [BIN, '--url', URL_, 'prune', '--older-than', '1d', '--queue', 'bench', '--yes', '-o', 'json', ...(BATCH ? ['--batch-size', BATCH] : [])];
  t0 = performance.now();
  const code = await new Promise((resolve) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, AGENTQ_NO_PROGRESS: '1' } });
    // (stderr lines with their time into the prune: which phase a slow claim fell in)
    c.stderr.on('data', (d) => process.stderr.write(String(d).split('\n').filter(Boolean).map((l) => `[${(performance.now() - t0).toFixed(0)} ms] ${l}\n`).join('')));
    c.on('exit', (code) => resolve(code));
  });
  const ms = performance.now() - t0;
  running = false;
  await probing;
  const left = (await probe.list({ queue: 'bench' }, { limit: 10, cursor: null })).items.length;
  await probe.close();
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]?.toFixed(1);
  console.log(`prune exit ${code}: ${N} jobs in ${(ms / 1000).toFixed(2)} s = ${Math.round(N / (ms / 1000))} jobs/s end to end; ${left} left`);
  console.log(`probe claims during the prune: ${lat.length}, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${lat.at(-1)?.toFixed(1)} ms`);
  worst.sort((a, b) => b[0] - a[0]);
  console.log(`worst claims (ms, at ms into the prune): ${worst.slice(0, 5).map(([d, at]) => `${d.toFixed(0)}@${at.toFixed(0)}`).join(' ')}`);
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}
await main();
