// SQS redrive and submit throughput against fauxqs (1.9.2) in a separate process on 127.0.0.1.
//
//   npm run build && node bench/sqs-redrive.mjs          # N=5000 entries, SUBMITS=2000
//   N=1000 SUBMITS=500 node bench/sqs-redrive.mjs        # quicker
//   SKIP_NAIVE=1 CPU_PROF=/tmp/prof node bench/sqs-redrive.mjs   # agentq only, a V8 CPU profile per CLI run
//   FAUXQS_PROF=/tmp/fprof node bench/sqs-redrive.mjs              # and one of the emulator (written when it exits)
//   COMPARE_BIN=/tmp/old/bin/agentq.js node bench/sqs-redrive.mjs  # also an older build's CLI, same run, same emulator
//                                                                  # (redrive then `sqs sweep`: builds before the redrive swept)
//   COMPARE_BIN=/tmp/old/bin/agentq.js COMPARE_STEPS=one ROUNDS=3 SKIP_TWO_STEP=1 node bench/sqs-redrive.mjs
//                                                                  # A/B: the older build as one `dlq redrive` too (builds that
//                                                                  # sweep in the redrive), old and new alternated 3 times
//   AGENTQ_BIN=/tmp/new/bin/agentq.js ...                         # the CLI measured as "agentq" (default: this repo's bin)
//   COMPARE_BIN=bin/agentq.js COMPARE_EXTRA='&client=sdk' node bench/sqs-redrive.mjs   # this build with the AWS SDK for every call vs its wire client
//
// Phases, in one run, on two separate queue prefixes seeded identically (N dead jobs: N store
// entries and N agentq DLQ copies in the SQS DLQ, with error attributes):
//   naive   receive 1 / send 1 / delete 1 from the SQS DLQ to the source queue, until empty
//   agentq  `agentq dlq redrive --queue Q --all --yes --rate 0 --batch-size 1000` (plan, lock, ledger, store move +
//           outbox row per job, SendMessageBatch of 10, outbox marked from the batch report, then the
//           redrive's own sweep of the SQS DLQ: the N copies of the moved jobs received and deleted,
//           DeleteMessageBatch of 10): one spawned CLI, start-up included
//   two-step (SKIP_TWO_STEP=1 skips it) the same with `--no-sweep`, then `agentq sqs sweep --yes`: two CLIs
//   submit  `backend.submit()` through the outbox (store commit, then publish at once), sequential
//           and with IN_FLIGHT=50 concurrent submits (grouped into SendMessageBatch of 10)
// CPU: besides wall time, each phase reports the CPU seconds it cost on the client side (this process
// for the naive loop, the CLI children for agentq) and in the emulator. Wall time on a loaded machine
// measures the neighbours as much as the code; the CPU ratio moves far less with load.
// Checks after each phase: exactly N messages in the source queue, none left in the SQS DLQ.
// Results (with the machine and the command) go to BENCHMARKS.md, section "SQS".
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { openBackend } from '../dist/backend/open.js';
import { dlqAttributes, messageBody } from '../dist/backend/sqs/envelope.js';
import { dlqName, sourceQueueName } from '../dist/backend/sqs/names.js';

const N = Number(process.env.N ?? 5000);
const SUBMITS = Number(process.env.SUBMITS ?? 2000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 50);
/** Ledger items per apply step: one store transaction each, then their messages in SendMessageBatch of 10. */
const BATCH = Number(process.env.BATCH ?? 1000);
const QUEUE = 'bench';
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const fauxqs = spawn(
  process.execPath,
  [...(process.env.FAUXQS_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.FAUXQS_PROF] : []), '--input-type=module', '-e', `import { buildApp } from 'fauxqs'; const app = buildApp({ logger: false }); await app.listen({ port: ${port}, host: '127.0.0.1' }); console.log('LISTENING'); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`],
  { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] },
);
await new Promise((resolve, reject) => {
  fauxqs.stdout.on('data', (d) => d.toString().includes('LISTENING') && resolve());
  fauxqs.once('exit', (c) => reject(new Error(`fauxqs exited ${c}`)));
});
const endpoint = `http://127.0.0.1:${port}`;
// CPU seconds the emulator spent (utime + stime from /proc, 100 ticks/s): the SQS-side work of a
// phase, which does not depend on how loaded the machine is the way wall time does.
const serverCpu = () => {
  const f = readFileSync(`/proc/${fauxqs.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
/**
 * CPU seconds on the client side: this process (the naive loop runs here) plus the CLI children it
 * waited for (cutime + cstime of /proc/self/stat). With serverCpu() this gives the whole CPU cost of
 * a phase, which load on the machine inflates far less than wall time.
 */
const clientCpu = () => {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6 + (Number(f[13]) + Number(f[14])) / 100;
};
const sqs = new SQSClient({ region: 'us-east-1', endpoint });
const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-sqs-'));
/** COMPARE_EXTRA: URL parameters of the compare phase's CLI only (e.g. `&client=sdk`). */
const urlFor = (prefix) =>
  `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint)}&store=${encodeURIComponent(`sqlite:${join(dir, `${prefix}.db`)}`)}&wait=0${prefix.startsWith('cmp') ? (process.env.COMPARE_EXTRA ?? '') : ''}`;
const qurl = async (name) => (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
const depth = async (name) => {
  const a = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: await qurl(name), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes;
  return Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible);
};
const line = (s) => process.stdout.write(`${s}\n`);

/**
 * N dead jobs in the store, fast: through the store's own contract (submit, claim, fail), outbox rows
 * marked published (seeding is not what is measured), and their N agentq DLQ copies sent to the SQS DLQ.
 */
async function seed(prefix) {
  const backend = await openBackend(urlFor(prefix));
  await backend.setup([QUEUE]);
  const store = backend.store;
  for (let i = 0; i < N; i++) await store.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: `t${i % 7}`, max_attempts: 1 });
  backend.ext.store.db.prepare('UPDATE sqs_outbox SET published_at = 0').run();
  const dead = [];
  for (;;) {
    const leases = await store.claim({ queue: QUEUE, workerId: 'seed', max: 500, leaseMs: 600_000 });
    if (leases.length === 0) break;
    for (const l of leases) {
      const out = await store.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: false });
      dead.push(out.job);
    }
  }
  const dlq = await qurl(dlqName(prefix, QUEUE));
  for (let i = 0; i < dead.length; i += 10) {
    const batch = dead.slice(i, i + 10);
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: dlq, Entries: batch.map((j, k) => ({ Id: `m${k}`, MessageBody: messageBody(j), MessageAttributes: dlqAttributes(j, j.dead) })) }));
  }
  await backend.close();
  if ((await depth(dlqName(prefix, QUEUE))) !== N) throw new Error('seeding the SQS DLQ failed');
}

function cli(prefix, args, bin = join(REPO, 'bin', 'agentq.js')) {
  const t = performance.now();
  const prof = process.env.CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.CPU_PROF] : [];
  const r = spawnSync(process.execPath, [...prof, bin, '--url', urlFor(prefix), '--no-input', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (r.status !== 0) throw new Error(`agentq ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - t;
}

line(`# sqs-redrive bench: N=${N}, batch ${BATCH}, node ${process.version}, ${cpus().length} cpus (${cpus()[0]?.model ?? '?'}), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

// ---- naive (SKIP_NAIVE=1 when profiling agentq alone)
var naiveRate = NaN;
var naiveCpu = NaN;
var naiveClientCpu = NaN;
if (!process.env.SKIP_NAIVE) {
  await seed('naive');
  const from = await qurl(dlqName('naive', QUEUE));
  const to = await qurl(sourceQueueName('naive', QUEUE, 'batch'));
  const t = performance.now();
  const c0 = serverCpu();
  const k0 = clientCpu();
  let moved = 0;
  for (;;) {
    const m = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: from, MaxNumberOfMessages: 1, MessageAttributeNames: ['All'], VisibilityTimeout: 30 }))).Messages?.[0];
    if (!m) break;
    await sqs.send(new SendMessageCommand({ QueueUrl: to, MessageBody: m.Body, MessageAttributes: m.MessageAttributes }));
    await sqs.send(new DeleteMessageCommand({ QueueUrl: from, ReceiptHandle: m.ReceiptHandle }));
    moved++;
  }
  const ms = performance.now() - t;
  if (moved !== N || (await depth(sourceQueueName('naive', QUEUE, 'batch'))) !== N || (await depth(dlqName('naive', QUEUE))) !== 0) throw new Error('naive loop check failed');
  naiveRate = (N / ms) * 1000;
  naiveCpu = serverCpu() - c0;
  naiveClientCpu = clientCpu() - k0;
  line(`naive receive-1/send-1/delete-1: ${N} msgs in ${(ms / 1000).toFixed(2)} s = ${naiveRate.toFixed(0)} msg/s; CPU: client ${naiveClientCpu.toFixed(1)} s + emulator ${naiveCpu.toFixed(1)} s`);
}

// ---- agentq (and, with COMPARE_BIN, a second agentq CLI in the same run: a build of an earlier commit)
/**
 * `steps`: 'one' = `dlq redrive` alone (it sweeps the SQS DLQ itself); 'two' = `dlq redrive` (with
 * `--no-sweep` on this build; builds before the redrive swept need no flag) then `sqs sweep`.
 */
async function agentqPhase(prefix, bin, label, steps) {
  await seed(prefix);
  const c0 = serverCpu();
  const k0 = clientCpu();
  // Builds from before the redrive swept have no --no-sweep (and need none): ask the build's help.
  const hasFlag = spawnSync(process.execPath, [bin, 'dlq', 'redrive', '--help'], { encoding: 'utf8' }).stdout.includes('--no-sweep');
  const noSweep = steps === 'two' && hasFlag ? ['--no-sweep'] : [];
  const redriveMs = cli(prefix, ['dlq', 'redrive', '--queue', QUEUE, '--all', '--yes', '--rate', '0', '--batch-size', String(BATCH), '--reason', 'bench', ...noSweep], bin);
  const c1 = serverCpu();
  const k1 = clientCpu();
  const sweepMs = steps === 'two' ? cli(prefix, ['sqs', 'sweep', '--queue', QUEUE, '--yes', '--max', String(2 * N)], bin) : 0;
  const c2 = serverCpu();
  const k2 = clientCpu();
  const src = await depth(sourceQueueName(prefix, QUEUE, 'batch'));
  const left = await depth(dlqName(prefix, QUEUE));
  if (src !== N || left !== 0) throw new Error(`${label} check failed: ${src} in source, ${left} left in the SQS DLQ`);
  const ms = redriveMs + sweepMs;
  const rate = (N / ms) * 1000;
  const cpu = k2 - k0 + c2 - c0;
  if (steps === 'one') line(`${label} dlq redrive (CLI, its SQS DLQ sweep included): ${N} jobs in ${(ms / 1000).toFixed(2)} s; SQS DLQ left empty`);
  else line(`${label} dlq redrive (CLI): ${N} jobs in ${(redriveMs / 1000).toFixed(2)} s; sqs sweep of the ${N} DLQ copies: ${(sweepMs / 1000).toFixed(2)} s; SQS DLQ left empty`);
  line(`${label} total: ${rate.toFixed(0)} msg/s = ${(rate / naiveRate).toFixed(1)}x the naive loop`);
  line(`${label} CPU: CLI ${steps === 'one' ? (k1 - k0).toFixed(1) : `redrive ${(k1 - k0).toFixed(1)} s + sweep ${(k2 - k1).toFixed(1)}`} s, emulator ${(c2 - c0).toFixed(1)} s = ${cpu.toFixed(1)} s vs naive ${(naiveClientCpu + naiveCpu).toFixed(1)} s = ${((naiveClientCpu + naiveCpu) / cpu).toFixed(1)}x less CPU`);
  return { ms, cpu, cliCpu: k2 - k0 };
}
const AGENTQ_BIN = process.env.AGENTQ_BIN ?? join(REPO, 'bin', 'agentq.js');
const COMPARE_STEPS = process.env.COMPARE_STEPS === 'one' ? 'one' : 'two';
const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 1) || 1);
// Alternated old/new rounds (ROUNDS > 1): neighbours' load hits both builds alike.
const cmpRuns = [];
const aqRuns = [];
for (let r = 1; r <= ROUNDS; r++) {
  const tag = ROUNDS > 1 ? `${r}` : '';
  if (process.env.COMPARE_BIN) cmpRuns.push(await agentqPhase(`cmp${tag}`, process.env.COMPARE_BIN, `compare${tag ? ` #${tag}` : ''} (${process.env.COMPARE_BIN}${process.env.COMPARE_EXTRA ?? ''}${COMPARE_STEPS === 'two' ? ', redrive + sqs sweep' : ''})`, COMPARE_STEPS));
  aqRuns.push(await agentqPhase(`aq${tag}`, AGENTQ_BIN, `agentq${tag ? ` #${tag}` : ''}`, 'one'));
}
if (cmpRuns.length > 0) {
  const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0);
  line(`A/B over ${ROUNDS} round(s): CLI CPU compare ${sum(cmpRuns, 'cliCpu').toFixed(2)} s vs agentq ${sum(aqRuns, 'cliCpu').toFixed(2)} s (${(sum(aqRuns, 'cliCpu') / sum(cmpRuns, 'cliCpu')).toFixed(3)}x); wall ${(sum(cmpRuns, 'ms') / 1000).toFixed(2)} s vs ${(sum(aqRuns, 'ms') / 1000).toFixed(2)} s`);
}
if (!process.env.SKIP_TWO_STEP) await agentqPhase('two', AGENTQ_BIN, 'agentq two-step (redrive --no-sweep, then sqs sweep)', 'two');

// ---- submit through the outbox
{
  const backend = await openBackend(urlFor('sub') + '&autocreate=1');
  await backend.setup([QUEUE]);
  const t = performance.now();
  for (let i = 0; i < SUBMITS; i++) await backend.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: 'acme' });
  const ms = performance.now() - t;
  const status = await backend.outboxStatus();
  if (status.pending !== 0 || (await depth(sourceQueueName('sub', QUEUE, 'batch'))) !== SUBMITS) throw new Error('submit check failed');
  line(`submit through the outbox (sequential, publish at once): ${SUBMITS} jobs in ${(ms / 1000).toFixed(2)} s = ${((SUBMITS / ms) * 1000).toFixed(0)} jobs/s`);
  // Concurrent producers: submits that arrive while a publish is in flight share the next SendMessageBatch.
  let next = 0;
  const t2 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next++ < SUBMITS) await backend.submit({ workflow: 'research_report:v3', queue: QUEUE, tenant_id: 'acme' });
  }));
  const ms2 = performance.now() - t2;
  if ((await backend.outboxStatus()).pending !== 0 || (await depth(sourceQueueName('sub', QUEUE, 'batch'))) !== 2 * SUBMITS) throw new Error('concurrent submit check failed');
  line(`submit through the outbox (${IN_FLIGHT} in flight, grouped publish): ${SUBMITS} jobs in ${(ms2 / 1000).toFixed(2)} s = ${((SUBMITS / ms2) * 1000).toFixed(0)} jobs/s`);
  await backend.close();
}

sqs.destroy();
if (process.env.FAUXQS_PROF) {
  // A clean exit, so that the emulator writes its profile.
  const exited = new Promise((r) => fauxqs.once('exit', r));
  fauxqs.stdin.end();
  await exited;
} else fauxqs.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });
