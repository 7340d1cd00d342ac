/**
 * `agentq metrics serve`: the built CLI listening on a free loopback port,
 * scraped like Prometheus would and validated with a parser of the format;
 * Ctrl-C (SIGINT) closes it cleanly with exit 0.
 */
import { renameSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { collect, makeCliHome, runCli, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { requestPendingAt } from '../support/tcp-sockets.js';
import { startRedisServer } from '../support/redis-server.js';
import { parseAndValidate, sampleValue } from '../stats/prom-validate.js';

let home: CliHome;

beforeAll(async () => {
  home = makeCliHome('agentq-metrics-');
  const backend = await openBackend(home.dataUrl);
  for (let i = 0; i < 3; i++) await backend.submit({ workflow: 'research_report:v3', queue: 'research', class: 'interactive' });
  // One rate-limited attempt, retried: agentq_attempt_failures_total counts it though no job died.
  await backend.submit({ workflow: 'chat:v1', queue: 'chat', max_attempts: 3 });
  const [lease] = await backend.claim({ queue: 'chat', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.addUsage(lease!, { tokens: 900, cost_usd: 0.012 });
  expect((await backend.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: true })).kind).toBe('retry');
  await backend.close();
}, 60_000);
afterAll(() => home?.cleanup());

describe('agentq metrics serve', () => {
  it('serves /metrics on loopback, valid for a Prometheus parser, and stops on Ctrl-C', async () => {
    // Port 0: the OS picks a free port; the bound URL is the first line on stdout.
    const child = spawnCli(home, ['metrics', 'serve', '--listen', '127.0.0.1:0']);
    const done = collect(child);
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const url = await pollUntil(() => /^(http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(out)?.[1], { what: 'the metrics URL on stdout' });

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const fams = parseAndValidate(await res.text());
    expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'research', class: 'interactive', state: 'queued' })).toBe(3);
    expect(sampleValue(fams, 'agentq_dlq_size', { queue: 'research' })).toBe(0);
    expect(sampleValue(fams, 'agentq_attempt_failures_total', { queue: 'chat', code: 'PROVIDER_429' })).toBe(1);
    expect(sampleValue(fams, 'agentq_usage_tokens_total', { queue: 'chat' })).toBe(900);
    expect(sampleValue(fams, 'agentq_usage_cost_usd_total', { queue: 'chat' })).toBe(0.012);
    expect(fams.map((f) => f.name)).toEqual(expect.arrayContaining(['agentq_oldest_age_seconds', 'agentq_backlog_seconds', 'agentq_time_in_queue_recent_seconds']));

    // A job submitted after start shows on the next scrape: figures are read per scrape, not cached.
    const backend = await openBackend(home.dataUrl);
    await backend.submit({ workflow: 'research_report:v3', queue: 'research', class: 'interactive' });
    await backend.close();
    const again = parseAndValidate(await (await fetch(url)).text());
    expect(sampleValue(again, 'agentq_queue_depth', { queue: 'research', class: 'interactive', state: 'queued' })).toBe(4);

    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  // Regression: Ctrl-C with a scrape in flight on a store that stopped answering printed nothing
  // until that scrape got its 503 (its budget: 5 s, or what Prometheus allows, 9 s for its default).
  it('Ctrl-C with a scrape in flight says at once that it answers it first, then exits 0', async () => {
    const server = await startRedisServer();
    try {
      const child = spawnCli(home, ['--url', server.url, 'metrics', 'serve', '--listen', '127.0.0.1:0']);
      const done = collect(child);
      let out = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      const url = await pollUntil(() => /^(http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(out)?.[1], { what: 'the metrics URL on stdout' });
      expect((await fetch(url)).status).toBe(200);
      server.signal('SIGSTOP');
      const scrape = fetch(url).then((r) => r.status);
      await pollUntil(() => requestPendingAt(server.port), { timeoutMs: 20_000, what: 'the scrape to wait on the frozen store' });
      child.kill('SIGINT');
      await pollUntil(() => err.includes('metrics: stopping'), { timeoutMs: 20_000, what: 'the note on Ctrl-C' });
      expect(err).toContain('metrics: stopping — answering the scrape in flight first (within its budget; Ctrl-C again to exit at once)');
      expect(await scrape).toBe(503);
      expect((await done).code).toBe(0);
    } finally {
      server.signal('SIGCONT');
      await server.stop();
    }
  });

  // Regression: one Redis queue whose stats counter held text made every scrape a 503, so every queue's alerts went blind.
  it('a queue whose stats are damaged is served as agentq_queue_stats_up 0, the other queues as usual (200, not 503)', async () => {
    const server = await startRedisServer();
    const url = `${server.url}?prefix=dmg${process.pid}`;
    const raw = new Redis(server.url);
    try {
      const backend = await openBackend(url);
      await backend.submit({ workflow: 'w:v1', queue: 'broken' });
      await backend.submit({ workflow: 'w:v1', queue: 'good', class: 'interactive' });
      await backend.close();
      await raw.hset(`{dmg${process.pid}:broken:0}:n`, 'batch:queued', 'abc');
      const child = spawnCli(home, ['--url', url, 'metrics', 'serve', '--listen', '127.0.0.1:0']);
      const done = collect(child);
      let out = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      const metrics = await pollUntil(() => /^(http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(out)?.[1], { what: 'the metrics URL on stdout' });
      const res = await fetch(metrics);
      expect(res.status).toBe(200);
      const fams = parseAndValidate(await res.text());
      expect(sampleValue(fams, 'agentq_queue_depth', { queue: 'good', class: 'interactive', state: 'queued' })).toBe(1);
      expect(sampleValue(fams, 'agentq_queue_stats_up', { queue: 'good' })).toBe(1);
      expect(sampleValue(fams, 'agentq_queue_stats_up', { queue: 'broken' })).toBe(0);
      expect(fams.find((f) => f.name === 'agentq_queue_stats_up')!.type).toBe('GAUGE');
      await pollUntil(() => err.includes('queue broken: the stats of shard 0 are damaged: n field "batch:queued" holds "abc"'), { what: 'the warning naming the damaged queue' });
      // Said once, not once per scrape; mended, it is said to be readable again.
      expect((await fetch(metrics)).status).toBe(200);
      expect(err.split('are damaged').length - 1).toBe(1);
      await raw.hset(`{dmg${process.pid}:broken:0}:n`, 'batch:queued', '1');
      const mended = parseAndValidate(await (await fetch(metrics)).text());
      expect(sampleValue(mended, 'agentq_queue_stats_up', { queue: 'broken' })).toBe(1);
      await pollUntil(() => err.includes('readable again'), { what: 'the note that it is mended' });
      child.kill('SIGINT');
      expect((await done).code).toBe(0);
    } finally {
      raw.disconnect();
      await server.stop();
    }
  });

  // Regression: it went on answering 503 for ever, on the old unlinked file, where worker, tail --follow
  // and stats --watch exit 78: nothing but a restart mends it, and a supervisor restarts it onto the right file.
  it('a SQLite store file replaced under it: the scrape gets a 503 with the reason, then it exits 78 (STORE_REPLACED), as the worker does', async () => {
    const own = makeCliHome('agentq-metrics-replaced-');
    try {
      const path = own.dataUrl.slice('sqlite:'.length);
      const first = await openBackend(own.dataUrl);
      await first.submit({ workflow: 'w:v1', queue: 'research' });
      await first.close();
      const child = spawnCli(own, ['metrics', 'serve', '--listen', '127.0.0.1:0']);
      const done = collect(child);
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const url = await pollUntil(() => /^(http:\/\/127\.0\.0\.1:\d+\/metrics)\n/.exec(out)?.[1], { what: 'the metrics URL on stdout' });
      expect((await fetch(url)).status).toBe(200);
      // A backup restored with mv: another store file takes the path.
      const restored = await openBackend(`sqlite:${path}.restored`);
      await restored.submit({ workflow: 'w:v1', queue: 'research' });
      await restored.close();
      renameSync(`${path}.restored`, path);
      const res = await fetch(url);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain(`the agentq store at ${path} was replaced by another file since agentq metrics serve opened it`);
      const r = await done;
      expect(r.code).toBe(78);
      expect(r.stderr).toContain(`the agentq store at ${path} was replaced by another file since agentq metrics serve opened it`);
      expect(r.stderr).toContain('agentq metrics serve again');
      expect(r.stderr).not.toContain('internal error');
      expect(r.stderr).not.toContain('until it works again'); // it does not: it stops
    } finally {
      own.cleanup();
    }
  });

  it('refuses an address it cannot listen on with exit 78 and the reason, not an internal error', async () => {
    // 999.0.0.1 is no IPv4 address (resolved as a name, it does not resolve); 192.0.2.1 (TEST-NET-1) is never this machine's.
    const bad = await runCli(home, ['metrics', 'serve', '--listen', '999.0.0.1:0']);
    expect([78, 75]).toContain(bad.code); // 75 where DNS does not answer at all (EAI_AGAIN)
    expect(bad.stderr).toMatch(/--listen 999\.0\.0\.1:0: the (host|name) "999\.0\.0\.1"/);
    expect(bad.stderr).not.toContain('internal error');
    const absent = await runCli(home, ['metrics', 'serve', '--listen', '192.0.2.1:0']);
    expect(absent.code).toBe(78);
    expect(absent.stderr).toContain('--listen 192.0.2.1:0: 192.0.2.1 is not an address of this machine');
  });

  it('refuses a malformed --listen as a usage error', async () => {
    const r = await runCli(home, ['metrics', 'serve', '--listen', 'nine-four-six-four']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HOST:PORT');
  });
});
