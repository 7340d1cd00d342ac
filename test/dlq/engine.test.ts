/**
 * The bulk-action engine against the real SQLite backend (a temp file):
 * plans, ledger, lock, pacing, Ctrl-C and resume, as an operator relies on them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRecord } from '../conformance/fixture.js';
import type { Backend, LedgerItem } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { createIdFactory } from '../../src/core/ids.js';
import { applyRun, buildPlan, resumeRun, startRun, type EngineDeps } from '../../src/dlq/engine.js';
import { parseSelector } from '../../src/dlq/filter.js';
import type { RunEvent } from '../../src/dlq/progress.js';
import Database from 'better-sqlite3';
import { parsePlan, serializePlan } from '../../src/core/plan.js';
import { seedDead } from './seed.js';

let dir: string;
let backend: Backend;
let clock: ManualClock;
let deps: EngineDeps;
let slept: number[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-dlq-engine-'));
  clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  backend = new SqliteBackend({ path: join(dir, 'store.db'), clock, random: seededRandom(1) });
  slept = [];
  const ids = createIdFactory(clock, seededRandom(2));
  deps = {
    backend,
    clock,
    // The injected sleep moves the manual clock: pacing is observable without real waiting.
    sleep: async (ms) => {
      slept.push(ms);
      clock.advance(ms);
    },
    newRunId: () => ids('run_'),
    identity: { user: 'alice', host: 'box1', pid: 4242, context: 'prod' },
    probe: () => false,
  };
});

afterEach(async () => {
  await backend.close();
  await rm(dir, { recursive: true, force: true });
});

const sel = (input: Parameters<typeof parseSelector>[0]) => parseSelector(input, clock.now());

async function allLedger(runId: string): Promise<LedgerItem[]> {
  const out: LedgerItem[] = [];
  let cursor: string | null = null;
  do {
    const p = await backend.ledger(runId, { limit: 1000, cursor });
    out.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor !== null);
  return out;
}

describe('redrive engine on SQLite', () => {
  it('plans with verdicts, then moves exactly the planned jobs and leaves the skipped ones dead', async () => {
    const ok = await seedDead(backend, () => clock.now(), Array.from({ length: 5 }, () => ({ queue: 'research' })));
    const [expired] = await seedDead(backend, () => clock.now(), [{ queue: 'research', deadlineInMs: 60_000 }]);
    const [partial] = await seedDead(backend, () => clock.now(), [{ queue: 'research', withEffect: true }]);
    const [other] = await seedDead(backend, () => clock.now(), [{ queue: 'research', code: 'VALIDATION' }]);
    clock.advance(120_000); // the deadline of `expired` passes

    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'research', errorCode: ['PROVIDER_429'] }) });
    expect(plan.totals).toMatchObject({ total: 7, acting: 5, redrive: 5, 'skip:expired': 1, 'skip:partial': 1 });
    expect(plan.items.find((i) => i.job_id === other)).toBeUndefined();

    const run = await startRun(deps, plan, { reason: 'provider quota raised', rate: null, batchSize: 2 });
    expect(run.counts).toEqual({ planned: 5, moved: 0, skipped: 2, failed: 0 });
    const events: RunEvent[] = [];
    const res = await applyRun(deps, run.run_id, { onProgress: (e) => events.push(e) });

    expect(res.interrupted).toBe(false);
    expect(res.run.status).toBe('completed');
    expect(res.run.counts).toEqual({ planned: 0, moved: 5, skipped: 2, failed: 0 });
    for (const id of ok) {
      const job = (await backend.get(id))!;
      expect(job.state).toBe('queued');
      expect(job.lineage).toMatchObject({ redrive_count: 1, redrive_run: run.run_id });
      // Default attempts policy: one more attempt than already made.
      expect(job.max_attempts).toBe(job.attempt + 1);
    }
    for (const id of [expired!, partial!, other!]) expect((await backend.get(id))!.state).toBe('dead');
    expect(events.map((e) => e.kind)).toEqual(['started', 'batch', 'batch', 'batch', 'finished']);
    // The lock is released at the end.
    expect(await backend.readLock('research')).toBeNull();
    // The audit record says who, from where, why and with which filters.
    const audit = (await backend.getRun(run.run_id))!;
    expect(audit).toMatchObject({ user: 'alice@box1', context: 'prod', reason: 'provider quota raised', filters: { queue: 'research', error_code: ['PROVIDER_429'] } });
  });

  it('a stale plan re-checks each job: one that left the DLQ or expired since is skipped with its reason', async () => {
    const [a, b, c] = await seedDead(backend, () => clock.now(), [{ queue: 'q' }, { queue: 'q', deadlineInMs: 3_600_000 }, { queue: 'q' }]);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    expect(plan.totals.acting).toBe(3);
    // Meanwhile: someone redrives `a`, and `b`'s deadline passes.
    const other = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q', grep: a!.slice(-10) }) });
    const otherRun = await startRun(deps, other.plan, { reason: null, rate: null, batchSize: 10 });
    await applyRun(deps, otherRun.run_id);
    clock.advance(2 * 3_600_000);

    const run = await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 });
    const res = await applyRun(deps, run.run_id);
    const ledger = new Map((await allLedger(run.run_id)).map((i) => [i.job_id, i]));
    expect(ledger.get(a!)).toMatchObject({ status: 'skipped', verdict: 'skip:not_in_dlq' });
    expect(ledger.get(b!)).toMatchObject({ status: 'skipped', verdict: 'skip:expired' });
    expect(ledger.get(c!)).toMatchObject({ status: 'moved' });
    expect((await backend.get(a!))!.lineage.redrive_count).toBe(1);
    expect(res.run.counts).toEqual({ planned: 0, moved: 1, skipped: 2, failed: 0 });
  });

  it('paces batches at --rate using the injected clock', async () => {
    await seedDead(backend, () => clock.now(), Array.from({ length: 30 }, () => ({ queue: 'q' })));
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    const run = await startRun(deps, plan, { reason: null, rate: 10, batchSize: 10 });
    const rates: Array<number | null> = [];
    await applyRun(deps, run.run_id, { onProgress: (e) => void (e.kind === 'batch' && rates.push(e.rate_per_s)) });
    // 30 jobs at 10/s in batches of 10: the 2nd and 3rd batch each wait a second.
    expect(slept).toEqual([1000, 1000]);
    // The rate shown is the paced one, not the first batch's burst (10 jobs in no time at all).
    expect(rates).toEqual([null, 10, 10]);
  });

  it('a batch is never larger than one second of the rate: a run recorded with batches of 1000 at 10/s moves 10 at a time', async () => {
    await seedDead(backend, () => clock.now(), Array.from({ length: 30 }, () => ({ queue: 'q' })));
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    const run = await startRun(deps, plan, { reason: null, rate: 10, batchSize: 1000 });
    const sizes: number[] = [];
    let done = 0;
    await applyRun(deps, run.run_id, {
      onProgress: (e) => {
        if (e.kind !== 'batch') return;
        sizes.push(e.done - done);
        done = e.done;
      },
    });
    expect(sizes).toEqual([10, 10, 10]);
    expect(slept).toEqual([1000, 1000]);
  });

  it('skips at apply do not count against --rate: the rate paces what is moved', async () => {
    const ids = await seedDead(backend, () => clock.now(), Array.from({ length: 30 }, () => ({ queue: 'q' })));
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    const run = await startRun(deps, plan, { reason: null, rate: 10, batchSize: 10 });
    // another run moves the first 20 meanwhile: this run skips them (no longer in the DLQ)
    const first20 = [...ids].sort().slice(0, 20);
    const OTHER = 'run_01JOTHERRUN0000000000000A';
    await backend.createRun(runRecord({ run_id: OTHER, queue: 'q', action: 'redrive' }, clock.now()), first20.map((id) => ({ job_id: id, verdict: 'redrive' as const, detail: null })));
    await backend.applyRunItems({ runId: OTHER, jobIds: first20, now: clock.now() });
    const res = await applyRun(deps, run.run_id);
    expect(res.session).toEqual({ moved: 10, skipped: 20, failed: 0 });
    // 20 skips gave their time back: no batch waited
    expect(slept).toEqual([]);
  });

  it('Ctrl-C stops after the current batch; resume finishes with nothing lost or doubled', async () => {
    const ids = await seedDead(backend, () => clock.now(), Array.from({ length: 25 }, () => ({ queue: 'q' })));
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    const run = await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 });
    const ctl = new AbortController();
    const res = await applyRun(deps, run.run_id, {
      signal: ctl.signal,
      onProgress: (e) => {
        if (e.kind === 'batch') ctl.abort(); // Ctrl-C during the first batch
      },
    });
    expect(res.interrupted).toBe(true);
    expect(res.run.status).toBe('interrupted');
    expect(res.run.counts).toEqual({ planned: 15, moved: 10, skipped: 0, failed: 0 });
    expect(await backend.readLock('q')).toBeNull();

    const resumed = await resumeRun(deps, run.run_id);
    expect(resumed.run.status).toBe('completed');
    expect(resumed.session.moved).toBe(15);
    for (const id of ids) expect((await backend.get(id))!.lineage.redrive_count).toBe(1);
    // Resuming a finished run changes nothing.
    const again = await resumeRun(deps, run.run_id);
    expect(again.session).toEqual({ moved: 0, skipped: 0, failed: 0 });
  });

  it('a second bulk action on the same queue is refused naming the holder (exit 75)', async () => {
    await seedDead(backend, () => clock.now(), [{ queue: 'q' }, { queue: 'q' }]);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 }); // holds the lock, never applied
    const bob = { ...deps, identity: { user: 'bob', host: 'box1', pid: 5151, context: null }, probe: () => true };
    const err = await startRun(bob, plan, { reason: null, rate: null, batchSize: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryLaterError);
    expect((err as RetryLaterError).exitCode).toBe(75);
    expect((err as Error).message).toMatch(/holds the q DLQ lock: alice@box1 pid 4242 \(run run_\w+\) since 2026-03-01T00:00:00\.000Z$/);
    // --break-lock refuses while the holder's process is alive …
    await expect(startRun(bob, plan, { reason: null, rate: null, batchSize: 10, lock: { breakLock: true } })).rejects.toThrow(/still running: not breaking it/);
    // … and a holder on another host needs --force too.
    const remote = { ...bob, identity: { ...bob.identity, host: 'box2' } };
    await expect(startRun(remote, plan, { reason: null, rate: null, batchSize: 10, lock: { breakLock: true } })).rejects.toThrow(ValidationError);
    // A dead holder on this host is broken with --break-lock.
    const bobDeadHolder = { ...bob, probe: () => false };
    const run2 = await startRun(bobDeadHolder, plan, { reason: null, rate: null, batchSize: 10, lock: { breakLock: true } });
    expect((await backend.readLock('q'))!.run_id).toBe(run2.run_id);
  });

  it('a lock left by a process killed before it created its run (its run does not exist) is broken without being asked', async () => {
    await seedDead(backend, () => clock.now(), [{ queue: 'q' }]);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    await backend.acquireLock('q', { owner: 'bob@box1 pid 5151', host: 'box1', pid: 5151, run_id: 'run_01JNEVERCREATEDNEVERCREATED', acquired_at: '2026-03-01T00:00:00.000Z' });
    // alive: still refused, as any held lock
    await expect(startRun({ ...deps, probe: () => true }, plan, { reason: null, rate: null, batchSize: 10 })).rejects.toThrow(RetryLaterError);
    const run = await startRun({ ...deps, probe: () => false }, plan, { reason: null, rate: null, batchSize: 10 });
    expect((await backend.readLock('q'))!.run_id).toBe(run.run_id);
  });

  it('resume takes over the lock left by its own killed process, but not one held by a live process', async () => {
    await seedDead(backend, () => clock.now(), [{ queue: 'q' }, { queue: 'q' }]);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }) });
    const run = await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 }); // "killed" before applying
    const later = { ...deps, identity: { ...deps.identity, pid: 777 } };
    await expect(resumeRun({ ...later, probe: () => true }, run.run_id)).rejects.toThrow(RetryLaterError);
    const res = await resumeRun({ ...later, probe: () => false }, run.run_id);
    expect(res.run.counts.moved).toBe(2);
  });

  it('purge deletes planned entries and never a malformed one; expire only takes expired entries', async () => {
    const [gone, keepOther] = await seedDead(backend, () => clock.now(), [{ queue: 'q', code: 'VALIDATION' }, { queue: 'q' }]);
    const purge = await buildPlan(deps, { action: 'purge', selector: sel({ queue: 'q', errorCode: ['VALIDATION'] }) });
    const pr = await startRun(deps, purge.plan, { reason: 'bad input, will not fix', rate: null, batchSize: 10 });
    await applyRun(deps, pr.run_id);
    expect(await backend.get(gone!)).toBeNull();
    expect((await backend.get(keepOther!))!.state).toBe('dead');

    const [late] = await seedDead(backend, () => clock.now(), [{ queue: 'q', deadlineInMs: 1000 }]);
    clock.advance(5000);
    const exp = await buildPlan(deps, { action: 'expire', selector: sel({ queue: 'q' }) });
    expect(exp.plan.totals).toMatchObject({ expire: 1, 'skip:not_expired': 1 });
    const er = await startRun(deps, exp.plan, { reason: null, rate: null, batchSize: 10 });
    await applyRun(deps, er.run_id);
    expect((await backend.get(late!))!.state).toBe('expired');
    expect((await backend.get(keepOther!))!.state).toBe('dead');
  });

  it('quarantines a job redriven --max-redrives times already (default 3)', async () => {
    const [id] = await seedDead(backend, () => clock.now(), [{ queue: 'q' }]);
    const redriveOnce = async (maxRedrives?: number) => {
      const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q' }), maxRedrives });
      if (plan.totals.acting === 0) return plan.items[0]!.verdict;
      const run = await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 });
      await applyRun(deps, run.run_id);
      // It fails again at once: claim it and fail it permanently.
      const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
      await backend.fail(lease!, { code: 'PROVIDER_429', message: 'again', retryable: false });
      return 'redrive';
    };
    expect(await redriveOnce()).toBe('redrive');
    expect(await redriveOnce()).toBe('redrive');
    expect(await redriveOnce()).toBe('redrive');
    expect((await backend.dlqGet(id!))!.redrive_count).toBe(3);
    expect(await redriveOnce()).toBe('skip:quarantined');
    expect(await redriveOnce(4)).toBe('redrive');
  });

  it('applies the attempts policy: one more attempt by default, N more, or a reset', async () => {
    const [a, b, c] = await seedDead(backend, () => clock.now(), [{ queue: 'q', tenant: 'a' }, { queue: 'q', tenant: 'b' }, { queue: 'q', tenant: 'c' }]);
    const run = async (tenant: string, attempts?: { kind: 'reset' } | { kind: 'extra'; n: number }) => {
      const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q', tenant }), attempts });
      const r = await startRun(deps, plan, { reason: null, rate: null, batchSize: 10 });
      await applyRun(deps, r.run_id);
    };
    await run('a');
    await run('b', { kind: 'extra', n: 3 });
    await run('c', { kind: 'reset' });
    const [ja, jb, jc] = await Promise.all([a, b, c].map((id) => backend.get(id!)));
    expect({ attempt: ja!.attempt, max: ja!.max_attempts }).toEqual({ attempt: 1, max: 2 });
    expect({ attempt: jb!.attempt, max: jb!.max_attempts }).toEqual({ attempt: 1, max: 4 });
    expect({ attempt: jc!.attempt, max: jc!.max_attempts }).toEqual({ attempt: 0, max: 1 });
  });

  it('--min-remaining skips jobs that could not finish before their deadline', async () => {
    const [soon, later] = await seedDead(backend, () => clock.now(), [{ queue: 'q', deadlineInMs: 10 * 60_000 }, { queue: 'q', deadlineInMs: 3 * 3_600_000 }]);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'q', minRemaining: '30m' }) });
    const verdicts = Object.fromEntries(plan.items.map((i) => [i.job_id, i.verdict]));
    expect(verdicts).toEqual({ [soon!]: 'skip:expired', [later!]: 'redrive' });
    expect(plan.items.find((i) => i.job_id === soon)!.detail).toMatch(/^only 10m left before the deadline \S+, less than --min-remaining 30m$/);
  });

  it('an empty plan starts no run', async () => {
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'nothing-here' }) });
    expect(plan.items).toEqual([]);
    await expect(startRun(deps, plan, { reason: null, rate: null, batchSize: 10 })).rejects.toThrow(/empty/);
  });

  it('a plan read from a file is checked again in full: an edited verdict cannot redrive a record that fails the schema', async () => {
    const [good, bad] = await seedDead(backend, () => clock.now(), [{ queue: 'research' }, { queue: 'research' }]);
    // A record that parses but breaks the schema, written before the plan (its updated_at is older).
    const db = new Database(join(dir, 'store.db'));
    db.prepare(`UPDATE jobs SET doc = json_set(doc, '$.attempt', 'two') WHERE id = ?`).run(bad);
    db.close();
    clock.advance(1000);
    const { plan } = await buildPlan(deps, { action: 'redrive', selector: sel({ queue: 'research' }) });
    expect(plan.items.find((i) => i.job_id === bad)?.verdict).toBe('skip:malformed');
    // The operator's file, edited to say redrive.
    const file = JSON.parse(serializePlan(plan)) as { items: Array<{ job_id: string; verdict: string }> };
    for (const item of file.items) if (item.job_id === bad) item.verdict = 'redrive';
    const edited = parsePlan(JSON.stringify(file));
    const run = await startRun(deps, edited, { reason: null, rate: null, batchSize: 10 });
    expect(run.options.plannedAt).toBe(plan.created_at);
    await applyRun(deps, run.run_id);
    const byId = new Map((await allLedger(run.run_id)).map((i) => [i.job_id, i]));
    expect(byId.get(bad!)).toMatchObject({ status: 'skipped', verdict: 'skip:malformed' });
    expect(byId.get(good!)).toMatchObject({ status: 'moved' });
    expect((await backend.dlqGet(bad!))!.malformed).not.toBeNull();
  });
});
