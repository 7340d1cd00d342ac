import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
const dist = process.argv[2] ?? '/work/main/dist';
const { openBackend } = await import(dist + '/backend/open.js');
const port = 20000 + Math.floor(Math.random() * 20000);
const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 400));
const admin = new Redis({ port });
const stats = async () => { const s = await admin.info('commandstats'); const o = {}; for (const l of s.split('\n')) { const m = /^cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/.exec(l); if (m) o[m[1]] = [Number(m[2]), Number(m[3])]; } return o; };
const diff = (a, b, n) => { const out = []; let tot = 0, inner = 0; for (const k of Object.keys(b)) { if (k === 'info' || k==='config') continue; const c = b[k][0] - (a[k]?.[0] ?? 0), u = b[k][1] - (a[k]?.[1] ?? 0); if (c) { out.push(`${k} ${(c/n).toFixed(2)}x ${(u/n).toFixed(1)}us`); if (k.startsWith('eval')) tot += u; else inner += u; } } return `${out.join(', ')}\n  script total ${(tot/n).toFixed(1)}us, of which inner commands ${(inner/n).toFixed(1)}us`; };
const b = await openBackend(`redis://127.0.0.1:${port}`);
const N = 5000;
await b.submit({ workflow: 'noop:v1', queue: 'q', tenant_id: 'w' });
let s0 = await stats();
for (let i = 0; i < N; i += 500) await Promise.all(Array.from({ length: 500 }, (_v, k) => b.submit({ workflow: 'noop:v1', queue: 'q', tenant_id: `t${k % 10}` })));
console.log('submit:', diff(s0, await stats(), N));
s0 = await stats();
const M = 2000;
for (let i = 0; i < M; i++) { const [l] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60000 }); await b.complete(l, null); }
console.log('claim1+complete:', diff(s0, await stats(), M));
if (b.completeAndClaim) {
  s0 = await stats();
  let [l] = await b.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60000 });
  for (let i = 0; i < M; i++) { const r = await b.completeAndClaim(l, null, { queue: 'q', workerId: 'w', max: 1, leaseMs: 60000 }); l = r.next[0]; }
  console.log('completeAndClaim:', diff(s0, await stats(), M));
}
await b.close(); admin.disconnect(); proc.kill();
