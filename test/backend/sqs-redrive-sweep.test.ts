/**
 * `agentq dlq redrive` on SQS sweeps the SQS DLQ once its moves are applied
 * (src/backend/sqs/redrive-sweep.ts), through the built CLI against fauxqs:
 * - the plan, dry run and apply say that it receives from the SQS DLQ and what
 *   that does (receive counts, visibility);
 * - the copies of the moved jobs are deleted; copies of entries still dead and
 *   a foreign message stay, visible again at once, untouched (no custody);
 * - `--no-sweep` leaves the DLQ alone, and resuming that completed run sweeps;
 * - `--no-sweep` on a backend without a broker DLQ is accepted and changes nothing;
 * - a sweep stopped by its signal puts back what it received and says so.
 * Jobs die through the real path: submit (publish), claim from SQS, permanent
 * failure (the store entry, then the agentq copy in the SQS DLQ).
 */
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqliteSqsStore } from '../../src/backend/sqlite/outbox.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { SWEEP_LANES, sweepDlq } from '../../src/backend/sqs/custody.js';
import { SdkDataPlane } from '../../src/backend/sqs/data-plane.js';
import { dlqName } from '../../src/backend/sqs/names.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { collect, makeCliHome, runCli, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';

const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
let server: SqsServer;
let home: CliHome;
let raw: SQSClient;

beforeAll(async () => {
  useEmulatorCredentials();
  server = await startSqsServer();
  home = makeCliHome('agentq-sqs-redrive-sweep-');
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
});
afterAll(async () => {
  raw?.destroy();
  home?.cleanup();
  await server?.stop();
});

/** A fresh prefix and store with dead jobs per tenant (their agentq copies in the SQS DLQ) and one foreign message there. */
async function seed(name: string, tenants: Record<string, number>): Promise<{ url: string; prefix: string; dlq: string; jobs: Record<string, string[]> }> {
  const prefix = `rs${name}${process.pid}`;
  const url = sqsUrl(server.endpoint, prefix, join(home.dir, `${name}.db`), '&wait=0');
  const backend = (await openBackend(url)) as SqsBackend;
  const jobs: Record<string, string[]> = {};
  try {
    await backend.setup(['research']);
    for (const [tenant, n] of Object.entries(tenants)) {
      jobs[tenant] = [];
      for (let i = 0; i < n; i++) jobs[tenant]!.push((await backend.submit({ workflow: 'research_report:v3', queue: 'research', tenant_id: tenant, max_attempts: 1 })).job.job_id);
    }
    const total = Object.values(tenants).reduce((a, b) => a + b, 0);
    let dead = 0;
    for (let round = 0; round < 50 && dead < total; round++) {
      for (const l of await backend.claim({ queue: 'research', workerId: 'seed', max: 10, leaseMs: 60_000 })) {
        const out = await backend.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: false });
        expect(out.kind).toBe('dead');
        dead++;
      }
    }
    expect(dead).toBe(total);
  } finally {
    await backend.close();
  }
  const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(prefix, 'research') }))).QueueUrl!;
  await raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'from another system' }));
  return { url, prefix, dlq, jobs };
}

async function depths(dlq: string): Promise<{ visible: number; hidden: number }> {
  const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes!;
  return { visible: Number(a.ApproximateNumberOfMessages), hidden: Number(a.ApproximateNumberOfMessagesNotVisible) };
}

/** Every message in the DLQ (received once, hidden for a minute): job id (or body) and receive count. */
async function contents(dlq: string): Promise<Array<{ what: string; receives: number }>> {
  const out: Array<{ what: string; receives: number }> = [];
  for (;;) {
    const r = await raw.send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }));
    if (!r.Messages?.length) break;
    for (const m of r.Messages) {
      let what = m.Body!;
      try {
        what = (JSON.parse(m.Body!) as { job_id: string }).job_id;
      } catch {
        // a foreign body stays as it is
      }
      out.push({ what, receives: Number(m.Attributes!.ApproximateReceiveCount) });
    }
  }
  return out.sort((a, b) => a.what.localeCompare(b.what));
}

describe('agentq dlq redrive on SQS: the SQS DLQ sweep', () => {
  it('says it receives from the SQS DLQ; deletes the moved jobs\' copies; leaves still-dead copies and foreign messages visible and untouched', async () => {
    const s = await seed('a', { moved: 3, kept: 2 });
    const cli = (args: string[], expectCode = 0) => runCliOk(home, ['--url', s.url, ...args], { env: CREDS, expectCode });
    expect(await depths(s.dlq)).toEqual({ visible: 6, hidden: 0 });

    const dry = await cli(['dlq', 'redrive', '--queue', 'research', '--tenant', 'moved', '--dry-run']);
    expect(dry.stderr).toContain(`RECEIVES from the SQS DLQ ${dlqName(s.prefix, 'research')}`);
    expect(dry.stderr).toContain('raises its receive count by one');
    expect(dry.stderr).toContain('visible again at the end, unchanged');
    // A dry run changes nothing, in the store or in SQS.
    expect(await depths(s.dlq)).toEqual({ visible: 6, hidden: 0 });

    // Without --yes in a script: the notice first, then declined (exit 3) with nothing received.
    const declined = await runCli(home, ['--url', s.url, 'dlq', 'redrive', '--queue', 'research', '--tenant', 'moved'], { env: CREDS });
    expect(declined.code).toBe(3);
    expect(declined.stderr).toContain('RECEIVES from the SQS DLQ');
    expect(await depths(s.dlq)).toEqual({ visible: 6, hidden: 0 });

    const run = await cli(['dlq', 'redrive', '--queue', 'research', '--tenant', 'moved', '--yes', '-o', 'json']);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', counts: { moved: 3 } });
    expect(run.stderr).toContain('RECEIVES from the SQS DLQ');
    expect(run.stderr).toContain('received 6, deleted 3 copies of jobs no longer dead, made 2 copies of still-dead entries and 1 other messages visible again');
    // All three left visible at once (no waiting for a visibility timeout), received once by the sweep.
    expect(await depths(s.dlq)).toEqual({ visible: 3, hidden: 0 });
    const left = await contents(s.dlq);
    expect(left.map((m) => m.what)).toEqual([...s.jobs.kept!, 'from another system'].sort());
    // One receive by the sweep, one by this check.
    expect(left.every((m) => m.receives === 2)).toBe(true);
    // Nothing taken into custody: the foreign message is not a DLQ entry.
    const list = JSON.parse((await cli(['dlq', 'list', '--queue', 'research', '-o', 'json'])).stdout) as { items: Array<{ job_id: string }> };
    expect(list.items.map((i) => i.job_id).sort()).toEqual([...s.jobs.kept!].sort());
  }, 120_000);

  it('--no-sweep leaves the SQS DLQ alone; resuming that completed run sweeps', async () => {
    const s = await seed('b', { moved: 2, kept: 1 });
    const cli = (args: string[], expectCode = 0) => runCliOk(home, ['--url', s.url, ...args], { env: CREDS, expectCode });
    const run = await cli(['dlq', 'redrive', '--queue', 'research', '--tenant', 'moved', '--yes', '--no-sweep', '-o', 'json']);
    const rec = JSON.parse(run.stdout) as { run_id: string; status: string; counts: { moved: number } };
    expect(rec).toMatchObject({ status: 'completed', counts: { moved: 2 } });
    expect(run.stderr).toContain('--no-sweep: this redrive does not receive from the SQS DLQ');
    expect(run.stderr).not.toContain('swept');
    // Untouched: never received, all visible.
    expect(await depths(s.dlq)).toEqual({ visible: 4, hidden: 0 });

    const resumed = await cli(['dlq', 'redrive', '--resume', rec.run_id]);
    expect(resumed.stderr).toContain('received 4, deleted 2 copies');
    expect(await depths(s.dlq)).toEqual({ visible: 2, hidden: 0 });
    expect((await contents(s.dlq)).map((m) => m.what)).toEqual([...s.jobs.kept!, 'from another system'].sort());
  }, 120_000);

  it('a resumed run that is interrupted again says the SQS DLQ still holds copies of what it moved, and how they go', async () => {
    const s = await seed('f', { moved: 12 });
    // --no-sweep first, interrupted after its first batch: a resumed run is what is tested
    const interrupt = async (args: string[]): Promise<{ code: number | null; stderr: string }> => {
      const child = spawnCli(home, ['--url', s.url, ...args], { env: CREDS });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const done = collect(child, 60_000);
      await pollUntil(() => /\d+\/\d+ \(\d+%\) moved=[1-9]/.test(stderr), { timeoutMs: 30_000, what: 'a first batch' });
      child.kill('SIGINT');
      const r = await done;
      return { code: r.code, stderr: r.stderr };
    };
    const first = await interrupt(['dlq', 'redrive', '--queue', 'research', '--all', '--yes', '--no-sweep', '--rate', '4', '--batch-size', '2']);
    expect(first.code).toBe(130);
    const runId = /--resume (run_\w+)/.exec(first.stderr)![1]!;
    const again = await interrupt(['dlq', 'redrive', '--resume', runId, '--rate', '4', '--batch-size', '2']);
    expect(again.code).toBe(130);
    expect(again.stderr).toContain(`the SQS DLQ still holds copies of jobs this run moved: they are deleted when the run finishes (--resume) or by: agentq sqs sweep --queue research`);
  }, 120_000);

  it('--no-sweep on a backend without a broker DLQ is accepted and changes nothing', async () => {
    const r = await runCliOk(home, ['--url', home.dataUrl, 'dlq', 'redrive', '--all', '--yes', '--no-sweep'], { env: CREDS });
    expect(r.stderr).toContain('nothing to redrive');
    expect(r.stderr).not.toContain('SQS');
  });

  it('beside the moves: copies of jobs still dead when received are held, judged again when the moves are over, each received once', async () => {
    const s = await seed('d', { later: 12, never: 8 });
    const backend = (await openBackend(s.url)) as SqsBackend;
    try {
      let movesOver!: () => void;
      const sweeping = backend.sweepRedrivenCopies('research', undefined, new Promise<void>((r) => (movesOver = r)));
      // Every message received and held (none visible), then the "moves": 12 jobs leave the DLQ.
      const deadline = Date.now() + 30_000;
      while ((await depths(s.dlq)).visible > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(await depths(s.dlq)).toEqual({ visible: 0, hidden: 21 });
      const db = (backend.ext as SqliteSqsStore).store.db;
      const move = db.prepare("UPDATE jobs SET state = 'queued' WHERE id = ?");
      for (const id of s.jobs.later!) move.run(id);
      movesOver();
      const r = await sweeping;
      expect(r).toMatchObject({ received: 21, deleted: 12, mirror_kept: 8, kept_in_sqs: 1 });
      expect(await depths(s.dlq)).toEqual({ visible: 9, hidden: 0 });
      const left = await contents(s.dlq);
      expect(left.map((m) => m.what)).toEqual([...s.jobs.never!, 'from another system'].sort());
      // Received once by the sweep (never put back and received again), once by this check.
      expect(left.every((m) => m.receives === 2)).toBe(true);
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('a second copy of one still-dead entry (a DLQ send whose answer was lost, sent again) held beside the moves of a redrive, is deleted: one copy per entry stays', async () => {
    const s = await seed('h', { never: 3 });
    // One copy sent twice: the same body and attributes, a message of its own.
    const r = await raw.send(new ReceiveMessageCommand({ QueueUrl: s.dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageAttributeNames: ['All'] }));
    const copy = r.Messages!.find((m) => m.MessageAttributes?.['agentq-error-code'] !== undefined)!;
    await raw.send(new SendMessageCommand({ QueueUrl: s.dlq, MessageBody: copy.Body!, MessageAttributes: copy.MessageAttributes }));
    for (const m of r.Messages!) await raw.send(new ChangeMessageVisibilityCommand({ QueueUrl: s.dlq, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }));
    expect(await depths(s.dlq)).toEqual({ visible: 5, hidden: 0 });
    const backend = (await openBackend(s.url)) as SqsBackend;
    try {
      const held = await backend.sweepRedrivenCopies('research', undefined, Promise.resolve());
      expect(held).toMatchObject({ received: 5, mirror_kept: 3, duplicate_copies: 1, deleted: 1, kept_in_sqs: 1 });
      expect((await contents(s.dlq)).map((m) => m.what)).toEqual([...s.jobs.never!, 'from another system'].sort());
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('beside the moves: the copies held for jobs a batch just moved are deleted then, before the moves are over', async () => {
    const s = await seed('e', { first: 10, second: 10, never: 5 });
    const backend = (await openBackend(s.url)) as SqsBackend;
    try {
      let movesOver!: () => void;
      let tell: ((jobIds: string[]) => void) | null = null;
      let unsubscribed = false;
      const onMoved = (listener: (jobIds: string[]) => void) => {
        tell = listener;
        return () => void (unsubscribed = true);
      };
      const sweeping = sweepDlq(new SqsWireClient(raw, { region: 'us-east-1', endpoint: server.endpoint }), backend.ext, { url: s.dlq, name: 'dlq', queue: 'research', maxReceiveCount: 5 }, {
        max: 1000,
        copiesOnly: true,
        holdUntil: new Promise<void>((r) => (movesOver = r)),
        onMoved,
      });
      // Everything received: the 25 copies held, the foreign message hidden until it is put back at the end.
      await pollUntil(async () => {
        const d = await depths(s.dlq);
        return d.hidden === 26 && d.visible === 0;
      }, { timeoutMs: 30_000, what: 'every message received' });
      const db = (backend.ext as SqliteSqsStore).store.db;
      const move = db.prepare("UPDATE jobs SET state = 'queued' WHERE id = ?");
      // A first batch commits: its copies go at once, while the moves are still running.
      for (const id of s.jobs.first!) move.run(id);
      tell!(s.jobs.first!);
      await pollUntil(async () => (await depths(s.dlq)).hidden === 16, { timeoutMs: 30_000, what: "the first batch's copies deleted" });
      // Told about a job that is still dead (it failed again, say): its copy is not deleted, and goes back visible at the end.
      tell!([s.jobs.never![0]!]);
      // The second batch moves without a word (another process): judged when the moves are over.
      for (const id of s.jobs.second!) move.run(id);
      movesOver();
      const r = await sweeping;
      expect(unsubscribed).toBe(true);
      expect(r).toMatchObject({ received: 26, deleted: 20, mirror_kept: 5, kept_in_sqs: 1 });
      expect(await depths(s.dlq)).toEqual({ visible: 6, hidden: 0 });
      expect((await contents(s.dlq)).map((m) => m.what)).toEqual([...s.jobs.never!, 'from another system'].sort());
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('messages another receiver holds hidden are reported: the sweep cannot judge them, and says how they go', async () => {
    const s = await seed('g', { moved: 2 });
    // Another consumer (or a redrive killed while sweeping) holds one message hidden for a while.
    const held = await raw.send(new ReceiveMessageCommand({ QueueUrl: s.dlq, MaxNumberOfMessages: 1, VisibilityTimeout: 600 }));
    expect(held.Messages).toHaveLength(1);
    const run = await runCliOk(home, ['--url', s.url, 'dlq', 'redrive', '--queue', 'research', '--all', '--yes'], { env: CREDS });
    expect(run.stderr).toContain(`warning: 1 message(s) of ${dlqName(s.prefix, 'research')} are held hidden by another receiver`);
    expect(run.stderr).toContain('then remove those copies with: agentq sqs sweep --queue research');
    expect(await depths(s.dlq)).toMatchObject({ hidden: 1 });
  }, 120_000);

  it('a sweep stopped by its signal puts back what it received at once and reports itself interrupted', async () => {
    // More copies than the sweep's lanes take in their first receives (10 each), so the stop shows.
    const s = await seed('c', { moved: 10 * SWEEP_LANES + 40 });
    const backend = (await openBackend(s.url)) as SqsBackend;
    try {
      // The store no longer holds these dead (as after a redrive): every copy may go.
      await (backend.ext as SqliteSqsStore).store.db.prepare("UPDATE jobs SET state = 'queued'").run();
      const ctl = new AbortController();
      const data = new SdkDataPlane(raw);
      // Stop after the first received batch: receives in flight finish, no new one starts.
      const stopping = Object.assign(Object.create(data) as SdkDataPlane, {
        receiveMessage: async (input: Parameters<SdkDataPlane['receiveMessage']>[0]) => {
          const out = await data.receiveMessage(input);
          ctl.abort();
          return out;
        },
      });
      const r = await sweepDlq(stopping, backend.ext, { url: s.dlq, name: 'dlq', queue: 'research', maxReceiveCount: 5 }, { max: 1000, copiesOnly: true, signal: ctl.signal });
      expect(r.interrupted).toBe(true);
      expect(r.received).toBeGreaterThan(0);
      // At most the lanes' first receives (10 each) of the messages.
      expect(r.received).toBeLessThanOrEqual(10 * SWEEP_LANES);
      expect(r.kept_in_sqs + r.deleted).toBe(r.received);
      // What was deleted is gone; the rest is visible again at once (the foreign message included, if received).
      expect(await depths(s.dlq)).toEqual({ visible: 10 * SWEEP_LANES + 41 - r.deleted, hidden: 0 });
    } finally {
      await backend.close();
    }
  }, 120_000);
});
