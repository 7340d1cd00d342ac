/**
 * The link from a job to its trace (`traceUrl` / `AGENTQ_TRACE_URL`) through the built CLI:
 * `dlq show` and `inspect` print it under the trace id, `-o json` carries `trace_url` (null
 * without a template or a trace id), with the same JSON shape on SQLite, Redis and SQS; a bad
 * template is exit 78 naming the setting and the rule.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';

const TEMPLATE = 'https://grafana.example/explore?orgId=1&traceId={trace_id}';
// untrusted: a slash, a space, an ampersand, a non-ASCII letter and an escape sequence
const TRACE_ID = 'tr/ä b&c\x1b[31m';
const LINK = `https://grafana.example/explore?orgId=1&traceId=${encodeURIComponent(TRACE_ID)}`;
const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };

interface Target {
  name: string;
  start(home: CliHome): Promise<{ url: string; stop(): Promise<void> }>;
}

const targets: Target[] = [
  { name: 'sqlite', start: async (home) => ({ url: home.dataUrl, stop: async () => undefined }) },
  {
    name: 'redis',
    start: async () => {
      const server: RedisServer = await startRedisServer();
      return { url: server.url, stop: () => server.stop() };
    },
  },
  {
    name: 'sqs',
    start: async (home) => {
      useEmulatorCredentials();
      const server: SqsServer = await startSqsServer();
      return { url: sqsUrl(server.endpoint, `tl${process.pid}`, join(home.dir, 'store.db'), '&autocreate=1&wait=0'), stop: () => server.stop() };
    },
  },
];

/** Key lists of each backend's JSON documents, compared at the end. */
const shapes = new Map<string, Record<string, string[]>>();
const keys = (o: unknown) => Object.keys(o as object).sort();

async function seed(backend: Backend): Promise<{ dead: string; deadNoTrace: string; queued: string }> {
  const dead = (await backend.submit({ workflow: 'report:v1', queue: 'tl', tenant_id: 'acme', max_attempts: 1, trace_id: TRACE_ID })).job.job_id;
  const deadNoTrace = (await backend.submit({ workflow: 'report:v1', queue: 'tl', tenant_id: 'acme', max_attempts: 1 })).job.job_id;
  const toKill = new Set([dead, deadNoTrace]);
  await pollUntil(
    async () => {
      for (const lease of await backend.claim({ queue: 'tl', workerId: 'seeder', workerVersion: 'v1', max: 10, leaseMs: 600_000 })) {
        await backend.fail(lease, { code: 'TOOL_ERROR', message: 'boom', retryable: false, workerVersion: 'v1' });
        toKill.delete(lease.jobId);
      }
      return toKill.size === 0;
    },
    { what: 'the seeded jobs to be dead' },
  );
  const queued = (await backend.submit({ workflow: 'report:v1', queue: 'other', tenant_id: 'acme', trace_id: TRACE_ID })).job.job_id;
  return { dead, deadNoTrace, queued };
}

describe.each(targets)('trace link on $name', (target) => {
  const home = makeCliHome(`agentq-trace-link-${target.name}-`);
  let server: { url: string; stop(): Promise<void> } | undefined;
  let ids: Awaited<ReturnType<typeof seed>>;
  const cli = (args: string[], env: Record<string, string | undefined> = {}) => runCliOk(home, ['--url', server!.url, ...args], { env: { ...CREDS, ...env } });
  const withTemplate = { AGENTQ_TRACE_URL: TEMPLATE };

  afterAll(async () => {
    await server?.stop();
    home.cleanup();
  });

  it('seeds a dead job with a trace id, one without, and a queued one', async () => {
    server = await target.start(home);
    const backend = await openBackend(server.url, { create: true });
    try {
      ids = await seed(backend);
    } finally {
      await backend.close();
    }
  });

  it('without a template: trace_url is null and no link is printed', async () => {
    const entry = JSON.parse((await cli(['dlq', 'show', ids.dead, '-o', 'json'])).stdout) as Record<string, unknown>;
    expect(entry.trace_url).toBeNull();
    expect((entry.job as { trace_id: string }).trace_id).toBe(TRACE_ID);
    const job = JSON.parse((await cli(['inspect', ids.queued, '-o', 'json'])).stdout) as Record<string, unknown>;
    expect(job.trace_url).toBeNull();
    expect((await cli(['dlq', 'show', ids.dead])).stdout).not.toContain('trace link');
    expect((await cli(['inspect', ids.queued])).stdout).not.toContain('trace link');
  });

  it('with AGENTQ_TRACE_URL: the link, trace id URL-encoded, in text and JSON; null for a job without a trace id', async () => {
    const entry = JSON.parse((await cli(['dlq', 'show', ids.dead, '-o', 'json'], withTemplate)).stdout) as Record<string, unknown>;
    expect(entry.trace_url).toBe(LINK);
    const plain = await cli(['dlq', 'show', ids.dead], withTemplate);
    expect(plain.stdout).toContain(`\ntrace link\t${LINK}\n`);
    // the trace id itself is shown sanitised; nothing raw reaches the terminal
    expect(hasEscapeByte(plain.stdoutBytes)).toBe(false);
    expect((await cli(['dlq', 'show', ids.dead, '-o', 'table'], withTemplate)).stdout).toMatch(new RegExp(`^trace link: {6}${LINK.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}$`, 'm'));

    const none = JSON.parse((await cli(['dlq', 'show', ids.deadNoTrace, '-o', 'json'], withTemplate)).stdout) as Record<string, unknown>;
    expect(none.trace_url).toBeNull();
    expect((await cli(['dlq', 'show', ids.deadNoTrace], withTemplate)).stdout).not.toContain('trace link');

    for (const id of [ids.dead, ids.queued]) {
      const job = JSON.parse((await cli(['inspect', id, '-o', 'json'], withTemplate)).stdout) as Record<string, unknown>;
      expect(job.trace_url).toBe(LINK);
      const text = await cli(['inspect', id], withTemplate);
      expect(text.stdout).toContain(`\ntrace link\t${LINK}\n`);
      expect(hasEscapeByte(text.stdoutBytes)).toBe(false);
    }
    const noTrace = JSON.parse((await cli(['inspect', ids.deadNoTrace, '-o', 'json'], withTemplate)).stdout) as Record<string, unknown>;
    expect(noTrace.trace_url).toBeNull();

    shapes.set(target.name, {
      dlqShow: keys(entry),
      dlqShowNoTrace: keys(none),
      dlqJob: keys(entry.job),
      inspect: keys(JSON.parse((await cli(['inspect', ids.dead, '-o', 'json'], withTemplate)).stdout)),
      inspectNoTrace: keys(noTrace),
    });
  });
});

describe('trace link settings', () => {
  it('the JSON documents have the same keys on every backend', () => {
    expect([...shapes.keys()]).toEqual(targets.map((t) => t.name));
    const [first, ...rest] = [...shapes.values()];
    for (const s of rest) expect(s).toEqual(first);
    expect(first!.dlqShow).toContain('trace_url');
    expect(first!.inspect).toContain('trace_url');
  });

  it("a context's traceUrl applies under that context; a bad template is exit 78 naming the setting and the rule", async () => {
    const home = makeCliHome('agentq-trace-link-config-');
    try {
      const backend = await openBackend(home.dataUrl, { create: true });
      const { job } = await backend.submit({ workflow: 'report:v1', queue: 'tl', tenant_id: 'acme', trace_id: 'abc123' });
      await backend.close();
      const config = join(home.env.XDG_CONFIG_HOME!, 'agentq', 'config.json');
      mkdirSync(join(config, '..'), { recursive: true });
      writeFileSync(config, JSON.stringify({ contexts: { prod: { url: home.dataUrl, traceUrl: 'http://jaeger.internal:16686/trace/{trace_id}' } } }));
      const viaContext = JSON.parse((await runCliOk(home, ['--context', 'prod', 'inspect', job.job_id, '-o', 'json'])).stdout) as Record<string, unknown>;
      expect(viaContext.trace_url).toBe('http://jaeger.internal:16686/trace/abc123');
      // context show says which template is used and where it comes from
      const show = JSON.parse((await runCliOk(home, ['--context', 'prod', 'context', 'show', '-o', 'json'])).stdout) as Record<string, unknown>;
      expect(show).toMatchObject({ trace_url: 'http://jaeger.internal:16686/trace/{trace_id}', trace_url_source: 'context' });
      expect((await runCliOk(home, ['--context', 'prod', 'context', 'show'])).stdout).toMatch(/^trace url\thttp:\/\/jaeger\.internal:16686\/trace\/\{trace_id\} \(from context\)$/m);
      // context list shows each context's own template (null for one without); -o wide adds the column
      writeFileSync(config, JSON.stringify({ contexts: { prod: { url: home.dataUrl, traceUrl: 'http://jaeger.internal:16686/trace/{trace_id}' }, dev: { url: home.dataUrl } } }));
      const list = JSON.parse((await runCliOk(home, ['context', 'list', '-o', 'json'])).stdout) as Array<Record<string, unknown>>;
      expect(list.map((c) => [c.name, c.trace_url])).toEqual([['dev', null], ['prod', 'http://jaeger.internal:16686/trace/{trace_id}']]);
      expect((await runCliOk(home, ['context', 'list', '-o', 'table'])).stdout).not.toContain('jaeger');
      // plain output carries every column, the new one last: `file` keeps its place
      expect((await runCliOk(home, ['context', 'list', '-o', 'plain'])).stdout.trimEnd().split('\n').map((l) => l.split('\t').slice(6))).toEqual([[''], ['http://jaeger.internal:16686/trace/{trace_id}']]);
      const wide = (await runCliOk(home, ['context', 'list', '-o', 'wide'])).stdout;
      expect(wide).toMatch(/TRACE URL/i);
      expect(wide).toMatch(/prod .*http:\/\/jaeger\.internal:16686\/trace\/\{trace_id\}/);

      const badEnv = await runCli(home, ['--context', 'prod', 'inspect', job.job_id], { env: { AGENTQ_TRACE_URL: 'https://grafana.example/explore' } });
      expect(badEnv.code).toBe(78);
      expect(badEnv.stderr).toContain('AGENTQ_TRACE_URL must contain {trace_id}, where the trace id goes (got "https://grafana.example/explore")');
      expect(badEnv.stderr).not.toMatch(/\n\s+at /); // no stack trace

      writeFileSync(config, JSON.stringify({ contexts: { prod: { url: home.dataUrl, traceUrl: 'javascript:alert({trace_id})' } } }));
      const badFile = await runCli(home, ['--context', 'prod', 'dlq', 'show', job.job_id]);
      expect(badFile.code).toBe(78);
      expect(badFile.stderr).toContain(`config file ${config}: context "prod": traceUrl must be an http:// or https:// URL`);
    } finally {
      home.cleanup();
    }
  });
});
