// The two phases of `agentq prune` before any delete, timed apart: the plan (the finished jobs
// read in pages, buildPrunePlan) and the ledger (createRun), on a Redis store, with the commands
// Redis ran for them (INFO commandstats, reset first: use a server of the bench's own).
//
//   npm run build && node bench/prune-phases.mjs redis://127.0.0.1:21801 100000
//
// Seeds N jobs of queue `bench` that succeeded ten days ago (as bench/prune.mjs does) unless
// SEEDED=1 (a store seeded before, e.g. restored from an RDB copy, so that two builds read the same
// data: DIST=/path/to/other/dist runs another build's modules). The run it creates is left
// planned, never applied. Results go to BENCHMARKS.md, "Prune".
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const URL_ = process.argv[2];
const N = Number(process.argv[3] ?? 100_000);
const DIST = process.env.DIST ?? fileURLToPath(new URL('../dist', import.meta.url));
const { openBackend } = await import(`${DIST}/backend/open.js`);
const { buildPrunePlan } = await import(`${DIST}/dlq/prune-plan.js`);
const { ManualClock } = await import(`${DIST}/core/clock.js`);
const DAY = 86_400_000;

if (process.env.SEEDED !== '1') {
  const past = await openBackend(URL_, { clock: new ManualClock(Date.now() - 10 * DAY) });
  for (let done = 0; done < N; ) {
    const n = Math.min(500, N - done);
    await Promise.all(Array.from({ length: n }, () => past.submit({ workflow: 'w:v1', queue: 'bench', tenant_id: 'acme' })));
    for (let left = n; left > 0; ) {
      const leases = await past.claim({ queue: 'bench', workerId: 'seed', max: Math.min(left, 100), leaseMs: 600_000 });
      await Promise.all(leases.map((l) => past.complete(l, null)));
      left -= leases.length;
    }
    done += n;
  }
  await past.close();
}

const backend = await openBackend(URL_);
await backend.redis.config('RESETSTAT');
const clock = { now: () => Date.now() };
let t = performance.now();
const plan = await buildPrunePlan({ backend, clock }, { rule: { states: ['succeeded', 'cancelled', 'expired'], before: Date.now() - DAY }, queue: 'bench', filters: {} });
const planMs = performance.now() - t;
const p = plan.plans[0];
const at = new Date().toISOString();
t = performance.now();
await backend.createRun(
  { run_id: `run_01JPRVNE${String(Date.now()).padStart(18, '0')}`, queue: 'bench', action: 'prune', user: 'bench', context: null, reason: null, filters: {}, options: p.options, created_at: at, updated_at: at, status: 'planned', counts: { planned: p.items.length, moved: 0, skipped: 0, failed: 0 } },
  p.items.map((i) => ({ job_id: i.job_id, verdict: i.verdict, detail: null })),
);
const ledgerMs = performance.now() - t;
const stats = (await backend.redis.info('commandstats')).split('\n').filter((l) => /^cmdstat_(get|hmget|evalsha):/.test(l)).map((l) => l.split(',').slice(0, 2).join(' ').trim());
await backend.close();
console.log(`plan: ${plan.total} jobs in ${planMs.toFixed(0)} ms; ledger: ${ledgerMs.toFixed(0)} ms; Redis: ${stats.join('; ')}`);
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
