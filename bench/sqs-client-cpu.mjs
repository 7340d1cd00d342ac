// CPU per SQS call of the AWS SDK client, by client configuration, against fauxqs (1.9.2) in a
// separate process on 127.0.0.1. Answers "how much cheaper can the SDK be made" with a measure that
// load on the machine inflates far less than wall time: this process's CPU (process.cpuUsage) per call.
//
//   node bench/sqs-client-cpu.mjs                 # ROUNDS=3 CALLS=200
//   ROUNDS=5 CALLS=300 node bench/sqs-client-cpu.mjs
//   ONLY=wire COMPARE_DIST=/tmp/old/dist node bench/sqs-client-cpu.mjs   # the wire client, this build vs an older one
//
// Per variant and round: CALLS SendMessageBatch of 10 agentq-sized messages (an envelope body and
// the 10 attributes of a DLQ copy), then ReceiveMessage of 10 (all attributes) + DeleteMessageBatch
// of 10 until the queue is empty, 8 calls in flight (as agentq's send lanes). Variants run
// interleaved round by round, so a change in the neighbours' load hits all of them alike; the
// median round is reported.
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createSqsClient } from "../dist/backend/sqs/sdk.js";
import { SqsWireClient } from '../dist/backend/sqs/wire.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CALLS = Number(process.env.CALLS ?? 200);
const LANES = 8;
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
  ['--input-type=module', '-e', `import { buildApp } from 'fauxqs'; const app = buildApp({ logger: false }); await app.listen({ port: ${port}, host: '127.0.0.1' }); console.log('LISTENING'); process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`],
  { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] },
);
await new Promise((resolve, reject) => {
  fauxqs.stdout.on('data', (d) => d.toString().includes('LISTENING') && resolve());
  fauxqs.once('exit', (c) => reject(new Error(`fauxqs exited ${c}`)));
});
const endpoint = `http://127.0.0.1:${port}`;
const base = { region: 'us-east-1', endpoint };
const staticCreds = { accessKeyId: 'test', secretAccessKey: 'test' };

/** The client configurations compared. `agentq` is what createSqsClient builds today. */
const VARIANTS = {
  'sdk default (maxAttempts 3)': () => new SQSClient({ ...base, maxAttempts: 3 }),
  'md5: false': () => new SQSClient({ ...base, maxAttempts: 3, md5: false }),
  'cacheMiddleware: true': () => new SQSClient({ ...base, maxAttempts: 3, cacheMiddleware: true }),
  'static credentials': () => new SQSClient({ ...base, maxAttempts: 3, credentials: staticCreds }),
  'maxAttempts 1 (no retry strategy work)': () => new SQSClient({ ...base, maxAttempts: 1 }),
  'own keep-alive agent, maxSockets 64': () =>
    new SQSClient({ ...base, maxAttempts: 3, requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) }) }),
  // The protocol is not a variant: the installed SDK speaks AWS JSON 1.0 (awsQueryCompatible), and fauxqs
  // 1.9.2 serves SQS only over JSON (a query-protocol CreateQueue gets "InvalidAction: Unknown action").
  'all of the above': () =>
    new SQSClient({ ...base, maxAttempts: 1, md5: false, cacheMiddleware: true, credentials: staticCreds, requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) }) }),
  'agentq createSqsClient': () => createSqsClient({ region: 'us-east-1', endpoint }),
  // agentq's own AWS JSON 1.0 client for the data plane (src/backend/sqs/wire.ts, the default since
  // client= was added; `client=sdk` is the row above): the SDK client only resolves credentials and
  // creates the queue.
  'agentq wire client (default)': () => wireAdapter(createSqsClient({ region: 'us-east-1', endpoint })),
};

// COMPARE_DIST=/tmp/old/dist: also the wire client of an older build, same run (an A/B of a change to it).
if (process.env.COMPARE_DIST) {
  const { SqsWireClient: Older } = await import(join(process.env.COMPARE_DIST, 'backend/sqs/wire.js'));
  VARIANTS[`agentq wire client (${process.env.COMPARE_DIST})`] = () => wireAdapter(createSqsClient({ region: 'us-east-1', endpoint }), Older);
}

/** The wire client behind the SDK's `send(command)` shape, so measure() drives every variant alike. */
function wireAdapter(sdk, Wire = SqsWireClient) {
  const wire = new Wire(sdk, { region: 'us-east-1', endpoint });
  const ops = { SendMessageBatchCommand: 'sendMessageBatch', ReceiveMessageCommand: 'receiveMessage', DeleteMessageBatchCommand: 'deleteMessageBatch' };
  return {
    send: (cmd) => (ops[cmd.constructor.name] ? wire[ops[cmd.constructor.name]](cmd.input) : sdk.send(cmd)),
    destroy: () => {
      wire.destroy();
      sdk.destroy();
    },
  };
}

const body = JSON.stringify({
  format: 'agentq.envelope.v1', job_id: '01JBENCH0000000000000000000', workflow: 'research_report:v3', class: 'batch', tenant_id: 't3',
  attempt: 1, max_attempts: 1, trace_id: null, run_at: '2026-11-29T13:00:00.000Z', deadline_at: null, payload_ref: null, input: { topic: 'x'.repeat(200) },
});
const s = (v) => ({ DataType: 'String', StringValue: v });
const attrs = {
  'agentq-format': s('agentq.envelope.v1'), 'agentq-job-id': s('01JBENCH0000000000000000000'), 'agentq-tenant': s('t3'), 'agentq-class': s('batch'),
  'agentq-attempt': { DataType: 'Number', StringValue: '1' }, 'agentq-trace-id': s('0af7651916cd43dd8448eb211c80319c'),
  'agentq-dead-reason': s('permanent_error'), 'agentq-error-code': s('PROVIDER_429'), 'agentq-error-message': s('rate limited'), 'agentq-dead-at': s('2026-11-29T13:00:00.000Z'),
};

async function lanes(n, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: LANES }, async () => {
    while (next < n) {
      next++;
      await fn();
    }
  }));
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(name, make, round) {
  const client = make();
  const q = (await client.send(new CreateQueueCommand({ QueueName: `cpu-${round}-${Object.keys(VARIANTS).indexOf(name)}` }))).QueueUrl;
  // Warm-up: connections, credential resolution, lazy module loads are not the steady state.
  await client.send(new SendMessageBatchCommand({ QueueUrl: q, Entries: [{ Id: 'w', MessageBody: body, MessageAttributes: attrs }] }));
  const w = await client.send(new ReceiveMessageCommand({ QueueUrl: q, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
  await client.send(new DeleteMessageBatchCommand({ QueueUrl: q, Entries: w.Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
  const entries = Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: body, MessageAttributes: attrs }));
  const c0 = cpuMs();
  await lanes(CALLS, () => client.send(new SendMessageBatchCommand({ QueueUrl: q, Entries: entries })));
  const c1 = cpuMs();
  let pairs = 0;
  let got = 0;
  await lanes(Infinity, async () => {
    if (got >= CALLS * 10) throw Object.assign(new Error('done'), { done: true });
    const r = await client.send(new ReceiveMessageCommand({ QueueUrl: q, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], VisibilityTimeout: 60 }));
    const ms = r.Messages ?? [];
    got += ms.length;
    if (ms.length) await client.send(new DeleteMessageBatchCommand({ QueueUrl: q, Entries: ms.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
    pairs++;
  }).catch((e) => { if (!e.done) throw e; });
  const c2 = cpuMs();
  client.destroy();
  return { send: (c1 - c0) / CALLS, recvDel: (c2 - c1) / pairs };
}

process.stdout.write(`# sqs-client-cpu: ${ROUNDS} rounds x ${CALLS} SendMessageBatch of 10 + receive/delete pairs, ${LANES} in flight, node ${process.version}, ${cpus().length} cpus, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
// ONLY=substring keeps the matching variants (for a CPU profile of one: node --cpu-prof ...).
if (process.env.ONLY) for (const k of Object.keys(VARIANTS)) if (!k.includes(process.env.ONLY)) delete VARIANTS[k];
const results = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
// One discarded round first: JIT warm-up would otherwise be charged to whichever variant runs first.
for (const [name, make] of Object.entries(VARIANTS)) await measure(name, make, 'warm');
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, make] of Object.entries(VARIANTS)) results[name].push(await measure(name, make, r));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ref = median((results['sdk default (maxAttempts 3)'] ?? Object.values(results)[0]).map((x) => x.send + x.recvDel));
for (const [name, rs] of Object.entries(results)) {
  const send = median(rs.map((x) => x.send));
  const rd = median(rs.map((x) => x.recvDel));
  const both = median(rs.map((x) => x.send + x.recvDel));
  process.stdout.write(`${name.padEnd(42)} SendMessageBatch(10) ${send.toFixed(2)} ms CPU; ReceiveMessage(10)+DeleteMessageBatch ${rd.toFixed(2)} ms; sum ${both.toFixed(2)} ms = ${(both / ref).toFixed(2)}x default  [rounds: ${rs.map((x) => (x.send + x.recvDel).toFixed(2)).join(' ')}]\n`);
}
process.stdout.write(`load at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
fauxqs.kill('SIGKILL');
