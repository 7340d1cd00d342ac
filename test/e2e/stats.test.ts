/**
 * `agentq stats` and `agentq dlq check` as an operator and a cron job meet
 * them: the built CLI against a store filled through the backend contract.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { ManualClock } from '../../src/core/clock.js';
import { StatsReport } from '../../src/core/stats.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';
import { readTrace, TRACE_NODE_ARGS } from '../support/trace.js';
import { parseAndValidate, sampleValue } from '../stats/prom-validate.js';

let home: CliHome;
const HOUR = 3_600_000;

/** Puts one job of `queue` into the DLQ, as a worker whose clock reads `clock` would. */
async function deadJob(backend: Backend, queue: string, tenant = 'acme'): Promise<void> {
  await backend.submit({ workflow: 'research_report:v3', queue, tenant_id: tenant, max_attempts: 1 });
  const [lease] = await backend.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.fail(lease!, { code: 'VALIDATION', message: 'input rejected', retryable: false });
}

beforeAll(async () => {
  home = makeCliHome('agentq-stats-');
  // Work done two hours ago: one success and two DLQ entries in "research", one queued job in "mail".
  const clock = new ManualClock(Date.now() - 2 * HOUR);
  const backend = await openBackend(home.dataUrl, { clock });
  await backend.submit({ workflow: 'research_report:v3', queue: 'research', tenant_id: 'acme', class: 'interactive', estimated_seconds: 120 });
  const [lease] = await backend.claim({ queue: 'research', workerId: 'w', max: 1, leaseMs: 60_000 });
  clock.advance(4000);
  await backend.complete(lease!, null);
  await deadJob(backend, 'research');
  await deadJob(backend, 'research', 'globex');
  await backend.submit({ workflow: 'mail:v1', queue: 'mail', tenant_id: 'acme', estimated_seconds: 30 });
  await backend.submit({ workflow: 'mail:v1', queue: 'research', tenant_id: 'globex', estimated_seconds: 45 });
  await backend.close();
}, 60_000);
afterAll(() => home?.cleanup());

describe('agentq stats', () => {
  it('prints one JSON report per queue, in the documented shape', async () => {
    const r = await runCliOk(home, ['stats', '-o', 'json']);
    const reports = z.array(StatsReport).parse(JSON.parse(r.stdout));
    expect(reports.map((x) => x.queue).sort()).toEqual(['mail', 'research']);
    const research = reports.find((x) => x.queue === 'research')!;
    expect(research).toMatchObject({ queued: 1, dlq_size: 2, backlog_seconds: 45, totals: { submitted: 4, succeeded: 1, dead: 2 } });
    expect(research.dlq_rate).toBeCloseTo(2 / 3);
    expect(research.execution?.count).toBe(3);
    expect(research.oldest_queued_age_ms).toBeGreaterThanOrEqual(2 * HOUR - 60_000);
  });

  it('narrows to one queue and breaks it down by tenant in plain lines', async () => {
    const r = await runCliOk(home, ['stats', '--queue', 'research', '--by', 'tenant', '-o', 'plain']);
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    // QUEUE TENANT QUEUED SCHED RUNNING DLQ OLDEST(s) BACKLOG(s)
    expect(rows.map((c) => [c[0], c[1], c[2], c[5], c[7]])).toEqual([
      ['research', 'globex', '1', '1', '45'],
      ['research', 'acme', '0', '1', '0'],
    ]);
  });

  it('a queue the store never saw: zeros, and a note saying so (not a complaint about the backend)', async () => {
    const r = await runCliOk(home, ['stats', '--queue', 'reserch', '--by', 'tenant', '-o', 'plain']);
    expect(r.stderr).toContain('queue reserch has never had a job in this store, so its figures are all zero (queues here: ');
    expect(r.stderr).not.toContain('does not keep figures');
  });

  it('draws a table without escape bytes when stdout is not a terminal', async () => {
    const r = await runCliOk(home, ['stats', '-o', 'table']);
    expect(r.stdout).toContain('WAIT P95');
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
  });

  it('writes the Prometheus text format with -o prometheus', async () => {
    const r = await runCliOk(home, ['stats', '-o', 'prometheus']);
    const fams = parseAndValidate(r.stdout);
    expect(sampleValue(fams, 'agentq_dlq_size', { queue: 'research' })).toBe(2);
    expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'mail', class: 'batch', state: 'queued' })).toBe(1);
    expect(sampleValue(fams, 'agentq_backlog_seconds', { queue: 'research', class: 'batch' })).toBe(45);
  });

  it('refuses -o prometheus on other commands, and --watch without a terminal, as usage errors', async () => {
    expect((await runCli(home, ['list', '-o', 'prometheus'])).code).toBe(2);
    const w = await runCli(home, ['stats', '--watch']);
    expect(w.code).toBe(2);
    expect(w.stderr).toContain('terminal');
  });
});

describe('agentq dlq check', () => {
  it('exits 0 within the limits', async () => {
    const r = await runCliOk(home, ['dlq', 'check', '--queue', 'research', '--max-size', '2', '--max-age', '3h', '--max-rate', '70%']);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('ok: queue research within limits\n');
  });

  it('exits 1 with a one-line reason when the DLQ is too large', async () => {
    const r = await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-size', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual(['error: queue research: DLQ holds 2 jobs, more than --max-size 1']);
  });

  it('exits 1 when an entry is older than --max-age', async () => {
    const r = await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-age', '1h']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: queue research: a DLQ entry is (1h59m|2h(\d+[ms])?) old, older than --max-age 1h\n$/);
  });

  it('exits 1 when the DLQ rate is over --max-rate', async () => {
    const r = await runCli(home, ['dlq', 'check', '--max-rate', '0.5']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('queue research: DLQ rate is 66.67%, above --max-rate 50.00%');
  });

  it('-o json prints the result on stdout with the same exit code: ok, the limits, per-queue figures, the reasons', async () => {
    const fail = await runCli(home, ['dlq', 'check', '--max-size', '1', '--max-rate', '90%', '-o', 'json']);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toBe('error: queue research: DLQ holds 2 jobs, more than --max-size 1\n');
    const doc = JSON.parse(fail.stdout) as { ok: boolean; limits: unknown; queues: Array<Record<string, unknown>>; reasons: string[] };
    expect(doc.ok).toBe(false);
    expect(doc.limits).toEqual({ max_size: 1, max_age_ms: null, max_rate: 0.9 });
    expect(doc.reasons).toEqual(['queue research: DLQ holds 2 jobs, more than --max-size 1']);
    expect(doc.queues.find((q) => q.queue === 'research')).toMatchObject({ ok: false, dlq_size: 2, aged_entry_age_ms: null, reason: doc.reasons[0] });
    expect(doc.queues.find((q) => q.queue === 'mail')).toEqual({ queue: 'mail', ok: true, dlq_size: 0, dlq_rate: null, aged_entry_age_ms: null, reason: null });
    const pass = await runCliOk(home, ['dlq', 'check', '--queue', 'research', '--max-size', '2', '--max-age', '3h', '--json']);
    expect(JSON.parse(pass.stdout)).toMatchObject({ ok: true, limits: { max_size: 2, max_age_ms: 3 * HOUR, max_rate: null }, reasons: [] });
  });

  it('with no limit, fails on any entry; an empty DLQ passes', async () => {
    expect((await runCli(home, ['dlq', 'check', '--queue', 'research'])).code).toBe(1);
    expect((await runCli(home, ['dlq', 'check', '--queue', 'mail'])).code).toBe(0);
  });

  it('a queue the store has never seen fails the check (exit 5, naming the queues there): a typo must not pass for healthy', async () => {
    const r = await runCli(home, ['dlq', 'check', '--queue', 'reseach', '--max-size', '0']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^error: queue reseach is not known to this store: nothing was ever submitted to it \(queues here: .*research/);
  });

  it('rejects a malformed limit as a usage error', async () => {
    const r = await runCli(home, ['dlq', 'check', '--max-rate', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-rate');
  });
});

describe('start-up hygiene of the operability commands', () => {
  it.each([
    ['stats', ['stats', '-o', 'json'], 0],
    ['stats-prometheus', ['stats', '-o', 'prometheus'], 0],
    ['dlq-check', ['dlq', 'check', '--max-size', '5'], 0],
    ['completion', ['completion', 'zsh'], 0],
    ['complete', ['__complete', 'queues'], 0],
  ] as const)('agentq %s never loads ink or react', async (name, args, code) => {
    const file = join(home.dir, `trace-${name}.txt`);
    await runCliOk(home, [...args], {
      expectCode: code,
      nodeArgs: TRACE_NODE_ARGS,
      env: { AGENTQ_TRACE_IMPORTS: file },
    });
    const urls = readTrace(file);
    expect(urls.some((u) => u.includes('/node_modules/commander/'))).toBe(true);
    expect(urls.filter((u) => /\/node_modules\/(ink|react|react-reconciler|yoga-layout)\//.test(u))).toEqual([]);
  });
});
