/**
 * The machine output contract is the same on every backend: one scenario (submits, a cancel, a
 * worker that fails one job into the DLQ and finishes another, a redrive) run through the built
 * CLI on SQLite, Redis (standalone, and a Cluster queue in 3 shards) and SQS (fauxqs), then every reading command in `-o json`, `-o ndjson` and
 * `-o plain`. Values differ (ids, times, latencies, Redis's stream ids as `seq`); the shape must
 * not: the same field names, in the same order where a schema gives one, the same JSON types, the
 * same timestamp format, `null` where another backend has `null` (never absent), and the same
 * number of plain columns with the same kind of value in each.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DlqEntry, Job } from '../../src/core/schemas.js';
import { AGENTQ_BIN, makeCliHome, runCliOk, type CliHome } from '../support/cli.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl } from '../conformance/sqs-fixture.js';
import { TestServers } from '../support/servers.js';

const CREDS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const FORMATS = ['json', 'ndjson', 'plain'] as const;

// Fails a job whose input is not "ok" with a retryable code and usage reported (max 1 attempt: dead).
const HANDLER = `
const { execFileSync } = require('node:child_process');
const env = JSON.parse(require('node:fs').readFileSync(0, 'utf8').split('\\n')[0]);
if (env.input === 'ok') { process.stdout.write('done'); process.exit(0); }
const cli = (...a) => execFileSync(process.execPath, [${JSON.stringify(AGENTQ_BIN)}, ...a], { stdio: 'inherit' });
cli('job', 'usage', '--tokens', '10', '--cost-usd', '0.5');
cli('job', 'error', 'PROVIDER_429', 'rate limited');
process.exit(1);
`;

interface Outputs {
  /** command label -> stdout */
  out: Map<string, string>;
}

async function scenario(home: CliHome, url: string): Promise<Outputs> {
  const out = new Map<string, string>();
  const cli = async (label: string | null, args: string[], expectCode = 0) => {
    const r = await runCliOk(home, ['--url', url, ...args], { env: CREDS, expectCode, timeoutMs: 60_000 });
    if (label) out.set(label, r.stdout);
    return r.stdout;
  };
  const dead = JSON.parse(await cli('submit', ['submit', 'wf:v1', '--queue', 'shape', '--tenant', 'acme', '--max-attempts', '1', '--input', 'boom', '-o', 'json'])) as Job;
  await cli(null, ['submit', 'wf:v1', '--queue', 'shape', '--tenant', 'acme', '--idempotency-key', 'k1', '--trace-id', 't1', '--input', 'ok']);
  const cancelled = (await cli(null, ['submit', 'wf:v1', '--queue', 'shape', '--tenant', 'globex', '--deadline', '2h'])).trim();
  await cli('cancel', ['cancel', cancelled, '--reason', 'nope', '-o', 'json']);
  await cli(null, ['worker', '--queue', 'shape', '--drain', '--quiet', '--', process.execPath, '-e', HANDLER]);
  for (const f of FORMATS) {
    await cli(`inspect ${f}`, ['inspect', dead.job_id, '-o', f]);
    await cli(`list ${f}`, ['list', '--queue', 'shape', '-o', f]);
    await cli(`tail ${f}`, ['tail', '--queue', 'shape', '--events', 'all', '-o', f]);
    await cli(`stats ${f}`, ['stats', '--queue', 'shape', '-o', f]);
    await cli(`dlq list ${f}`, ['dlq', 'list', '--queue', 'shape', '-o', f]);
    await cli(`dlq show ${f}`, ['dlq', 'show', dead.job_id, '-o', f]);
    for (const action of ['redrive', 'purge']) await cli(`dlq ${action} --dry-run ${f}`, ['dlq', action, '--queue', 'shape', '--dry-run', '-o', f]);
    await cli(`dlq expire --dry-run ${f}`, ['dlq', 'expire', '--queue', 'shape', '--dry-run', '-o', f]);
    await cli(`dlq check ${f}`, ['dlq', 'check', '--queue', 'shape', '-o', f], 1);
    await cli(`cancel again ${f}`, ['cancel', cancelled, '-o', f]);
  }
  await cli('dlq redrive', ['dlq', 'redrive', '--queue', 'shape', '--yes', '-o', 'json']);
  for (const f of FORMATS) await cli(`dlq runs ${f}`, ['dlq', 'runs', '-o', f]);
  const runId = (JSON.parse(out.get('dlq runs json')!) as { items: Array<{ run_id: string }> }).items[0]!.run_id;
  for (const f of FORMATS) await cli(`dlq runs show ${f}`, ['dlq', 'runs', 'show', runId, '-o', f]);
  return { out };
}

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ANY_TIME = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/;
const ID = /^(job|run)_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A value's shape: JSON type, and for strings whether it is a timestamp (and which format) or an id. */
function shapeOf(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.map(shapeOf);
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, shapeOf(x)]);
  if (typeof v === 'string') return ISO_MS.test(v) ? 'time' : ANY_TIME.test(v) ? `other time format: ${v}` : ID.test(v) ? 'id' : 'string';
  return typeof v;
}

/** Key order inside an event's `data` is not a contract (a Lua table has none): compared sorted. */
function sortEventData(doc: unknown): unknown {
  if (Array.isArray(doc)) return doc.map(sortEventData);
  if (doc && typeof doc === 'object' && 'type' in doc && 'seq' in doc) {
    const e = doc as unknown as { data: Record<string, unknown> | null };
    return { ...e, data: e.data === null ? null : Object.fromEntries(Object.entries(e.data).sort(([a], [b]) => a.localeCompare(b))) };
  }
  return doc;
}

function shapeOfOutput(label: string, text: string): unknown {
  if (label.endsWith(' plain')) {
    // columns per line, and the kind of value in each: empty, a time, an id, a number, text
    // (`tail`'s last column is the event's `seq`, a cursor each backend spells its own way: `7`, `1796076348705-0`)
    const kind = (c: string) => (c === '' ? '' : ISO_MS.test(c) ? 'time' : ID.test(c) ? 'id' : /^-?\d+(\.\d+)?$/.test(c) ? 'number' : 'text');
    return text.split('\n').filter((l) => l !== '').map((l) => l.split('\t').map((c, i, all) => (label === 'tail plain' && i === all.length - 1 ? 'cursor' : kind(c))));
  }
  const docs = label.endsWith(' ndjson') ? text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown) : [JSON.parse(text) as unknown];
  return docs.map((d) => shapeOf(sortEventData(d)));
}

const servers = new TestServers();
let redis: RedisServer;
let cluster: RedisCluster;
let sqs: SqsServer;
const homes: CliHome[] = [];
const results = new Map<string, Outputs>();

beforeAll(async () => {
  [redis, cluster, sqs] = await Promise.all([servers.start(startRedisServer()), servers.start(startRedisCluster(3)), servers.start(startSqsServer())]);
  const home = (name: string) => {
    const h = makeCliHome(`agentq-shapes-${name}-`);
    homes.push(h);
    return h;
  };
  const sqlite = home('sqlite');
  const r = home('redis');
  const c = home('cluster');
  const s = home('sqs');
  const urls: Array<[string, CliHome, string]> = [
    ['sqlite', sqlite, sqlite.dataUrl],
    ['redis', r, `${redis.url}?prefix=shapes${process.pid}`],
    ['cluster', c, `${cluster.url}?prefix=shapes${process.pid}&shards=3`],
    ['sqs', s, sqsUrl(sqs.endpoint, `shapes${process.pid}`, join(s.dir, 'store.db'), '&autocreate=1&wait=0')],
  ];
  await Promise.all(urls.map(async ([name, h, url]) => results.set(name, await scenario(h, url))));
}, 300_000);

afterAll(async () => {
  await servers.stopAll();
  for (const h of homes) h.cleanup();
});

describe('the same output shape on every backend', () => {
  it('every command and format: SQLite, Redis, Redis Cluster and SQS agree field for field and column for column', () => {
    const base = results.get('sqlite')!.out;
    expect(base.size).toBeGreaterThan(30);
    for (const backend of ['redis', 'cluster', 'sqs']) {
      const other = results.get(backend)!.out;
      expect([...other.keys()]).toEqual([...base.keys()]);
      for (const [label, text] of base) {
        expect({ backend, label, shape: shapeOfOutput(label, other.get(label)!) }).toEqual({ backend, label, shape: shapeOfOutput(label, text) });
      }
    }
  });

  it('a job is printed with the fields in the order of the Job schema, a DLQ entry in that of DlqEntry, by every command', () => {
    const jobKeys = Object.keys(Job.shape);
    for (const [backend, { out }] of results) {
      const submitted = JSON.parse(out.get('submit')!) as Record<string, unknown>;
      expect({ backend, keys: Object.keys(submitted) }).toEqual({ backend, keys: jobKeys });
      // inspect adds the trace link (README: `trace_url`) after the job's own fields
      expect({ backend, keys: Object.keys(JSON.parse(out.get('inspect json')!) as object) }).toEqual({ backend, keys: [...jobKeys, 'trace_url'] });
      for (const r of JSON.parse(out.get('cancel')!) as Array<{ job: object }>) expect({ backend, keys: Object.keys(r.job) }).toEqual({ backend, keys: jobKeys });
      const entry = (JSON.parse(out.get('dlq list json')!) as { items: object[] }).items[0]!;
      expect({ backend, keys: Object.keys(entry) }).toEqual({ backend, keys: Object.keys(DlqEntry.shape) });
    }
  });

  it('the scenario really ran: a dead job with usage, a redrive recorded', () => {
    for (const [backend, { out }] of results) {
      const job = JSON.parse(out.get('inspect json')!) as Job;
      expect({ backend, state: job.state, code: job.dead?.error_code, usage: job.attempts[0]?.usage }).toEqual({ backend, state: 'dead', code: 'PROVIDER_429', usage: { tokens: 10, cost_usd: 0.5 } });
      expect((JSON.parse(out.get('dlq runs json')!) as { items: unknown[] }).items).toHaveLength(1);
    }
  });
});
