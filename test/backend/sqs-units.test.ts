/** Pure parts of the SQS backend: the URL, queue names, and how a received message is classified. */
import { describe, expect, it } from 'vitest';
import { parseMessage, messageAttributes, messageBody, FORMAT } from '../../src/backend/sqs/envelope.js';
import { dlqName, sourceQueueName } from '../../src/backend/sqs/names.js';
import { defaultStorePath, parseSqsUrl, redactStoreCredentials } from '../../src/backend/sqs/url.js';
import { ConfigError } from '../../src/core/errors.js';
import type { Job } from '../../src/core/schemas.js';

const env = { HOME: '/home/op', XDG_DATA_HOME: '/data' };
const parse = (u: string) => parseSqsUrl(u, u, env);

describe('sqs:// URLs', () => {
  it('reads region, prefix and defaults', () => {
    expect(parse('sqs://eu-west-1/agentq')).toEqual({
      region: 'eu-west-1',
      prefix: 'agentq',
      endpoint: null,
      storePath: '/data/agentq/sqs-eu-west-1-agentq.db',
      redisStore: null,
      autoCreate: false,
      maxReceiveCount: 10,
      waitSeconds: 20,
      fifo: null,
      client: 'wire',
    });
    expect(defaultStorePath('us-east-1', 'p', { HOME: '/h' })).toBe('/h/.local/share/agentq/sqs-us-east-1-p.db');
  });

  it('reads endpoint, a URL-encoded store and the tuning parameters', () => {
    const u = parse(`sqs://us-east-1/dev?endpoint=${encodeURIComponent('http://127.0.0.1:4566')}&store=${encodeURIComponent('sqlite:/tmp/s.db')}&autocreate=1&max_receive_count=5&wait=0`);
    expect(u).toMatchObject({ endpoint: 'http://127.0.0.1:4566', storePath: '/tmp/s.db', autoCreate: true, maxReceiveCount: 5, waitSeconds: 0 });
  });

  it('reads a URL-encoded Redis job store (store=redis://…, redis+cluster://…)', () => {
    expect(parse(`sqs://us-east-1/dev?store=${encodeURIComponent('redis://127.0.0.1:7000/0?prefix=aq')}`).redisStore).toBe('redis://127.0.0.1:7000/0?prefix=aq');
    expect(parse(`sqs://us-east-1/dev?store=${encodeURIComponent('redis+cluster://h1:7000,h2:7001')}`).redisStore).toBe('redis+cluster://h1:7000,h2:7001');
    expect(parse(`sqs://us-east-1/dev?store=${encodeURIComponent('sqlite:/tmp/s.db')}`).redisStore).toBe(null);
  });

  it('hides a Redis store password when the URL is shown', () => {
    const shown = redactStoreCredentials(`sqs://us-east-1/dev?store=${encodeURIComponent('redis://:hunter2@h:6379')}&wait=0`);
    expect(decodeURIComponent(shown)).not.toContain('hunter2');
    expect(shown).toContain('&wait=0');
  });

  it('reads fifo= (1: group by tenant, job: a group per job)', () => {
    expect(parse('sqs://eu-west-1/p?fifo=1').fifo).toBe('tenant');
    expect(parse('sqs://eu-west-1/p?fifo=tenant').fifo).toBe('tenant');
    expect(parse('sqs://eu-west-1/p?fifo=job').fifo).toBe('job');
    expect(parse('sqs://eu-west-1/p?fifo=0').fifo).toBe(null);
  });

  it('refuses a bad AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL when the URL gives no endpoint= (a config error naming the variable, not "Invalid URL" at the first call)', () => {
    const withEnv = (extra: Record<string, string>, u = 'sqs://eu-west-1/p') => () => parseSqsUrl(u, u, { ...env, ...extra });
    expect(withEnv({ AWS_ENDPOINT_URL_SQS: 'garbage' })).toThrow(ConfigError);
    expect(withEnv({ AWS_ENDPOINT_URL_SQS: 'garbage' })).toThrow(/AWS_ENDPOINT_URL_SQS must be an http\(s\):\/\/ URL .*"garbage"/);
    expect(withEnv({ AWS_ENDPOINT_URL: 'ftp://h' })).toThrow(/AWS_ENDPOINT_URL must be/);
    // The SDK takes the SQS one first; endpoint= and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true make both unused.
    expect(withEnv({ AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566', AWS_ENDPOINT_URL: 'garbage' })).not.toThrow();
    expect(withEnv({ AWS_ENDPOINT_URL_SQS: 'garbage', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })).not.toThrow();
    expect(withEnv({ AWS_ENDPOINT_URL_SQS: 'garbage' }, `sqs://eu-west-1/p?endpoint=${encodeURIComponent('http://h:1')}`)).not.toThrow();
  });

  it('reads autocreate= (1, true or yes: on; 0, false, no or absent: off)', () => {
    for (const on of ['1', 'true', 'YES']) expect(parse(`sqs://eu-west-1/p?autocreate=${on}`).autoCreate).toBe(true);
    for (const off of ['0', 'false', 'no']) expect(parse(`sqs://eu-west-1/p?autocreate=${off}`).autoCreate).toBe(false);
  });

  it('reads client= (wire by default, sdk: the AWS SDK for every call)', () => {
    expect(parse('sqs://eu-west-1/p').client).toBe('wire');
    expect(parse('sqs://eu-west-1/p?client=wire').client).toBe('wire');
    expect(parse('sqs://eu-west-1/p?client=SDK').client).toBe('sdk');
  });

  it.each([
    ['sqs://eu-west-1/p?fifo=maybe', /fifo= must be/],
    ['sqs://eu-west-1/p?client=fetch', /client= must be wire .* or sdk .*got "fetch"/],
    // regression: any value but 1/true/yes read as "off", so autocreate=on (a typo of the switch) was silently ignored
    ['sqs://eu-west-1/p?autocreate=on', /autocreate= must be 1 .* or 0, got "on"/],
    ['sqs://nowhere/agentq', /names no AWS region/],
    ['sqs://eu-west-1/', /prefix/],
    ['sqs://eu-west-1/a.b', /prefix/],
    ['sqs://eu-west-1/%zz', /queue prefix of .* has a bad percent-escape/],
    ['sqs://eu-west-1/p?store=redis%3A%2F%2Fh%3A0', /port must be 1-65535 in Redis URL/],
    ['sqs://eu-west-1/p?store=mysql%3A%2F%2Fh', /store= must be a sqlite: URL or a redis/],
    ['sqs://eu-west-1/p?store=sqlite%3A%3Amemory%3A', /must be a file/],
    ['sqs://eu-west-1/p?wait=21', /0 to 20/],
    // regression: an empty value read as Number('') = 0, a worker polling SQS without a long poll
    ['sqs://eu-west-1/p?wait=', /0 to 20/],
    ['sqs://eu-west-1/p?wait=1e1', /0 to 20/],
    ['sqs://eu-west-1/p?max_receive_count=1e1', /1 to 1000/],
    ['sqs://eu-west-1/p?max_receive_count=0', /1 to 1000/],
    ['sqs://eu-west-1/p?endpoint=ftp%3A%2F%2Fx', /endpoint/],
    // a typo must not send a backend meant for an emulator to AWS
    ['sqs://eu-west-1/p?endpiont=http%3A%2F%2F127.0.0.1%3A4566', /unknown parameter "endpiont" \(did you mean endpoint\?\)/],
    ['sqs://eu-west-1/p?region=us-east-1', /unknown parameter "region"$/],
  ])('refuses %s with a config error (exit 78)', (url, why) => {
    let err: unknown;
    try {
      parse(url);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(78);
    expect((err as Error).message).toMatch(why);
  });
});

describe('SQS queue names', () => {
  it('names a queue per class and a DLQ per queue', () => {
    expect(sourceQueueName('agentq', 'research', 'interactive')).toBe('agentq-research-interactive');
    expect(dlqName('agentq', 'research')).toBe('agentq-research-dlq');
  });

  it('ends FIFO queue names in .fifo, within the 80-character limit', () => {
    expect(sourceQueueName('agentq', 'research', 'batch', true)).toBe('agentq-research-batch.fifo');
    expect(dlqName('agentq', 'research', true)).toBe('agentq-research-dlq.fifo');
    const long = dlqName('p', 'q'.repeat(100), true);
    expect(long).toMatch(/^[A-Za-z0-9_-]{1,75}\.fifo$/);
    expect(long).not.toBe(dlqName('p', 'q'.repeat(99), true));
  });

  it('fits names SQS would refuse (dots, length) without collisions', () => {
    const dotted = sourceQueueName('p', 'a.b', 'batch');
    const underscored = sourceQueueName('p', 'a_b', 'batch');
    expect(dotted).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(dotted).not.toBe(underscored);
    const long = dlqName('p', 'q'.repeat(128));
    expect(long).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(long).not.toBe(dlqName('p', 'q'.repeat(127)));
  });
});

describe('classifying received messages', () => {
  const job = {
    job_id: 'job_01JD0000000000000000000000', tenant_id: 'acme', queue: 'q', workflow: 'research_report:v3', operation: null, class: 'batch',
    input: null, input_ref: null, input_sha256: null, deadline_at: null, idempotency_key: null, attempt: 2, max_attempts: 3, trace_id: 't-1',
    budget: { tokens: null, cost_usd: null }, allowed_tools: [], estimated_seconds: null, created_at: '2026-01-01T00:00:00.000Z',
  } as unknown as Job;

  it('recognises its own envelope, with routing attributes', () => {
    const attrs = messageAttributes(job);
    expect(Object.keys(attrs).length).toBeLessThanOrEqual(10);
    expect(attrs['agentq-attempt']).toEqual({ DataType: 'Number', StringValue: '2' });
    const p = parseMessage({ Body: messageBody(job), MessageAttributes: attrs });
    expect(p).toMatchObject({ kind: 'agentq', jobId: job.job_id, isAppDlqCopy: false });
  });

  it('calls a body that claims to be ours but does not validate malformed', () => {
    const marked = { 'agentq-format': { DataType: 'String', StringValue: FORMAT }, 'agentq-job-id': { DataType: 'String', StringValue: job.job_id } };
    expect(parseMessage({ Body: '{"job_id":', MessageAttributes: marked })).toMatchObject({ kind: 'malformed', jobId: job.job_id });
    expect(parseMessage({ Body: '{"job_id":"job_x","workflow":5}' })).toMatchObject({ kind: 'malformed' });
  });

  it('calls anything else foreign', () => {
    expect(parseMessage({ Body: 'plain text' })).toMatchObject({ kind: 'foreign' });
    expect(parseMessage({ Body: '{"order":7}' })).toMatchObject({ kind: 'foreign' });
    expect(parseMessage({})).toMatchObject({ kind: 'foreign' });
  });
});

describe('FIFO message groups and deduplication ids', () => {
  it('groups by tenant (hashed when SQS would refuse it) or by job', async () => {
    const { sourceGroupId, publishDedupId, dlqDedupId } = await import('../../src/backend/sqs/fifo.js');
    expect(sourceGroupId({ job_id: 'job_1', tenant_id: 'acme' }, 'tenant')).toBe('acme');
    expect(sourceGroupId({ job_id: 'job_1', tenant_id: 'acme' }, 'job')).toBe('job_1');
    const odd = sourceGroupId({ job_id: 'job_1', tenant_id: 'ünï cödé' }, 'tenant');
    expect(odd).toMatch(/^tenant-[0-9a-f]{40}$/);
    expect(sourceGroupId({ job_id: 'job_2', tenant_id: 'ünï cödé' }, 'tenant')).toBe(odd);
    expect(publishDedupId('job_1', 7)).not.toBe(publishDedupId('job_1', 8));
    const lineage = (n: number) => ({ redrive_count: n, redriven_at: null, redrive_run: null });
    expect(dlqDedupId({ job_id: 'job_1', lineage: lineage(0) }, '2026-01-01T00:00:00.000Z')).not.toBe(dlqDedupId({ job_id: 'job_1', lineage: lineage(1) }, '2026-01-01T00:00:00.000Z'));
  });
});

describe('one receive from a FIFO queue', () => {
  it('judges the first message of each group and puts the later ones of a group back (SQS may return several of one group at once)', async () => {
    const { firstOfEachGroup } = await import('../../src/backend/sqs/fifo.js');
    const m = (id: string, group?: string) => ({ MessageId: id, Attributes: group === undefined ? {} : { MessageGroupId: group } });
    const { judge, putBack } = firstOfEachGroup([m('1', 'acme'), m('2', 'globex'), m('3', 'acme'), m('4'), m('5', 'acme')]);
    expect(judge.map((x) => x.MessageId)).toEqual(['1', '2', '4']);
    expect(putBack.map((x) => x.MessageId)).toEqual(['3', '5']);
  });
});
