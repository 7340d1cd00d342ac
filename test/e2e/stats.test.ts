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

  it('-o prometheus of a queue the store never saw says so on stderr too (stdout stays the exposition)', async () => {
    const r = await runCliOk(home, ['stats', '--queue', 'reserch', '-o', 'prometheus']);
    expect(sampleValue(parseAndValidate(r.stdout), 'agentq_dlq_size', { queue: 'reserch' })).toBe(0);
    expect(r.stderr).toContain('queue reserch has never had a job in this store, so its figures are all zero (queues here: ');
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

describe('agentq stats: failed attempts by error code', () => {
  let codes: CliHome;
  const EVIL = 'EVIL"\n\x1b[2J';
  beforeAll(async () => {
    codes = makeCliHome('agentq-stats-codes-');
    const clock = new ManualClock(Date.now() - HOUR);
    const backend = await openBackend(codes.dataUrl, { clock });
    const claim = async (leaseMs = 60_000) => (await backend.claim({ queue: 'chat', workerId: 'w', max: 1, leaseMs }))[0]!;
    // Rate-limited twice (retried both times), then done: no DLQ entry, yet the 429s must show.
    await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 3 });
    for (let i = 0; i < 2; i++) {
      const out = await backend.fail(await claim(), { code: 'PROVIDER_429', message: 'slow down', retryable: true });
      if (out.kind === 'retry') clock.set(out.runAt);
    }
    await backend.complete(await claim(), null);
    // A worker that died (its lease ran out, reaped by the next claim), and a code a handler made up.
    await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 1 });
    await claim(5_000);
    clock.advance(6_000);
    await backend.claim({ queue: 'chat', workerId: 'w', max: 1, leaseMs: 1000 });
    await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 1 });
    await backend.fail(await claim(), { code: EVIL, message: 'x', retryable: false });
    await backend.submit({ workflow: 'chat:v1', queue: 'quiet' });
    await backend.close();
  }, 60_000);
  afterAll(() => codes?.cleanup());

  it('-o json lists them per queue, largest first; a queue without failures has an empty list', async () => {
    const reports = z.array(StatsReport).parse(JSON.parse((await runCliOk(codes, ['stats', '-o', 'json'])).stdout));
    expect(reports.find((r) => r.queue === 'chat')!.failures_by_code).toEqual([
      { code: 'PROVIDER_429', count: 2 },
      { code: EVIL, count: 1 },
      { code: 'LEASE_EXPIRED', count: 1 },
    ]);
    expect(reports.find((r) => r.queue === 'quiet')!.failures_by_code).toEqual([]);
  });

  it('--by code lists them in plain lines; the table shows the top codes under the queues, plain output does not', async () => {
    const plain = await runCliOk(codes, ['stats', '--by', 'code', '-q', 'chat', '-o', 'plain']);
    // QUEUE CODE FAILURES SHARE
    expect(plain.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 3))[0]).toEqual(['chat', 'PROVIDER_429', '2']);
    const table = await runCliOk(codes, ['stats', '-o', 'table']);
    expect(table.stdout).toContain('FAILURES BY CODE');
    expect(table.stdout).toMatch(/chat +PROVIDER_429 +2 +50\.0%/);
    expect(hasEscapeByte(table.stdoutBytes)).toBe(false);
    expect((await runCliOk(codes, ['stats', '-o', 'plain'])).stdout).not.toContain('PROVIDER_429');
    const none = await runCliOk(codes, ['stats', '--by', 'code', '-q', 'quiet']);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('No failed attempts yet.');
  });

  it('exports agentq_attempt_failures_total{queue,code}, a hostile code sanitised', async () => {
    const r = await runCliOk(codes, ['stats', '-o', 'prometheus']);
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
    const fams = parseAndValidate(r.stdout);
    expect(sampleValue(fams, 'agentq_attempt_failures_total', { queue: 'chat', code: 'PROVIDER_429' })).toBe(2);
    expect(sampleValue(fams, 'agentq_attempt_failures_total', { queue: 'chat', code: 'LEASE_EXPIRED' })).toBe(1);
    expect(fams.find((f) => f.name === 'agentq_attempt_failures_total')!.type).toBe('COUNTER');
  });
});

describe('agentq stats: usage and cost per job', () => {
  let spend: CliHome;
  beforeAll(async () => {
    spend = makeCliHome('agentq-stats-usage-');
    const clock = new ManualClock(Date.now() - HOUR);
    const backend = await openBackend(spend.dataUrl, { clock });
    const claim = async () => (await backend.claim({ queue: 'chat', workerId: 'w', max: 1, leaseMs: 60_000 }))[0]!;
    // Job 1: a rate-limited attempt that spent, then a second that spent and succeeded.
    await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 3 });
    const first = await claim();
    await backend.addUsage(first, { tokens: 2000, cost_usd: 0.03 });
    const out = await backend.fail(first, { code: 'PROVIDER_429', message: 'slow down', retryable: true });
    if (out.kind === 'retry') clock.set(out.runAt);
    const second = await claim();
    await backend.addUsage(second, { tokens: 1000, cost_usd: 0.015 });
    await backend.complete(second, null);
    // Job 2: spent and died.
    await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 1 });
    const third = await claim();
    await backend.addUsage(third, { tokens: 1000, cost_usd: 0.015 });
    await backend.fail(third, { code: 'VALIDATION', message: 'bad', retryable: false });
    // A queue whose handlers report nothing, and one with nothing ended.
    await backend.submit({ workflow: 'chat:v1', queue: 'quiet' });
    await backend.complete((await backend.claim({ queue: 'quiet', workerId: 'w', max: 1, leaseMs: 60_000 }))[0]!, null);
    await backend.submit({ workflow: 'chat:v1', queue: 'idle' });
    await backend.close();
  }, 60_000);
  afterAll(() => spend?.cleanup());

  it('-o json has the totals and cost per job that ended (both ends count: a retried attempt\'s spend is the job\'s)', async () => {
    const reports = z.array(StatsReport).parse(JSON.parse((await runCliOk(spend, ['stats', '-o', 'json'])).stdout));
    const chat = reports.find((r) => r.queue === 'chat')!;
    expect(chat.usage!.tokens).toBe(4000);
    expect(chat.usage!.cost_usd).toBeCloseTo(0.06, 12);
    expect(chat.cost_per_job_usd).toBeCloseTo(0.03, 12);
    expect(chat.tokens_per_job).toBe(2000);
    expect(reports.find((r) => r.queue === 'quiet')).toMatchObject({ usage: { tokens: 0, cost_usd: 0 }, cost_per_job_usd: 0, tokens_per_job: 0 });
    expect(reports.find((r) => r.queue === 'idle')).toMatchObject({ cost_per_job_usd: null });
  });

  it('the table shows COST/JOB in dollars, plain output as a number', async () => {
    const table = await runCliOk(spend, ['stats', '-q', 'chat', '-o', 'table']);
    expect(table.stdout).toContain('COST/JOB');
    expect(table.stdout).toContain('$0.03');
    const plain = await runCliOk(spend, ['stats', '-q', 'chat', '-o', 'plain']);
    const header = (await runCliOk(spend, ['stats', '-q', 'chat', '-o', 'table'])).stdout.split('\n')[0]!.trim().split(/ {2,}/);
    const col = header.indexOf('COST/JOB');
    expect(col).toBeGreaterThan(0);
    expect(Number(plain.stdout.trim().split('\t')[col])).toBeCloseTo(0.03, 12);
  });

  it('exports agentq_usage_tokens_total and agentq_usage_cost_usd_total per queue, as counters', async () => {
    const fams = parseAndValidate((await runCliOk(spend, ['stats', '-o', 'prometheus'])).stdout);
    expect(sampleValue(fams, 'agentq_usage_tokens_total', { queue: 'chat' })).toBe(4000);
    expect(sampleValue(fams, 'agentq_usage_cost_usd_total', { queue: 'chat' })).toBeCloseTo(0.06, 12);
    expect(sampleValue(fams, 'agentq_usage_cost_usd_total', { queue: 'quiet' })).toBe(0);
    for (const name of ['agentq_usage_tokens_total', 'agentq_usage_cost_usd_total']) expect(fams.find((f) => f.name === name)!.type).toBe('COUNTER');
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

  it('exits 1 when the DLQ rate over --window is over --max-rate', async () => {
    const r = await runCli(home, ['dlq', 'check', '--max-rate', '0.5', '--window', '3h']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('queue research: DLQ rate is 66.67% over the last 3h (2 of 3 jobs that ended), above --max-rate 50.00%');
  });

  it('--max-rate is over the last hour by default: work that ended two hours ago is out of it', async () => {
    const r = await runCliOk(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0.5', '-o', 'json']);
    const doc = JSON.parse(r.stdout) as { limits: Record<string, unknown>; queues: Array<Record<string, unknown>> };
    expect(doc.limits).toMatchObject({ max_rate: 0.5, window_ms: HOUR });
    expect(doc.queues[0]).toMatchObject({ queue: 'research', ok: true, dlq_rate: null, ended: 0, dead: 0 });
  });

  it("--window all: over the queue's whole life, as the cumulative totals count", async () => {
    const r = await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0.5', '--window', 'all', '-o', 'json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("error: queue research: DLQ rate is 66.67% over the queue's whole life (2 of 3 jobs that ended), above --max-rate 50.00%\n");
    const doc = JSON.parse(r.stdout) as { limits: Record<string, unknown>; queues: Array<Record<string, unknown>> };
    expect(doc.limits).toMatchObject({ window_ms: null });
    expect(doc.queues[0]).toMatchObject({ dlq_rate: 2 / 3, ended: 3, dead: 2 });
  });

  it('--min-ended: a window with fewer ended jobs is reported, not judged; too few to judge is no alert', async () => {
    const few = await runCliOk(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0.5', '--window', '3h', '--min-ended', '4', '-o', 'json']);
    const doc = JSON.parse(few.stdout) as { limits: Record<string, unknown>; queues: Array<Record<string, unknown>> };
    expect(doc.limits).toMatchObject({ max_rate: 0.5, min_ended: 4 });
    expect(doc.queues[0]).toMatchObject({ ok: true, dlq_rate: 2 / 3, ended: 3, dead: 2, reason: null });
    const enough = await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0.5', '--window', '3h', '--min-ended', '3']);
    expect(enough.code).toBe(1);
    expect(enough.stderr).toContain('DLQ rate is 66.67% over the last 3h (2 of 3 jobs that ended)');
    for (const [args, says] of [
      [['--max-rate', '5%', '--min-ended', '0'], '--min-ended "0" must be a whole number of jobs, 1 or more'],
      [['--max-rate', '5%', '--min-ended', 'ten'], '--min-ended "ten" must be a whole number'],
      [['--max-size', '5', '--min-ended', '10'], '--min-ended applies to --max-rate'],
    ] as const) {
      const r = await runCli(home, ['dlq', 'check', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(says);
    }
  });

  it('rejects a --window it cannot count as a usage error: past the 24h kept, under a minute, not a duration', async () => {
    for (const w of ['2d', '25h', '30s', '0m', 'soon']) {
      const r = await runCli(home, ['dlq', 'check', '--max-rate', '5%', '--window', w]);
      expect(r.code, w).toBe(2);
      expect(r.stderr, w).toContain('--window');
    }
    expect((await runCli(home, ['dlq', 'check', '--max-rate', '70%', '--window', '24h'])).code).toBe(0);
  });

  it('-o json prints the result on stdout with the same exit code: ok, the limits, per-queue figures, the reasons', async () => {
    const fail = await runCli(home, ['dlq', 'check', '--max-size', '1', '--max-rate', '90%', '-o', 'json']);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toBe('error: queue research: DLQ holds 2 jobs, more than --max-size 1\n');
    const doc = JSON.parse(fail.stdout) as { ok: boolean; limits: unknown; queues: Array<Record<string, unknown>>; reasons: string[] };
    expect(doc.ok).toBe(false);
    expect(doc.limits).toEqual({ max_size: 1, max_age_ms: null, max_rate: 0.9, window_ms: HOUR, min_ended: null });
    expect(doc.reasons).toEqual(['queue research: DLQ holds 2 jobs, more than --max-size 1']);
    expect(doc.queues.find((q) => q.queue === 'research')).toMatchObject({ ok: false, dlq_size: 2, aged_entry_age_ms: null, reason: doc.reasons[0] });
    expect(doc.queues.find((q) => q.queue === 'mail')).toEqual({ queue: 'mail', ok: true, dlq_size: 0, dlq_rate: null, ended: 0, dead: 0, aged_entry_age_ms: null, reason: null });
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

  it('a store with no queue at all passes, saying it checked nothing and which store it read (a wrong --url or Redis prefix is not "0 queues within limits")', async () => {
    const empty = makeCliHome('agentq-stats-empty-');
    try {
      const r = await runCliOk(empty, ['dlq', 'check', '--max-size', '0']);
      expect(r.stderr).not.toContain('0 queues within limits');
      expect(r.stderr).toMatch(/^ok: no queue here has had a job yet, so there was nothing to check \(sqlite:.*agentq\.db\): is --url \/ the context the store you meant\?\n$/);
    } finally {
      empty.cleanup();
    }
  });

  it('rejects a malformed limit as a usage error', async () => {
    const r = await runCli(home, ['dlq', 'check', '--max-rate', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-rate');
  });

  it('refuses a bare --max-rate of 1 or more: "1" meant as 1% would be 100%, a check that can never fire', async () => {
    for (const [text, suggest] of [['1', '1%'], ['5', '5%'], ['1.0', '1.0%'], ['50', '50%']] as const) {
      const r = await runCli(home, ['dlq', 'check', '--max-rate', text]);
      expect(r.code, text).toBe(2);
      expect(r.stderr, text).toContain(`--max-rate ${JSON.stringify(text)}`);
      expect(r.stderr, text).toContain(`--max-rate ${suggest}`);
      expect(r.stderr, text).toContain('100%');
    }
    // A fraction under 1, a percentage, and 100% given as such still parse.
    const j = await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '100%', '--window', '3h', '-o', 'json']);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout).limits.max_rate).toBe(1);
    expect((await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0.05', '--window', '3h'])).code).toBe(1);
    expect((await runCli(home, ['dlq', 'check', '--queue', 'research', '--max-rate', '0', '--window', '3h'])).code).toBe(1);
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
