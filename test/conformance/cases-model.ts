/**
 * Invariants under random operation sequences (fast-check): whatever order
 * producers, workers, operators and the clock act in, the maintained counters
 * agree with the jobs, every job's state is where its events say, leases and
 * outcomes are consistent, and no two workers hold the same job.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Backend, Lease } from '../../src/backend/contract.js';
import { JobStoppingError, LeaseLostError, ValidationError } from '../../src/core/errors.js';
import { JOB_STATES, type Job, type JobClass } from '../../src/core/schemas.js';
import { isTerminal } from '../../src/core/states.js';
import { allEvents, iso, req, type ConformanceFixture, type MakeFixture } from './fixture.js';

const QUEUE = 'model';
const CLASSES: JobClass[] = ['interactive', 'batch', 'maintenance'];

type Op =
  | { kind: 'submit'; tenant: number; cls: number; maxAttempts: number; deadlineMs: number | null; delayMs: number }
  | { kind: 'claim'; max: number; leaseMs: number }
  | { kind: 'heartbeat' | 'complete' | 'release' | 'effect'; pick: number }
  | { kind: 'fail'; pick: number; retryable: boolean }
  | { kind: 'abort'; pick: number; expired: boolean }
  | { kind: 'cancel'; pick: number }
  | { kind: 'completeNext'; pick: number; max: number; leaseMs: number }
  | { kind: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tenant: fc.nat(2), cls: fc.nat(2), maxAttempts: fc.integer({ min: 1, max: 3 }), deadlineMs: fc.option(fc.integer({ min: 20_000, max: 400_000 })), delayMs: fc.constantFrom(0, 0, 20_000) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), max: fc.integer({ min: 1, max: 3 }), leaseMs: fc.integer({ min: 5_000, max: 60_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('heartbeat' as const, 'complete' as const, 'release' as const, 'effect' as const), pick: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(50), retryable: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat(50), expired: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(50) }) },
  // complete one job and claim the next in one call (backends that have completeAndClaim; others complete, then claim)
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('completeNext' as const), pick: fc.nat(50), max: fc.integer({ min: 1, max: 2 }), leaseMs: fc.integer({ min: 5_000, max: 60_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1_000, max: 90_000 }) }) },
);

async function allJobs(backend: Backend): Promise<Job[]> {
  const out: Job[] = [];
  let cursor: string | null = null;
  do {
    const page = await backend.list({ queue: QUEUE }, { limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return out;
}

async function checkInvariants(f: ConformanceFixture): Promise<void> {
  const { backend } = f;
  const jobs = await allJobs(backend);
  const stats = await backend.stats(QUEUE);
  for (const s of JOB_STATES) expect(stats.counts[s], `count of ${s}`).toBe(jobs.filter((j) => j.state === s).length);
  expect(stats.running).toBe(stats.counts.running);
  // The per-class and per-tenant counters agree with the jobs too (every tenant with live or DLQ jobs is listed).
  const figures = (of: Job[]) => ({
    queued: of.filter((j) => j.state === 'queued').length,
    scheduled: of.filter((j) => j.state === 'scheduled').length,
    running: of.filter((j) => j.state === 'running').length,
    dlq_size: of.filter((j) => j.state === 'dead').length,
  });
  if (jobs.length > 0) {
    for (const c of CLASSES) expect(stats.by_class?.find((b) => b.key === c), `class ${c}`).toMatchObject(figures(jobs.filter((j) => j.class === c)));
    const tenants = [...new Set(jobs.map((j) => j.tenant_id))].filter((t) => Object.values(figures(jobs.filter((j) => j.tenant_id === t))).some((n) => n > 0));
    expect(stats.by_tenant?.map((b) => b.key).sort()).toEqual(tenants.sort());
    for (const t of tenants) expect(stats.by_tenant?.find((b) => b.key === t), `tenant ${t}`).toMatchObject(figures(jobs.filter((j) => j.tenant_id === t)));
  }
  let dlq = 0;
  let cursor: string | null = null;
  do {
    const page = await backend.dlqList({ queue: QUEUE }, { limit: 1000, cursor });
    dlq += page.items.length;
    cursor = page.next_cursor;
  } while (cursor !== null);
  expect(stats.dlq_size).toBe(dlq);
  expect(dlq).toBe(stats.counts.dead);
  for (const j of jobs) {
    const events = await allEvents(backend, { jobId: j.job_id });
    const last = [...events].reverse().find((e) => e.to_state !== null);
    expect(last?.to_state, `${j.job_id}: last event vs state`).toBe(j.state);
    expect(j.lease !== null, `${j.job_id}: lease iff running`).toBe(j.state === 'running');
    expect(j.outcome !== null, `${j.job_id}: outcome iff terminal`).toBe(isTerminal(j.state));
    expect(j.ended_at !== null).toBe(isTerminal(j.state));
    expect(j.attempt).toBeLessThanOrEqual(j.max_attempts);
    expect(j.attempt).toBe(j.attempts.filter((a) => a.outcome !== 'released').length);
    if (j.state === 'dead') expect(j.dead).not.toBeNull();
    if (j.lease && j.deadline_at) expect(Date.parse(j.lease.expires_at)).toBeLessThanOrEqual(Date.parse(j.deadline_at));
  }
}

/** A worker write on a lease that may have been reaped meanwhile: LeaseLostError is a legal answer, anything else is not. */
async function tolerateLost<T>(p: Promise<T>): Promise<T | 'lost'> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof LeaseLostError) return 'lost';
    throw e;
  }
}

export function modelCases(make: MakeFixture): void {
  describe('invariants under random operations', () => {
    it('keeps counters, events, leases and outcomes consistent, and never gives one job to two holders', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 45 }), async (ops) => {
          const f = await make();
          try {
            const { backend, clock } = f;
            const held: Lease[] = [];
            const ids: string[] = [];
            const pickLease = (n: number) => (held.length ? held.splice(n % held.length, 1)[0]! : null);
            for (const [i, op] of ops.entries()) {
              switch (op.kind) {
                case 'submit': {
                  const submit = req({
                    queue: QUEUE,
                    tenant_id: `t${op.tenant}`,
                    class: CLASSES[op.cls]!,
                    max_attempts: op.maxAttempts,
                    deadline_at: op.deadlineMs === null ? null : iso(clock.now() + op.deadlineMs),
                    run_at: op.delayMs ? iso(clock.now() + op.delayMs) : null,
                  });
                  if (op.delayMs && op.deadlineMs !== null && op.delayMs >= op.deadlineMs) {
                    // a start at or after the deadline is refused: the job could never run
                    await expect(backend.submit(submit)).rejects.toBeInstanceOf(ValidationError);
                    break;
                  }
                  const { job } = await backend.submit(submit);
                  ids.push(job.job_id);
                  break;
                }
                case 'claim':
                case 'completeNext': {
                  const next = { queue: QUEUE, workerId: `w${i}`, max: op.max, leaseMs: op.leaseMs };
                  let got: Lease[];
                  if (op.kind === 'claim') got = await backend.claim(next);
                  else {
                    const l = pickLease(op.pick);
                    if (!l) break;
                    const done = await tolerateLost(backend.completeAndClaim ? backend.completeAndClaim(l, 'ok', next) : backend.complete(l, 'ok').then(async () => ({ next: await backend.claim(next) })));
                    got = done === 'lost' ? [] : done.next;
                  }
                  for (const l of got) {
                    // A job handed out again must have been taken from its previous holder: a higher fence, and the old lease is lost.
                    const prev = held.findIndex((h) => h.jobId === l.jobId);
                    if (prev >= 0) {
                      const old = held.splice(prev, 1)[0]!;
                      expect(l.fence).toBeGreaterThan(old.fence);
                      expect((await backend.heartbeat([old], 1000))[0]!.status).toBe('lost');
                    }
                    held.push(l);
                  }
                  break;
                }
                case 'heartbeat': {
                  const l = held.length ? held[op.pick % held.length]! : null;
                  if (l) await backend.heartbeat([l], 30_000);
                  break;
                }
                case 'effect': {
                  const l = held.length ? held[op.pick % held.length]! : null;
                  // A job whose cancel was requested or whose deadline passed starts no effect: a legal answer too.
                  if (l) await tolerateLost(backend.beginEffect(l, `e${op.pick % 3}`)).catch((e: unknown) => {
                    if (!(e instanceof JobStoppingError)) throw e;
                  });
                  break;
                }
                case 'complete': {
                  const l = pickLease(op.pick);
                  if (l) await tolerateLost(backend.complete(l, 'ok'));
                  break;
                }
                case 'release': {
                  const l = pickLease(op.pick);
                  if (l) await tolerateLost(backend.release(l));
                  break;
                }
                case 'fail': {
                  const l = pickLease(op.pick);
                  if (l) await tolerateLost(backend.fail(l, { code: op.retryable ? 'NETWORK' : 'VALIDATION', message: 'model', retryable: op.retryable }));
                  break;
                }
                case 'abort': {
                  const l = pickLease(op.pick);
                  if (l) await tolerateLost(backend.abort(l, op.expired ? 'expired' : 'cancelled'));
                  break;
                }
                case 'cancel': {
                  if (ids.length) await backend.cancel(ids[op.pick % ids.length]!, 'model');
                  break;
                }
                case 'advance':
                  clock.advance(op.ms);
                  break;
              }
            }
            await checkInvariants(f);
          } finally {
            await f.cleanup();
          }
        }),
        { numRuns: Number(process.env.MODEL_RUNS ?? 40) },
      );
    }, 120_000);
  });
}
