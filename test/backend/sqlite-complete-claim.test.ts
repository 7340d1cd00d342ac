/**
 * completeAndClaim on SQLite: the completion is an ordinary complete under its fence, and the
 * claims of the completions of one group commit are made together at the end of the commit (one
 * claim per queue, worker and lease length), then shared out, each caller getting at most its max.
 * A lost lease claims nothing; a claim that fails leaves the completions of its commit standing.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { LeaseLostError } from '../../src/core/errors.js';

let dir: string;
let path: string;
let clock: ManualClock;
let backend: SqliteBackend;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-complete-claim-'));
  path = join(dir, 'agentq.db');
  clock = new ManualClock();
  backend = new SqliteBackend({ path, clock, random: seededRandom(3) });
});
afterEach(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

function exec(sql: string): void {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    db.exec(sql);
  } finally {
    db.close();
  }
}

const claimReq = { queue: 'q', workerId: 'w1', workerVersion: 'v1', max: 1, leaseMs: 60_000 };
const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

describe('SQLite completeAndClaim', () => {
  it('completes the job and hands out the next one, in submission order within a tenant', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' })).job.job_id);
    const [first] = await backend.claim(claimReq);
    expect(first!.jobId).toBe(ids[0]);
    const r1 = await backend.completeAndClaim(first!, 'done', claimReq);
    expect(r1.next.map((l) => l.jobId)).toEqual([ids[1]]);
    const second = r1.next[0]!;
    expect(second.job).toMatchObject({ state: 'running', attempt: 1, lease: { worker_id: 'w1', fence: second.fence } });
    expect(second.job.attempts).toHaveLength(1);
    expect(second.envelope.attempt).toBe(1);
    expect(await backend.get(ids[0]!)).toMatchObject({ state: 'succeeded', outcome: 'succeeded', result: 'done', lease: null });
    expect(await backend.get(second.jobId)).toEqual(second.job);
    const r2 = await backend.completeAndClaim(second, null, { ...claimReq, max: 5 });
    expect(r2.next.map((l) => l.jobId)).toEqual([ids[2]]);
    expect((await backend.completeAndClaim(r2.next[0]!, null, claimReq)).next).toEqual([]);
    const stats = await backend.stats('q');
    expect(stats.counts).toMatchObject({ succeeded: 3, running: 0, queued: 0 });
    expect(stats.totals).toMatchObject({ attempts: 3, succeeded: 3 });
  });

  it('claims nothing for a lost lease, and refuses a bad claim request before completing', async () => {
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 3 });
    await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const [first] = await backend.claim({ ...claimReq, leaseMs: 1000 });
    await expect(backend.completeAndClaim(first!, null, { ...claimReq, max: 0 })).rejects.toThrow(/max/);
    expect((await backend.get(first!.jobId))!.state).toBe('running');
    clock.advance(2000);
    const [other] = await backend.claim({ ...claimReq, workerId: 'w2' });
    expect(other).toBeDefined();
    await expect(backend.completeAndClaim(first!, 'late', claimReq)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await backend.get(first!.jobId))!.state).toBe('scheduled');
    expect((await backend.stats('q')).counts).toMatchObject({ running: 1 });
  });

  it('shares one claim out among the completions of a commit, each getting at most its max', async () => {
    for (let i = 0; i < 30; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: `t${i % 3}` });
    const held = await backend.claim({ ...claimReq, max: 10 });
    const lost = held.pop()!;
    // A lease that is not current (stale fence) in the same commit: it throws and claims nothing.
    const results = await Promise.all([
      ...held.map((l, i) => settle(backend.completeAndClaim(l, null, { ...claimReq, max: i < 3 ? 2 : 1 }))),
      settle(backend.completeAndClaim({ jobId: lost.jobId, fence: lost.fence + 1 }, null, claimReq)),
      // Another worker's request in the same commit: a claim of its own, its leases carry its id.
      settle(backend.completeAndClaim(lost, null, { ...claimReq, workerId: 'w2', leaseMs: 30_000, max: 3 })),
    ]);
    const nexts = results.map((r) => (r.ok ? r.value.next : null));
    expect(results[9]!.ok).toBe(false);
    expect((results[9] as { error: unknown }).error).toBeInstanceOf(LeaseLostError);
    expect(nexts.slice(0, 9).map((n) => n!.length)).toEqual([2, 2, 2, 1, 1, 1, 1, 1, 1]);
    expect(nexts[10]!).toHaveLength(3);
    for (const l of nexts[10]!) expect(l.job.lease!.worker_id).toBe('w2');
    const handed = nexts.flatMap((n) => n ?? []).map((l: Lease) => l.jobId);
    expect(new Set(handed).size).toBe(handed.length);
    expect(handed.some((id) => held.some((h) => h.jobId === id))).toBe(false);
    const stats = await backend.stats('q');
    expect(stats.counts).toMatchObject({ succeeded: 10, running: handed.length, queued: 30 - 10 - handed.length });
  });

  it('writes the same document, byte for byte, as complete does (patched in place by SQLite)', async () => {
    // Two stores driven the same way (same clock, same seeded ids); one completes with complete, the other with completeAndClaim.
    const otherDir = mkdtempSync(join(tmpdir(), 'agentq-complete-claim-'));
    const otherClock = new ManualClock(clock.now());
    const other = new SqliteBackend({ path: join(otherDir, 'agentq.db'), clock: otherClock, random: seededRandom(3) });
    try {
      const results = [null, 'done', 'héllo \u2028 😀 \\ " \n \u0001 \t', 'lone \ud800 surrogate', '{"json": [1, 2.50, 1e21]}', ''];
      const drive = async (b: SqliteBackend, c: ManualClock, viaClaim: boolean) => {
        const docs: string[] = [];
        for (const [i, result] of results.entries()) {
          await b.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme-1', input: `input ${i} é 😀 "quoted" \\`, max_attempts: 3, estimated_seconds: 2.5 });
          c.advance(7);
          const [l] = await b.claim({ ...claimReq, leaseMs: 5_000 });
          if (i % 2 === 1) {
            await b.beginEffect(l!, 'email');
            await b.finishEffect(l!, 'email', { sent: true, n: 1.5 });
            await b.checkpoint(l!, { step: i, note: 'ü' });
          }
          if (i === 2) {
            // A retry first: the job's second attempt is the one completed.
            await b.fail(l!, { code: 'PROVIDER_429', message: 'slow', retryable: true });
            c.advance(10 * 60_000);
            const [again] = await b.claim({ ...claimReq, leaseMs: 5_000 });
            c.advance(3);
            if (viaClaim) expect((await b.completeAndClaim(again!, result, claimReq)).next).toEqual([]);
            else await b.complete(again!, result);
          } else {
            c.advance(3);
            if (viaClaim) expect((await b.completeAndClaim(l!, result, claimReq)).next).toEqual([]);
            else await b.complete(l!, result);
          }
          docs.push((await b.get(l!.jobId))!.job_id);
        }
        return docs;
      };
      const idsA = await drive(other, otherClock, false);
      const idsB = await drive(backend, clock, true);
      expect(idsB).toEqual(idsA);
      const read = (p: string) => {
        const db = new Database(p, { readonly: true });
        try {
          return db.prepare('SELECT id, state, updated_at, lease_expires_at, partial, attempt_seq, attempt_started_at, doc FROM jobs ORDER BY id').all();
        } finally {
          db.close();
        }
      };
      expect(read(path)).toEqual(read(join(otherDir, 'agentq.db')));
      const events = (p: string) => {
        const db = new Database(p, { readonly: true });
        try {
          return db.prepare('SELECT seq, job_id, queue, tenant, type, at, from_state, to_state, attempt, data FROM events ORDER BY seq').all();
        } finally {
          db.close();
        }
      };
      expect(events(path)).toEqual(events(join(otherDir, 'agentq.db')));
      expect(await backend.stats('q')).toEqual(await other.stats('q'));
    } finally {
      await other.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('keeps the completions of a commit whose claim fails, and hands out nothing', async () => {
    for (let i = 0; i < 6; i++) await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const held = await backend.claim({ ...claimReq, max: 3 });
    // The claim writes its jobs, then fails at its events: the whole commit runs again, the claim alone rolled back.
    exec(`CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.type = 'claimed' BEGIN SELECT RAISE(ABORT, 'boom on purpose'); END;`);
    const results = await Promise.all(held.map((l) => backend.completeAndClaim(l, null, claimReq)));
    exec('DROP TRIGGER boom');
    expect(results.map((r) => r.next)).toEqual([[], [], []]);
    for (const l of held) expect((await backend.get(l.jobId))!.state).toBe('succeeded');
    expect((await backend.stats('q')).counts).toMatchObject({ succeeded: 3, running: 0, queued: 3 });
    expect(await backend.claim({ ...claimReq, max: 10 })).toHaveLength(3);
  });
});
