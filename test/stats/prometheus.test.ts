import { afterEach, describe, expect, it } from 'vitest';
import type { QueueStats } from '../../src/backend/contract.js';
import { escapeLabelValue, PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '../../src/metrics/prometheus.js';
import { DEFAULT_COLLECT_TIMEOUT_MS, isLoopback, parseListen, scrapeBudgetMs, startMetricsServer, type MetricsServer } from '../../src/metrics/server.js';
import { pollUntil } from '../support/poll.js';
import { parseAndValidate, sampleValue } from './prom-validate.js';
import { findUnsafe } from '../support/hostile.js';

const counts = { queued: 7, scheduled: 2, running: 3, succeeded: 10, dead: 1, cancelled: 0, expired: 0 };
const breakdown = (key: string, queued: number) => ({ key, queued, scheduled: 0, running: 1, dlq_size: 0, oldest_queued_age_ms: 90_000, backlog_seconds: queued * 60 });

const rich: QueueStats = {
  queue: 'research',
  counts,
  dlq_size: 1,
  oldest_queued_age_ms: 90_000,
  running: 3,
  backlog_seconds: 540,
  by_class: [breakdown('interactive', 2), breakdown('batch', 5), breakdown('maintenance', 0)],
  by_tenant: [breakdown('acme', 6), breakdown('globex', 1)],
  totals: { submitted: 23, attempts: 20, succeeded: 10, retried: 4, dead: 1, expired: 0, cancelled: 0 },
  by_attempt: [{ attempt: 1, succeeded: 8, failed: 5 }],
  time_in_queue_ms: [100, 200, 300, 400],
  execution_ms: [],
};

const bare: QueueStats = { queue: 'weird"q\\x', counts, dlq_size: 0, oldest_queued_age_ms: null, running: 0 };

describe('renderPrometheus', () => {
  it('writes a valid exposition with depth by queue, class and state', () => {
    const fams = parseAndValidate(renderPrometheus([rich, bare], { scrapeSeconds: 0.01 }));
    expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'research', class: 'batch', state: 'queued' })).toBe(5);
    expect(sampleValue(fams, 'agentq_oldest_age_seconds', { queue: 'research', class: 'interactive' })).toBe(90);
    expect(sampleValue(fams, 'agentq_dlq_size', { queue: 'research' })).toBe(1);
    expect(sampleValue(fams, 'agentq_backlog_seconds', { queue: 'research', class: 'batch' })).toBe(300);
    expect(sampleValue(fams, 'agentq_jobs_total', { queue: 'research', outcome: 'dead' })).toBe(1);
    expect(sampleValue(fams, 'agentq_tenant_queue_depth', { queue: 'research', tenant: 'acme', state: 'queued' })).toBe(6);
    const tiq = fams.find((f) => f.name === 'agentq_time_in_queue_recent_seconds')!;
    expect(tiq.type).toBe('GAUGE');
  });

  it('writes the quantiles of the recent samples as gauges, with no summary _sum/_count that a ring would make fall', () => {
    const text = renderPrometheus([rich]);
    const fams = parseAndValidate(text);
    expect(sampleValue(fams, 'agentq_time_in_queue_recent_seconds', { queue: 'research', quantile: '0.5' })).toBe(0.25);
    expect(sampleValue(fams, 'agentq_time_in_queue_recent_seconds', { queue: 'research', quantile: '0.95' })).toBe(0.385);
    expect(sampleValue(fams, 'agentq_time_in_queue_recent_seconds', { queue: 'research', quantile: '0.99' })).toBe(0.397);
    // No samples kept yet: quantiles are NaN (the format's "unknown").
    expect(text).toContain('agentq_execution_recent_seconds{queue="research",quantile="0.5"} NaN\n');
    expect(text).not.toMatch(/_sum|_count|# TYPE \S+ summary/);
  });

  it('falls back to class="all" and leaves out what a backend does not keep', () => {
    const text = renderPrometheus([bare]);
    const fams = parseAndValidate(text);
    expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'weird"q\\\\x', class: 'all', state: 'queued' })).toBe(7);
    expect(sampleValue(fams, 'agentq_oldest_age_seconds', { queue: 'weird"q\\\\x' })).toBe(0);
    expect(text).not.toContain('agentq_backlog_seconds');
    expect(text).not.toContain('agentq_jobs_total');
  });

  it('escapes label values so no sample can break a line', () => {
    // (the name's own backslash is doubled in the label: see the collision test below)
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\\\\\c\\nd');
    const text = renderPrometheus([{ ...bare, queue: 'evil\n# TYPE agentq_dlq_size counter' }]);
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE agentq_dlq_size'))).toEqual(['# TYPE agentq_dlq_size gauge']);
    parseAndValidate(text);
  });

  it('regression: a queue name with control characters (a foreign writer\'s) writes no raw control byte, and the text still parses', () => {
    expect(escapeLabelValue('evil\x1b]0;PROM\x07q\u202e\t')).toBe('evil\\\\x1b]0;PROM\\\\x07q\\\\u202e\\\\t');
    const text = renderPrometheus([{ ...bare, queue: 'evil\x1b]0;PROM\x07q' }]);
    expect(findUnsafe(text)).toEqual([]);
    expect(text).toContain('queue="evil\\\\x1b]0;PROM\\\\x07q"');
    parseAndValidate(text);
  });

  it('regression: names that made-safe would read the same (ESC and the text \\x1b, CR LF and LF) stay distinct series', () => {
    const stats = (queue: string, codes: string[]): QueueStats => ({ ...bare, queue, failures_by_code: codes.map((code, i) => ({ code, count: i + 1 })) });
    const text = renderPrometheus([
      stats('q', ['E\x1b', 'E\\x1b', 'A\r\nB', 'A\nB', 'A\\rB', 'A\\\\B', 'A\\B']),
      stats('x\x1by', []),
      stats('x\\x1by', []),
    ]);
    expect(findUnsafe(text)).toEqual([]);
    const fams = parseAndValidate(text); // throws on a series written twice
    const failures = fams.find((f) => f.name === 'agentq_attempt_failures_total')!;
    expect(new Set(failures.metrics.map((m) => m.labels!.code)).size).toBe(7);
    // a name with neither a backslash nor a control character is its own label
    expect(sampleValue(fams, 'agentq_dlq_size', { queue: 'q' })).toBe(0);
    // the text `\x1b` reads as itself, its backslash doubled; ESC as the escape
    expect(failures.metrics.map((m) => m.labels!.code)).toEqual(expect.arrayContaining(['E\\x1b', 'E\\\\x1b', 'A\\r\nB', 'A\nB']));
  });
});

describe('parseListen', () => {
  it('parses host:port forms and binds loopback when the host is empty', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen(':9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(() => parseListen('9464')).toThrow(/HOST:PORT/);
    expect(() => parseListen('h:70000')).toThrow(/HOST:PORT/);
  });
  it('knows loopback addresses', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
  });
});

describe('metrics server', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves /metrics on a free loopback port in the exposition format', async () => {
    server = await startMetricsServer({ listen: { host: '127.0.0.1', port: 0 }, collect: async () => renderPrometheus([rich]) });
    expect(server.address.port).toBeGreaterThan(0);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    const fams = parseAndValidate(await res.text());
    expect(sampleValue(fams, 'agentq_dlq_size', { queue: 'research' })).toBe(1);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('answers 503 within the scrape timeout the scraper sends when the backend hangs, and logs once per failure streak', async () => {
    let answer: ((body: string) => void) | null = null;
    let fail = true;
    const log: string[] = [];
    server = await startMetricsServer({
      listen: { host: '127.0.0.1', port: 0 },
      // hangs while `fail` is set (a backend that is down: ioredis retries for ~12 s), then answers
      collect: () => (fail ? new Promise<string>((resolve) => (answer = resolve)) : Promise.resolve(renderPrometheus([rich]))),
      log: { failing: (m) => log.push(`failing: ${m}`), recovered: (m) => log.push(`recovered: ${m}`) },
    });
    const scrape = () => fetch(`${server!.url}/metrics`, { headers: { 'X-Prometheus-Scrape-Timeout-Seconds': '0.5' } });
    const res = await scrape();
    // Answered while the collection still hangs (it is answered only below): the budget, not the
    // backend, ended the wait, and the budget is the header's 0.5 s less the margin.
    expect(res.status).toBe(503);
    expect(answer).not.toBeNull();
    expect(await res.text()).toMatch(/did not answer within 350ms/);
    expect((await scrape()).status).toBe(503);
    expect(log).toEqual([expect.stringMatching(/^failing: collecting stats failed, answering 503 until it works again: the backend did not answer/)]);
    fail = false;
    answer!('late'); // the hung collection ends; the next scrape starts a new one
    await pollUntil(async () => (await scrape()).status === 200, { what: 'a 200 once the backend answers' });
    expect(log).toHaveLength(2);
    expect(log[1]).toMatch(/^recovered: collecting stats works again/);
  });

  it('a scrape budget: the header less a margin, else the default', () => {
    expect(scrapeBudgetMs(undefined)).toBe(DEFAULT_COLLECT_TIMEOUT_MS);
    expect(scrapeBudgetMs('10')).toBe(8_900);
    expect(scrapeBudgetMs('nonsense')).toBe(DEFAULT_COLLECT_TIMEOUT_MS);
    expect(scrapeBudgetMs('0.05')).toBe(100);
  });

  it('answers 503 when collecting fails, so the target shows as down', async () => {
    server = await startMetricsServer({ listen: { host: '127.0.0.1', port: 0 }, collect: async () => Promise.reject(new Error('backend gone')) });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('backend gone');
  });

  it('writes the reason of a 503 with its control characters as visible escapes (curl prints the body to a terminal)', async () => {
    server = await startMetricsServer({ listen: { host: '127.0.0.1', port: 0 }, collect: async () => Promise.reject(new Error('job \x1b]0;owned\x07 said \x1b[2Jno')) });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toBe('collecting stats failed: job \\x1b]0;owned\\x07 said \\x1b[2Jno\n');
  });

  // Regression: close() (SIGTERM/Ctrl-C of `agentq metrics serve`) cut the connection of a scrape
  // still collecting, so the scraper recorded a connection reset instead of the figures.
  it('answers a scrape in flight before it closes; idle keep-alive connections do not hold it open', async () => {
    let answer: ((body: string) => void) | null = null;
    const s = await startMetricsServer({ listen: { host: '127.0.0.1', port: 0 }, collect: () => new Promise<string>((resolve) => (answer = resolve)) });
    // An idle keep-alive connection (a scraper between scrapes) next to the one in flight.
    const idle = await fetch(`${s.url}/`);
    await idle.text();
    const scrape = fetch(`${s.url}/metrics`);
    await pollUntil(() => answer !== null, { what: 'the collection to start' });
    let closed = false;
    const closing = s.close().then(() => (closed = true));
    // New connections are refused at once.
    await pollUntil(async () => fetch(`${s.url}/`).then(() => false, () => true), { what: 'new connections refused' });
    expect(closed).toBe(false);
    answer!(renderPrometheus([rich]));
    const res = await scrape;
    expect(res.status).toBe(200);
    expect(sampleValue(parseAndValidate(await res.text()), 'agentq_dlq_size', { queue: 'research' })).toBe(1);
    await closing;
    expect(closed).toBe(true);
  });
});
