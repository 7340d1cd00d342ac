/**
 * `agentq dlq check --max-age` on every kind of store: an entry older than the limit fails the
 * check wherever it sits in the DLQ, also behind many younger entries of older jobs (a redrive
 * that failed again, jobs that retried for hours). The check asks the store for one aged entry.
 */
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../src/backend/open.js';
import { ManualClock } from '../../src/core/clock.js';
import { makeCliHome, runCli, type CliHome } from '../support/cli.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';

const HOUR = 3_600_000;
const servers = new TestServers();
let redis: RedisServer;
let home: CliHome;
beforeAll(async () => {
  redis = await servers.start(startRedisServer());
  home = makeCliHome('agentq-dlq-check-age-');
}, 60_000);
afterAll(async () => {
  await servers.stopAll();
  home?.cleanup();
});

/**
 * Twelve jobs submitted ten hours ago that died half an hour ago, and one submitted after them
 * that died nine hours ago: the aged entry has the newest job id of the DLQ.
 */
async function seed(url: string): Promise<void> {
  const clock = new ManualClock(Date.now() - 10 * HOUR);
  const backend = await openBackend(url, { clock });
  try {
    for (let i = 0; i < 12; i++) {
      await backend.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1, run_at: new Date(Date.now() - HOUR).toISOString() });
    }
    clock.advance(HOUR);
    await backend.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 });
    const [old] = await backend.claim({ queue: 'q', workerId: 'w', max: 10, leaseMs: 60_000 });
    await backend.fail(old!, { code: 'VALIDATION', message: 'rejected', retryable: false });
    clock.set(Date.now() - HOUR / 2);
    for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 20, leaseMs: 60_000 })) {
      await backend.fail(lease, { code: 'VALIDATION', message: 'rejected', retryable: false });
    }
  } finally {
    await backend.close();
  }
}

describe('dlq check --max-age finds an aged entry behind younger ones', () => {
  const cases: Array<[string, () => string]> = [
    ['sqlite', () => home.dataUrl],
    ['redis', () => `${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=age${process.pid}`],
  ];
  for (const [name, url] of cases) {
    it(name, async () => {
      await seed(url());
      const r = await runCli(home, ['--url', url(), 'dlq', 'check', '--queue', 'q', '--max-age', '6h', '-o', 'json']);
      expect(r.stderr).toMatch(/^error: queue q: a DLQ entry is 9h\d*m? old, older than --max-age 6h\n$/);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).queues[0]).toMatchObject({ dlq_size: 13, ok: false });
    });
  }
});

describe('dlq check --max-age and a malformed entry', () => {
  /** One entry that died two hours ago, its job hash replaced by a string (and, with `unindexed`, gone from the dead_at index too). */
  async function damaged(prefix: string, unindexed: boolean): Promise<{ url: string; jobId: string }> {
    const url = `${redis.url}${redis.url.includes('?') ? '&' : '?'}prefix=${prefix}`;
    const clock = new ManualClock(Date.now() - 2 * HOUR);
    const backend = await openBackend(url, { clock });
    const raw = new Redis(redis.url);
    try {
      await backend.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 });
      const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
      await backend.fail(lease!, { code: 'VALIDATION', message: 'rejected', retryable: false });
      await raw.del(`{${prefix}:q:0}:j:${lease!.jobId}`);
      await raw.set(`{${prefix}:q:0}:j:${lease!.jobId}`, 'garbage');
      if (unindexed) await raw.zrem(`{${prefix}:q:0}:dlq`, lease!.jobId);
      return { url, jobId: lease!.jobId };
    } finally {
      raw.disconnect();
      await backend.close();
    }
  }

  it('reads its age from the DLQ index (it was called 56 years old)', async () => {
    const { url } = await damaged(`mal1${process.pid}`, false);
    const r = await runCli(home, ['--url', url, 'dlq', 'check', '--queue', 'q', '--max-age', '1h']);
    expect(r.stderr).toMatch(/^error: queue q: a DLQ entry is (1h59m|2h\d*m?) old, older than --max-age 1h\n$/);
    expect(r.code).toBe(1);
  });

  it('with no time of death anywhere, fails naming the entry and why its age is unknown', async () => {
    const { url, jobId } = await damaged(`mal2${process.pid}`, true);
    const r = await runCli(home, ['--url', url, 'dlq', 'check', '--queue', 'q', '--max-age', '1h', '-o', 'json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: queue q: DLQ entry ${jobId} is malformed and has no readable time of death, so its age cannot be held against --max-age 1h`);
    expect(r.stderr).toContain(`see agentq dlq show ${jobId} --raw`);
    expect(r.stderr).not.toMatch(/\d+d\d*h? old/);
    expect(JSON.parse(r.stdout).queues[0]).toMatchObject({ ok: false, aged_entry_age_ms: null });
  });
});

describe('dlq check --max-age and a SQLite dead row whose dead_at column is NULL (another writer)', () => {
  /** One job that died two hours ago; its dead_at column then emptied (and, with `brokenDoc`, its document too). */
  async function nulled(brokenDoc: boolean): Promise<{ home: CliHome; jobId: string }> {
    const own = makeCliHome('agentq-dlq-check-null-');
    const clock = new ManualClock(Date.now() - 2 * HOUR);
    const backend = await openBackend(own.dataUrl, { clock });
    let jobId: string;
    try {
      await backend.submit({ workflow: 'research_report:v3', queue: 'q', max_attempts: 1 });
      const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
      await backend.fail(lease!, { code: 'VALIDATION', message: 'rejected', retryable: false });
      jobId = lease!.jobId;
    } finally {
      await backend.close();
    }
    const db = new Database(own.dataUrl.slice('sqlite:'.length));
    try {
      db.prepare(`UPDATE jobs SET dead_at = NULL${brokenDoc ? `, doc = '{"broken'` : ''} WHERE id = ?`).run(jobId);
    } finally {
      db.close();
    }
    return { home: own, jobId };
  }

  it('with a readable document, its age is the time of death the document records', async () => {
    const { home: own } = await nulled(false);
    try {
      const r = await runCli(own, ['dlq', 'check', '--queue', 'q', '--max-age', '1h']);
      expect(r.stderr).toMatch(/^error: queue q: a DLQ entry is (1h59m|2h\d*m?) old, older than --max-age 1h\n$/);
      expect(r.code).toBe(1);
      // Not older than 3h: it passes.
      expect((await runCli(own, ['dlq', 'check', '--queue', 'q', '--max-age', '3h'])).code).toBe(0);
    } finally {
      own.cleanup();
    }
  });

  it('with no time of death anywhere, fails naming the entry and why its age is unknown, as on Redis', async () => {
    const { home: own, jobId } = await nulled(true);
    try {
      const r = await runCli(own, ['dlq', 'check', '--queue', 'q', '--max-age', '1h', '-o', 'json']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: queue q: DLQ entry ${jobId} is malformed and has no readable time of death, so its age cannot be held against --max-age 1h`);
      expect(JSON.parse(r.stdout).queues[0]).toMatchObject({ ok: false, aged_entry_age_ms: null });
    } finally {
      own.cleanup();
    }
  });
});
