/**
 * Custody cases that hold alike on either job store of the SQS backend: sqs-delivery.test.ts
 * (SQLite store) and sqs-redis-store.test.ts (Redis store) run them, each with its own fauxqs,
 * store and `env()`.
 */
import { GetQueueUrlCommand, SendMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import { expect, it } from 'vitest';
import type { SqsBackend, SqsBackendOptions } from '../../src/backend/sqs/index.js';
import { dlqName } from '../../src/backend/sqs/names.js';
import { ManualClock } from '../../src/core/clock.js';
import { MalformedJobError } from '../../src/core/errors.js';

export interface CustodyEnv {
  prefix: string;
  make(o?: Partial<SqsBackendOptions>): SqsBackend;
}

const ENVELOPE_FORMAT = { 'agentq-format': { DataType: 'String', StringValue: 'agentq.envelope.v1' } };

/** `ctx` is read when a case runs (the files set up their servers in beforeAll). */
export function custodyCases(ctx: () => { env: () => CustodyEnv; raw: SQSClient }): void {
  /** A backend whose queue q is set up, and a sender of messages straight into q's SQS DLQ. */
  const setup = async () => {
    const { env, raw } = ctx();
    const e = env();
    const b = e.make({ clock: new ManualClock(), maxVisibilitySeconds: 0 });
    await b.setup(['q']);
    const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(e.prefix, 'q') }))).QueueUrl!;
    const send = (body: string, attributes?: Record<string, MessageAttributeValue>) =>
      raw.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: body, ...(attributes ? { MessageAttributes: attributes } : {}) }));
    return { b, send };
  };

  // Regression (SQLite store): every message kept counted as a submitted job, which a Redis store never did.
  it('a foreign or malformed message taken into custody is a DLQ entry, not a submitted job: the stats count it in the DLQ only', async () => {
    const { b, send } = await setup();
    await send('not ours');
    await send('{"job_id":"job_01JXXXXXXXXXXXXXXXXXXXXXXX","workflow":5}');
    await b.submit({ workflow: 'noop:v1', queue: 'q' });
    expect((await b.sweepDlq('q')).custody).toHaveLength(2);
    const s = await b.stats('q', { endsWindowMs: 3_600_000 });
    expect(s.dlq_size).toBe(2);
    // the one job submitted, and only it (the two kept neither add to it nor take from it)
    expect(s.totals).toMatchObject({ submitted: 1, dead: 0 });
    expect(s.recent).toMatchObject({ submitted: 1 });
    expect(s.ends).toMatchObject({ ended: 0, dead: 0 });
  });

  it('a malformed message in custody is listed with the rule it broke, not every field of a stored job', async () => {
    const { b, send } = await setup();
    // a whole envelope, but for one rule: attempt must be at least 0
    const envelope = {
      job_id: 'job_01JXXXXXXXXXXXXXXXXXXXXXXX', tenant_id: 't', queue: 'q', workflow: 'w:v1', operation: null, class: 'batch', input: null, input_ref: null, input_sha256: null,
      deadline_at: null, idempotency_key: null, attempt: -1, max_attempts: 3, trace_id: null, budget: null, allowed_tools: [], estimated_seconds: null, created_at: '2026-01-01T00:00:00.000Z',
    };
    await send(JSON.stringify(envelope), ENVELOPE_FORMAT);
    const report = await b.sweepDlq('q');
    expect(report.custody.map((c) => [c.kind, c.recorded])).toEqual([['malformed', 'kept']]);
    const entry = (await b.dlqGet(report.custody[0]!.job_id))!;
    expect(entry.malformed).toMatch(/attempt: Too small/);
    // (the body is an envelope, not a stored job: the job-only fields it lacks are no fault of it)
    expect(entry.malformed).not.toMatch(/state:|lineage:|updated_at:/);
    expect((await b.dlqList({ queue: 'q' }, { limit: 10 })).items[0]!.malformed).toBe(entry.malformed);
  });

  it("list and get do not show a custody entry's message body as a job (it names another job id, or none)", async () => {
    const { b, send } = await setup();
    // valid JSON that claims another job id, and a state of its own
    await send(JSON.stringify({ job_id: 'job_01JXXXXXXXXXXXXXXXXXXXXXXX', workflow: 'w:v1', state: 'succeeded', attempt: -1 }), ENVELOPE_FORMAT);
    const id = (await b.sweepDlq('q')).custody[0]!.job_id;
    const page = await b.list({ queue: 'q' }, { limit: 10 });
    expect(page.items.map((j) => j.job_id)).toEqual([]);
    expect(page.unreadable).toEqual([{ job_id: id, why: expect.stringContaining(id) }]);
    // (what it is, not the parse error of the mark its record carries: "Unexpected token 's', \"sqs-custod\"...")
    expect(page.unreadable![0]!.why).toContain('taken into custody from SQS');
    expect(page.unreadable![0]!.why).not.toContain('Unexpected token');
    await expect(b.get(id)).rejects.toThrow(MalformedJobError);
    await expect(b.cancel(id)).rejects.toThrow(MalformedJobError);
    // the light row (the TUI list) says malformed as the full entry does: the body is JSON, but another job's
    expect((await b.dlqRows({ queue: 'q' }, { limit: 10 })).items.map((r) => [r.job_id, r.malformed])).toEqual([[id, true]]);
  });
}
