// Redrive (SQLite) A/B: two builds in one process. Per build a DLQ is seeded through the contract
// (300 entries: three error codes, three tenants, 2% partial) and cloned in SQL to ENTRIES; then
// rounds alternate between the builds, each on a fresh copy: plan (the filtered selection of
// bench/redrive.mjs), ledger, apply with no rate limit, timed apart in CPU time. Ratios of the
// medians are the fair figure on a loaded machine (see worker-sqlite.ab.mjs for making the other build).
//
//   npm run build && node bench/redrive.ab.mjs /tmp/old/dist "$PWD/dist"      # R=4 ENTRIES=10000
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monotonicFactory } from 'ulid';
const builds = process.argv.slice(2);
const R = Number(process.env.R ?? 4), ENTRIES = Number(process.env.ENTRIES ?? 10000), TEMPLATE = 300;
const dir = mkdtempSync(join(tmpdir(), 'abr-'));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const mods = [];
for (const b of builds) mods.push({ b, open: await import(`${b}/backend/open.js`), eng: await import(`${b}/dlq/engine.js`), filt: await import(`${b}/dlq/filter.js`), clock: await import(`${b}/core/clock.js`) });
async function seed(m, path) {
  const backend = await m.open.openBackend(`sqlite:${path}`);
  const codes = ['PROVIDER_429', 'PROVIDER_429', 'PROVIDER_429', 'PROVIDER_429', 'TIMEOUT', 'VALIDATION'];
  for (let i = 0; i < TEMPLATE; i++) await backend.submit({ workflow: 'research_report:v3', queue: 'bench', tenant_id: ['acme', 'globex', 'initech'][i % 3], max_attempts: 1, input: JSON.stringify({ doc: `s3://bucket/in/${i}.pdf`, note: 'x'.repeat(200) }), deadline_at: new Date(Date.now() + 7 * 86400000).toISOString() });
  let i = 0;
  for (;;) { const ls = await backend.claim({ queue: 'bench', workerId: 'seed', workerVersion: 'v1', max: 500, leaseMs: 600000 }); if (!ls.length) break; for (const l of ls) { if (i % 50 === 0) await backend.beginEffect(l, 'send-email'); await backend.fail(l, { code: codes[i++ % 6], message: 'no', retryable: false, workerVersion: 'v1' }); } }
  await backend.close();
  const db = new Database(path);
  const cols = db.prepare('PRAGMA table_info(jobs)').all().map((c) => c.name).filter((c) => !['id', 'doc', 'idem_key', 'fingerprint'].includes(c));
  const ins = db.prepare(`INSERT INTO jobs (id, doc, ${cols.join(', ')}) SELECT @id, json_set(doc, '$.job_id', @id), ${cols.join(', ')} FROM jobs WHERE id = @tpl`);
  const tpls = db.prepare(`SELECT id FROM jobs WHERE state = 'dead' ORDER BY id`).all();
  const ulid = monotonicFactory();
  db.transaction(() => { for (let n = tpls.length; n < ENTRIES; n++) ins.run({ id: `job_${ulid()}`, tpl: tpls[n % tpls.length].id }); })();
  db.pragma('wal_checkpoint(TRUNCATE)'); db.close();
}
for (const [k, m] of mods.entries()) { m.path = join(dir, `t${k}.db`); await seed(m, m.path); }
const res = new Map(builds.map((b) => [b, []]));
for (let r = 0; r < R; r++) for (const m of (r % 2 ? [...mods].reverse() : mods)) {
  const p = join(dir, 'run.db'); copyFileSync(m.path, p);
  const backend = await m.open.openBackend(`sqlite:${p}`);
  const ulid = monotonicFactory();
  const deps = { backend, clock: m.clock.systemClock, sleep: async () => {}, newRunId: () => `run_${ulid()}`, identity: { user: 'bench', host: hostname(), pid: process.pid, context: null } };
  const selector = m.filt.parseSelector({ queue: 'bench', errorCode: ['PROVIDER_429', 'TIMEOUT'], notExpired: true }, Date.now());
  let c = cpu(); const { plan } = await m.eng.buildPlan(deps, { action: 'redrive', selector }); const planC = cpu() - c;
  c = cpu(); const st = await m.eng.startRun(deps, plan, { reason: 'bench', rate: null, batchSize: 1000, planBuiltHere: true }); const ledC = cpu() - c;
  c = cpu(); const ap = await m.eng.applyRun(deps, st.run_id); const apC = cpu() - c;
  await backend.close(); rmSync(p, { force: true }); rmSync(p + '-wal', { force: true }); rmSync(p + '-shm', { force: true });
  res.get(m.b).push({ total: plan.totals.total, moved: ap.run.counts.moved, planC, ledC, apC });
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const b of builds) { const rs = res.get(b); const t = rs[0].total, mv = rs[0].moved;
  const all = med(rs.map((x) => x.planC + x.ledC + x.apC));
  console.log(`${b}: ${t} selected, ${mv} moved; plan ${med(rs.map((x) => x.planC)).toFixed(0)} ms, ledger ${med(rs.map((x) => x.ledC)).toFixed(0)} ms, apply ${med(rs.map((x) => x.apC)).toFixed(0)} ms CPU = ${(med(rs.map((x) => x.apC)) * 1000 / mv).toFixed(0)} µs/move; plan+ledger+apply ${(t * 1000 / all).toFixed(0)} entries per CPU-second`); }
rmSync(dir, { recursive: true, force: true });
