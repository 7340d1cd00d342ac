/**
 * What a backend hands the conformance suite. Everything is exercised through
 * the `Backend` contract; the optional hooks cover what the contract cannot
 * produce on purpose (a corrupt stored entry).
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { Backend, Lease, RunRecord } from '../../src/backend/contract.js';
import type { AdmissionLimits } from '../../src/core/admission.js';
import type { ManualClock } from '../../src/core/clock.js';
import type { FairnessOptions } from '../../src/core/fairness.js';
import type { Job, JobEvent, SubmitRequest } from '../../src/core/schemas.js';

export interface ConformanceFixture {
  backend: Backend;
  clock: ManualClock;
  cleanup(): Promise<void>;
  /**
   * Stores a DLQ entry in `queue` whose job document does not parse (as an
   * older version or a hand edit could leave behind), by writing to the
   * store directly; returns its job id. Every backend provides it: the rule
   * that malformed entries are listed and never moved must be proven on each.
   */
  injectMalformedDlqEntry(queue: string): Promise<string>;
  /**
   * Damages an existing DLQ entry's stored record the way a write outside agentq would: its job
   * document (envelope) loses its workflow, so `dlq list` / `dlq show` call it malformed, and no
   * update stamp moves. A bulk apply must find it malformed too, and leave it in place.
   * `damage` picks another kind of damage (see `DlqDamage`); the default is the lost workflow.
   */
  damageDlqEntry(jobId: string, damage?: DlqDamage): Promise<void>;
}

/**
 * How `damageDlqEntry` damages a stored record: its job document loses its workflow, or names
 * another job (`job_id`) or another queue than the one it is stored under (a record copied by
 * hand from another entry, or from another store).
 */
export type DlqDamage = 'no-workflow' | 'other-job-id' | 'other-queue';

/** The job id and queue a misnamed record names instead of its own (`DlqDamage`). */
export const FOREIGN_JOB_ID = 'job_01JF0RE1GNF0RE1GNF0RE1GNF0';
export const FOREIGN_QUEUE = 'elsewhere';

/** `damageDlqEntry` on a SQLite file (the SQLite and SQS fixtures keep their jobs in one). */
export function damageSqliteDlqEntry(db: { prepare(sql: string): { run(...a: unknown[]): unknown } }, jobId: string, damage: DlqDamage = 'no-workflow'): void {
  const edit =
    damage === 'no-workflow'
      ? `json_remove(doc, '$.workflow')`
      : damage === 'other-job-id'
        ? `json_set(doc, '$.job_id', '${FOREIGN_JOB_ID}')`
        : `json_set(doc, '$.queue', '${FOREIGN_QUEUE}')`;
  db.prepare(`UPDATE jobs SET doc = ${edit} WHERE id = ?`).run(jobId);
}

/** Backend options some cases need; a fixture passes them to its backend's constructor. */
export interface FixtureOptions {
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
}

export type MakeFixture = (opts?: FixtureOptions) => Promise<ConformanceFixture>;

export const WORKFLOW = 'research_report:v3';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function req(over: Partial<SubmitRequest> = {}): SubmitRequest {
  return { workflow: WORKFLOW, ...over };
}

/** All events of a query that exist now (no follow). */
export async function allEvents(backend: Backend, q: { queue?: string; jobId?: string; afterSeq?: string; since?: number } = {}): Promise<JobEvent[]> {
  const out: JobEvent[] = [];
  for await (const e of backend.events(q)) out.push(e);
  return out;
}

export async function eventTypes(backend: Backend, jobId: string): Promise<string[]> {
  return (await allEvents(backend, { jobId })).map((e) => e.type);
}

/** Claims exactly one job (the only one ready in `queue`). */
export async function claimOne(backend: Backend, queue = 'default', opts: { leaseMs?: number; workerId?: string; workerVersion?: string } = {}): Promise<Lease> {
  const leases = await backend.claim({ queue, workerId: opts.workerId ?? 'w1', workerVersion: opts.workerVersion ?? 'v1.0.0', max: 1, leaseMs: opts.leaseMs ?? 60_000 });
  expect(leases).toHaveLength(1);
  return leases[0]!;
}

export interface DeadSpec {
  queue?: string;
  tenant?: string;
  workflow?: string;
  code?: string;
  message?: string;
  deadlineInMs?: number;
  withEffect?: boolean;
  /** Fail retryably until attempts run out (reason exhausted) instead of permanently. */
  attempts?: number;
  /** The job's budget, and what its first attempt reports spending (`addUsage`). */
  budget?: { tokens: number | null; cost_usd: number | null };
  spend?: { tokens: number; cost_usd: number };
}

/** Puts one job into the DLQ through the worker contract: submit, claim, (effect), fail. */
export async function makeDead(f: ConformanceFixture, spec: DeadSpec = {}): Promise<Job> {
  const queue = spec.queue ?? 'default';
  const { job } = await f.backend.submit(
    req({
      queue,
      tenant_id: spec.tenant ?? 'acme',
      workflow: spec.workflow ?? WORKFLOW,
      max_attempts: spec.attempts ?? 1,
      deadline_at: spec.deadlineInMs === undefined ? null : iso(f.clock.now() + spec.deadlineInMs),
      ...(spec.budget ? { budget: spec.budget } : {}),
    }),
  );
  const attempts = spec.attempts ?? 1;
  for (let i = 1; i <= attempts; i++) {
    const lease = await claimOne(f.backend, queue);
    expect(lease.jobId).toBe(job.job_id);
    if (spec.withEffect && i === 1) await f.backend.beginEffect(lease, 'send-email');
    if (spec.spend && i === 1) await f.backend.addUsage(lease, spec.spend);
    const out = await f.backend.fail(lease, {
      code: spec.code ?? 'VALIDATION',
      message: spec.message ?? 'input rejected',
      retryable: attempts > 1,
      workerVersion: 'v1.0.0',
    });
    if (i < attempts) {
      expect(out.kind).toBe('retry');
      if (out.kind === 'retry') f.clock.set(out.runAt);
    } else {
      expect(out.kind).toBe('dead');
    }
  }
  return (await f.backend.get(job.job_id))!;
}

export function runRecord(over: Partial<RunRecord> & Pick<RunRecord, 'run_id' | 'queue' | 'action'>, now: number): RunRecord {
  return {
    user: 'oncall',
    context: null,
    reason: 'provider fixed',
    filters: {},
    options: { attempts: { kind: 'reset' }, maxRedrives: 3, minRemainingMs: 0, includePartial: false },
    created_at: iso(now),
    updated_at: iso(now),
    status: 'planned',
    counts: { planned: 0, moved: 0, skipped: 0, failed: 0 },
    ...over,
  };
}

/** Registers a fresh fixture per test in the enclosing describe; returns a getter for it. */
export function useFixture(make: MakeFixture, opts?: FixtureOptions): () => ConformanceFixture {
  let current: ConformanceFixture | undefined;
  beforeEach(async () => {
    current = await make(opts);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('fixture used outside a test');
    return current;
  };
}
