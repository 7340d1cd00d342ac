#!/usr/bin/env node
// `agentq stats` on a queue of 1,000,000 jobs (issue 8): the figures come from
// maintained counters and bounded samples, so the answer must not grow with the queue.
//
//   npm run build && node bench/stats.mjs [--jobs 1000000] [--backend sqlite|redis|both] [--runs 15]
//
// Fills one queue through the backend contract (submit; a few thousand claimed, completed,
// retried or sent to the DLQ so every figure has data), spread over 3 classes and 200 tenants.
// Then measures, median of --runs:
//   - backend.stats(queue) in-process (the adapter's own cost),
//   - `agentq stats --queue Q -o json` and `agentq stats -o prometheus` as spawned processes
//     (what an operator or a scraper waits for, node start-up included),
//   - `node -e 0` for reference.
// For SQLite it also times the scan the counters replace (SELECT state, count(*) ... GROUP BY state).
// Redis: a throwaway redis-server on a free loopback port (never the machine's own).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'agentq.js');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const JOBS = Number(arg('jobs', '1000000'));
const RUNS = Number(arg('runs', '15'));
const which = arg('backend', 'both');
const QUEUE = 'bench';
const CLASSES = ['interactive', 'batch', 'maintenance'];
const { openBackend } = await import(join(root, 'dist/backend/open.js'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];
const fmt = (ms) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;

/**
 * SQLite: submit one job through the contract, then clone its row a million times in SQL,
 * in transactions of 100,000 rows. The counters are kept by triggers on `jobs`, which fire
 * for these inserts exactly as for submit, so the figures are the real ones; only the
 * submit path (measured elsewhere) is skipped.
 */
async function fillSqliteByCloning(backend, file, label) {
  const t0 = performance.now();
  const { job } = await backend.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: 'tenant-0', class: 'batch', max_attempts: 2 });
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const cols = db.prepare(`SELECT name FROM pragma_table_info('jobs')`).all().map((r) => r.name);
  const override = {
    id: `printf('job_01BENCH%018d', n.i)`,
    tenant: `'tenant-' || (n.i % 200)`,
    class: `CASE n.i % 3 WHEN 0 THEN 'interactive' WHEN 1 THEN 'batch' ELSE 'maintenance' END`,
    created_at: `j.created_at + n.i / 100`,
    run_at: `j.run_at + n.i / 100`,
    updated_at: `j.updated_at + n.i / 100`,
    estimated_seconds: `30 + n.i % 90`,
    idem_key: 'NULL',
    // Rows without a request fingerprint are counted by the insert triggers (migration 4), as rows
    // written by any other tool are; a copied fingerprint would leave the clones uncounted.
    fingerprint: 'NULL',
  };
  // The document must agree with the columns on identity: claims and completions read it.
  override.doc = `json_set(j.doc, '$.job_id', ${override.id}, '$.tenant_id', ${override.tenant}, '$.class', ${override.class}, '$.estimated_seconds', ${override.estimated_seconds})`;
  const select = cols.map((c) => override[c] ?? `j.${c}`).join(', ');
  const insert = db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < CAST(? AS INTEGER))
     INSERT INTO jobs (${cols.join(', ')}) SELECT ${select} FROM n, jobs j WHERE j.id = ?`,
  );
  const CHUNK = 100_000;
  for (let from = 1; from < JOBS; from += CHUNK) {
    const to = Math.min(JOBS - 1, from + CHUNK - 1);
    db.transaction(() => insert.run(from, to, job.job_id)).immediate();
    process.stderr.write(`\r${label}: ${to + 1}/${JOBS} jobs`);
  }
  db.close();
  process.stderr.write(`\r${label}: ${JOBS} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s (one submitted, the rest cloned in SQL)\n`);
  await someWork(backend);
}

async function fill(backend, label) {
  const t0 = performance.now();
  const BATCH = 500; // concurrent submits in flight (SQLite runs them one by one anyway)
  for (let i = 0; i < JOBS; i += BATCH) {
    const n = Math.min(BATCH, JOBS - i);
    const ps = [];
    for (let k = 0; k < n; k++) {
      const j = i + k;
      ps.push(
        backend.submit({
          workflow: 'research_report:v3',
          queue: QUEUE,
          tenant_id: `tenant-${j % 200}`,
          class: CLASSES[j % 3],
          estimated_seconds: 30 + (j % 90),
          max_attempts: 2,
        }),
      );
    }
    await Promise.all(ps);
    if ((i / BATCH) % 200 === 0) process.stderr.write(`\r${label}: submitted ${i + n}/${JOBS}`);
  }
  process.stderr.write(`\r${label}: submitted ${JOBS} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  await someWork(backend);
}

async function someWork(backend) {
  // Some work so every figure has data: 3000 attempts, ending succeeded, retried or dead.
  let done = 0;
  while (done < 3000) {
    const leases = await backend.claim({ queue: QUEUE, workerId: 'bench', max: 100, leaseMs: 60_000 });
    for (const l of leases) {
      if (done % 10 === 0) await backend.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: done % 20 === 0 });
      else if (done % 15 === 0) await backend.fail(l, { code: 'VALIDATION', message: 'bad input', retryable: false });
      else await backend.complete(l, null);
      done++;
    }
    if (leases.length === 0) break;
  }
}

async function measure(label, url, extra = async () => [], filler = fill) {
  const backend = await openBackend(url);
  await filler(backend, label);
  const inproc = [];
  let s;
  for (let i = 0; i < RUNS + 2; i++) {
    const t0 = performance.now();
    s = await backend.stats(QUEUE);
    if (i >= 2) inproc.push(performance.now() - t0);
  }
  const extraRows = await extra(backend);
  await backend.close();

  const env = { ...process.env, AGENTQ_URL: url };
  const spawnMs = (args) => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return performance.now() - t0;
  };
  const cases = [
    ['node -e 0', ['-e', '0']],
    [`agentq stats --queue ${QUEUE} -o json`, [bin, 'stats', '--queue', QUEUE, '-o', 'json']],
    ['agentq stats -o prometheus', [bin, 'stats', '-o', 'prometheus']],
  ];
  for (const [, a] of cases) spawnMs(a);
  const times = new Map(cases.map(([n]) => [n, []]));
  for (let i = 0; i < RUNS; i++) for (const [n, a] of cases) times.get(n).push(spawnMs(a));

  const depth = s.counts.queued + s.counts.scheduled + s.counts.running + s.counts.succeeded + s.counts.dead;
  console.log(`\n${label}: queue "${QUEUE}" with ${depth.toLocaleString('en')} jobs (${s.counts.queued.toLocaleString('en')} queued, ${s.dlq_size} in the DLQ), ${RUNS} runs, median / p90`);
  console.log(`  backend.stats(queue) in-process        ${fmt(median(inproc))} / ${fmt(p90(inproc))}`);
  for (const [name, ms, p] of extraRows) console.log(`  ${name.padEnd(39)}${fmt(ms)} / ${fmt(p)}`);
  for (const [n] of cases) console.log(`  ${n.padEnd(39)}${fmt(median(times.get(n)))} / ${fmt(p90(times.get(n)))}`);
}

if (which === 'sqlite' || which === 'both') {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-stats-'));
  try {
    const file = join(dir, 'agentq.db');
    await measure('SQLite', `sqlite:${file}`, async () => {
      // The scan the counters replace, for comparison (not what agentq runs).
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(file, { readonly: true });
      const xs = [];
      for (let i = 0; i < Math.min(RUNS, 5); i++) {
        const t0 = performance.now();
        db.prepare(`SELECT state, count(*) FROM jobs WHERE queue = ? GROUP BY state`).all(QUEUE);
        xs.push(performance.now() - t0);
      }
      db.close();
      return [['(a GROUP BY scan, for comparison)', median(xs), p90(xs)]];
    }, (backend, label) => fillSqliteByCloning(backend, file, label));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (which === 'redis' || which === 'both') {
  const port = await new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-stats-redis-'));
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise((resolve) => {
        const s = spawnSync('redis-cli', ['-p', String(port), 'ping']);
        resolve(s.stdout?.toString().trim() === 'PONG');
      });
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await measure('Redis', `redis://127.0.0.1:${port}`);
  } finally {
    redis.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
