#!/usr/bin/env node
// What the stats counters cost on the hot path (issue 8): the same SQLite workload with the
// stats triggers in place and dropped, alternated 4 times, median CPU time per operation
// (CPU, not wall time, so a busy neighbour on a shared machine does not decide the result).
//
//   npm run build && node bench/stats.overhead.mjs
import { SqliteBackend } from '../dist/backend/sqlite/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
const res = { true: { s: [], c: [] }, false: { s: [], c: [] } };
async function run(drop) {
  const dir = mkdtempSync(join(tmpdir(), 'h6prof-'));
  const path = join(dir, 'a.db');
  let b = new SqliteBackend({ path });
  await b.close();
  if (drop) { const db = new Database(path); db.exec('DROP TRIGGER jobs_stats_insert; DROP TRIGGER jobs_stats_claim; DROP TRIGGER jobs_stats_attempt_end; DROP TRIGGER jobs_stats_release; DROP TRIGGER jobs_stats_end; DROP TRIGGER jobs_stats_prune;'); db.close(); }
  b = new SqliteBackend({ path });
  const N = 3000;
  let c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await b.submit({ workflow: 'w:v1', queue: 'bench', tenant_id: `t-${i % 200}` });
  let c = process.cpuUsage(c0); res[drop].s.push((c.user + c.system) / N);
  c0 = process.cpuUsage();
  let n = 0;
  while (n < N) { const ls = await b.claim({ queue: 'bench', workerId: 'w', max: 50, leaseMs: 60000 }); for (const l of ls) { await b.complete(l, null); n++; } }
  c = process.cpuUsage(c0); res[drop].c.push((c.user + c.system) / N);
  await b.close();
}
for (let i = 0; i < 4; i++) { await run(false); await run(true); }
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
console.log('CPU µs per op (median of 4)   submit   claim+complete');
console.log('with stats triggers         ', med(res.false.s).toFixed(0).padStart(6), med(res.false.c).toFixed(0).padStart(10));
console.log('without stats triggers      ', med(res.true.s).toFixed(0).padStart(6), med(res.true.c).toFixed(0).padStart(10));
