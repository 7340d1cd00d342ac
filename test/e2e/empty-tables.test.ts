/**
 * Every listing that finds nothing, through the built CLI. Regression: `stats --by code -o table`
 * with no failures, `dlq runs`, `tail` and others printed their header alone (some with a line
 * after it, some without); a table or plain listing with no rows now prints nothing on stdout and
 * one line on stderr, as kubectl prints "No resources found in <ns> namespace." (exit 0), while
 * json and ndjson stay machine-shaped ([] / nothing) without the line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { makeCliHome, runCliOk, type CliHome } from '../support/cli.js';

let home: CliHome;
let runId: string;

beforeAll(async () => {
  home = makeCliHome('agentq-e2e-empty-');
  const backend = await openBackend(home.dataUrl);
  // One queued job in `default` (the store exists, nothing of it failed); one dead job in `gone`,
  // purged by a run whose ledger then has no failed item.
  await backend.submit({ workflow: 'w:v1', queue: 'default', tenant_id: 'acme' });
  await backend.close();
  const dead = await openBackend(home.dataUrl);
  await dead.submit({ workflow: 'w:v1', queue: 'gone', tenant_id: 'acme', max_attempts: 1 });
  const [lease] = await dead.claim({ queue: 'gone', workerId: 'w', max: 1, leaseMs: 60_000 });
  await dead.fail(lease!, { code: 'VALIDATION', message: 'bad', retryable: false });
  await dead.close();
  const purge = await runCliOk(home, ['dlq', 'purge', '--queue', 'gone', '--yes', '-o', 'json']);
  runId = (JSON.parse(purge.stdout) as { run_id: string }).run_id;
});

afterAll(() => home?.cleanup());

interface Case {
  args: () => string[];
  /** The table's header, which must not be printed alone. */
  header: RegExp;
  line: string;
}

const CASES: Record<string, Case> = {
  list: { args: () => ['list', '--state', 'dead'], header: /^JOB\s+QUEUE/m, line: 'No jobs match this selection.' },
  'dlq list': { args: () => ['dlq', 'list', '--queue', 'default'], header: /^JOB\s+TENANT/m, line: 'The DLQ has no entries matching this selection.' },
  'dlq summary': { args: () => ['dlq', 'summary', '--queue', 'default'], header: /^ERROR CODE\s+COUNT/m, line: 'The DLQ has no entries matching this selection.' },
  'dlq runs': { args: () => ['dlq', 'runs', '--queue', 'default'], header: /^RUN\s+ACTION/m, line: 'No bulk-action runs found.' },
  'dlq runs show --status failed': { args: () => ['dlq', 'runs', 'show', runId, '--status', 'failed'], header: /^JOB\s+STATUS/im, line: 'No ledger items match this selection.' },
  'stats --by code': { args: () => ['stats', '--by', 'code', '--queue', 'default'], header: /^QUEUE\s+CODE/m, line: 'No failed attempts yet.' },
  'tail --events 0': { args: () => ['tail', '--queue', 'default', '--events', '0'], header: /^AT\s+TYPE/m, line: 'No events match this selection.' },
  'dlq redrive --dry-run': { args: () => ['dlq', 'redrive', '--queue', 'default', '--dry-run'], header: /^JOB\s+VERDICT/m, line: 'The DLQ has no entries matching this selection.' },
};

describe('a listing with no rows', () => {
  it.each(Object.keys(CASES))('%s: -o table and -o plain print no header alone, and say it in one line on stderr (exit 0)', async (name) => {
    const c = CASES[name]!;
    for (const format of ['table', 'wide', 'plain']) {
      const r = await runCliOk(home, [...c.args(), '-o', format]);
      expect(r.stdout).not.toMatch(c.header);
      expect(r.stderr.split('\n')).toContain(c.line);
    }
    // The case can fail: the header is what a listing with rows prints.
  });

  it.each(Object.keys(CASES))('%s: -o json and -o ndjson stay machine-shaped, without the line', async (name) => {
    const c = CASES[name]!;
    const json = await runCliOk(home, [...c.args(), '-o', 'json']);
    expect(() => JSON.parse(json.stdout) as unknown).not.toThrow();
    const ndjson = await runCliOk(home, [...c.args(), '-o', 'ndjson']);
    for (const r of [json, ndjson]) expect(r.stderr).not.toContain(c.line);
  });

  it('the header does come with rows (the check above can fail)', async () => {
    expect((await runCliOk(home, ['list', '-o', 'table'])).stdout).toMatch(CASES.list!.header);
    expect((await runCliOk(home, ['dlq', 'runs', '-o', 'table'])).stdout).toMatch(CASES['dlq runs']!.header);
  });

  it('list past its last page (--cursor of the last job) says there are no more jobs, not that none match', async () => {
    const jobs = JSON.parse((await runCliOk(home, ['list', '-o', 'json'])).stdout) as Array<{ job_id: string }>;
    const r = await runCliOk(home, ['list', '--cursor', jobs[jobs.length - 1]!.job_id, '-o', 'table']);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual(['No more jobs match this selection.']);
  });

  it('context list with no contexts says where to add them, in place of the header', async () => {
    const r = await runCliOk(home, ['context', 'list', '-o', 'table']);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^no contexts defined; add them to /m);
  });
});
