/**
 * `agentq submit --file F` / `--file -` through the built CLI, on the SQLite default, on a
 * spawned redis-server and on a spawned fauxqs (SQS with its SQLite store): every line checked before any is submitted (a bad file submits nothing),
 * the flags as defaults, stdin, idempotent re-runs, and a store failing half way (which lines were
 * stored, which not, exit 75).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Job } from '../../src/core/schemas.js';
import { makeCliHome, parseNdjson, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { sqsUrl } from '../conformance/sqs-fixture.js';

const Record = z.object({
  line: z.number(),
  job_id: z.string(),
  created: z.boolean(),
  state: z.string(),
  queue: z.string(),
  tenant_id: z.string(),
  workflow: z.string(),
  idempotency_key: z.string().nullable(),
}).strict();

let home: CliHome;
beforeAll(() => {
  home = makeCliHome();
});
afterAll(() => home?.cleanup());

function file(name: string, lines: Array<string | object>): string {
  const path = join(home.dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

async function jobsIn(queue: string, url?: string, env?: Record<string, string>): Promise<Job[]> {
  const r = await runCliOk(home, ['list', '--queue', queue, '--all', '-o', 'ndjson', ...(url ? ['--url', url] : [])], { env });
  return parseNdjson(r.stdout).map((j) => Job.parse(j));
}

describe('submit --file on SQLite', () => {
  it('submits every line in order with the flags as defaults for fields a line leaves out; -o json is one array', async () => {
    const f = file('defaults.ndjson', [
      { workflow: 'report:v2', input: 'one' },
      '',
      { workflow: 'report:v2', tenant_id: 'globex', max_attempts: 5, deadline_at: null, input: 'two' },
      '   ',
      { workflow: 'summarize:v1', queue: 'defaults-other', budget: { tokens: 100 }, allowed_tools: ['web_search'] },
    ]);
    const r = await runCliOk(home, ['submit', '--file', f, '--queue', 'defaults', '--tenant', 'acme', '--deadline', '2h', '--class', 'interactive', '--budget-usd', '3', '-o', 'json']);
    const records = z.array(Record).parse(JSON.parse(r.stdout));
    expect(records.map((x) => [x.line, x.created, x.queue, x.tenant_id, x.workflow])).toEqual([
      [1, true, 'defaults', 'acme', 'report:v2'],
      [3, true, 'defaults', 'globex', 'report:v2'],
      [5, true, 'defaults-other', 'acme', 'summarize:v1'],
    ]);
    expect(r.stderr).toContain(`3 jobs from ${f}: 3 created`);
    const [one, two] = await jobsIn('defaults');
    const byId = new Map([one!, two!].map((j) => [j.job_id, j]));
    const first = byId.get(records[0]!.job_id)!;
    expect(first).toMatchObject({ input: 'one', class: 'interactive', max_attempts: 3, budget: { tokens: null, cost_usd: 3 } });
    expect(Date.parse(first.deadline_at!) - Date.parse(first.created_at)).toBeGreaterThan(7_000_000);
    // a field given in the line wins, null included
    expect(byId.get(records[1]!.job_id)).toMatchObject({ input: 'two', tenant_id: 'globex', max_attempts: 5, deadline_at: null });
    const [other] = await jobsIn('defaults-other');
    expect(other).toMatchObject({ job_id: records[2]!.job_id, budget: { tokens: 100, cost_usd: null }, allowed_tools: ['web_search'] });
  });

  it('--file - reads the jobs from stdin; plain output is LINE, JOB, RESULT, QUEUE, WORKFLOW', async () => {
    const input = `${JSON.stringify({ workflow: 'a:v1' })}\r\n${JSON.stringify({ workflow: 'b:v1' })}`;
    const r = await runCliOk(home, ['submit', '--file', '-', '--queue', 'stdin'], { input });
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.map((c) => [c[0], c[2], c[3], c[4]])).toEqual([['1', 'created', 'stdin', 'a:v1'], ['2', 'created', 'stdin', 'b:v1']]);
    expect(new Set((await jobsIn('stdin')).map((j) => j.job_id))).toEqual(new Set(rows.map((c) => c[1])));
    expect(r.stderr).toContain('2 jobs from stdin: 2 created');
  });

  it('a file with invalid lines submits nothing: exit 2 with `line N: rule` for each, escapes visible', async () => {
    const f = file('invalid.ndjson', [
      { workflow: 'ok:v1', input: 'fine' },
      'not json',
      { workflow: 'ok:v1', tenant: 'acme' },
      { workflow: '\u001b]0;owned\u0007' },
      { workflow: 'ok:v1', input: 'x'.repeat(64 * 1024 + 1) },
      { workflow: 'ok:v1', idempotency_key: 'k', input: 'a' },
      { workflow: 'ok:v1', idempotency_key: 'k', input: 'b' },
      { workflow: 'ok:v1' },
    ]);
    const r = await runCli(home, ['submit', '--file', f, '--queue', 'invalid']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toContain(`line 2: not JSON: Unexpected token 'o', "not json" is not valid JSON`);
    expect(lines.some((l) => l.startsWith('line 3: unknown field "tenant" (did you mean tenant_id?)'))).toBe(true);
    expect(lines.some((l) => l.startsWith('line 4: workflow "\\u001b]0;owned\\u0007": workflow must look like name:vN'))).toBe(true);
    expect(lines).toContain('line 5: input is 65537 bytes; inline input is limited to 65536 bytes (64 KiB): store the document elsewhere and give input_ref with input_sha256');
    expect(lines.some((l) => l.startsWith('line 7: idempotency_key "k" was given on line 6 with other fields'))).toBe(true);
    expect(lines).toContain(`error: 5 lines of ${f} are invalid (the first: line 2); nothing was submitted`);
    expect(lines).toContain('hint: Mend the lines named above and submit the file again.');
    expect(r.stderrBytes.includes(0x1b)).toBe(false);
    expect(await jobsIn('invalid')).toEqual([]);
  });

  it('an empty file (no line at all) says it is empty, not that it holds only blank lines', async () => {
    const f = join(home.dir, 'zero.ndjson');
    writeFileSync(f, '');
    const table = await runCliOk(home, ['submit', '--file', f, '--queue', 'blank', '-o', 'table']);
    expect(table.stdout).toBe('');
    expect(table.stderr.trim().split('\n')).toEqual([`${f} is empty; nothing was submitted`]);
  });

  it('a file of blank lines submits nothing and says so once: the table prints nothing, stderr one line; json is []', async () => {
    const f = file('blank.ndjson', ['', '  ']);
    const table = await runCliOk(home, ['submit', '--file', f, '--queue', 'blank', '-o', 'table']);
    expect(table.stdout).toBe('');
    expect(table.stderr.trim().split('\n')).toEqual([`${f} has no jobs (only blank lines); nothing was submitted`]);
    const json = await runCliOk(home, ['submit', '--file', f, '--queue', 'blank', '-o', 'json']);
    expect(JSON.parse(json.stdout)).toEqual([]);
    expect(json.stderr).toBe('');
  });

  it('re-running a file whose lines carry idempotency keys returns the same jobs, created: false (ndjson, one record a job)', async () => {
    const f = file('keyed.ndjson', [1, 2, 3].map((i) => ({ workflow: 'k:v1', idempotency_key: `order-${i}`, input: `${i}` })));
    const first = parseNdjson((await runCliOk(home, ['submit', '--file', f, '--queue', 'keyed', '-o', 'ndjson'])).stdout).map((x) => Record.parse(x));
    const again = await runCliOk(home, ['submit', '--file', f, '--queue', 'keyed', '-o', 'ndjson']);
    const second = parseNdjson(again.stdout).map((x) => Record.parse(x));
    expect(first.map((x) => x.created)).toEqual([true, true, true]);
    expect(second.map((x) => [x.line, x.job_id, x.created])).toEqual(first.map((x) => [x.line, x.job_id, false]));
    expect(again.stderr).toContain('3 jobs from');
    expect(again.stderr).toContain('0 created, 3 already there (idempotency key)');
    expect(await jobsIn('keyed')).toHaveLength(3);
  });

  it('a line refused by the store half way (a key already used with another body) stops the run: which lines were stored, exit 2', async () => {
    await runCliOk(home, ['submit', 'x:v1', '--queue', 'halfway', '--idempotency-key', 'taken', '--input', 'original']);
    const f = file('halfway.ndjson', [{ workflow: 'x:v1', input: '1' }, { workflow: 'x:v1', input: '2' }, { workflow: 'x:v1', idempotency_key: 'taken', input: 'other' }]);
    const r = await runCli(home, ['submit', '--file', f, '--queue', 'halfway', '-o', 'json']);
    expect(r.code).toBe(2);
    const stored = z.array(Record).parse(JSON.parse(r.stdout));
    expect(stored.map((x) => x.line)).toEqual([1, 2]);
    expect(r.stderr).toContain('submitted: lines 1-2 (2 jobs)');
    expect(r.stderr).toContain('not submitted: line 3 (1 job)');
    expect(r.stderr).toMatch(/error: submitting .*halfway\.ndjson stopped at line 3: idempotency key "taken" was already used/);
    expect(r.stderr).toContain('Lines without an idempotency_key would be submitted twice');
    expect((await jobsIn('halfway')).length).toBe(3);
  });

  it.each<[string[], RegExp]>([
    [['submit', 'x:v1', '--file', 'jobs.ndjson'], /error: give WORKFLOW or --file, not both \(got "x:v1"\)/],
    [['submit', '--file', 'jobs.ndjson', '--idempotency-key', 'k'], /error: --idempotency-key is one job's: with --file, give idempotency_key on each line/],
    [['submit', '--file', 'jobs.ndjson', '--input', 'x'], /error: --input is one job's/],
    [['submit', '--file', 'jobs.ndjson', '--wait'], /error: --wait follows one job: it does not combine with --file/],
    [['submit', '--file', 'no-such.ndjson'], /error: --file no-such.ndjson cannot be read: ENOENT/],
    [['submit'], /error: missing WORKFLOW: give the workflow of the job/],
  ])('usage errors exit 2 before reading anything: %j', async (args, message) => {
    file('jobs.ndjson', [{ workflow: 'x:v1' }]);
    const r = await runCli(home, [...args, '--queue', 'usage']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(await jobsIn('usage')).toEqual([]);
  });

  it('caps the input: more than 100,000 jobs, or a line over 1 MiB, is refused and nothing is submitted', async () => {
    const many = Array.from({ length: 100_001 }, () => '{"workflow":"x:v1"}').join('\n');
    const r = await runCli(home, ['submit', '--file', '-', '--queue', 'capped'], { input: many });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: stdin has more than 100000 jobs (non-blank lines); at most 100000 a file; nothing was submitted');
    const long = file('long.ndjson', [{ workflow: 'x:v1' }, { workflow: 'x:v1', input: 'x'.repeat(1024 * 1024) }]);
    const r2 = await runCli(home, ['submit', '--file', long, '--queue', 'capped']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('line 2: is over 1048576 bytes (1 MiB)');
    expect(await jobsIn('capped')).toEqual([]);
  }, 60_000);
});

describe('submit --file on Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('submits a file (auto-pipelined) and an idempotent re-run finds the same jobs', async () => {
    const url = `${server.url}?prefix=file${process.pid}`;
    const f = file('redis.ndjson', Array.from({ length: 500 }, (_v, i) => ({ workflow: 'r:v1', idempotency_key: `r-${i}`, tenant_id: `t${i % 3}` })));
    const first = parseNdjson((await runCliOk(home, ['submit', '--url', url, '--file', f, '--queue', 'bulk', '-o', 'ndjson'])).stdout).map((x) => Record.parse(x));
    expect(first.map((x) => x.line)).toEqual(Array.from({ length: 500 }, (_v, i) => i + 1));
    expect(first.every((x) => x.created)).toBe(true);
    const again = parseNdjson((await runCliOk(home, ['submit', '--url', url, '--file', f, '--queue', 'bulk', '-o', 'ndjson'])).stdout).map((x) => Record.parse(x));
    expect(again.map((x) => [x.job_id, x.created])).toEqual(first.map((x) => [x.job_id, false]));
    expect(await jobsIn('bulk', url)).toHaveLength(500);
  });

  it('Redis full half way: exit 75, the stored lines printed and named, the rest named as not submitted; re-running the file completes it', async () => {
    const url = `${server.url}?prefix=full${process.pid}`;
    // 300 jobs of 8 KB with 1 MB of room: the first submit scripts (64 jobs each) fit, a later one is refused.
    const f = file('full.ndjson', Array.from({ length: 300 }, (_v, i) => ({ workflow: 'f:v1', idempotency_key: `f-${i}`, input: `${'x'.repeat(8000)}${i}` })));
    const used = Number(/used_memory:(\d+)/.exec(server.cli('INFO', 'memory'))![1]);
    server.cli('CONFIG', 'SET', 'maxmemory', String(used + 1024 * 1024));
    let r;
    try {
      r = await runCli(home, ['submit', '--url', url, '--file', f, '--queue', 'full', '-o', 'ndjson']);
    } finally {
      server.cli('CONFIG', 'SET', 'maxmemory', '0');
    }
    expect(r.code).toBe(75);
    const stored = parseNdjson(r.stdout).map((x) => Record.parse(x));
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.length).toBeLessThan(300);
    const n = stored.length;
    expect(stored.map((x) => x.line)).toEqual(Array.from({ length: n }, (_v, i) => i + 1));
    expect(r.stderr).toContain(`submitted: lines 1-${n} (${n} jobs)`);
    expect(r.stderr).toContain(`not submitted: lines ${n + 1}-300 (${300 - n} jobs)`);
    expect(r.stderr).toMatch(/is full and refused the write/);
    expect(r.stderr).toContain('hint: Every line has an idempotency_key, so submitting the same file again is the safe retry');
    expect(new Set((await jobsIn('full', url)).map((j) => j.job_id))).toEqual(new Set(stored.map((x) => x.job_id)));
    const rerun = parseNdjson((await runCliOk(home, ['submit', '--url', url, '--file', f, '--queue', 'full', '-o', 'ndjson'])).stdout).map((x) => Record.parse(x));
    expect(rerun.filter((x) => !x.created).map((x) => x.job_id)).toEqual(stored.map((x) => x.job_id));
    expect(await jobsIn('full', url)).toHaveLength(300);
  });

  it('Redis down: exit 75, nothing submitted, every line named as not submitted', async () => {
    const url = `${server.url}?prefix=down${process.pid}`;
    const f = file('down.ndjson', [{ workflow: 'd:v1' }, { workflow: 'd:v1' }]);
    await server.kill();
    let r;
    try {
      r = await runCli(home, ['submit', '--url', url, '--file', f, '--queue', 'down', '-o', 'json']);
    } finally {
      await server.start();
    }
    expect(r.code).toBe(75);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toContain('submitted: none');
    expect(r.stderr).toContain('not submitted: lines 1-2 (2 jobs)');
    expect(r.stderr).toContain('hint: Nothing was stored: submit the file again once the cause is mended.');
    expect(await jobsIn('down', url)).toEqual([]);
  }, 60_000);
});

describe('submit --file on SQS', () => {
  const creds = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
  let server: SqsServer;
  beforeAll(async () => {
    server = await startSqsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('submits a file (jobs in the store, messages sent) and an idempotent re-run finds the same jobs, created: false', async () => {
    const url = sqsUrl(server.endpoint, `file${process.pid}`, join(home.dir, 'sqs-store.db'), '&autocreate=1&wait=0');
    const f = file('sqs.ndjson', [
      ...Array.from({ length: 40 }, (_v, i) => ({ workflow: 's:v1', idempotency_key: `s-${i}`, tenant_id: `t${i % 3}`, input: `${i}` })),
      '',
      { workflow: 's:v2', idempotency_key: 's-other', queue: 'sqs-other', input: 'other' },
    ]);
    const run = (): Promise<z.infer<typeof Record>[]> =>
      runCliOk(home, ['submit', '--url', url, '--file', f, '--queue', 'sqs-bulk', '-o', 'ndjson'], { env: creds }).then((r) => parseNdjson(r.stdout).map((x) => Record.parse(x)));
    const first = await run();
    expect(first.map((x) => x.line)).toEqual([...Array.from({ length: 40 }, (_v, i) => i + 1), 42]);
    expect(first.every((x) => x.created && x.state === 'queued')).toBe(true);
    expect(first.at(-1)).toMatchObject({ queue: 'sqs-other', workflow: 's:v2' });
    const again = await run();
    expect(again.map((x) => [x.line, x.job_id, x.created])).toEqual(first.map((x) => [x.line, x.job_id, false]));
    const stored = await jobsIn('sqs-bulk', url, creds);
    expect(new Set(stored.map((j) => j.job_id))).toEqual(new Set(first.slice(0, 40).map((x) => x.job_id)));
    expect(stored.find((j) => j.idempotency_key === 's-7')).toMatchObject({ input: '7', tenant_id: 't1' });
    expect((await jobsIn('sqs-other', url, creds)).map((j) => j.job_id)).toEqual([first.at(-1)!.job_id]);
    // the messages were sent: a worker claims every job of the file from the queue
    const drained = await runCliOk(home, ['worker', '--url', url, '--queue', 'sqs-other', '--drain', '--', 'true'], { env: creds });
    expect(drained.code).toBe(0);
    expect((await jobsIn('sqs-other', url, creds))[0]!.state).toBe('succeeded');
  }, 60_000);

  it('a line SQS cannot take (run_at over 13 days ahead) is refused with the others checked: exit 2, nothing submitted', async () => {
    const url = sqsUrl(server.endpoint, `ahead${process.pid}`, join(home.dir, 'sqs-ahead.db'), '&autocreate=1&wait=0');
    const far = new Date(Date.now() + 20 * 24 * 3600_000).toISOString();
    const f = file('sqs-ahead.ndjson', [{ workflow: 'a:v1' }, { workflow: 'a:v1', run_at: far }, { workflow: 'a:v1' }]);
    const r = await runCli(home, ['submit', '--url', url, '--file', f, '--queue', 'sqs-ahead', '-o', 'json'], { env: creds });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('line 2: run_at must be at most 13 days ahead on the SQS backend');
    expect(r.stderr).toContain(`error: 1 line of ${f} is invalid (the first: line 2); nothing was submitted`);
    expect(await jobsIn('sqs-ahead', url, creds)).toEqual([]);
  }, 60_000);

  it('SQS unreachable: the jobs are stored (exit 0) and stderr says how many wait in the outbox to be published, and why', async () => {
    const url = sqsUrl(server.endpoint, `unpub${process.pid}`, join(home.dir, 'sqs-unpub.db'), '&autocreate=1&wait=0');
    const f = file('sqs-unpub.ndjson', [{ workflow: 'u:v1', idempotency_key: 'u-1' }, { workflow: 'u:v1', idempotency_key: 'u-2' }, { workflow: 'u:v1', idempotency_key: 'u-3' }]);
    // (the queue is created first: submitting with the broker down must not be what creates it)
    await runCliOk(home, ['submit', '--url', url, '--file', f, '--queue', 'sqs-unpub', '-o', 'ndjson'], { env: creds });
    const g = file('sqs-unpub2.ndjson', [{ workflow: 'u:v1', idempotency_key: 'u-1' }, { workflow: 'u:v1', idempotency_key: 'u-4' }, { workflow: 'u:v1', idempotency_key: 'u-5' }]);
    const port = server.port;
    await server.stop();
    let r;
    try {
      r = await runCli(home, ['submit', '--url', url, '--file', g, '--queue', 'sqs-unpub', '-o', 'ndjson'], { env: creds });
    } finally {
      server = await startSqsServer({ port });
    }
    expect(r.code).toBe(0);
    expect(parseNdjson(r.stdout).map((x) => Record.parse(x)).map((x) => [x.line, x.created])).toEqual([[1, false], [2, true], [3, true]]);
    expect(r.stderr).toContain(`3 jobs from ${g}: 2 created, 1 already there (idempotency key)`);
    expect(r.stderr).toMatch(/2 of the jobs \(lines 2-3\) are stored but not yet published \(.+\); the outbox relay \(workers, `agentq outbox relay`\) publishes them once that is mended/);
    expect(await jobsIn('sqs-unpub', url, creds)).toHaveLength(5);
  }, 60_000);
});
