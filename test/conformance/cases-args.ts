/**
 * Arguments of the wrong type, as a JavaScript caller can pass them: every backend refuses them
 * with the same ValidationError naming the rule, before it touches its store (SQLite threw a
 * RangeError for `stats({ queue })`, returned null for `get(42)` and took `events({ since: NaN })`).
 */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { ValidationError } from '../../src/core/errors.js';
import { claimOne, req, useFixture, type MakeFixture } from './fixture.js';

type Call = [string, (b: Backend) => Promise<unknown>, RegExp];

/* eslint-disable @typescript-eslint/no-explicit-any */
const any = (v: unknown): any => v;

const page = { limit: 10 };
/** The rule an empty, blank or control-character job id breaks. */
const ID_RULE = /job id must be 1-1024 characters, not all blank, without control characters/;
const LEASE = { jobId: 'job_01JAAAAAAAAAAAAAAAAAAAAAAA', fence: 1 };
const CALLS: Call[] = [
  ['get(42)', (b) => b.get(any(42)), /job id must be a string/],
  ['get(null)', (b) => b.get(any(null)), /job id must be a string/],
  ['cancel(42)', (b) => b.cancel(any(42)), /job id must be a string/],
  ['dlqGet(42)', (b) => b.dlqGet(any(42)), /job id must be a string/],
  ['dlqRaw({})', (b) => b.dlqRaw(any({})), /job id must be a string/],
  ['getRun(42)', (b) => b.getRun(any(42)), /run id must be a string/],
  ['ledger(42)', (b) => b.ledger(any(42), page), /run id must be a string/],
  ['stats({ queue })', (b) => b.stats(any({ queue: 'q' })), /queue must be a non-empty string/],
  ['stats(undefined)', (b) => b.stats(any(undefined)), /queue must be a non-empty string/],
  ['stats(q, { endsWindowMs: "1h" })', (b) => b.stats('q', any({ endsWindowMs: '1h' })), /endsWindowMs must be/],
  ['readLock(42)', (b) => b.readLock(any(42)), /queue must be a non-empty string/],
  ['breakLock(null)', (b) => b.breakLock(any(null)), /queue must be a non-empty string/],
  ['list(null)', (b) => b.list(any(null), page), /filter must be an object/],
  ['list({ queue: 42 })', (b) => b.list(any({ queue: 42 }), page), /queue must be a non-empty string/],
  ['list({ tenant: {} })', (b) => b.list(any({ tenant: {} }), page), /tenant must be a non-empty string/],
  ['list({ workflow: 1 })', (b) => b.list(any({ workflow: 1 }), page), /workflow must be a non-empty string/],
  ['list({ since: NaN })', (b) => b.list(any({ since: NaN }), page), /since must be a time in epoch ms/],
  ['list({ until: "2026" })', (b) => b.list(any({ until: '2026' }), page), /until must be a time in epoch ms/],
  ['list({ states: "queued" })', (b) => b.list(any({ states: 'queued' }), page), /states must be an array/],
  ['list({}, null)', (b) => b.list({}, any(null)), /page must be an object/],
  ['list({}, { limit: "10" })', (b) => b.list({}, any({ limit: '10' })), /limit must be an integer/],
  ['listRuns({ queue: 1 })', (b) => b.listRuns(any({ queue: 1 }), page), /queue must be a non-empty string/],
  ['dlqList({ since: NaN })', (b) => b.dlqList(any({ since: NaN }), page), /since must be a time in epoch ms/],
  ['dlqList({ queue: 42 })', (b) => b.dlqList(any({ queue: 42 }), page), /queue must be a non-empty string/],
  ['dlqList({ errorCodes: "X" })', (b) => b.dlqList(any({ errorCodes: 'X' }), page), /errorCodes must be an array of strings/],
  ['dlqList({ minAttempts: "2" })', (b) => b.dlqList(any({ minAttempts: '2' }), page), /minAttempts must be a whole number/],
  ['dlqList({ expired: "yes" })', (b) => b.dlqList(any({ expired: 'yes' }), page), /expired must be true or false/],
  ['dlqList({ reason: "bad" })', (b) => b.dlqList(any({ reason: 'bad' }), page), /reason must be one of/],
  ['dlqRows({ grep: 42 })', (b) => b.dlqRows(any({ grep: 42 }), page), /grep must be 1-200 characters/],
  ['dlqRows({ now: "x" })', (b) => b.dlqRows(any({ now: 'x' }), page), /now must be a time in epoch ms/],
  ['dlqRows(undefined)', (b) => b.dlqRows(any(undefined), page), /filter must be an object/],
  // the workers' side: claim took a numeric queue or no workerId (and claimed nothing, or leased to
  // "undefined"); heartbeat(null) and a lease of the wrong shape threw TypeErrors
  ['claim(null)', (b) => b.claim(any(null)), /claim request must be an object/],
  ['claim({ queue: 42 })', (b) => b.claim(any({ queue: 42, workerId: 'w', max: 1, leaseMs: 1000 })), /queue must be a non-empty string/],
  ['claim() without workerId', (b) => b.claim(any({ queue: 'q', max: 1, leaseMs: 1000 })), /workerId must be a non-empty string/],
  ['heartbeat(null)', (b) => b.heartbeat(any(null), 1000), /leases must be an array/],
  ['heartbeat([{ jobId: 42 }])', (b) => b.heartbeat(any([{ jobId: 42, fence: 1 }]), 1000), /lease must be an object with a string jobId and a whole-number fence/],
  ['checkpoint(null)', (b) => b.checkpoint(any(null), {}), /lease must be an object with a string jobId/],
  ['complete({ fence: "1" })', (b) => b.complete(any({ jobId: 'job_01JAAAAAAAAAAAAAAAAAAAAAAA', fence: '1' }), null), /lease must be an object/],
  ['release(undefined)', (b) => b.release(any(undefined)), /lease must be an object/],
  // fail() stored { code: 1 } as the job's last_error (a number where every reader expects a code)
  ['fail(lease, null)', (b) => b.fail(LEASE, any(null)), /failure must be an object/],
  ['fail(lease, { code: "" })', (b) => b.fail(LEASE, any({ code: '', message: 'x', retryable: true })), /failure code must be a string of 1-128 characters/],
  ['fail(lease, { code: 1 })', (b) => b.fail(LEASE, any({ code: 1, message: 'x', retryable: true })), /failure code must be a string of 1-128 characters/],
  ['fail(lease, { message: 5 })', (b) => b.fail(LEASE, any({ code: 'X', message: 5, retryable: true })), /failure message must be a string/],
  // a direct caller stored a message of any size in the job and its DLQ entry
  ['fail(lease, { message: 70,000 characters })', (b) => b.fail(LEASE, { code: 'X', message: 'm'.repeat(70_000), retryable: true, workerVersion: null }), /failure message must be at most 65536 characters, got 70000/],
  ['fail(lease, { retryable: "yes" })', (b) => b.fail(LEASE, any({ code: 'X', message: 'm', retryable: 'yes' })), /failure retryable must be true or false/],
  ['acquireLock(q, null)', (b) => b.acquireLock('q', any(null)), /lock holder must be an object/],
  ['createRun(null)', (b) => b.createRun(any(null), []), /run must be an object/],
  ['applyRunItems(null)', (b) => b.applyRunItems(any(null)), /apply request must be an object/],
  // list({ queue: '' }) matched nothing on SQLite and every queue on Redis; stats('') answered for a
  // queue that cannot exist; endsWindowMs past the kept minutes reported a window never counted
  ['list({ queue: "" })', (b) => b.list(any({ queue: '' }), page), /queue must be a non-empty string/],
  ['dlqList({ tenant: "" })', (b) => b.dlqList(any({ tenant: '' }), page), /tenant must be a non-empty string/],
  ['dlqRows({ grep: "" })', (b) => b.dlqRows(any({ grep: '' }), page), /grep must be 1-200 characters/],
  ['stats("")', (b) => b.stats(''), /queue must be a non-empty string/],
  ['stats(q, { endsWindowMs: 1e15 })', (b) => b.stats('q', { endsWindowMs: 1e15 }), /endsWindowMs must be at most/],
  ['ledger(run, page, "nope")', (b) => b.ledger('run_01JAAAAAAAAAAAAAAAAAAAAAAA', page, any('nope')), /ledger status must be one of/],
  ['list({}, { cursor: 42 })', (b) => b.list({}, any({ limit: 10, cursor: 42 })), /page cursor number is not one a page returned/],
  ['dlqList({}, { cursor: "" })', (b) => b.dlqList({}, { limit: 10, cursor: '' }), /page cursor an empty string is not one a page returned/],
  ['listRuns({}, { cursor: {} })', (b) => b.listRuns({}, any({ limit: 10, cursor: {} })), /page cursor object is not one a page returned/],
  // an empty, blank or control-character id is a mistake (an unset variable, a pasted line end),
  // not an id no job has: get('') answered null and events({ jobId: '' }) listed every job's events
  // on Redis where SQLite listed none
  ['get("")', (b) => b.get(''), ID_RULE],
  ['get("   ")', (b) => b.get('   '), ID_RULE],
  ['get(id + "\\n")', (b) => b.get('job_01JAAAAAAAAAAAAAAAAAAAAAAA\n'), ID_RULE],
  ['get(id + "\\u009b")', (b) => b.get('job_01JAAAAAAAAAAAAAAAAAAAAAAA\u009b'), ID_RULE],
  ['get(2,000 characters)', (b) => b.get('j'.repeat(2000)), ID_RULE],
  ['cancel("")', (b) => b.cancel(''), ID_RULE],
  ['dlqGet("\\t")', (b) => b.dlqGet('\t'), ID_RULE],
  ['dlqRaw("")', (b) => b.dlqRaw(''), ID_RULE],
  ['getRun("")', (b) => b.getRun(''), /run id must be 1-1024 characters/],
  ['ledger(" ")', (b) => b.ledger(' ', page), /run id must be 1-1024 characters/],
  ['applyRunItems({ runId: "" })', (b) => b.applyRunItems({ runId: '', jobIds: [], now: 0 }), /run id must be 1-1024 characters/],
  ['heartbeat([{ jobId: "" }])', (b) => b.heartbeat([{ jobId: '', fence: 1 }], 1000), ID_RULE],
  ['complete({ jobId: "\\u0000" })', (b) => b.complete({ jobId: '\u0000', fence: 1 }, null), ID_RULE],
];

async function drain(it: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of it) break;
}

const EVENT_CALLS: Array<[string, unknown, RegExp]> = [
  ['events({ since: NaN })', { since: NaN }, /since must be a time in epoch ms/],
  ['events({ queue: 42 })', { queue: 42 }, /queue must be a non-empty string/],
  ['events({ jobId: 42 })', { jobId: 42 }, /job id must be a string/],
  ['events({ afterSeq: 5 })', { afterSeq: 5 }, /afterSeq must be a string/],
  ['events({ follow: "yes" })', { follow: 'yes' }, /follow must be true or false/],
  ['events(null)', null, /query must be an object/],
  // SQLite read '' (and ' 5', '1e3') through Number(): '' listed from the start, where Redis refused it
  ['events({ afterSeq: "" })', { afterSeq: '' }, /event cursor "" is not a sequence number of this backend/],
  ['events({ afterSeq: "1e3" })', { afterSeq: '1e3' }, /event cursor "1e3" is not a sequence number of this backend/],
  ['events({ jobId: "" })', { jobId: '' }, ID_RULE],
  ['events({ jobId: " " })', { jobId: ' ' }, ID_RULE],
];

export function argCases(make: MakeFixture): void {
  describe('arguments of the wrong type', () => {
    const fx = useFixture(make);

    it.each(CALLS)('%s is refused with a ValidationError naming the rule', async (_name, call, rule) => {
      const err = await call(fx().backend).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(rule);
    });

    // A cursor's form is not checked: a page can end on a record another tool wrote (its id any
    // string), and the listing must go on from it.
    it('a string cursor of any form pages on: an id no agentq made, or none at all, is a last page, not an error', async () => {
      const { backend } = fx();
      for (const cursor of ['job_01JMALFORMED00000000000000', 'legacy-row-7', 'zzz']) {
        expect((await backend.list({}, { limit: 10, cursor })).items).toEqual([]);
        expect((await backend.dlqList({}, { limit: 10, cursor })).items).toEqual([]);
      }
    });

    it.each(EVENT_CALLS)('%s is refused with a ValidationError naming the rule', async (_name, query, rule) => {
      const err = await drain(fx().backend.events(any(query))).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(rule);
    });
  });
}

/**
 * What a worker stores with the job is capped on every backend, as the CLI caps it: a checkpoint
 * and an effect's result at 64 KiB, a job's result at 16 MiB (the most `worker --max-result-bytes`
 * keeps). The library stored a 20 MB result and a 70,000-character checkpoint in the job record,
 * which every later read of the job (list, inspect, the DLQ) then carried.
 */
export function sizeCases(make: MakeFixture): void {
  describe('sizes of what a worker stores', () => {
    const fx = useFixture(make);

    it('a checkpoint over 64 KiB is refused with a ValidationError before anything is written', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'sizes' }));
      const lease = await claimOne(backend, 'sizes');
      await backend.checkpoint(lease, { step: 1 });
      const err = await backend.checkpoint(lease, { notes: 'x'.repeat(70_000) }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(/checkpoint is \d+ bytes as JSON; the limit is 65536 bytes \(64 KiB\)/);
      expect((await backend.get(lease.jobId))?.checkpoint).toEqual({ step: 1 });
      // exactly at the limit is kept (a string is measured by its UTF-8 bytes)
      await backend.checkpoint(lease, 'é'.repeat(32 * 1024));
      expect((await backend.get(lease.jobId))?.checkpoint).toBe('é'.repeat(32 * 1024));
    });

    it('an effect result over 64 KiB is refused, and the effect stays started', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'sizes' }));
      const lease = await claimOne(backend, 'sizes');
      await backend.beginEffect(lease, 'k');
      const err = await backend.finishEffect(lease, 'k', { body: 'y'.repeat(70_000) }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(/result of effect "k" is \d+ bytes as JSON; the limit is 65536 bytes/);
      expect((await backend.beginEffect(lease, 'k')).status).toBe('started');
    });

    it('a job result over 16 MiB, or not a string, is refused and the job stays running', async () => {
      const { backend } = fx();
      await backend.submit(req({ queue: 'sizes' }));
      const lease = await claimOne(backend, 'sizes');
      const big = await backend.complete(lease, 'r'.repeat(16 * 1024 * 1024 + 1)).then(() => null, (e: unknown) => e);
      expect(big).toBeInstanceOf(ValidationError);
      expect((big as Error).message).toMatch(/job result is 16777217 bytes; the limit is 16777216 bytes \(16 MiB\)/);
      const obj = await backend.complete(lease, any({ ok: true })).then(() => null, (e: unknown) => e);
      expect(obj).toBeInstanceOf(ValidationError);
      expect((obj as Error).message).toMatch(/job result must be a string or null/);
      expect((await backend.get(lease.jobId))?.state).toBe('running');
      expect((await backend.complete(lease, 'fine')).result).toBe('fine');
    });
  });
}
