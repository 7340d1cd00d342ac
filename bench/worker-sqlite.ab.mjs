// Worker (SQLite) A/B: two builds loaded in one process, alternating rounds, CPU µs per processed job.
// On a shared, loaded machine the absolute CPU figures swing by ±20% from run to run; rounds that
// alternate between the builds see the same load, so the ratio of their medians is the fair figure.
//
//   # a build of another commit, next to this one:
//   mkdir -p /tmp/old && git archive REV src tsconfig.json tsconfig.build.json package.json | tar -x -C /tmp/old \
//     && ln -s "$PWD/node_modules" /tmp/old/node_modules && npx tsc -p /tmp/old/tsconfig.build.json --outDir /tmp/old/dist
//   npm run build && node bench/worker-sqlite.ab.mjs /tmp/old/dist "$PWD/dist"            # R=6 N=4000
//   MODE=backend node bench/worker-sqlite.ab.mjs /tmp/old/dist "$PWD/dist"               # claim/complete without the worker
//
// Each round: a fresh database, N no-op jobs submitted (500 in flight), then processed by the library
// worker (concurrency 50) or, with MODE=backend, by claim 50 / complete them loops; the process
// CPU time of each phase, and of both, divided by N. The first build is the anchor (ratio 1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const builds = process.argv.slice(2);
const R = Number(process.env.R ?? 6), N = Number(process.env.N ?? 4000), MODE = process.env.MODE ?? 'worker';
const mods = [];
for (const b of builds) mods.push({ name: b, idx: await import(`${b}/index.js`), open: await import(`${b}/backend/open.js`) });
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const res = new Map(builds.map((b) => [b, []]));
const sub = new Map(builds.map((b) => [b, []]));
const both = new Map(builds.map((b) => [b, []]));
async function round(m) {
  const dir = mkdtempSync(join(tmpdir(), 'ab-'));
  const backend = await m.open.openBackend(`sqlite:${join(dir, 'b.db')}`);
  // One submit first, so the submit figure leaves out loading the submit module (and zod).
  await backend.submit({ workflow: 'noop:v1', queue: 'warm', tenant_id: 't', input: 'x' });
  const s = cpu();
  for (let i = 0; i < N; i += 500) await Promise.all(Array.from({ length: Math.min(500, N - i) }, (_, j) => backend.submit({ workflow: 'noop:v1', queue: 'bench', tenant_id: `t${(i + j) % 8}`, input: String(i + j) })));
  const c = cpu();
  sub.get(m.name).push(((c - s) * 1000) / N);
  if (MODE === 'backend') {
    for (;;) { const ls = await backend.claim({ queue: 'bench', workerId: 'b', max: 50, leaseMs: 60000 }); if (!ls.length) break; await Promise.all(ls.map((l) => backend.complete({ jobId: l.jobId, fence: l.fence }, null))); }
  } else {
    let done = 0, fin; const all = new Promise((r) => (fin = r));
    const w = m.idx.createWorker({ backend, queue: 'bench', concurrency: 50, leaseMs: 60000, minIdleMs: 1, maxIdleMs: 20, handler: async () => null, logger: (e) => { if (e.kind === 'succeeded' && ++done === N) fin(); } });
    await w.start(); await all; await w.stop();
  }
  const end = cpu();
  both.get(m.name).push(((end - s) * 1000) / N);
  await backend.close(); rmSync(dir, { recursive: true, force: true });
  return ((end - c) * 1000) / N;
}
for (let r = 0; r < R; r++) {
  const order = r % 2 ? [...mods].reverse() : mods;
  for (const m of order) res.get(m.name).push(await round(m));
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const [label, m] of [['submit', sub], [MODE, res], [`submit+${MODE}`, both]]) {
  const base = med(m.get(builds[0]));
  // The minimum too: on a loaded machine the least disturbed round is the closest to the cost itself.
  const minBase = Math.min(...m.get(builds[0]));
  for (const b of builds) console.log(`${label} ${b}: median ${med(m.get(b)).toFixed(0)} µs/job (runs ${m.get(b).map((x) => x.toFixed(0)).join(' ')}) ratio ${(med(m.get(b)) / base).toFixed(3)}; min ${Math.min(...m.get(b)).toFixed(0)} ratio ${(Math.min(...m.get(b)) / minBase).toFixed(3)}`);
}
