// The SQS backend's job store compared in one run: the SQLite file (default) against Redis
// (`store=redis://…`), both against fauxqs (1.9.2) in a separate process on 127.0.0.1 and, for Redis,
// a redis-server spawned on a free loopback port (no persistence).
//   submit   `backend.submit()` through the outbox, sequential and IN_FLIGHT concurrent
//   drain    claim (receive + consider) and complete (store + DeleteMessage) of every submitted job
// Reported per store: wall time and jobs/s (noisy under load), and CPU ms per job of this process,
// of fauxqs and of redis-server (from /proc; load inflates them far less than wall time). The ratio
// Redis/SQLite is taken in the same run.
// Run: npm run build && node bench/sqs-store-submit.mjs   (SUBMITS=2000 IN_FLIGHT=50)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBackend } from '../dist/backend/open.js';

const SUBMITS = Number(process.env.SUBMITS ?? 2000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 50);
const QUEUE = 'bench';
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
const waitFor = (child, text) =>
  new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => d.toString().includes(text) && resolve());
    child.once('exit', (c) => reject(new Error(`child exited ${c}`)));
  });
const procCpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) / 100) * 1000;
};
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const sqsPort = await freePort();
const fauxqs = spawn(
  process.execPath,
  ['--input-type=module', '-e', `import { buildApp } from 'fauxqs'; const app = buildApp({ logger: false }); await app.listen({ port: ${sqsPort}, host: '127.0.0.1' }); console.log('LISTENING'); process.stdin.resume();`],
  { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] },
);
await waitFor(fauxqs, 'LISTENING');
const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-sqs-store-'));
const redisPort = await freePort();
const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
await waitFor(redis, 'Ready to accept connections');
const endpoint = `http://127.0.0.1:${sqsPort}`;
const line = (s) => process.stdout.write(`${s}\n`);

const stores = {
  sqlite: (prefix) => `sqlite:${join(dir, `${prefix}.db`)}`,
  redis: (prefix) => `redis://127.0.0.1:${redisPort}/0?prefix=${prefix}`,
};

async function measure(label, jobs, fn) {
  const c0 = [selfCpuMs(), procCpuMs(fauxqs.pid), procCpuMs(redis.pid)];
  const t = performance.now();
  await fn();
  const ms = performance.now() - t;
  const c1 = [selfCpuMs(), procCpuMs(fauxqs.pid), procCpuMs(redis.pid)];
  const per = c1.map((v, i) => (v - c0[i]) / jobs);
  return { label, jobs, ms, perJob: { client: per[0], fauxqs: per[1], redis: per[2] } };
}

const results = {};
for (const [name, storeUrl] of Object.entries(stores)) {
  const prefix = `b${name}${process.pid}`;
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint)}&store=${encodeURIComponent(storeUrl(prefix))}&wait=0&autocreate=1`;
  const backend = await openBackend(url);
  await backend.setup([QUEUE]);
  const r = [];
  r.push(await measure('submit, sequential', SUBMITS, async () => {
    for (let i = 0; i < SUBMITS; i++) await backend.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: `t${i % 7}` });
  }));
  r.push(await measure(`submit, ${IN_FLIGHT} in flight`, SUBMITS, async () => {
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < SUBMITS) await backend.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: `t${next % 7}` });
    }));
  }));
  if ((await backend.outboxStatus()).pending !== 0) throw new Error(`${name}: outbox not empty after submit`);
  let done = 0;
  r.push(await measure('drain: claim (max 10) + complete of every job', 2 * SUBMITS, async () => {
    while (done < 2 * SUBMITS) {
      const leases = await backend.claim({ queue: QUEUE, workerId: 'bench', max: 10, leaseMs: 300_000 });
      if (leases.length === 0) continue;
      await Promise.all(leases.map((l) => backend.complete(l, null)));
      done += leases.length;
    }
  }));
  await backend.close();
  results[name] = r;
}

line(`SQS backend by job store: ${SUBMITS} jobs per phase, fauxqs + redis-server on loopback, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (let i = 0; i < results.sqlite.length; i++) {
  const s = results.sqlite[i];
  const r = results.redis[i];
  const fmt = (x) => `${x.ms.toFixed(0)} ms wall (${((x.jobs / x.ms) * 1000).toFixed(0)} jobs/s), CPU/job: agentq ${x.perJob.client.toFixed(2)} ms, fauxqs ${x.perJob.fauxqs.toFixed(2)} ms, redis ${x.perJob.redis.toFixed(2)} ms`;
  line(`${s.label}`);
  line(`  sqlite: ${fmt(s)}`);
  line(`  redis:  ${fmt(r)}`);
  line(`  redis/sqlite agentq CPU per job: ${(r.perJob.client / s.perJob.client).toFixed(2)}x; wall: ${(r.ms / s.ms).toFixed(2)}x`);
}

fauxqs.kill('SIGKILL');
redis.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });
