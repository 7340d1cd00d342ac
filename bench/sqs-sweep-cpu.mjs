// CPU of the `agentq sqs sweep` CLI against fauxqs (own process, 127.0.0.1): once over an empty SQS DLQ (the
// fixed cost of a CLI run on sqs://: start-up, SDK client, queue URL) and once over N agentq DLQ copies of jobs
// that are not dead in the store (each received, checked against the store, deleted in DeleteMessageBatch of 10),
// per CLI build, builds interleaved round by round. CPU from cutime+cstime of the spawned CLIs (/proc/self/stat).
//
//   npm run build && node bench/sqs-sweep-cpu.mjs bin/agentq.js                       # N=5000 ROUNDS=3
//   node bench/sqs-sweep-cpu.mjs /tmp/old/bin/agentq.js bin/agentq.js                 # an older build vs this one
//   EXTRA='&client=sdk' node bench/sqs-sweep-cpu.mjs bin/agentq.js                    # URL parameters for every run
//   node bench/sqs-sweep-cpu.mjs 'bin/agentq.js#&client=sdk' bin/agentq.js            # per CLI: after '#', its own URL parameters
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient, SendMessageBatchCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
const { dlqAttributes, messageBody } = await import('../dist/backend/sqs/envelope.js');
const { dlqName } = await import('../dist/backend/sqs/names.js');
const { openBackend } = await import('../dist/backend/open.js');
process.env.AWS_ACCESS_KEY_ID = 'test'; process.env.AWS_SECRET_ACCESS_KEY = 'test'; process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.N ?? 5000);
const port = 40000 + Math.floor(Math.random() * 10000);
const f = spawn(process.execPath, ['--input-type=module', '-e', `import { buildApp } from 'fauxqs'; const app = buildApp({ logger: false }); await app.listen({ port: ${port}, host: '127.0.0.1' }); console.log('LISTENING'); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
await new Promise((r) => f.stdout.on('data', (d) => d.toString().includes('LISTENING') && r()));
const endpoint = `http://127.0.0.1:${port}`;
const dir = mkdtempSync(join(tmpdir(), 'aq-swc-'));
const sqs = new SQSClient({ region: 'us-east-1', endpoint });
const kids = () => { const x = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' '); return (Number(x[13]) + Number(x[14])) * 10; };
const bins = process.argv.slice(2);
const res = Object.fromEntries(bins.map((b) => [b, []]));
let k = 0;
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) for (const bin of bins) {
  const prefix = `c${++k}`;
  const [cli, own = ''] = bin.split('#');
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint)}&store=${encodeURIComponent(`sqlite:${dir}/${prefix}.db`)}&wait=0${process.env.EXTRA ?? ''}${own}`;
  const b = await openBackend(url); await b.setup(['bench']);
  const { job } = await b.store.submit({ workflow: 'research_report:v3', queue: 'bench', tenant_id: 't' });
  await b.close();
  const dead = { ...job, state: 'dead', dead: { reason: 'permanent_error', error_code: 'PROVIDER_429', error_message: 'rate limited', dead_at: new Date().toISOString() } };
  const q = (await sqs.send(new GetQueueUrlCommand({ QueueName: dlqName(prefix, 'bench') }))).QueueUrl;
  const run = () => { const k0 = kids(); const t = performance.now(); const r = spawnSync(process.execPath, [cli, '--url', url, '--no-input', 'sqs', 'sweep', '--queue', 'bench', '--yes', '--max', String(2 * N)], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } }); if (r.status !== 0) throw new Error(r.stderr); return { cpu: kids() - k0, wall: performance.now() - t }; };
  const empty = run();
  const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: messageBody(dead), MessageAttributes: dlqAttributes(dead, dead.dead) }));
  for (let i = 0; i < N; i += 10) await sqs.send(new SendMessageBatchCommand({ QueueUrl: q, Entries: entries }));
  const full = run();
  res[bin].push({ empty, full });
}
process.stdout.write(`# sqs-sweep-cpu: N=${N}, node ${process.version}, load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')} at end\n`);
for (const b of bins) console.log(b, res[b].map((r) => `empty ${r.empty.cpu} ms CPU (${r.empty.wall.toFixed(0)} wall); ${N} copies ${r.full.cpu} ms CPU (${r.full.wall.toFixed(0)} wall)`).join(' | '));
sqs.destroy(); f.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });
