/**
 * A malformed SQLite DLQ entry is described from its indexed columns (the document does not
 * parse): the `dead_reason` column then holds whatever a hand edit or foreign writer put there,
 * and the reason is printed as a word by `dlq show` and the TUI. Text that is not a known reason
 * is not passed on.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';

let dir: string;
let path: string;
let backend: SqliteBackend;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-dead-reason-'));
  path = join(dir, 'agentq.db');
  backend = new SqliteBackend({ path, clock: new ManualClock(Date.parse('2026-03-01T10:00:00.000Z')), random: seededRandom(3) });
});
afterEach(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

it('regression: a malformed entry whose dead_reason column is not a known reason shows the fallback reason, in the entry and the light row alike', async () => {
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a', max_attempts: 1 });
  const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  const db = new Database(path);
  try {
    db.prepare(`UPDATE jobs SET doc = '{"broken', dead_reason = ? WHERE id = ?`).run('\x1b]0;PWNED\x07\x1b[31mexhausted\nforged', job.job_id);
  } finally {
    db.close();
  }
  const entry = (await backend.dlqGet(job.job_id))!;
  expect(entry.malformed).not.toBeNull();
  expect(entry.reason).toBe('permanent');
  const [row] = (await backend.dlqRows({ queue: 'q' }, { limit: 10 })).items;
  expect(row).toMatchObject({ job_id: job.job_id, malformed: true, reason: 'permanent' });
});

it('a dead row whose dead_at column is NULL (another writer): the light row has the time of death its entry has, and a since/until range finds both alike', async () => {
  const clock = new ManualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  await backend.close();
  backend = new SqliteBackend({ path, clock, random: seededRandom(3) });
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', max_attempts: 1 })).job.job_id);
  clock.advance(60_000);
  for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 })) await backend.fail(lease, { code: 'X', message: 'x', retryable: false });
  const diedAt = clock.now();
  clock.advance(3_600_000);
  const [readable, broken] = [...ids].sort();
  const db = new Database(path);
  try {
    db.prepare(`UPDATE jobs SET dead_at = NULL WHERE id = ?`).run(readable);
    db.prepare(`UPDATE jobs SET dead_at = NULL, doc = '{"broken' WHERE id = ?`).run(broken);
  } finally {
    db.close();
  }
  const entries = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items;
  expect(entries.map((e) => [e.job_id, Date.parse(e.dead_at)])).toEqual([[readable, diedAt], [broken, 0]]);
  const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 10 })).items;
  expect(rows.map((r) => [r.job_id, r.dead_at_ms])).toEqual([[readable, diedAt], [broken, 0]]);
  for (const f of [{ until: diedAt + 1 }, { until: diedAt }, { since: diedAt }, { since: 1 }]) {
    const listed = (await backend.dlqList({ queue: 'q', ...f }, { limit: 10 })).items.map((e) => e.job_id);
    const rowed = (await backend.dlqRows({ queue: 'q', ...f }, { limit: 10 })).items.map((r) => r.job_id);
    expect(rowed, JSON.stringify(f)).toEqual(listed);
  }
  expect((await backend.dlqList({ queue: 'q', until: diedAt + 1 }, { limit: 10 })).items.map((e) => e.job_id)).toEqual([readable, broken]);
});
