/** Producers and operators: submit, get, list, cancel, events, queues. */
import { describe, expect, it } from 'vitest';
import { guardClose } from '../../src/backend/close-guard.js';
import { MAX_PAGE_LIMIT } from '../../src/backend/contract.js';
import { allQueues, surveyQueues } from '../../src/backend/queue-walk.js';
import { ClosedError, IdempotencyConflictError, NotFoundError, ValidationError } from '../../src/core/errors.js';
import { isJobId } from '../../src/core/ids.js';
import { INLINE_INPUT_MAX_BYTES, Job, JobEvent } from '../../src/core/schemas.js';
import { pollUntil } from '../support/poll.js';
import { allEvents, claimOne, eventTypes, iso, req, useFixture, type MakeFixture } from './fixture.js';

export function jobCases(make: MakeFixture): void {
  describe('submit and get', () => {
    const fx = useFixture(make);

    it('returns the stored job, with every envelope field, valid against the Job schema', async () => {
      const { backend, clock } = fx();
      const deadline = iso(clock.now() + 7_200_000);
      const { job, created } = await backend.submit(
        req({
          queue: 'research',
          tenant_id: 'acme',
          operation: 'summarise',
          class: 'interactive',
          input_ref: 's3://bucket/in/doc.pdf',
          input_sha256: 'a'.repeat(64),
          deadline_at: deadline,
          idempotency_key: 'k-1',
          max_attempts: 5,
          trace_id: 'trace-123',
          budget: { tokens: 1000, cost_usd: 2.5 },
          allowed_tools: ['search', 'fetch'],
          estimated_seconds: 120,
        }),
      );
      expect(created).toBe(true);
      expect(isJobId(job.job_id)).toBe(true);
      expect(Job.parse(job)).toEqual(job);
      expect(job).toMatchObject({
        queue: 'research',
        tenant_id: 'acme',
        workflow: 'research_report:v3',
        operation: 'summarise',
        class: 'interactive',
        input: null,
        input_ref: 's3://bucket/in/doc.pdf',
        input_sha256: 'a'.repeat(64),
        deadline_at: deadline,
        idempotency_key: 'k-1',
        attempt: 0,
        max_attempts: 5,
        trace_id: 'trace-123',
        budget: { tokens: 1000, cost_usd: 2.5 },
        allowed_tools: ['search', 'fetch'],
        estimated_seconds: 120,
        state: 'queued',
        outcome: null,
        created_at: iso(clock.now()),
        run_at: iso(clock.now()),
        lease: null,
        effects: [],
        attempts: [],
        dead: null,
        lineage: { redrive_count: 0, redriven_at: null, redrive_run: null },
      });
      const got = await backend.get(job.job_id);
      expect(got).toEqual(job);
    });

    it('applies defaults: queue default, tenant default, class batch, 3 attempts', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ input: 'hello' }));
      expect(job).toMatchObject({ queue: 'default', tenant_id: 'default', class: 'batch', max_attempts: 3, input: 'hello' });
    });

    it('returns null for an unknown job', async () => {
      expect(await fx().backend.get('job_01JZZZZZZZZZZZZZZZZZZZZZZZ')).toBeNull();
    });

    it('starts a job with a future run_at as scheduled', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ run_at: iso(clock.now() + 60_000) }));
      expect(job.state).toBe('scheduled');
      expect(job.run_at).toBe(iso(clock.now() + 60_000));
    });

    it('gives ids that sort by creation time', async () => {
      const { backend, clock } = fx();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await backend.submit(req())).job.job_id);
        if (i % 2) clock.advance(1);
      }
      expect([...ids].sort()).toEqual(ids);
    });
  });

  describe('idempotency', () => {
    const fx = useFixture(make);

    it('returns the same job with created: false for the same key and body', async () => {
      const { backend } = fx();
      const a = await backend.submit(req({ idempotency_key: 'order-7', input: 'x' }));
      const b = await backend.submit(req({ idempotency_key: 'order-7', input: 'x' }));
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(b.job.job_id).toBe(a.job.job_id);
      expect((await backend.list({}, { limit: 10 })).items).toHaveLength(1);
      expect(await eventTypes(backend, a.job.job_id)).toEqual(['submitted']);
    });

    it('a retry whose times were computed again from its own now (a relative deadline) returns the same job, with its first times', async () => {
      const { backend, clock } = fx();
      const a = await backend.submit(req({ idempotency_key: 'order-8', input: 'x', deadline_at: iso(clock.now() + 7_200_000), run_at: iso(clock.now() + 60_000) }));
      clock.advance(5_000);
      const b = await backend.submit(req({ idempotency_key: 'order-8', input: 'x', deadline_at: iso(clock.now() + 7_200_000), run_at: iso(clock.now() + 60_000) }));
      expect(b.created).toBe(false);
      expect(b.job.job_id).toBe(a.job.job_id);
      expect(b.job.deadline_at).toBe(a.job.deadline_at);
    });

    it('refuses the same key with a different body', async () => {
      const { backend } = fx();
      const a = await backend.submit(req({ idempotency_key: 'order-7', input: 'x' }));
      const err = await backend.submit(req({ idempotency_key: 'order-7', input: 'y' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IdempotencyConflictError);
      expect((err as IdempotencyConflictError).existingJobId).toBe(a.job.job_id);
      expect((err as IdempotencyConflictError).exitCode).toBe(2);
    });

    it('scopes keys to a queue', async () => {
      const { backend } = fx();
      const a = await backend.submit(req({ idempotency_key: 'k', queue: 'a' }));
      const b = await backend.submit(req({ idempotency_key: 'k', queue: 'b' }));
      expect(b.created).toBe(true);
      expect(b.job.job_id).not.toBe(a.job.job_id);
    });
  });

  describe('validation', () => {
    const fx = useFixture(make);

    it('accepts inline input of exactly 64 KiB and refuses one byte more, pointing to --input-ref', async () => {
      const { backend } = fx();
      await expect(backend.submit(req({ input: 'a'.repeat(INLINE_INPUT_MAX_BYTES) }))).resolves.toMatchObject({ created: true });
      const err = await backend.submit(req({ input: 'a'.repeat(INLINE_INPUT_MAX_BYTES + 1) })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).code).toBe('INPUT_TOO_LARGE');
      expect((err as ValidationError).hint).toMatch(/--input-ref/);
      expect((await backend.list({}, { limit: 10 })).items).toHaveLength(1);
    });

    it('counts the cap in UTF-8 bytes, not characters', async () => {
      const { backend } = fx();
      // 'é' is two bytes: half the characters already reach the cap.
      await expect(backend.submit(req({ input: 'é'.repeat(INLINE_INPUT_MAX_BYTES / 2 + 1) }))).rejects.toBeInstanceOf(ValidationError);
    });

    it('refuses a deadline in the past and a bad workflow name', async () => {
      const { backend, clock } = fx();
      await expect(backend.submit(req({ deadline_at: iso(clock.now() - 1) }))).rejects.toBeInstanceOf(ValidationError);
      await expect(backend.submit(req({ workflow: 'no-version' }))).rejects.toBeInstanceOf(ValidationError);
    });

    // Regression: SQS read the request's fields before checking it, and threw a bare TypeError.
    it('refuses a request that is not an object (null, a string) with a ValidationError', async () => {
      const { backend } = fx();
      for (const bad of [null, undefined, 'send_invoice:v2']) await expect(backend.submit(bad as never)).rejects.toBeInstanceOf(ValidationError);
    });

    it('refuses page limits outside 1..MAX_PAGE_LIMIT', async () => {
      const { backend } = fx();
      await expect(backend.list({}, { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
      await expect(backend.list({}, { limit: MAX_PAGE_LIMIT + 1 })).rejects.toBeInstanceOf(ValidationError);
    });
  });

  describe('list', () => {
    const fx = useFixture(make);

    // Regression: SQLite refused a state that does not exist; Redis and SQS matched nothing.
    it('refuses a filter state or class that does not exist, the same on every backend', async () => {
      const { backend } = fx();
      await backend.submit(req());
      for (const filter of [{ states: ['bogus'] }, { states: ['queued', 'Queued'] }, { class: 'interative' }]) {
        const err = await backend.list(filter as never, { limit: 10 }).catch((e: unknown) => e);
        expect(err, JSON.stringify(filter)).toBeInstanceOf(ValidationError);
        expect((err as Error).message).toMatch(/^(state|class) must be one of /);
      }
    });

    it('filters by queue, state, tenant, class, workflow and created time', async () => {
      const { backend, clock } = fx();
      const t0 = clock.now();
      const a = (await backend.submit(req({ queue: 'q1', tenant_id: 'acme', class: 'interactive' }))).job;
      clock.advance(1000);
      const b = (await backend.submit(req({ queue: 'q1', tenant_id: 'globex', workflow: 'triage:v1' }))).job;
      clock.advance(1000);
      const c = (await backend.submit(req({ queue: 'q2', tenant_id: 'acme', class: 'maintenance' }))).job;
      await backend.cancel(c.job_id, null);
      const ids = async (filter: Parameters<typeof backend.list>[0]) => (await backend.list(filter, { limit: 100 })).items.map((j) => j.job_id);
      expect(await ids({})).toEqual([a.job_id, b.job_id, c.job_id]);
      expect(await ids({ queue: 'q1' })).toEqual([a.job_id, b.job_id]);
      expect(await ids({ tenant: 'acme' })).toEqual([a.job_id, c.job_id]);
      expect(await ids({ class: 'interactive' })).toEqual([a.job_id]);
      expect(await ids({ workflow: 'triage:v1' })).toEqual([b.job_id]);
      expect(await ids({ states: ['cancelled'] })).toEqual([c.job_id]);
      expect(await ids({ states: ['queued', 'cancelled'], tenant: 'acme' })).toEqual([a.job_id, c.job_id]);
      expect(await ids({ since: t0 + 1000 })).toEqual([b.job_id, c.job_id]);
      expect(await ids({ until: t0 + 1000 })).toEqual([a.job_id]);
      expect(await ids({ since: t0 + 1000, until: t0 + 2000 })).toEqual([b.job_id]);
      expect(await ids({ queue: 'nope' })).toEqual([]);
      // Regression: Redis threw a raw ULIDError for a time past the ULID range or with a fraction
      expect(await ids({ since: 1e15 })).toEqual([]);
      expect(await ids({ since: t0 + 999.5 })).toEqual([b.job_id, c.job_id]);
      expect(await ids({ since: -1, until: 1e15 })).toEqual([a.job_id, b.job_id, c.job_id]);
    });

    it('pages by cursor with no duplicates and no gaps while jobs are being added', async () => {
      const { backend, clock } = fx();
      const before: string[] = [];
      for (let i = 0; i < 23; i++) before.push((await backend.submit(req())).job.job_id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await backend.list({}, { limit: 5, cursor });
        seen.push(...page.items.map((j) => j.job_id));
        cursor = page.next_cursor;
        pages++;
        // New work arriving between pages (later ids) must not shift or repeat what was seen.
        clock.advance(10);
        if (pages < 4) await backend.submit(req());
        expect(pages).toBeLessThan(50);
      } while (cursor !== null);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual(seen);
      for (const id of before) expect(seen).toContain(id);
      expect(seen.length).toBe(23 + 3);
    });

    it('returns next_cursor null on the last page, also when it is exactly full', async () => {
      const { backend } = fx();
      for (let i = 0; i < 4; i++) await backend.submit(req());
      const p1 = await backend.list({}, { limit: 2 });
      expect(p1.next_cursor).not.toBeNull();
      const p2 = await backend.list({}, { limit: 2, cursor: p1.next_cursor });
      expect(p2.items).toHaveLength(2);
      expect(p2.next_cursor).toBeNull();
    });
  });

  describe('cancel', () => {
    const fx = useFixture(make);

    it('ends a queued job at once', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      const r = await backend.cancel(job.job_id, 'customer withdrew');
      expect(r.status).toBe('cancelled');
      expect(r.job).toMatchObject({ state: 'cancelled', outcome: 'cancelled', cancel_reason: 'customer withdrew' });
      expect(r.job.ended_at).not.toBeNull();
      expect(await backend.get(job.job_id)).toMatchObject({ state: 'cancelled' });
      expect(await backend.claim({ queue: 'default', workerId: 'w', max: 5, leaseMs: 1000 })).toEqual([]);
    });

    it('ends a scheduled job at once', async () => {
      const { backend, clock } = fx();
      const { job } = await backend.submit(req({ run_at: iso(clock.now() + 60_000) }));
      expect((await backend.cancel(job.job_id, null)).status).toBe('cancelled');
    });

    it('flags a running job and leaves it running', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      await claimOne(backend);
      const r = await backend.cancel(job.job_id, 'stop');
      expect(r.status).toBe('cancel_requested');
      expect(r.job.state).toBe('running');
      expect(r.job.cancel_requested_at).not.toBeNull();
      expect((await backend.get(job.job_id))!.state).toBe('running');
    });

    it('refuses to change a terminal job (already_terminal) and changes nothing', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req());
      await backend.cancel(job.job_id, 'first');
      const again = await backend.cancel(job.job_id, 'second');
      expect(again.status).toBe('already_terminal');
      expect(again.job.cancel_reason).toBe('first');
      expect(await eventTypes(backend, job.job_id)).toEqual(['submitted', 'cancelled']);
    });

    // Regression: a library cancel took any reason: SQLite stored a number or an object as the job's
    // cancel_reason (Redis its text), kept a megabyte of text, and a left-out reason as no field at all.
    it('takes a reason of 1-500 characters or none, the same on every backend, and refuses anything else before changing the job', async () => {
      const { backend } = fx();
      for (const reason of [42, { why: 'x' }, '', 'r'.repeat(501)] as unknown as string[]) {
        const { job } = await backend.submit(req());
        const err = await backend.cancel(job.job_id, reason).catch((e: unknown) => e);
        expect(err, JSON.stringify(reason)).toBeInstanceOf(ValidationError);
        expect((err as Error).message).toMatch(/cancel reason must be null or 1-500 characters/);
        expect((await backend.get(job.job_id))!.state).toBe('queued');
      }
      const { job } = await backend.submit(req());
      const left = await backend.cancel(job.job_id);
      expect(left.status).toBe('cancelled');
      expect((await backend.get(job.job_id))!.cancel_reason).toBeNull();
      const { job: other } = await backend.submit(req());
      await backend.cancel(other.job_id, 'r'.repeat(500));
      expect((await backend.get(other.job_id))!.cancel_reason).toBe('r'.repeat(500));
    });

    it('throws NotFoundError (exit 5) for an unknown job', async () => {
      const err = await fx().backend.cancel('job_01JZZZZZZZZZZZZZZZZZZZZZZZ', null).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotFoundError);
      expect((err as NotFoundError).exitCode).toBe(5);
    });
  });

  describe('events and queues', () => {
    const fx = useFixture(make);

    it('records an event for every transition, in seq order, valid against the JobEvent schema', async () => {
      const { backend } = fx();
      const { job } = await backend.submit(req({ tenant_id: 'acme' }));
      const lease = await claimOne(backend);
      await backend.complete(lease, 'ok');
      const events = await allEvents(backend, { jobId: job.job_id });
      expect(events.map((e) => [e.type, e.from_state, e.to_state])).toEqual([
        ['submitted', null, 'queued'],
        ['claimed', 'queued', 'running'],
        ['succeeded', 'running', 'succeeded'],
      ]);
      for (const e of events) {
        expect(JobEvent.parse(e)).toEqual(e);
        expect(e).toMatchObject({ job_id: job.job_id, queue: 'default', tenant_id: 'acme' });
      }
      expect(events[1]!.attempt).toBe(1);
    });

    it('filters by queue and job, and resumes after a seq', async () => {
      const { backend } = fx();
      const a = (await backend.submit(req({ queue: 'qa' }))).job;
      // Redis: each queue shard has its own stream, whose ids are the server's milliseconds, so two
      // events of different queues in the same millisecond can share a seq, and a resume after one
      // also skips the other (README, "Redis"). Wait for the next millisecond so the seqs differ.
      const t = Date.now();
      await pollUntil(() => Date.now() > t, { what: 'the next millisecond' });
      const b = (await backend.submit(req({ queue: 'qb' }))).job;
      await backend.cancel(a.job_id, null);
      expect((await allEvents(backend, { queue: 'qa' })).map((e) => e.job_id)).toEqual([a.job_id, a.job_id]);
      expect((await allEvents(backend, { jobId: b.job_id })).map((e) => e.type)).toEqual(['submitted']);
      const all = await allEvents(backend);
      expect(all).toHaveLength(3);
      const rest = await allEvents(backend, { afterSeq: all[0]!.seq });
      expect(rest.map((e) => e.seq)).toEqual(all.slice(1).map((e) => e.seq));
    });

    it('filters by time', async () => {
      const { backend, clock } = fx();
      await backend.submit(req());
      clock.advance(5000);
      const t = clock.now();
      const { job } = await backend.submit(req());
      expect((await allEvents(backend, { since: t })).map((e) => e.job_id)).toEqual([job.job_id]);
    });

    it('returns exactly the events from a time on, across many pages of events', async () => {
      const { backend, clock } = fx();
      const ids: string[] = [];
      for (let i = 0; i < 1200; i++) {
        ids.push((await backend.submit(req())).job.job_id);
        clock.advance(1000);
      }
      const from = Date.parse((await backend.get(ids[700]!))!.created_at);
      const got = await allEvents(backend, { since: from });
      expect(got.map((e) => e.job_id)).toEqual(ids.slice(700));
      expect((await allEvents(backend, { since: clock.now() + 1 }))).toEqual([]);
    });

    it('reads only the newest N events (oldest first), by queue, job and time, and follows after them', async () => {
      const { backend, clock } = fx();
      const nextMs = async () => {
        // (Redis: two queues' streams may share a millisecond's seq; see the test above)
        const t = Date.now();
        await pollUntil(() => Date.now() > t, { what: 'the next millisecond' });
      };
      const a = (await backend.submit(req({ queue: 'qa' }))).job;
      await nextMs();
      await backend.submit(req({ queue: 'qb' }));
      await nextMs();
      clock.advance(5000);
      await backend.cancel(a.job_id, null);
      await nextMs();
      await backend.submit(req({ queue: 'qb' }));
      await nextMs();
      await backend.submit(req({ queue: 'qa' }));
      const all = await allEvents(backend);
      expect(all).toHaveLength(5);
      const seqs = (es: JobEvent[]) => es.map((e) => e.seq);
      const newest = async (q: Parameters<typeof backend.events>[0]) => {
        const out: JobEvent[] = [];
        for await (const e of backend.events(q)) out.push(e);
        return out;
      };
      expect(seqs(await newest({ last: 3 }))).toEqual(seqs(all.slice(2)));
      expect(seqs(await newest({ last: 10 }))).toEqual(seqs(all));
      expect(await newest({ last: 0 })).toEqual([]);
      const qa = await allEvents(backend, { queue: 'qa' });
      expect(qa).toHaveLength(3);
      expect(seqs(await newest({ queue: 'qa', last: 2 }))).toEqual(seqs(qa.slice(1)));
      expect((await newest({ jobId: a.job_id, last: 1 })).map((e) => e.type)).toEqual(['cancelled']);
      // the newest 3 of those from a time on: only 3 are that recent
      expect(seqs(await newest({ since: clock.now(), last: 4 }))).toEqual(seqs(all.slice(2)));
      expect(seqs(await newest({ afterSeq: all[3]!.seq, last: 3 }))).toEqual(seqs(all.slice(4)));
      await expect(newest({ last: -1 })).rejects.toThrow(/last must be a whole number/);
      // following after the newest N: the new events only, once
      const ac = new AbortController();
      const seen: JobEvent[] = [];
      const done = (async () => {
        for await (const e of backend.events({ last: 1, follow: true, signal: ac.signal })) seen.push(e);
      })();
      await pollUntil(() => seen.length === 1, { what: 'the newest event' });
      const { job } = await backend.submit(req({ queue: 'qb' }));
      await pollUntil(() => seen.length === 2, { what: 'the new event' });
      expect(seen[0]!.seq).toBe(all[4]!.seq);
      expect(seen[1]!.job_id).toBe(job.job_id);
      ac.abort();
      await done;
    });

    it('with last 0, follows from now on: none of the history', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const ac = new AbortController();
      const seen: JobEvent[] = [];
      let started = false;
      const done = (async () => {
        for await (const e of backend.events({ last: 0, follow: true, signal: ac.signal })) {
          started = true;
          seen.push(e);
        }
      })();
      // a new event each round until the follow sees one: it must be a new one, never the history's
      const mine: string[] = [];
      await pollUntil(async () => {
        mine.push((await backend.submit(req())).job.job_id);
        return seen.length > 0;
      }, { what: 'a new event' });
      expect(started).toBe(true);
      for (const e of seen) expect(mine).toContain(e.job_id);
      ac.abort();
      await done;
    });

    it('follows new events until the signal aborts', async () => {
      const { backend } = fx();
      await backend.submit(req());
      const ac = new AbortController();
      const seen: JobEvent[] = [];
      const done = (async () => {
        for await (const e of backend.events({ follow: true, signal: ac.signal })) seen.push(e);
      })();
      await pollUntil(() => seen.length === 1, { what: 'the existing event' });
      const { job } = await backend.submit(req());
      await pollUntil(() => seen.length === 2, { what: 'the new event' });
      expect(seen[1]!.job_id).toBe(job.job_id);
      ac.abort();
      await done;
    });

    // Regression: a library client closed while its follow waited ended the iteration without a
    // word (Redis) or with a bare TypeError (SQLite), where every other call after close() is a
    // ClosedError: a reader could not tell "closed under me" from "no more events".
    it('a follow of a client that is closed ends with a ClosedError', async () => {
      const { backend } = fx();
      const client = guardClose(backend);
      await client.submit(req());
      const seen: JobEvent[] = [];
      const outcome = (async () => {
        for await (const e of client.events({ follow: true })) seen.push(e);
      })().then(() => 'ended quietly', (e: unknown) => e);
      await pollUntil(() => seen.length === 1, { what: 'the existing event' });
      await client.close();
      const e = await outcome;
      expect(e).toBeInstanceOf(ClosedError);
      expect((e as ClosedError).message).toMatch(/^events\(\) stopped: the client was closed/);
    });

    it('a follow stopped by its signal and then closed ends quietly', async () => {
      const { backend } = fx();
      const client = guardClose(backend);
      const ac = new AbortController();
      const outcome = (async () => {
        for await (const _ of client.events({ follow: true, last: 0, signal: ac.signal })) break;
      })().then(() => 'ended quietly', (e: unknown) => e);
      ac.abort();
      expect(await outcome).toBe('ended quietly');
      await client.close();
    });

    // Regression: the AbortController itself (from JavaScript) threw a TypeError, then another
    // from a timer of the follow loop, outside any promise, which ended the process.
    it('refuses a signal that is not an AbortSignal with a ValidationError', async () => {
      const { backend } = fx();
      for (const signal of [new AbortController(), {}]) {
        const reading = (async () => {
          for await (const _ of backend.events({ follow: true, last: 0, signal: signal as never })) break;
        })();
        await expect(reading).rejects.toMatchObject({ code: 'VALIDATION', message: expect.stringMatching(/^signal must be an AbortSignal/) });
      }
    });

    it('lists the queues that have jobs', async () => {
      const { backend } = fx();
      expect(await backend.queues({ limit: 10 })).toEqual({ items: [], next_cursor: null });
      await backend.submit(req({ queue: 'beta' }));
      await backend.submit(req({ queue: 'alpha' }));
      expect(await backend.queues({ limit: 10 })).toEqual({ items: ['alpha', 'beta'], next_cursor: null });
    });

    it('pages the queues in name order, each page bounded, so a walk reaches every queue (not only a first 1,000)', async () => {
      const { backend } = fx();
      for (const q of ['q-e', 'q-a', 'q-d', 'q-b', 'q-c']) await backend.submit(req({ queue: q }));
      const first = await backend.queues({ limit: 2 });
      expect(first.items).toEqual(['q-a', 'q-b']);
      expect(first.next_cursor).not.toBeNull();
      const second = await backend.queues({ limit: 2, cursor: first.next_cursor });
      expect(second.items).toEqual(['q-c', 'q-d']);
      const last = await backend.queues({ limit: 2, cursor: second.next_cursor });
      expect(last).toEqual({ items: ['q-e'], next_cursor: null });
      expect(await allQueues(backend, 2)).toEqual(['q-a', 'q-b', 'q-c', 'q-d', 'q-e']);
      expect(await allQueues(backend, 5)).toEqual(['q-a', 'q-b', 'q-c', 'q-d', 'q-e']);
      expect(await surveyQueues(backend, 'q-e', 2, 2)).toEqual({ known: true, shown: ['q-a', 'q-b'], more: 3 });
      expect(await surveyQueues(backend, 'q-z', 10, 2)).toEqual({ known: false, shown: ['q-a', 'q-b', 'q-c', 'q-d', 'q-e'], more: 0 });
      // (no page reads a whole set: the limit is the contract's page bound)
      for (const limit of [0, MAX_PAGE_LIMIT + 1, 1.5]) {
        await expect(backend.queues({ limit })).rejects.toMatchObject({ code: 'VALIDATION', message: expect.stringMatching(/^page limit must be an integer from 1 to 1000/) });
      }
      await expect(backend.queues({ limit: 2, cursor: '' })).rejects.toMatchObject({ code: 'VALIDATION' });
    });
  });
}
