/**
 * The AWS SDK stays unloaded on the SQS commands that do not need it
 * (`@aws-sdk/client-sqs` costs ~150-200 ms of CPU to load, a large share of a
 * short CLI run): with `endpoint=` in the URL, `dlq redrive` (its SQS DLQ
 * sweep included), `sqs sweep`, `submit` and a worker resolve queue URLs, read the DLQ
 * depth, sign with the default credential chain's environment credentials and
 * call SQS through the wire client alone. `sqs setup` and `client=sdk` still
 * use the SDK. Which modules a CLI run loaded is read from its own
 * require.cache at exit (a --require hook), against fauxqs on loopback.
 */
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, PermissionError } from '../../src/core/errors.js';
import { openBackend } from '../../src/backend/open.js';
import type { SqsBackend } from '../../src/backend/sqs/index.js';
import { isQueueMissing, toAgentqError } from '../../src/backend/sqs/client.js';
import { defaultCredentials, envCredentials } from '../../src/backend/sqs/credentials.js';
import { dlqName } from '../../src/backend/sqs/names.js';
import { SqsWireClient } from '../../src/backend/sqs/wire.js';
import { makeCliHome, runCliOk, type CliHome } from '../support/cli.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';

const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
let server: SqsServer;
let home: CliHome;
let hook: string;
let raw: SQSClient;

beforeAll(async () => {
  useEmulatorCredentials();
  server = await startSqsServer();
  home = makeCliHome('agentq-sqs-lazy-');
  hook = join(home.dir, 'sdk-hook.cjs');
  writeFileSync(
    hook,
    "process.on('exit', () => process.stderr.write('\\nSDK_MODULES=' + Object.keys(require.cache).filter((k) => k.includes('@aws-sdk/client-sqs')).length + '\\n'));\n",
  );
  raw = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
});
afterAll(async () => {
  raw?.destroy();
  home?.cleanup();
  await server?.stop();
});

const sdkModules = (stderr: string): number => Number(/SDK_MODULES=(\d+)/.exec(stderr)?.[1] ?? NaN);

/** A fresh prefix whose queues exist, with `n` dead jobs (their agentq copies in the SQS DLQ). */
async function seed(name: string, n: number, extra = ''): Promise<{ url: string; prefix: string }> {
  const prefix = `lz${name}${process.pid}`;
  const url = sqsUrl(server.endpoint, prefix, join(home.dir, `${name}.db`), `&wait=0${extra}`);
  const backend = (await openBackend(url)) as SqsBackend;
  try {
    await backend.setup(['research']);
    for (let i = 0; i < n; i++) await backend.submit({ workflow: 'research_report:v3', queue: 'research', max_attempts: 1 });
    let dead = 0;
    for (let round = 0; round < 50 && dead < n; round++) {
      for (const l of await backend.claim({ queue: 'research', workerId: 'seed', max: 10, leaseMs: 60_000 })) {
        expect((await backend.fail(l, { code: 'PROVIDER_429', message: 'rate limited', retryable: false })).kind).toBe('dead');
        dead++;
      }
    }
    expect(dead).toBe(n);
  } finally {
    await backend.close();
  }
  return { url, prefix };
}

async function dlqEmpty(prefix: string): Promise<boolean> {
  const dlq = (await raw.send(new GetQueueUrlCommand({ QueueName: dlqName(prefix, 'research') }))).QueueUrl!;
  const r = await raw.send(new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
  return (r.Messages ?? []).length === 0;
}

describe('SQS commands without the AWS SDK', () => {
  it('dlq redrive (with its SQS DLQ sweep), sqs sweep, submit and a worker load no @aws-sdk/client-sqs; sqs setup does', async () => {
    const s = await seed('wire', 3);
    const cli = (args: string[]) => runCliOk(home, ['--url', s.url, ...args], { env: CREDS, nodeArgs: ['--require', hook] });

    const redrive = await cli(['dlq', 'redrive', '--queue', 'research', '--yes', '-o', 'json']);
    expect(sdkModules(redrive.stderr)).toBe(0);
    expect(redrive.stderr).toContain('sweeping the SQS DLQ');
    expect(await dlqEmpty(s.prefix)).toBe(true);

    const sweep = await cli(['sqs', 'sweep', '--queue', 'research', '--yes']);
    expect(sdkModules(sweep.stderr)).toBe(0);

    const submit = await cli(['submit', 'research_report:v3', '--queue', 'research', '-o', 'json']);
    expect(sdkModules(submit.stderr)).toBe(0);

    // A worker's claim (queue URL, receive, the store's judgement) and its ack: no SDK either.
    const worker = await cli(['worker', '--queue', 'research', '--drain', '--', process.execPath, '-e', '']);
    expect(sdkModules(worker.stderr)).toBe(0);
    expect(worker.stderr).toMatch(/succeeded/);

    const setup = await cli(['sqs', 'setup', '--queue', 'research']);
    expect(sdkModules(setup.stderr)).toBeGreaterThan(0);
    expect(setup.stderr).not.toMatch(/NodeVersionSupportWarning/);
  }, 90_000);

  it('client=sdk still does every call through the SDK (and redrives)', async () => {
    const s = await seed('sdk', 2, '&client=sdk');
    const redrive = await runCliOk(home, ['--url', s.url, 'dlq', 'redrive', '--queue', 'research', '--yes'], { env: CREDS, nodeArgs: ['--require', hook] });
    expect(sdkModules(redrive.stderr)).toBeGreaterThan(0);
    expect(await dlqEmpty(s.prefix)).toBe(true);
  }, 60_000);

  it('GetQueueUrl through the wire client: a missing queue is the same error as from the SDK', async () => {
    const wire = new SqsWireClient(
      { credentials: defaultCredentials('us-east-1'), sdk: () => Promise.reject(new Error('the SDK must not be needed with endpoint=')) },
      { region: 'us-east-1', endpoint: server.endpoint },
    );
    try {
      const prefix = (await seed('look', 0)).prefix;
      const name = dlqName(prefix, 'research');
      const url = (await wire.getQueueUrl({ QueueName: name })).QueueUrl;
      expect(url).toBe((await raw.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl);
      const attrs = await wire.getQueueAttributes({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'QueueArn'] });
      expect(attrs.Attributes?.ApproximateNumberOfMessages).toBe('0');
      expect(attrs.Attributes?.QueueArn).toContain(name);

      const missing = await wire.getQueueUrl({ QueueName: `${prefix}-nope` }).catch((e: unknown) => e);
      const fromSdk = await raw.send(new GetQueueUrlCommand({ QueueName: `${prefix}-nope` })).catch((e: unknown) => e);
      expect((missing as Error).name).toBe((fromSdk as Error).name);
      expect(isQueueMissing(missing)).toBe(true);
      expect(toAgentqError(missing, 'GetQueueUrl')).toBeInstanceOf(ConfigError);
    } finally {
      wire.destroy();
    }
  }, 30_000);
});

describe('credentials without the SQS client (the default chain)', () => {
  it('takes the environment pair as the chain does, unless AWS_PROFILE is set', () => {
    expect(envCredentials({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's' })).toEqual({ accessKeyId: 'a', secretAccessKey: 's' });
    expect(
      envCredentials({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't', AWS_CREDENTIAL_EXPIRATION: '2030-01-01T00:00:00Z' }),
    ).toEqual({ accessKeyId: 'a', secretAccessKey: 's', sessionToken: 't', expiration: new Date('2030-01-01T00:00:00Z') });
    // With a profile the chain skips the environment pair (and warns): so does agentq, and the chain decides.
    expect(envCredentials({ AWS_PROFILE: 'p', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's' })).toBeNull();
    expect(envCredentials({ AWS_ACCESS_KEY_ID: 'a' })).toBeNull();
  });

  it('falls back to the SDK chain, whose failure is a permission error with its hint', async () => {
    const dir = makeCliHome('agentq-sqs-creds-');
    try {
      // No environment pair, an empty shared config, no metadata service (AWS_EC2_METADATA_DISABLED): the chain has nothing.
      const env = { AWS_CONFIG_FILE: join(dir.dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(dir.dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true' };
      const saved = { ...process.env };
      for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI']) delete process.env[k];
      Object.assign(process.env, env);
      try {
        const e = await defaultCredentials('us-east-1')().catch((x: unknown) => x);
        expect(e).toBeInstanceOf(Error);
        expect(toAgentqError(e, 'credentials')).toBeInstanceOf(PermissionError);
      } finally {
        for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
        Object.assign(process.env, saved);
      }
    } finally {
      dir.cleanup();
    }
  }, 30_000);
});
