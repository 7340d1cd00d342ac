/**
 * The SQLite adapter keeps every optional stats figure (the conformance
 * cases check each one is right when present; this pins that SQLite has
 * them all) and keeps its counters across a reopen.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock } from '../../src/core/clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(path?: string, clock = new ManualClock()) {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-stats-'));
  dirs.push(dir);
  return { backend: new SqliteBackend({ path: path ?? join(dir, 'q.db'), clock }), clock, path: path ?? join(dir, 'q.db') };
}

describe('SQLite stats', () => {
  it('provides every optional figure for a queue that has jobs', async () => {
    const { backend, clock } = open();
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', class: 'interactive' });
    clock.advance(2000);
    const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    clock.advance(3000);
    await backend.complete(lease!, null);
    const s = await backend.stats('q');
    expect(s).toMatchObject({
      at: clock.now(),
      backlog_seconds: 0,
      totals: { submitted: 1, attempts: 1, succeeded: 1 },
      by_attempt: [{ attempt: 1, succeeded: 1, failed: 0 }],
      time_in_queue_ms: [2000],
      execution_ms: [3000],
      recent: { submitted: 1, succeeded: 1, failed: 0 },
      failures_by_code: [],
    });
    expect(s.by_class?.map((b) => b.key)).toEqual(['interactive', 'batch', 'maintenance']);
    expect(s.by_tenant).toEqual([]);
    await backend.close();
  });

  it('keeps the counters across a reopen of the file', async () => {
    const first = open();
    await first.backend.submit({ workflow: 'w:v1', queue: 'q' });
    await first.backend.close();
    const again = new SqliteBackend({ path: first.path, clock: first.clock });
    expect((await again.stats('q')).totals).toMatchObject({ submitted: 1 });
    await again.close();
  });

  it('a file made before failures were counted by code, usage summed and job ends counted per minute (schema 4) gains the tables on open, and counts from then on', async () => {
    const first = open();
    await first.backend.submit({ workflow: 'w:v1', queue: 'q', max_attempts: 1 });
    await first.backend.close();
    // As an agentq of schema 4 left it: no attempt_failures table (migration 5), no queue_usage (6), no job_ends (7).
    const db = new Database(first.path);
    db.exec('DROP TABLE attempt_failures; DROP TABLE queue_usage; DROP TABLE job_ends');
    db.pragma('user_version = 4');
    db.close();
    const again = new SqliteBackend({ path: first.path, clock: first.clock });
    expect((await again.stats('q')).failures_by_code).toEqual([]);
    expect((await again.stats('q')).usage).toEqual({ tokens: 0, cost_usd: 0 });
    const [lease] = await again.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    await again.addUsage(lease!, { tokens: 10, cost_usd: 0.5 });
    expect((await again.stats('q')).usage).toEqual({ tokens: 10, cost_usd: 0.5 });
    await again.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
    expect((await again.stats('q')).failures_by_code).toEqual([{ code: 'PROVIDER_429', count: 1 }]);
    expect((await again.stats('q', { endsWindowMs: 3_600_000 })).ends).toMatchObject({ ended: 1, dead: 1 });
    await again.close();
  });
});
