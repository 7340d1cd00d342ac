/**
 * The SQS commands through the built CLI (dist/; `npm test` builds first),
 * against fauxqs on loopback: `sqs setup`, submit through the outbox,
 * `outbox status|relay`, `sqs sweep` (says that it receives from SQS, asks
 * first), custody listed by `dlq list`, and no AWS SDK Node-version warning
 * in agentq's output.
 */
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqName } from '../../src/backend/sqs/names.js';
import { collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { freePort } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl } from '../conformance/sqs-fixture.js';

const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
let server: SqsServer;
let home: CliHome;
let url: string;
const prefix = `cli${process.pid}`;

beforeAll(async () => {
  server = await startSqsServer();
  home = makeCliHome('agentq-sqs-cli-');
  url = sqsUrl(server.endpoint, prefix, join(home.dir, 'store.db'), '&wait=0');
});
afterAll(async () => {
  home?.cleanup();
  await server?.stop();
});

const cli = (args: string[], expectCode = 0) => runCliOk(home, ['--url', url, ...args], { env: CREDS, expectCode });

describe('agentq sqs / outbox commands', () => {
  it('sets up the queues, submits through the outbox, sweeps the DLQ into custody', async () => {
    const setup = await cli(['sqs', 'setup', '--queue', 'research']);
    expect(setup.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 2))).toEqual([
      [`${prefix}-research-dlq`, 'created'],
      [`${prefix}-research-interactive`, 'created'],
      [`${prefix}-research-batch`, 'created'],
      [`${prefix}-research-maintenance`, 'created'],
    ]);
    expect(setup.stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK/);
    const again = await cli(['sqs', 'setup', '--queue', 'research']);
    expect(again.stderr).toContain('nothing changed');
    expect(again.stderr).not.toContain('max_receive_count');
    // a backstop at or below the attempts would take jobs that are still being retried: said at setup
    const low = await runCliOk(home, ['--url', `${url}&max_receive_count=2`, 'sqs', 'setup', '--queue', 'lowmrc'], { env: CREDS });
    expect(low.stderr).toContain("warning: max_receive_count 2 is not above agentq's default max attempts (3)");

    const submitted = await cli(['submit', 'research_report:v3', '--queue', 'research', '-o', 'json']);
    expect(submitted.stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK/);
    const status = JSON.parse((await cli(['outbox', 'status', '-o', 'json'])).stdout) as { pending: number; published: number };
    expect(status).toMatchObject({ pending: 0, published: 1 });
    expect((await cli(['outbox', 'relay'])).stdout).toContain('published 0');

    const raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(prefix, 'research') }))).QueueUrl!;
    await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'from another system' }));
    raw.destroy();

    // Without --yes in a script: says what it would do to SQS, then declines (exit 3) without receiving.
    const declined = await runCli(home, ['--url', url, 'sqs', 'sweep', '--queue', 'research'], { env: CREDS });
    expect(declined.code).toBe(3);
    expect(declined.stderr).toContain('This RECEIVES from the SQS DLQ');
    expect(declined.stderr).toContain('receive count');

    // --max reached with messages left: said, in JSON too.
    const capped = await cli(['sqs', 'sweep', '--queue', 'research', '--yes', '--max', '1', '--leave-foreign', '-o', 'json']);
    expect(JSON.parse(capped.stdout)).toMatchObject({ received: 1, max_reached: true });
    expect(capped.stderr).toContain(`warning: stopped at --max 1; more messages may remain in ${dlqName(prefix, 'research')}: run the sweep again or raise --max`);

    const swept = await cli(['sqs', 'sweep', '--queue', 'research', '--yes']);
    expect(swept.stderr).not.toContain('--max');
    // (the capped sweep above recorded it, and left it in SQS: this one finds it in custody and deletes it)
    expect(swept.stdout).toMatch(/job_\w+\tforeign\talready_kept/);
    expect(swept.stderr).toContain('0 taken into custody (1 already in custody), 1 deleted from SQS');
    const list = (JSON.parse((await cli(["dlq", "list", "--queue", "research", "-o", "json"])).stdout) as { items: Array<{ error_code: string; malformed: string | null }> }).items;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ error_code: 'SQS_FOREIGN' });
    expect(list[0]!.malformed).not.toBeNull();
    const custody = await cli(['sqs', 'custody']);
    expect(custody.stdout).toContain('from another system');
    expect(custody.stderr).not.toContain('More custody records');

    // A page that is not the last says how to go on.
    const raw2 = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    await raw2.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'from a third system' }));
    raw2.destroy();
    await cli(['sqs', 'sweep', '--queue', 'research', '--yes']);
    const first = await cli(['sqs', 'custody', '--limit', '1', '-o', 'json']);
    const [one] = JSON.parse(first.stdout) as Array<{ job_id: string }>;
    expect(first.stderr).toContain(`More custody records: add --after ${one!.job_id}`);
    const rest = await cli(['sqs', 'custody', '--limit', '1', '--after', one!.job_id, '-o', 'json']);
    expect(JSON.parse(rest.stdout)).toHaveLength(1);
    expect(rest.stderr).not.toContain('More custody records');
  }, 60_000);

  it('sqs custody --queue lists only what was taken from that queue\'s SQS DLQ, and pages within it', async () => {
    const own = sqsUrl(server.endpoint, `${prefix}cq`, join(home.dir, 'custody-q.db'), '&wait=0');
    const ccli = (args: string[]) => runCliOk(home, ['--url', own, ...args], { env: CREDS });
    const raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    for (const q of ['alpha', 'beta']) {
      await ccli(['sqs', 'setup', '--queue', q]);
      const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(`${prefix}cq`, q) }))).QueueUrl!;
      for (const n of [1, 2]) await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `foreign ${n} in ${q}` }));
      await ccli(['sqs', 'sweep', '--queue', q, '--yes']);
    }
    raw.destroy();
    const all = JSON.parse((await ccli(['sqs', 'custody', '-o', 'json'])).stdout) as Array<{ body: string }>;
    expect(all).toHaveLength(4);
    const beta = JSON.parse((await ccli(['sqs', 'custody', '--queue', 'beta', '-o', 'json'])).stdout) as Array<{ job_id: string; body: string; source_queue: string }>;
    expect(beta.map((c) => c.body).sort()).toEqual(['foreign 1 in beta', 'foreign 2 in beta']);
    expect(new Set(beta.map((c) => c.source_queue))).toEqual(new Set([dlqName(`${prefix}cq`, 'beta')]));
    const first = await ccli(['sqs', 'custody', '--queue', 'beta', '--limit', '1', '-o', 'json']);
    const [one] = JSON.parse(first.stdout) as Array<{ job_id: string }>;
    expect(first.stderr).toContain(`More custody records: add --after ${one!.job_id}`);
    const rest = await ccli(['sqs', 'custody', '--queue', 'beta', '--limit', '1', '--after', one!.job_id, '-o', 'json']);
    expect((JSON.parse(rest.stdout) as Array<{ body: string }>).map((c) => c.body)).toHaveLength(1);
    expect(rest.stderr).not.toContain('More custody records');
    expect(JSON.parse((await ccli(['sqs', 'custody', '--queue', 'gamma', '-o', 'json'])).stdout)).toEqual([]);
  }, 60_000);

  it('a worker whose SQS queue went away (SQS restarted empty) names SQS, not the store, for the refused claims and its exit 78', async () => {
    const own = sqsUrl(server.endpoint, `${prefix}gone`, join(home.dir, 'gone.db'), '&wait=0');
    const gcli = (args: string[]) => runCliOk(home, ['--url', own, ...args], { env: CREDS });
    await gcli(['sqs', 'setup', '--queue', 'gone']);
    const worker = spawnCli(home, ['--url', own, '-o', 'ndjson', 'worker', '--queue', 'gone', '--', 'true'], { env: CREDS });
    const done = collect(worker, 60_000);
    let stdout = '';
    worker.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    // (an idle claim: past its start's look-up of the queues)
    await pollUntil(() => stdout.includes('"type":"idle"'), { what: 'the worker to claim' });
    const raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const { QueueUrl } = await raw.send(new GetQueueUrlCommand({ QueueName: `${prefix}gone-gone-batch` }));
    await raw.send(new DeleteQueueCommand({ QueueUrl }));
    raw.destroy();
    await gcli(['submit', 'noop:v1', '--queue', 'gone']); // stored; its queue is missing
    const r = await done;
    expect(r.code, r.stderr).toBe(78);
    expect(r.stderr).toContain(`worker: broker error during claim: an SQS queue agentq needs does not exist (ReceiveMessage ${prefix}gone-gone-batch`);
    expect(r.stderr).toContain(`worker: stopping — SQS at ${server.endpoint} has refused this worker for 10s`);
    expect(r.stderr).not.toMatch(/store error|the store has refused/);
  }, 60_000);

  it('sqs setup, sweep and custody refuse a queue name agentq refuses everywhere else (exit 2), before creating or receiving anything', async () => {
    for (const args of [['sqs', 'setup', '--queue', 'bad name'], ['sqs', 'setup', '--queue', 'ok', '--queue', 'x/y'], ['sqs', 'sweep', '--queue', 'bad name', '--yes'], ['sqs', 'custody', '--queue', 'bad name']]) {
      const r = await runCli(home, ['--url', url, ...args], { env: CREDS });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/--queue "(bad name|x\/y)": a queue name must be 1-128 characters/);
    }
    const raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const err = await raw.send(new GetQueueUrlCommand({ QueueName: `${prefix}-ok-dlq` })).catch((e: Error) => e);
    raw.destroy();
    expect((err as Error).name).toMatch(/QueueDoesNotExist|NonExistentQueue/);
  });

  it('sqs custody --after refuses what is not a job id (exit 2) instead of listing from the start as if it were a cursor', async () => {
    const r = await runCli(home, ['--url', url, 'sqs', 'custody', '--after', 'foo'], { env: CREDS });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--after must be the job id printed after the previous page (job_...), got "foo"');
  });

  it('with fifo=1, sets up .fifo queues and says FIFO; submit publishes through them; a bad fifo= value is a config error', async () => {
    const fifoUrl = sqsUrl(server.endpoint, `${prefix}f`, join(home.dir, 'fifo.db'), '&wait=0&fifo=1');
    const fcli = (args: string[]) => runCliOk(home, ['--url', fifoUrl, ...args], { env: CREDS });
    const setup = await fcli(['sqs', 'setup', '--queue', 'research']);
    const rows = setup.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r.slice(0, 2))).toEqual([
      [`${prefix}f-research-dlq.fifo`, 'created'],
      [`${prefix}f-research-interactive.fifo`, 'created'],
      [`${prefix}f-research-batch.fifo`, 'created'],
      [`${prefix}f-research-maintenance.fifo`, 'created'],
    ]);
    expect(rows.every((r) => r[2]!.startsWith('FIFO '))).toBe(true);
    await fcli(['submit', 'research_report:v3', '--queue', 'research', '--tenant', 'acme', '-o', 'json']);
    expect(JSON.parse((await fcli(['outbox', 'status', '-o', 'json'])).stdout)).toMatchObject({ pending: 0, published: 1 });
    const bad = await runCli(home, ['--url', fifoUrl.replace('fifo=1', 'fifo=maybe'), 'outbox', 'status'], { env: CREDS });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('fifo= must be');
  }, 60_000);

  it('worker --drain waits for jobs whose publish failed (queues created after the submit); outbox relay by hand tries them now and says why they wait', async () => {
    const own = sqsUrl(server.endpoint, `${prefix}late`, join(home.dir, 'late.db'), '&wait=0');
    const lcli = (args: string[], expectCode = 0) => runCliOk(home, ['--url', own, ...args], { env: CREDS, expectCode });
    const { job_id } = JSON.parse((await lcli(['submit', 'research_report:v3', '--queue', 'late', '-o', 'json'])).stdout) as { job_id: string };
    // By hand every row is tried now, backoff or not; a missing queue is a config error (78), not "retry later".
    const relayed = await lcli(['outbox', 'relay'], 78);
    expect(relayed.stdout).toContain('published 0');
    expect(relayed.stdout).toContain('pending 1');
    expect(relayed.stdout).toMatch(/last_error the SQS queue \S+-late-batch does not exist/);
    expect(relayed.stderr).toContain('agentq sqs setup --queue late');
    const status = JSON.parse((await lcli(['outbox', 'status', '-o', 'json'])).stdout) as { pending: number; next_try_at: string | null; last_error: string | null };
    expect(status).toMatchObject({ pending: 1, next_try_at: expect.stringMatching(/^\d{4}-/), last_error: expect.stringContaining('does not exist') });
    await lcli(['sqs', 'setup', '--queue', 'late']);
    // The row's next try 10 s from now, set in the store itself: the worker below must start while it
    // still waits (its relay backoff after two tries, 2 s, was sometimes over before a loaded machine
    // had run `sqs setup` and started the worker: it then found the job published, and said nothing).
    const db = new Database(join(home.dir, 'late.db'));
    db.prepare('UPDATE sqs_outbox SET next_try_at = ? WHERE published_at IS NULL').run(Date.now() + 10_000);
    db.close();
    const worker = await lcli(['worker', '--queue', 'late', '--drain', '--', process.execPath, '-e', '']);
    expect(worker.stderr).toMatch(/--drain: queue late has 1 job\(s\) not yet published to SQS; the next try is at \S+; the last try failed: the SQS queue/);
    expect(worker.stderr).toContain('1 succeeded');
    expect(JSON.parse((await lcli(['inspect', job_id, '-o', 'json'])).stdout)).toMatchObject({ state: 'succeeded' });
  }, 60_000);

  it('without credentials: submit stores the job and says it is not published yet (exit 0); outbox relay exits 4, as sweep does', async () => {
    // No environment pair, no shared config, no metadata service: the default chain has nothing.
    const none = { AWS_CONFIG_FILE: join(home.dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(home.dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true' };
    const own = sqsUrl(server.endpoint, `${prefix}nc`, join(home.dir, 'nocreds.db'), '&wait=0');
    await runCliOk(home, ['--url', own, 'sqs', 'setup', '--queue', 'nc'], { env: CREDS });
    const submitted = await runCliOk(home, ['--url', own, 'submit', 'research_report:v3', '--queue', 'nc'], { env: none });
    const jobId = submitted.stdout.trim();
    expect(submitted.stderr).toMatch(new RegExp(`${jobId} is stored but not yet published \\(SQS refused the request .*credentials.*\\); the outbox relay \\(workers, \`agentq outbox relay\`\\) publishes it`));
    const relayed = await runCli(home, ['--url', own, 'outbox', 'relay'], { env: none });
    expect(relayed.code).toBe(4);
    expect(relayed.stderr).toContain('Check the AWS credentials');
    const swept = await runCli(home, ['--url', own, 'sqs', 'sweep', '--queue', 'nc', '--yes'], { env: none });
    expect(swept.code).toBe(4);
    // With credentials back, the job is published (and nothing is said at submit).
    expect((await runCliOk(home, ['--url', own, 'outbox', 'relay'], { env: CREDS })).stdout).toContain('published 1');
    expect((await runCliOk(home, ['--url', own, 'submit', 'research_report:v3', '--queue', 'nc'], { env: CREDS })).stderr).not.toContain('not yet published');
  }, 60_000);

  it('a worker whose SQS queues do not exist stops at once with exit 78 and the setup command (also with nothing pending); without credentials, exit 4; a missing DLQ is warned about', async () => {
    const own = sqsUrl(server.endpoint, `${prefix}nq`, join(home.dir, 'noqueues.db'), '&wait=0');
    const worker = await runCli(home, ['--url', own, 'worker', '--queue', 'nq', '--', process.execPath, '-e', ''], { env: CREDS });
    expect(worker.code).toBe(78);
    expect(worker.stderr).toContain(`the SQS queue(s) ${prefix}nq-nq-interactive, ${prefix}nq-nq-batch, ${prefix}nq-nq-maintenance do not exist`);
    expect(worker.stderr).toContain('Run: agentq sqs setup --queue nq');
    // Only the classes it takes are looked up.
    const raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    await raw.send(new CreateQueueCommand({ QueueName: `${prefix}nq-nq-batch` }));
    const batchOnly = await runCli(home, ['--url', own, 'worker', '--queue', 'nq', '--classes', 'batch', '--drain', '--', process.execPath, '-e', ''], { env: CREDS });
    expect(batchOnly.code).toBe(0);
    expect(batchOnly.stderr).toContain(`warning: the SQS DLQ ${prefix}nq-nq-dlq does not exist`);
    raw.destroy();
    // A job that dies meanwhile: in the store's DLQ, and the worker says its SQS copy was not sent.
    const jobId = (await runCliOk(home, ['--url', own, 'submit', 'research_report:v3', '--queue', 'nq', '--max-attempts', '1'], { env: CREDS })).stdout.trim();
    const dies = await runCli(home, ['--url', own, 'worker', '--queue', 'nq', '--classes', 'batch', '--drain', '--', process.execPath, '-e', 'process.exit(1)'], { env: CREDS });
    expect(dies.stderr).toContain(`→ moved to the DLQ`);
    expect(dies.stderr).toContain(`warning: ${jobId}: the SQS DLQ ${prefix}nq-nq-dlq does not exist: jobs of nq that die are kept in the job store's DLQ`);
    const none = { AWS_CONFIG_FILE: join(home.dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(home.dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true' };
    const refused = await runCli(home, ['--url', own, 'worker', '--queue', 'nq', '--', process.execPath, '-e', ''], { env: none });
    expect(refused.code).toBe(4);
  }, 60_000);

  it('an idle worker waiting in SQS\'s long poll does not say the store is not answering: the wait is by design', async () => {
    // A scheduled job: the store has it pending, SQS holds its message back, so the claim long-polls
    // (wait=8 here). That wait (longer than the 5 s after which unanswered store calls are reported)
    // was said as "the store is not answering" every 20 s by an idle, healthy worker.
    const own = sqsUrl(server.endpoint, `${prefix}lp`, join(home.dir, 'longpoll.db'), '&wait=8');
    const lcli = (args: string[]) => runCliOk(home, ['--url', own, ...args], { env: CREDS });
    await lcli(['sqs', 'setup', '--queue', 'lp']);
    await lcli(['submit', 'research_report:v3', '--queue', 'lp', '--run-at', '1m']);
    const worker = await lcli(['worker', '--queue', 'lp', '--drain', '--', process.execPath, '-e', '']);
    expect(worker.stderr).toContain('nothing claimable; --drain: stopping');
    expect(worker.stderr).not.toContain('not answering');
  }, 60_000);

  it('a worker whose SQS is unreachable (its job store fine) says so once, naming SQS and its endpoint, and not that the store answers again', async () => {
    // Was: "the store is unavailable (SQS is unreachable …)", then "the store answers again (after
    // 150ms)" as soon as the job store answered the orphan sweep, and that pair again every 10 s.
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const own = sqsUrl(endpoint, `${prefix}down`, join(home.dir, 'down.db'), '&wait=0');
    await runCliOk(home, ['--url', own, 'submit', 'research_report:v3', '--queue', 'down'], { env: CREDS });
    const worker = spawnCli(home, ['--url', own, 'worker', '--queue', 'down', '--', process.execPath, '-e', ''], { env: CREDS });
    const done = collect(worker, 60_000);
    let stderr = '';
    worker.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      await pollUntil(() => stderr.split('error during claim').length > 3, { timeoutMs: 30_000, what: 'three failed claims' });
    } finally {
      worker.kill('SIGTERM');
      await done;
    }
    expect(stderr.split(`worker: SQS at ${endpoint} is unavailable (SQS is unreachable`).length, stderr).toBe(2);
    expect(stderr).not.toContain('the store is unavailable');
    expect(stderr).not.toContain('answers again');
    // each failed claim: an error of the broker, not of the store
    expect(stderr).toContain('worker: broker error during claim: SQS is unreachable');
    expect(stderr).not.toContain('store error');
  }, 60_000);

  it('dlq purge says the SQS DLQ copies of what it purged are still there, and names the sweep that deletes them', async () => {
    const own = sqsUrl(server.endpoint, `${prefix}pg`, join(home.dir, 'purge.db'), '&wait=0');
    const pcli = (args: string[]) => runCliOk(home, ['--url', own, ...args], { env: CREDS });
    await pcli(['sqs', 'setup', '--queue', 'pg']);
    await pcli(['submit', 'research_report:v3', '--queue', 'pg', '--max-attempts', '1']);
    await pcli(['worker', '--queue', 'pg', '--drain', '--', process.execPath, '-e', 'process.exit(1)']);
    const purged = await pcli(['dlq', 'purge', '--queue', 'pg', '--yes']);
    expect(purged.stderr).toContain(`the SQS DLQ ${dlqName(`${prefix}pg`, 'pg')} still holds agentq's copies of the 1 job(s) this run purged`);
    expect(purged.stderr).toContain('`agentq sqs sweep --queue pg --yes` deletes them');
    const swept = await pcli(['sqs', 'sweep', '--queue', 'pg', '--yes', '-o', 'json']);
    expect(JSON.parse(swept.stdout)).toMatchObject({ received: 1, deleted: 1, custody: [] });
  }, 60_000);

  it('sqs sweep of a queue whose SQS DLQ does not exist (a typo in --queue or the prefix) is a config error (exit 78), not "received 0"', async () => {
    const r = await runCli(home, ['--url', url, 'sqs', 'sweep', '--queue', 'reserach', '--yes'], { env: CREDS });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`error: the SQS DLQ ${dlqName(prefix, 'reserach')} does not exist`);
    expect(r.stderr).toContain('agentq sqs setup --queue reserach');
    expect(r.stdout).toBe('');
    // said before anything is asked: not a confirmation (here refused: exit 3) for a DLQ that is not there
    const asked = await runCli(home, ['--url', url, '--no-input', 'sqs', 'sweep', '--queue', 'reserach'], { env: CREDS });
    expect(asked.code).toBe(78);
    expect(asked.stderr).not.toContain('This RECEIVES from');
  });

  it('a redrive whose moved jobs could not be published (SQS unreachable) says they wait in the outbox, as submit does', async () => {
    const store = join(home.dir, 'redrive-down.db');
    const own = sqsUrl(server.endpoint, `${prefix}rd`, store, '&wait=0');
    const down = sqsUrl('http://127.0.0.1:9', `${prefix}rd`, store, '&wait=0');
    const rcli = (args: string[], u = own) => runCliOk(home, ['--url', u, ...args], { env: CREDS });
    await rcli(['sqs', 'setup', '--queue', 'rd']);
    await rcli(['submit', 'research_report:v3', '--queue', 'rd', '--max-attempts', '1']);
    await rcli(['worker', '--queue', 'rd', '--drain', '--', process.execPath, '-e', 'process.exit(1)']);
    const redriven = await rcli(['dlq', 'redrive', '--queue', 'rd', '--yes', '--no-sweep', '--rate', '0'], down);
    expect(redriven.stderr).toContain('finished: moved=1');
    expect(redriven.stderr).toMatch(/warning: 1 job\(s\) of queue rd are not yet published to SQS \(the last try failed: SQS is unreachable .*\); they are stored and queued: workers or `agentq outbox relay` publish them once that is mended/);
    expect((await rcli(['outbox', 'relay'])).stdout).toContain('published 1');
    await rcli(['worker', '--queue', 'rd', '--drain', '--', process.execPath, '-e', 'process.exit(1)']);
    const again = await rcli(['dlq', 'redrive', '--queue', 'rd', '--yes', '--no-sweep', '--rate', '0']);
    expect(again.stderr).not.toContain('not yet published');
  }, 60_000);

  it('refuses SQS commands on another backend with a config error (exit 78)', async () => {
    const r = await runCli(home, ['--url', home.dataUrl, 'sqs', 'setup'], { env: CREDS });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('needs the SQS backend');
  });

  it('names a bad AWS_ENDPOINT_URL_SQS as a config error (exit 78) before a submit stores anything', async () => {
    const plain = `sqs://us-east-1/${prefix}env?store=${encodeURIComponent(`sqlite:${join(home.dir, 'env.db')}`)}`;
    for (const args of [['submit', 'research_report:v3'], ['sqs', 'sweep', '--yes'], ['sqs', 'setup']]) {
      const r = await runCli(home, ['--url', plain, ...args], { env: { ...CREDS, AWS_ENDPOINT_URL_SQS: 'garbage' } });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('AWS_ENDPOINT_URL_SQS must be an http(s):// URL');
    }
    // Refused at open, before the job store was even made: nothing was stored.
    expect(existsSync(join(home.dir, 'env.db'))).toBe(false);
    const r = await runCli(home, ['--url', plain, 'list', '-o', 'json'], { env: CREDS });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('no agentq store at');
  });

  it('an endpoint where something other than SQS answers (a wrong port): a config error naming the endpoint (exit 78), not its HTML page with exit 1', async () => {
    const web = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE HTML>\n<html>\n<head><title>Not Found</title></head>\n<body>' + 'x'.repeat(2000) + '</body></html>\n');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    try {
      const own = sqsUrl(endpoint, `${prefix}web`, join(home.dir, 'web.db'), '&wait=0');
      const submitted = await runCliOk(home, ['--url', own, 'submit', 'research_report:v3', '--queue', 'web'], { env: CREDS });
      expect(submitted.stderr).toContain(`the SQS endpoint did not answer as SQS (GetQueueUrl ${prefix}web-web-batch: HTTP 404 from ${endpoint}; the body starts: <!DOCTYPE HTML> <html>`);
      for (const args of [['sqs', 'sweep', '--queue', 'web', '--yes'], ['sqs', 'setup', '--queue', 'web'], ['outbox', 'relay'], ['worker', '--queue', 'web', '--', process.execPath, '-e', '']]) {
        const r = await runCli(home, ['--url', own, ...args], { env: CREDS });
        expect(r.code, args.join(' ')).toBe(78);
        expect(r.stderr).toMatch(/error: (1 outbox row\(s\) could not be published: )?the SQS endpoint did not answer as SQS \(/);
        expect(r.stderr).toContain('hint: Check endpoint= in the URL');
        expect(r.stderr).not.toContain('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx');
        expect(r.stderr).not.toMatch(/Deserialization|\n\s+at /);
      }
    } finally {
      web.closeAllConnections();
      await new Promise<void>((r) => web.close(() => r()));
    }
  }, 60_000);

  it('names a bad sqs:// URL as a config error (exit 78)', async () => {
    const r = await runCli(home, ['--url', 'sqs://nowhere/x', 'outbox', 'status'], { env: CREDS });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('names no AWS region');
  });
});

describe('agentq sqs sweep stopped by Ctrl-C', () => {
  it('regression: it stops after the batch in hand and exits 130 saying the DLQ was not drained (it swept on to the end and exited 0)', async () => {
    const own = await startSqsServer();
    try {
      const p = `${prefix}int`;
      const u = sqsUrl(own.endpoint, p, join(home.dir, 'sweep-int.db'), '&wait=0');
      await runCliOk(home, ['--url', u, 'sqs', 'setup', '--queue', 'sw'], { env: CREDS });
      const raw = new SQSClient({ region: 'us-east-1', endpoint: own.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
      const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(p, 'sw') }))).QueueUrl!;
      for (let b = 0; b < 30; b++) {
        await raw.send(new SendMessageBatchCommand({ QueueUrl: dlq, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `foreign ${b}-${i}` })) }));
      }
      raw.destroy();
      const child = spawnCli(home, ['--url', u, 'sqs', 'sweep', '--queue', 'sw', '--yes', '-o', 'json'], { env: CREDS });
      const done = collect(child, 60_000);
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      // the sweep is about to receive: SQS stops answering, Ctrl-C, SQS answers again
      await pollUntil(() => stderr.includes('This RECEIVES from the SQS DLQ'), { timeoutMs: 30_000, what: 'the sweep to start' });
      own.signal('SIGSTOP');
      child.kill('SIGINT');
      await pollUntil(() => stderr.includes('Ctrl-C again'), { timeoutMs: 10_000, what: 'the note on the first Ctrl-C' });
      own.signal('SIGCONT');
      const r = await done;
      const report = JSON.parse(r.stdout) as { received: number; interrupted?: boolean };
      expect(report.received).toBeLessThan(300);
      expect(r.stderr).toContain('interrupted: the sweep stopped before the SQS DLQ was drained');
      expect(r.code).toBe(130);
    } finally {
      own.signal('SIGCONT');
      await own.stop();
    }
  }, 90_000);
});
