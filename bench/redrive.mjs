// DLQ redrive and listing on the embedded SQLite store.
//
//   npm run build && node bench/redrive.mjs
//   ENTRIES=50000 LIST_ENTRIES=200000 node bench/redrive.mjs
//
// 1. plan + apply: a DLQ of ENTRIES entries (three error codes, three tenants,
//    2% partial); the built CLI redrives a filtered selection with no rate
//    limit (`agentq dlq redrive --queue bench --error-code PROVIDER_429
//    --error-code TIMEOUT --not-expired --yes --rate 0 --batch-size 1000`),
//    timed end to end (process start to exit, plan and apply and audit
//    included); then the same on a fresh copy in-process, plan and apply timed
//    apart. Target: at least 10,000 entries/s.
// 2. `agentq dlq list --all` over LIST_ENTRIES entries to a pipe that is drained
//    as fast as it comes; peak RSS of the CLI process. Target: under 150 MB.
//
// Seeding: TEMPLATE entries go into the DLQ through the backend contract
// (submit, claim, effect, permanent failure) — the real path, but about 500
// entries/s — and are then cloned row by row in SQL with fresh job ids up to
// the wanted size. The clones are byte-for-byte the stored form of a DLQ
// entry apart from the id. (Bench only: nothing else writes the file directly.)
//
// Results (with the machine and the command) go to BENCHMARKS.md, "Redrive (SQLite)".
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monotonicFactory } from 'ulid';
import { openBackend } from '../dist/backend/open.js';
import { applyRun, buildPlan, startRun } from '../dist/dlq/engine.js';
import { parseSelector } from '../dist/dlq/filter.js';
import { systemClock } from '../dist/core/clock.js';

const ENTRIES = Number(process.env.ENTRIES ?? 50_000);
const LIST_ENTRIES = Number(process.env.LIST_ENTRIES ?? 200_000);
const TEMPLATE = Number(process.env.TEMPLATE ?? 1000);
const QUEUE = 'bench';
const BIN = fileURLToPath(new URL('../bin/agentq.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./redrive.rss-probe.mjs', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-redrive-'));
const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function seedTemplate(path) {
  const backend = await openBackend(`sqlite:${path}`);
  const codes = ['PROVIDER_429', 'PROVIDER_429', 'PROVIDER_429', 'PROVIDER_429', 'TIMEOUT', 'VALIDATION'];
  const tenants = ['acme', 'globex', 'initech'];
  const partial = new Set();
  for (let i = 0; i < TEMPLATE; i++) {
    const { job } = await backend.submit({
      workflow: 'research_report:v3',
      queue: QUEUE,
      tenant_id: tenants[i % tenants.length],
      max_attempts: 1,
      input: JSON.stringify({ doc: `s3://bucket/in/${i}.pdf`, note: 'x'.repeat(200) }),
      deadline_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    });
    if (i % 50 === 0) partial.add(job.job_id);
  }
  let i = 0;
  for (;;) {
    const leases = await backend.claim({ queue: QUEUE, workerId: 'seed', workerVersion: 'v1.0.0', max: 500, leaseMs: 600_000 });
    if (leases.length === 0) break;
    for (const lease of leases) {
      if (partial.has(lease.jobId)) await backend.beginEffect(lease, 'send-email');
      await backend.fail(lease, { code: codes[i++ % codes.length], message: 'provider said no', retryable: false, workerVersion: 'v1.0.0' });
    }
  }
  await backend.close();
}

/** Clones the template DLQ rows (and their effects) with fresh job ids until the DLQ holds `total` entries. */
function cloneTo(path, total) {
  const db = new Database(path);
  const cols = db.prepare('PRAGMA table_info(jobs)').all().map((c) => c.name);
  const rest = cols.filter((c) => c !== 'id' && c !== 'doc' && c !== 'idem_key' && c !== 'fingerprint');
  const insertJob = db.prepare(
    `INSERT INTO jobs (id, doc, ${rest.join(', ')}) SELECT @id, json_set(doc, '$.job_id', @id), ${rest.join(', ')} FROM jobs WHERE id = @tpl`,
  );
  const insertEffects = db.prepare(
    `INSERT INTO effects SELECT @id, key, status, attempt, started_at, done_at, result FROM effects WHERE job_id = @tpl`,
  );
  const templates = db.prepare(`SELECT id, partial FROM jobs WHERE state = 'dead' AND queue = ? ORDER BY id`).all(QUEUE);
  const have = templates.length;
  const ulid = monotonicFactory();
  db.transaction(() => {
    for (let n = have; n < total; n++) {
      const tpl = templates[n % have];
      const id = `job_${ulid()}`;
      insertJob.run({ id, tpl: tpl.id });
      if (tpl.partial) insertEffects.run({ id, tpl: tpl.id });
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

function runCli(args, { probe = false } = {}) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [...(probe ? ['--import', PROBE] : []), BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdoutBytes = 0;
    let stdoutLines = 0;
    let stderr = '';
    let last = '';
    child.stdout.on('data', (b) => {
      stdoutBytes += b.length;
      for (let i = 0; i < b.length; i++) if (b[i] === 10) stdoutLines++;
      last = b.toString().slice(-4000);
    });
    child.stderr.on('data', (b) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ms: performance.now() - t, stdoutBytes, stdoutLines, stderr, last }));
  });
}

try {
  const base = join(dir, 'template.db');
  let t = performance.now();
  await seedTemplate(base);
  const seedMs = performance.now() - t;
  t = performance.now();
  cloneTo(base, ENTRIES);
  const cloneMs = performance.now() - t;
  console.log(`seeded ${fmt(TEMPLATE)} entries through the contract in ${fmt(seedMs)} ms, cloned to ${fmt(ENTRIES)} in ${fmt(cloneMs)} ms`);

  // ---- 1a. plan + apply through the built CLI
  const cliDb = join(dir, 'cli.db');
  copyFileSync(base, cliDb);
  const filters = ['--queue', QUEUE, '--error-code', 'PROVIDER_429', '--error-code', 'TIMEOUT', '--not-expired'];
  const r = await runCli(['--url', `sqlite:${cliDb}`, 'dlq', 'redrive', ...filters, '--yes', '--rate', '0', '--batch-size', '1000', '-o', 'json'], { probe: true });
  if (r.code !== 0) throw new Error(`redrive exited ${r.code}: ${r.stderr}`);
  const run = JSON.parse(r.last.slice(r.last.indexOf('{')));
  const handled = run.counts.moved + run.counts.skipped + run.counts.failed;
  const cpuMs = Number(/agentq-bench-cpu-us=(\d+)/.exec(r.stderr)?.[1]) / 1000;
  console.log(
    `CLI redrive: ${fmt(handled)} selected (${fmt(run.counts.moved)} moved, ${fmt(run.counts.skipped)} skipped) in ${fmt(r.ms)} ms wall = ${fmt((handled * 1000) / r.ms)} entries/s; ${fmt(cpuMs)} ms CPU = ${fmt((handled * 1000) / cpuMs)} entries per CPU-second`,
  );

  // ---- 1b. the same in-process, plan and apply timed apart
  const libDb = join(dir, 'lib.db');
  copyFileSync(base, libDb);
  const backend = await openBackend(`sqlite:${libDb}`);
  const selector = parseSelector({ queue: QUEUE, errorCode: ['PROVIDER_429', 'TIMEOUT'], notExpired: true }, Date.now());
  const ulid = monotonicFactory();
  const deps = {
    backend,
    clock: systemClock,
    sleep: async () => {},
    newRunId: () => `run_${ulid()}`,
    identity: { user: 'bench', host: hostname(), pid: process.pid, context: null },
  };
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let c = cpu();
  t = performance.now();
  const { plan } = await buildPlan(deps, { action: 'redrive', selector });
  const planMs = performance.now() - t;
  const planCpu = cpu() - c;
  c = cpu();
  t = performance.now();
  const started = await startRun(deps, plan, { reason: 'bench', rate: null, batchSize: 1000, planBuiltHere: true });
  const ledgerMs = performance.now() - t;
  const ledgerCpu = cpu() - c;
  c = cpu();
  t = performance.now();
  const applied = await applyRun(deps, started.run_id);
  const applyMs = performance.now() - t;
  const applyCpu = cpu() - c;
  await backend.close();
  const total = plan.totals.total;
  console.log(
    `in-process: plan ${fmt(total)} in ${fmt(planMs)} ms (${fmt((total * 1000) / planMs)}/s), ledger ${fmt(ledgerMs)} ms, apply ${fmt(applied.run.counts.moved)} moves in ${fmt(applyMs)} ms (${fmt((applied.run.counts.moved * 1000) / applyMs)}/s); plan+ledger+apply ${fmt((total * 1000) / (planMs + ledgerMs + applyMs))} entries/s wall`,
  );
  console.log(
    `in-process CPU: plan ${fmt(planCpu)} ms, ledger ${fmt(ledgerCpu)} ms, apply ${fmt(applyCpu)} ms; plan+ledger+apply ${fmt((total * 1000) / (planCpu + ledgerCpu + applyCpu))} entries per CPU-second`,
  );

  // ---- 2. dlq list --all over LIST_ENTRIES, peak RSS of the CLI
  const listDb = join(dir, 'list.db');
  copyFileSync(base, listDb);
  t = performance.now();
  cloneTo(listDb, LIST_ENTRIES);
  console.log(`cloned to ${fmt(LIST_ENTRIES)} in ${fmt(performance.now() - t)} ms`);
  const l = await runCli(['--url', `sqlite:${listDb}`, 'dlq', 'list', '--queue', QUEUE, '--all'], { probe: true });
  if (l.code !== 0) throw new Error(`list exited ${l.code}: ${l.stderr}`);
  const rssKb = Number(/agentq-bench-maxrss-kb=(\d+)/.exec(l.stderr)?.[1]);
  console.log(
    `CLI dlq list --all: ${fmt(l.stdoutLines)} NDJSON lines (${fmt(l.stdoutBytes / 1048576)} MiB) in ${fmt(l.ms)} ms, peak RSS ${(rssKb / 1024).toFixed(1)} MiB (target < 150 MB)`,
  );
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
} finally {
  if (process.env.KEEP) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
