/**
 * A redrive batch on SQS is applied in parts (SqsBackend.applyRunItems): each
 * part's store transaction commits, and its messages are sent while the next
 * part's store work runs. What callers rely on must not change with it: the
 * items come back in the order asked, every moved job's message is in the
 * source queue when the call returns, and the outbox has nothing pending.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { sourceQueueName } from '../../src/backend/sqs/names.js';
import { runRecord } from '../conformance/fixture.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

let server: SqsServer;
let raw: SQSClient;
let dir: string;

beforeAll(async () => {
  useEmulatorCredentials();
  server = await startSqsServer();
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-parts-'));
});
afterAll(async () => {
  raw?.destroy();
  rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

it('applies a batch of 250 in parts: items in the order asked, every message sent before it returns, nothing left in the outbox', async () => {
  const prefix = `parts${process.pid}`;
  const backend = (await openBackend(sqsUrl(server.endpoint, prefix, join(dir, 'parts.db'), '&wait=0'))) as SqsBackend;
  try {
    await backend.setup(['q']);
    const ids: string[] = [];
    for (let i = 0; i < 250; i++) ids.push((await backend.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 })).job.job_id);
    let dead = 0;
    for (let round = 0; round < 100 && dead < ids.length; round++) {
      for (const l of await backend.claim({ queue: 'q', workerId: 'seed', max: 10, leaseMs: 60_000 })) {
        expect((await backend.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: false })).kind).toBe('dead');
        dead++;
      }
    }
    expect(dead).toBe(250);
    // Asked in an order that is not the store's (ids sort by creation time).
    const asked = [...ids].reverse();
    const runId = 'run_01JPARTSPARTSPARTSPARTSPA';
    await backend.createRun(runRecord({ run_id: runId, queue: 'q', action: 'redrive' }, Date.now()), asked.map((job_id) => ({ job_id, verdict: 'redrive' as const, detail: null })));
    const items = await backend.applyRunItems({ runId, jobIds: asked, now: Date.now() });
    expect(items.map((i) => i.job_id)).toEqual(asked);
    expect(items.every((i) => i.status === 'moved')).toBe(true);
    // Right when the call returns: all 250 sent, none pending.
    const url = (await raw.send(new GetQueueUrlCommand({ QueueName: sourceQueueName(prefix, 'q', 'batch') }))).QueueUrl!;
    const a = (await raw.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes!;
    expect(Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible)).toBe(250);
    expect((await backend.outboxStatus()).pending).toBe(0);
    expect((await backend.getRun(runId))!.counts).toEqual({ planned: 0, moved: 250, skipped: 0, failed: 0 });
  } finally {
    await backend.close();
  }
}, 120_000);
