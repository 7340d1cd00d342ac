/**
 * The light DLQ listing (`dlqRows`, issue 6): the same entries, filters and
 * pages as `dlqList`, each row exactly what its full entry says, without the
 * job document.
 */
import { describe, expect, it } from 'vitest';
import { DLQ_ROW_MESSAGE_CHARS, type Backend, type DlqFilter, type DlqRow } from '../../src/backend/contract.js';
import type { DlqEntry } from '../../src/core/schemas.js';
import { claimOne, makeDead, req, runRecord, useFixture, type ConformanceFixture, type MakeFixture } from './fixture.js';

/** What a row must say, derived from the full entry. */
function expectedRow(e: DlqEntry): DlqRow {
  return {
    job_id: e.job_id,
    queue: e.queue,
    tenant_id: e.tenant_id,
    workflow: e.workflow,
    reason: e.reason,
    error_code: e.error_code,
    error_message: [...e.error_message].slice(0, DLQ_ROW_MESSAGE_CHARS).join(''),
    attempts: e.attempts,
    max_attempts: e.max_attempts,
    dead_at_ms: Date.parse(e.dead_at),
    deadline_at_ms: e.deadline_at === null ? null : Date.parse(e.deadline_at),
    partial: e.partial,
    redrive_count: e.redrive_count,
    malformed: e.malformed !== null,
  };
}

async function allPages<T>(read: (cursor: string | null) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const page = await read(cursor);
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return out;
}

async function expectRowsMatchEntries(backend: Backend, filter: DlqFilter, limit: number): Promise<DlqRow[]> {
  const entries = await allPages((cursor) => backend.dlqList(filter, { limit, cursor }));
  const rows = await allPages((cursor) => backend.dlqRows(filter, { limit, cursor }));
  expect(rows, JSON.stringify(filter)).toEqual(entries.map(expectedRow));
  return rows;
}

/** A DLQ with one entry of every kind the listing must render alike. */
async function variedDlq(f: ConformanceFixture): Promise<Record<string, string>> {
  const { backend, clock } = f;
  const ids: Record<string, string> = {};
  ids.permanent = (await makeDead(f, { queue: 'research', tenant: 'acme', code: 'PROVIDER_429', message: 'Rate limited by provider' })).job_id;
  clock.advance(1_000);
  ids.exhausted = (await makeDead(f, { queue: 'research', tenant: 'globex', code: 'TOOL_TIMEOUT', attempts: 2, workflow: 'triage:v2' })).job_id;
  clock.advance(1_000);
  ids.partial = (await makeDead(f, { queue: 'research', tenant: 'acme', code: 'PERMISSION', withEffect: true, deadlineInMs: 120_000 })).job_id;
  clock.advance(1_000);
  // A long message with characters outside the BMP: a row keeps the first code points only, never half a pair.
  const long = '😀 provider said: ' + 'é'.repeat(100) + '😀'.repeat(100) + ' NEEDLE_AT_THE_END';
  ids.long = (await makeDead(f, { queue: 'research', tenant: 'initech', code: 'UPSTREAM_503', message: long, deadlineInMs: 7 * 86_400_000 })).job_id;
  clock.advance(1_000);
  ids.other = (await makeDead(f, { queue: 'other', tenant: 'acme', code: 'VALIDATION' })).job_id;

  // Dead by a lost lease on its last attempt (the claim reaps it).
  const { job: lost } = await backend.submit(req({ queue: 'research', tenant_id: 'acme', max_attempts: 1 }));
  await claimOne(backend, 'research', { leaseMs: 1_000 });
  clock.advance(5_000);
  await backend.claim({ queue: 'research', workerId: 'w2', max: 1, leaseMs: 30_000 });
  ids.leaseLost = lost.job_id;

  // Redriven once, then dead again: the redrive count shows.
  const again = await makeDead(f, { queue: 'research', tenant: 'acme', code: 'PROVIDER_429' });
  const runId = 'run_01JDLQROWS00000000000000R1';
  await backend.createRun(runRecord({ run_id: runId, queue: 'research', action: 'redrive' }, clock.now()), [{ job_id: again.job_id, verdict: 'redrive', detail: null }]);
  await backend.applyRunItems({ runId, jobIds: [again.job_id], now: clock.now() });
  const lease = await claimOne(backend, 'research');
  expect(lease.jobId).toBe(again.job_id);
  await backend.fail(lease, { code: 'PROVIDER_429', message: 'still limited', retryable: false });
  ids.redriven = again.job_id;

  ids.malformed = await f.injectMalformedDlqEntry('research');
  // Not dead: never listed.
  await backend.submit(req({ queue: 'research' }));
  return ids;
}

export function dlqRowsCases(make: MakeFixture): void {
  describe('dlq rows (the light listing)', () => {
    const fx = useFixture(make);

    it('lists the same entries as dlqList, each row what its full entry says, under every filter', async () => {
      const f = fx();
      const ids = await variedDlq(f);
      const all = await expectRowsMatchEntries(f.backend, {}, 100);
      expect(all).toHaveLength(Object.keys(ids).length);
      const byId = new Map(all.map((r) => [r.job_id, r]));
      expect(byId.get(ids.leaseLost!)!.reason).toBe('lease_lost');
      expect(byId.get(ids.exhausted!)).toMatchObject({ reason: 'exhausted', attempts: 2 });
      expect(byId.get(ids.partial!)!.partial).toBe(true);
      expect(byId.get(ids.redriven!)!.redrive_count).toBe(1);
      expect(byId.get(ids.malformed!)!.malformed).toBe(true);
      expect(byId.get(ids.permanent!)!.malformed).toBe(false);
      const longRow = byId.get(ids.long!)!;
      expect([...longRow.error_message]).toHaveLength(DLQ_ROW_MESSAGE_CHARS);
      expect(longRow.error_message.endsWith('😀')).toBe(true);

      const partialDeadline = Date.parse((await f.backend.dlqGet(ids.partial!))!.deadline_at!);
      const filters: DlqFilter[] = [
        { queue: 'research' },
        { queue: 'other' },
        { tenant: 'acme' },
        { workflow: 'triage:v2' },
        { errorCodes: ['PROVIDER_429', 'PERMISSION'] },
        { reason: 'exhausted' },
        { reason: 'lease_lost' },
        { since: Date.parse((await f.backend.dlqGet(ids.partial!))!.dead_at) },
        { until: Date.parse((await f.backend.dlqGet(ids.partial!))!.dead_at) },
        { minAttempts: 2 },
        { maxAttempts: 1 },
        { partial: true },
        { partial: false, queue: 'research' },
        { expired: true, now: partialDeadline },
        { expired: false, now: partialDeadline },
        { expired: true, minRemainingMs: 10 * 60_000 },
        { grep: 'rate LIMITED' },
        { grep: 'globex' },
        // Past the part of the message a row carries: the filter still reads the whole message.
        { grep: 'needle_at_the_end' },
        { grep: '%' },
      ];
      for (const filter of filters) await expectRowsMatchEntries(f.backend, filter, 100);
      expect((await f.backend.dlqRows({ grep: 'needle_at_the_end' }, { limit: 10 })).items.map((r) => r.job_id)).toEqual([ids.long]);
    });

    it('flags a record naming another job or queue as malformed, as its full entry does', async () => {
      const f = fx();
      const sound = await makeDead(f, { queue: 'research' });
      const otherId = await makeDead(f, { queue: 'research' });
      const otherQueue = await makeDead(f, { queue: 'research' });
      // (records copied by hand from another entry or store: valid JSON, another job's)
      await f.damageDlqEntry(otherId.job_id, 'other-job-id');
      await f.damageDlqEntry(otherQueue.job_id, 'other-queue');
      const rows = await expectRowsMatchEntries(f.backend, {}, 100);
      expect(rows.map((r) => [r.job_id, r.queue, r.malformed])).toEqual([
        [sound.job_id, 'research', false],
        [otherId.job_id, 'research', true],
        [otherQueue.job_id, 'research', true],
      ]);
      await expectRowsMatchEntries(f.backend, { queue: 'research' }, 1);
    });

    it('pages by job id with no duplicates or gaps, like dlqList', async () => {
      const f = fx();
      await variedDlq(f);
      for (const limit of [1, 3, 1000]) {
        await expectRowsMatchEntries(f.backend, {}, limit);
        await expectRowsMatchEntries(f.backend, { queue: 'research', tenant: 'acme' }, limit);
      }
    });

    // Regression: on Redis the first dlqRows of a new client, sent in the same tick as another
    // script call (the TUI asks stats for the header while it starts loading), broke ioredis's
    // auto-pipeline and killed the process.
    it('answers when issued together with other calls on a new connection', async () => {
      const f = fx();
      await makeDead(f, { queue: 'research' });
      const [stats, rows, entries] = await Promise.all([
        f.backend.stats('research'),
        f.backend.dlqRows({ queue: 'research' }, { limit: 10 }),
        f.backend.dlqList({ queue: 'research' }, { limit: 10 }),
      ]);
      expect(stats.dlq_size).toBe(1);
      expect(rows.items.map((r) => r.job_id)).toEqual(entries.items.map((e) => e.job_id));
    });

    it('refuses a page limit outside 1..MAX_PAGE_LIMIT', async () => {
      const f = fx();
      await expect(f.backend.dlqRows({}, { limit: 0 })).rejects.toThrow(/limit/);
      await expect(f.backend.dlqRows({}, { limit: 1001 })).rejects.toThrow(/limit/);
    });
  });
}
