/** Reading the DLQ: every filter, paging, raw bytes, malformed entries. */
import { describe, expect, it } from 'vitest';
import type { Backend, DlqFilter } from '../../src/backend/contract.js';
import { MalformedJobError } from '../../src/core/errors.js';
import { DlqEntry } from '../../src/core/schemas.js';
import { claimOne, FOREIGN_JOB_ID, FOREIGN_QUEUE, iso, makeDead, req, runRecord, useFixture, type MakeFixture } from './fixture.js';

async function dlqIds(backend: Backend, filter: DlqFilter): Promise<string[]> {
  return (await backend.dlqList(filter, { limit: 100 })).items.map((e) => e.job_id);
}

export function dlqCases(make: MakeFixture): void {
  describe('dlq list and show', () => {
    const fx = useFixture(make);

    it('applies every filter', async () => {
      const f = fx();
      const { backend, clock } = f;
      const t0 = clock.now();
      const a = await makeDead(f, { queue: 'research', tenant: 'acme', code: 'PROVIDER_429', message: 'Rate limited by provider', attempts: 2 });
      clock.advance(60_000);
      const b = await makeDead(f, { queue: 'research', tenant: 'globex', code: 'VALIDATION', message: 'bad input', workflow: 'triage:v2', deadlineInMs: 3_600_000 });
      clock.advance(60_000);
      const c = await makeDead(f, { queue: 'research', tenant: 'acme', code: 'PERMISSION', message: 'forbidden', withEffect: true, deadlineInMs: 120_000 });
      clock.advance(60_000);
      const d = await makeDead(f, { queue: 'other', tenant: 'acme', code: 'VALIDATION', message: 'x' });
      // A job that is not dead never shows up.
      await backend.submit(req({ queue: 'research' }));

      expect(await dlqIds(backend, {})).toEqual([a.job_id, b.job_id, c.job_id, d.job_id]);
      expect(await dlqIds(backend, { queue: 'research' })).toEqual([a.job_id, b.job_id, c.job_id]);
      expect(await dlqIds(backend, { tenant: 'globex' })).toEqual([b.job_id]);
      expect(await dlqIds(backend, { workflow: 'triage:v2' })).toEqual([b.job_id]);
      expect(await dlqIds(backend, { errorCodes: ['VALIDATION'] })).toEqual([b.job_id, d.job_id]);
      expect(await dlqIds(backend, { errorCodes: ['PROVIDER_429', 'PERMISSION'] })).toEqual([a.job_id, c.job_id]);
      expect(await dlqIds(backend, { reason: 'exhausted' })).toEqual([a.job_id]);
      expect(await dlqIds(backend, { reason: 'permanent', queue: 'research' })).toEqual([b.job_id, c.job_id]);
      expect(await dlqIds(backend, { since: t0 + 60_000 })).toEqual([b.job_id, c.job_id, d.job_id]);
      expect(await dlqIds(backend, { until: t0 + 120_000 })).toEqual([a.job_id, b.job_id]);
      expect(await dlqIds(backend, { minAttempts: 2 })).toEqual([a.job_id]);
      expect(await dlqIds(backend, { maxAttempts: 1 })).toEqual([b.job_id, c.job_id, d.job_id]);
      expect(await dlqIds(backend, { partial: true })).toEqual([c.job_id]);
      expect(await dlqIds(backend, { partial: false, queue: 'research' })).toEqual([a.job_id, b.job_id]);
      expect(await dlqIds(backend, { grep: 'rate LIMITED' })).toEqual([a.job_id]);
      expect(await dlqIds(backend, { grep: 'globex' })).toEqual([b.job_id]);
      expect(await dlqIds(backend, { grep: 'permission' })).toEqual([c.job_id]);
      expect(await dlqIds(backend, { grep: d.job_id.slice(-10).toLowerCase() })).toEqual([d.job_id]);
      expect(await dlqIds(backend, { grep: '%' })).toEqual([]);

      // c's deadline is 2 min after its creation: passed once the clock moves past it.
      const cDeadline = Date.parse(c.deadline_at!);
      expect(await dlqIds(backend, { expired: true })).toEqual([]);
      expect(await dlqIds(backend, { expired: true, now: cDeadline })).toEqual([c.job_id]);
      expect(await dlqIds(backend, { expired: false, now: cDeadline })).toEqual([a.job_id, b.job_id, d.job_id]);
      // Less than the minimum remaining time left counts as expired.
      expect(await dlqIds(backend, { expired: true, minRemainingMs: 10 * 60_000 })).toEqual([c.job_id]);
      clock.set(cDeadline + 1);
      expect(await dlqIds(backend, { expired: true })).toEqual([c.job_id]);
    });

    it('pages by job id with no duplicates or gaps, also while entries are added', async () => {
      const f = fx();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await makeDead(f)).job_id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let added = 0;
      do {
        const page = await f.backend.dlqList({}, { limit: 5, cursor });
        seen.push(...page.items.map((e) => e.job_id));
        cursor = page.next_cursor;
        if (added++ < 2) ids.push((await makeDead(f)).job_id);
      } while (cursor !== null);
      expect(seen).toEqual(ids);
    });

    it('returns entries valid against the DlqEntry schema, null for a job not in the DLQ, and the stored bytes', async () => {
      const f = fx();
      const dead = await makeDead(f, { code: 'VALIDATION', message: 'bad' });
      const entry = (await f.backend.dlqGet(dead.job_id))!;
      expect(DlqEntry.parse(entry)).toEqual(entry);
      expect(entry.job).toEqual(dead);
      const { job: live } = await f.backend.submit(req());
      expect(await f.backend.dlqGet(live.job_id)).toBeNull();
      expect(await f.backend.dlqRaw(live.job_id)).toBeNull();
      const raw = await f.backend.dlqRaw(dead.job_id);
      expect(raw).toBeInstanceOf(Uint8Array);
      expect(JSON.parse(Buffer.from(raw!).toString('utf8'))).toMatchObject({ job_id: dead.job_id, state: 'dead' });
    });

    it('lists a malformed entry as malformed, never throws, and never moves or deletes it', async () => {
      const f = fx();
      const good = await makeDead(f, { queue: 'research' });
      const bad = await f.injectMalformedDlqEntry('research');
      const page = await f.backend.dlqList({ queue: 'research' }, { limit: 10 });
      const entry = page.items.find((e) => e.job_id === bad)!;
      expect(entry).toBeDefined();
      expect(entry.malformed).toEqual(expect.any(String));
      expect(entry.job).toBeNull();
      expect(DlqEntry.parse(entry)).toEqual(entry);
      expect((await f.backend.dlqGet(bad))!.malformed).not.toBeNull();
      expect(await f.backend.dlqRaw(bad)).not.toBeNull();

      // Even a plan that (wrongly) says redrive or purge leaves it alone at apply time.
      for (const action of ['redrive', 'purge'] as const) {
        const runId = `run_01JMALF0RMED0000000000000${action === 'redrive' ? 'R' : 'P'}`;
        await f.backend.createRun(runRecord({ run_id: runId, queue: 'research', action }, f.clock.now()), [
          { job_id: bad, verdict: action, detail: null },
          { job_id: good.job_id, verdict: 'skip:partial', detail: 'kept' },
        ]);
        const [item] = await f.backend.applyRunItems({ runId, jobIds: [bad], now: f.clock.now() });
        expect(item).toMatchObject({ job_id: bad, status: 'skipped', verdict: 'skip:malformed' });
      }
      expect((await f.backend.dlqGet(bad))!.malformed).not.toBeNull();
      expect((await f.backend.dlqGet(good.job_id))!.job!.state).toBe('dead');
    });

    it('an entry whose stored record names another job or another queue is malformed: listed under its own id, never moved or deleted', async () => {
      const f = fx();
      let n = 0;
      for (const damage of ['other-job-id', 'other-queue'] as const) {
        for (const action of ['redrive', 'purge'] as const) {
          // (a queue each: nothing of one round is in the next one's DLQ)
          const queue = `q${n}`;
          const runId = `run_01JM1SNAMED00000000000000${n++}`;
          const dead = await makeDead(f, { queue });
          f.clock.advance(1000);
          await f.backend.createRun(runRecord({ run_id: runId, queue, action, options: { plannedAt: iso(f.clock.now()) } }, f.clock.now()), [{ job_id: dead.job_id, verdict: action, detail: null }]);
          // (a record copied by hand from another entry, or from another store, after the plan)
          await f.damageDlqEntry(dead.job_id, damage);
          const page = await f.backend.dlqList({ queue }, { limit: 10 });
          expect(page.items.map((e) => [e.job_id, e.queue, e.malformed === null]), damage).toEqual([[dead.job_id, queue, false]]);
          expect(page.next_cursor).toBeNull();
          expect((await f.backend.dlqGet(dead.job_id))!.malformed, damage).toEqual(expect.any(String));
          const [item] = await f.backend.applyRunItems({ runId, jobIds: [dead.job_id], now: f.clock.now() });
          expect(item, `${damage} ${action}`).toMatchObject({ job_id: dead.job_id, status: 'skipped', verdict: 'skip:malformed' });
          expect((await f.backend.dlqGet(dead.job_id))!.malformed, `${damage} ${action}`).toEqual(expect.any(String)); // still in the DLQ, still reported
        }
      }
    });
  });

  describe('a record that cannot be read, outside the DLQ commands', () => {
    const fx = useFixture(make);

    it('list reports it as unreadable and lists the others; get and cancel say it is malformed (exit 1), never a crash', async () => {
      const f = fx();
      const good = await makeDead(f, { queue: 'research' });
      const bad = await f.injectMalformedDlqEntry('research');
      const page = await f.backend.list({ queue: 'research' }, { limit: 10 });
      expect(page.items.map((j) => j.job_id)).toEqual([good.job_id]);
      expect(page.unreadable).toEqual([{ job_id: bad, why: expect.stringContaining(`the stored record of ${bad} is malformed`) }]);
      // a page that ends on it still carries on after it
      const byOne = await f.backend.list({ queue: 'research' }, { limit: 1 });
      const ids = [...byOne.items.map((j) => j.job_id), ...(byOne.unreadable ?? []).map((u) => u.job_id)];
      expect(ids).toHaveLength(1);
      if (byOne.next_cursor !== null) {
        const next = await f.backend.list({ queue: 'research' }, { limit: 1, cursor: byOne.next_cursor });
        ids.push(...next.items.map((j) => j.job_id), ...(next.unreadable ?? []).map((u) => u.job_id));
      }
      expect(ids.sort()).toEqual([good.job_id, bad].sort());
      for (const call of [() => f.backend.get(bad), () => f.backend.cancel(bad, 'x')]) {
        const err = await call().then(() => null, (e: unknown) => e);
        expect(err).toBeInstanceOf(MalformedJobError);
        expect((err as MalformedJobError).exitCode).toBe(1);
      }
      expect((await f.backend.dlqGet(bad))!.malformed).not.toBeNull();
    });

    it('a record whose job document names another job or queue is unreadable in list and get: never listed as that job, nor made a page cursor', async () => {
      const f = fx();
      for (const damage of ['other-job-id', 'other-queue'] as const) {
        const queue = `named-${damage}`;
        // (a waiting job and a dead one: the listing reads every state's records the same way)
        const dead = await makeDead(f, { queue });
        const { job: waiting } = await f.backend.submit(req({ queue }));
        for (const id of [waiting.job_id, dead.job_id]) await f.damageDlqEntry(id, damage);
        const page = await f.backend.list({ queue }, { limit: 10 });
        expect(page.items, damage).toEqual([]);
        expect(page.unreadable?.map((u) => u.job_id).sort(), damage).toEqual([waiting.job_id, dead.job_id].sort());
        for (const u of page.unreadable ?? []) expect(u.why, damage).toContain(`the stored record of ${u.job_id} is malformed`);
        // (a page ending on it carries on after its own id, never the one it names)
        const first = await f.backend.list({ queue }, { limit: 1 });
        const ids = [...first.items.map((j) => j.job_id), ...(first.unreadable ?? []).map((u) => u.job_id)];
        if (first.next_cursor !== null) {
          expect([waiting.job_id, dead.job_id], damage).toContain(first.next_cursor);
          const next = await f.backend.list({ queue }, { limit: 10, cursor: first.next_cursor });
          ids.push(...next.items.map((j) => j.job_id), ...(next.unreadable ?? []).map((u) => u.job_id));
        }
        expect(ids.sort(), damage).toEqual([waiting.job_id, dead.job_id].sort());
        // every queue (no --queue) too: never listed under the job or queue it names
        const all = await f.backend.list({}, { limit: 100 });
        expect(all.items.map((j) => j.job_id), damage).not.toContain(FOREIGN_JOB_ID);
        expect(all.items.filter((j) => j.queue === FOREIGN_QUEUE), damage).toEqual([]);
        for (const id of [waiting.job_id, dead.job_id]) {
          const err = await f.backend.get(id).then(() => null, (e: unknown) => e);
          expect(err, `${damage} get`).toBeInstanceOf(MalformedJobError);
        }
      }
    });
  });

  describe('dead jobs from different paths', () => {
    const fx = useFixture(make);

    it('keeps the queue, tenant and class of each entry', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'q', tenant_id: 'acme', class: 'interactive', max_attempts: 1 }));
      const lease = await claimOne(backend, 'q');
      await backend.fail(lease, { code: 'BUDGET_EXCEEDED', message: 'too many tokens', retryable: false });
      const [e] = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items;
      expect(e).toMatchObject({ queue: 'q', tenant_id: 'acme', class: 'interactive', workflow: 'research_report:v3', reason: 'permanent', error_code: 'BUDGET_EXCEEDED', deadline_at: null });
      expect(e!.dead_at).toBe(iso(fx().clock.now()));
    });
  });
}
