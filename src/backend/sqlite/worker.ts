/**
 * The worker side: claim (with lease reaping and fair choice), heartbeat,
 * checkpoint, effects and the ways an attempt ends. Every worker write checks
 * the lease's fence token inside the same transaction as the write, so a
 * worker whose lease was taken over can never overwrite the new holder.
 */
import { JobStoppingError, LeaseLostError, ValidationError } from '../../core/errors.js';
import { STORED_JSON_MAX_BYTES, storedJson } from '../../core/stored-json.js';
import { addUsage, type Usage } from '../../core/usage.js';
import { checkClaim, checkEffectKey, checkNewEffectKey, checkLeaseMs } from '../checks.js';
import { nextPick, parseFairnessState, tenantCap, type Candidates, type FairnessOptions } from '../../core/fairness.js';
import { decideFailure, type RetryPolicy } from '../../core/retry.js';
import { JOB_CLASSES } from '../../core/model.js';
import type { Effect, Job, JobClass } from '../../core/schemas.js';
import { assertTransition, isPartial, outcomeFor } from '../../core/states.js';
import type { AbortOutcome, ClaimRequest, Failure, FailureOutcome, HeartbeatResult, Lease, LeaseRef } from '../contract.js';
import { rowToJob, type JobRow } from './codec.js';
import { endAttempt, isoAt, leaseEndedAt, leaseExpiredError, leaseExpiredWhy, moveTo, toEnvelope, type SqliteStore } from './store.js';

/**
 * The columns of a claimable row the claim reads: id and document, the fence, and the stored
 * columns `SqliteStore.save` compares against (identity, state, run_at, estimate, the attempt's
 * sequence number and start). A claim always changes the state, so the columns only a light
 * update compares (codec.ts, INDEXED) are never looked at.
 */
const CLAIM_COLUMNS = 'id, doc, fence, queue, class, tenant, state, run_at, estimated_seconds, attempt_seq, attempt_started_at';

/** Expired leases reaped per claim call: bounded so one claim never does unbounded work. */
const REAP_BATCH = 100;

export interface WorkerConfig {
  fairness: FairnessOptions;
  retryPolicy: RetryPolicy;
}

interface EffectRow {
  job_id: string;
  key: string;
  status: 'started' | 'done';
  attempt: number;
  started_at: number;
  done_at: number | null;
  result: string | null;
}

function toEffect(r: EffectRow): Effect {
  return {
    key: r.key,
    status: r.status,
    idempotency_key: `${r.job_id}:${r.key}`,
    attempt: r.attempt,
    started_at: isoAt(r.started_at),
    done_at: r.done_at === null ? null : isoAt(r.done_at),
    result: r.result === null ? null : (JSON.parse(r.result) as unknown),
  };
}

export class SqliteWorkerOps {
  constructor(
    private readonly store: SqliteStore,
    private readonly config: WorkerConfig,
  ) {}

  /** The job behind a lease, if the lease is still the current one; otherwise `LeaseLostError`. */
  private leased(ref: LeaseRef): { job: Job; fence: number } {
    const found = this.store.load(ref.jobId);
    if (!found) throw new LeaseLostError(ref.jobId, 'the job no longer exists');
    if (found.job.state !== 'running') throw new LeaseLostError(ref.jobId, `the job is ${found.job.state}`);
    if (found.fence !== ref.fence) throw new LeaseLostError(ref.jobId, `fence ${ref.fence} is stale (current ${found.fence})`);
    return found;
  }

  /**
   * The job, when an ending write re-sent (its first reply lost) finds it already ended by this
   * lease: no longer running, still under the same fence (no claim came since), its last attempt
   * ended with `outcome`. The first write applied, so the re-send is answered as done; null otherwise.
   */
  private endedBy(ref: LeaseRef, outcome: string): Job | null {
    const found = this.store.load(ref.jobId);
    if (!found || found.job.state === 'running' || found.fence !== ref.fence) return null;
    return found.job.attempts[found.job.attempts.length - 1]?.outcome === outcome ? found.job : null;
  }

  claim(req: ClaimRequest): Lease[] {
    checkClaim(req);
    const classes = new Set<JobClass>(req.classes && req.classes.length > 0 ? req.classes : JOB_CLASSES);
    return this.store.inWrite(() => {
      const now = this.store.clock.now();
      this.reapExpiredLeases(req.queue, now);

      // Candidates: tenants with queued or scheduled work, per class. Maintained
      // by triggers, so this reads only non-empty (class, tenant) cells.
      const cells = this.store.sql(`SELECT class, tenant FROM tenant_counts WHERE queue = ? AND state IN ('queued','scheduled') AND n > 0`)
        .all(req.queue) as Array<{ class: JobClass; tenant: string }>;
      const candidates = new Map<JobClass, Set<string>>();
      for (const c of cells) {
        if (!classes.has(c.class)) continue;
        let s = candidates.get(c.class);
        if (!s) candidates.set(c.class, (s = new Set()));
        s.add(c.tenant);
      }
      const capped = this.config.fairness.tenantConcurrency !== undefined || this.config.fairness.tenantConcurrencyOverrides !== undefined;
      const running = new Map<string, number>();
      if (capped) {
        const rows = this.store.sql(`SELECT tenant, sum(n) AS n FROM tenant_counts WHERE queue = ? AND state = 'running' GROUP BY tenant`)
          .all(req.queue) as Array<{ tenant: string; n: number }>;
        for (const r of rows) running.set(r.tenant, r.n);
        for (const [, tenants] of candidates) {
          for (const t of tenants) if ((running.get(t) ?? 0) >= tenantCap(t, this.config.fairness)) tenants.delete(t);
        }
      }

      const stateRow = this.store.sql('SELECT state FROM fairness WHERE queue = ?').get(req.queue) as { state: string } | undefined;
      let fair = parseFairnessState(stateRow?.state);
      // Only the columns a claim uses (the document, the fence, and what a save compares against):
      // better-sqlite3 builds each row object column by column, and SELECT * (27 columns) was over
      // half the cost of these reads.
      const heads = this.store.sql(
        `SELECT ${CLAIM_COLUMNS} FROM jobs WHERE queue = ? AND class = ? AND tenant = ? AND state IN ('queued','scheduled') AND run_at <= ?
         ORDER BY run_at, id LIMIT ?`,
      );
      // The next jobs of each (class, tenant) cell, read a few at a time rather than one query per pick:
      // about this claim's share of the cell, refilled by the same query when used up.
      const ready = new Map<string, JobRow[]>();
      const cellCount = Math.max(1, cells.length);
      const leases: Lease[] = [];
      const claimed: ClaimedEvents = [];
      // The candidates as nextPick takes them, rebuilt only when a cell drops out (not once per pick).
      let view: Candidates | null = null;
      while (leases.length < req.max) {
        if (view === null) {
          view = {};
          for (const [c, s] of candidates) if (s.size > 0) view[c] = [...s];
        }
        const choice = nextPick(fair, view, this.config.fairness);
        if (!choice) break;
        const { class: cls, tenant } = choice.pick;
        const key = `${cls}\u0000${tenant}`;
        let queue = ready.get(key);
        if (!queue || queue.length === 0) {
          const want = Math.ceil((req.max - leases.length) / cellCount) + 1;
          queue = (heads.all(req.queue, cls, tenant, now, want) as JobRow[]).reverse();
          ready.set(key, queue);
        }
        const row = queue.pop();
        if (!row) {
          // Nothing ready yet (only future retries): drop it and ask again from the same state.
          candidates.get(cls)!.delete(tenant);
          view = null;
          continue;
        }
        const job = rowToJob(row);
        if (job.deadline_at !== null && Date.parse(job.deadline_at) <= now) {
          // Never start a job past its deadline: it ends expired instead.
          this.endPending(job, row.fence, 'expired', now, { why: 'deadline passed before it was claimed' });
          continue;
        }
        fair = choice.state;
        leases.push(startAttempt(this.store, job, row.fence, req, now, claimed));
        if (capped) {
          const n = (running.get(tenant) ?? 0) + 1;
          running.set(tenant, n);
          if (n >= tenantCap(tenant, this.config.fairness)) {
            for (const [, s] of candidates) s.delete(tenant);
            view = null;
          }
        }
      }
      this.store.events(claimed);
      if (leases.length > 0) {
        // A worker limited to some classes says nothing about the others: keep their place in the rotation.
        const before = parseFairnessState(stateRow?.state);
        for (const c of JOB_CLASSES) {
          if (classes.has(c)) continue;
          fair.classCredit[c] = before.classCredit[c];
          fair.turn[c] = before.turn[c];
        }
        this.store.sql('INSERT INTO fairness (queue, state) VALUES (?, ?) ON CONFLICT (queue) DO UPDATE SET state = excluded.state').run(req.queue, JSON.stringify(fair));
        this.store.countTraffic(req.queue, now, leases.length, 0);
      }
      return leases;
    });
  }


  /** Ends a queued/scheduled job without running it (deadline passed). */
  private endPending(job: Job, fence: number, to: 'expired' | 'cancelled', now: number, data: Record<string, unknown>): void {
    const from = job.state;
    assertTransition(job.job_id, from, to);
    moveTo(job, to, now);
    job.outcome = outcomeFor(to, isPartial(job));
    job.ended_at = isoAt(now);
    this.store.save(job, fence);
    this.store.event(job, to, from, to, now, data);
  }

  /**
   * A lease that ran out without a heartbeat means the worker crashed or
   * stalled. The attempt counts; the job is retried like any transient
   * failure (LEASE_EXPIRED), or goes dead with reason `lease_lost` when it
   * has no attempts left. One that ran out at the deadline (a lease never
   * extends past it) ends the job expired, and its message says so.
   */
  private reapExpiredLeases(queue: string, now: number): void {
    const rows = this.store.sql(`SELECT * FROM jobs WHERE queue = ? AND state = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ${REAP_BATCH}`)
      .all(queue, now) as JobRow[];
    for (const row of rows) {
      const job = rowToJob(row);
      const lost = leaseExpiredError(job);
      const expiredWhy = leaseExpiredWhy(job);
      endAttempt(job, leaseEndedAt(job, now), 'lease_lost', lost);
      job.last_error = { ...lost, retryable: true };
      this.store.event(job, 'lease_expired', 'running', null, now, { worker_id: job.lease?.worker_id ?? null, fence: row.fence });
      job.lease = null;
      if (job.cancel_requested_at !== null) {
        this.endRunning(job, row.fence, 'cancelled', now, { why: 'cancel requested before the lease expired' });
        continue;
      }
      const decision = decideFailure(
        { retryable: true, attempt: job.attempt, maxAttempts: job.max_attempts, deadlineAt: job.deadline_at === null ? null : Date.parse(job.deadline_at) },
        now,
        this.store.random,
        this.store.recentTraffic(queue, now, this.config.retryPolicy.retryBudgetWindowMs),
        this.config.retryPolicy,
      );
      if (decision.kind === 'retry') this.scheduleRetry(job, row.fence, decision.runAt, decision.overBudget, lost.code, now);
      else if (decision.kind === 'expired') this.endRunning(job, row.fence, 'expired', now, { why: expiredWhy });
      else this.bury(job, row.fence, 'lease_lost', lost.code, lost.message, null, now);
    }
  }

  private scheduleRetry(job: Job, fence: number, runAt: number, overBudget: boolean, code: string, now: number): void {
    assertTransition(job.job_id, 'running', 'scheduled');
    moveTo(job, 'scheduled', now);
    job.run_at = isoAt(runAt);
    job.lease = null;
    this.store.save(job, fence);
    this.store.event(job, 'retry_scheduled', 'running', 'scheduled', now, { run_at: job.run_at, error_code: code, over_budget: overBudget });
    this.store.countTraffic(job.queue, now, 0, 1);
  }

  /** Running → a terminal state other than dead. */
  private endRunning(job: Job, fence: number, to: 'succeeded' | 'cancelled' | 'expired', now: number, data: Record<string, unknown> | null): void {
    assertTransition(job.job_id, 'running', to);
    moveTo(job, to, now);
    job.outcome = outcomeFor(to, isPartial(job));
    job.ended_at = isoAt(now);
    job.lease = null;
    this.store.save(job, fence);
    this.store.event(job, to, 'running', to, now, data);
  }

  /** Running → dead: into the DLQ with everything triage needs. */
  private bury(job: Job, fence: number, reason: 'exhausted' | 'permanent' | 'lease_lost', code: string, message: string, workerVersion: string | null, now: number): void {
    assertTransition(job.job_id, 'running', 'dead');
    moveTo(job, 'dead', now);
    job.outcome = outcomeFor('dead', isPartial(job));
    job.ended_at = isoAt(now);
    job.lease = null;
    const version = workerVersion ?? job.attempts[job.attempts.length - 1]?.worker_version ?? null;
    job.dead = { reason, dead_at: isoAt(now), error_code: code, error_message: message, worker_version: version };
    this.store.save(job, fence);
    this.store.event(job, 'dead', 'running', 'dead', now, { reason, error_code: code });
  }

  heartbeat(leases: LeaseRef[], leaseMs: number): HeartbeatResult[] {
    checkLeaseMs(leaseMs);
    return this.store.inWrite(() => {
      const now = this.store.clock.now();
      return leases.map((ref): HeartbeatResult => {
        const found = this.store.load(ref.jobId);
        if (!found || found.job.state !== 'running' || found.fence !== ref.fence || !found.job.lease) return { jobId: ref.jobId, status: 'lost' };
        const { job, fence } = found;
        const lease = found.job.lease;
        const deadline = job.deadline_at === null ? Infinity : Date.parse(job.deadline_at);
        // The lease of one attempt never outlives the user's deadline.
        const expiresAt = Math.max(Math.min(now + leaseMs, deadline), Date.parse(lease.expires_at));
        const capped = Math.min(expiresAt, deadline);
        lease.expires_at = isoAt(capped);
        job.updated_at = isoAt(now);
        this.store.save(job, fence);
        return { jobId: ref.jobId, status: 'ok', expiresAt: capped, cancelRequested: job.cancel_requested_at !== null, deadlineReached: now >= deadline };
      });
    });
  }

  checkpoint(ref: LeaseRef, data: unknown): void {
    const text = storedJson(data, 'the checkpoint', STORED_JSON_MAX_BYTES);
    this.store.inWrite(() => {
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      job.checkpoint = JSON.parse(text) as unknown;
      job.updated_at = isoAt(now);
      this.store.save(job, fence);
      this.store.event(job, 'checkpoint', 'running', 'running', now, null);
    });
  }

  /** Adds to the running attempt's record and to the queue's `queue_usage` row, in one transaction. */
  addUsage(ref: LeaseRef, usage: Usage): void {
    this.store.inWrite(() => {
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      const current = job.attempts[job.attempts.length - 1];
      if (current) current.usage = addUsage(current.usage, usage);
      job.updated_at = isoAt(now);
      this.store.save(job, fence);
      this.store
        .sql('INSERT INTO queue_usage (queue, tokens, cost_usd) VALUES (?, ?, ?) ON CONFLICT (queue) DO UPDATE SET tokens = tokens + excluded.tokens, cost_usd = cost_usd + excluded.cost_usd')
        .run(job.queue, usage.tokens, usage.cost_usd);
    });
  }

  beginEffect(ref: LeaseRef, key: string): Effect {
    checkNewEffectKey(key);
    return this.store.inWrite(() => {
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      const existing = this.store.sql('SELECT * FROM effects WHERE job_id = ? AND key = ?').get(job.job_id, key) as EffectRow | undefined;
      if (existing?.status === 'done') return toEffect(existing);
      // A stopping job starts no effect, new or retried (a `started` one would call the system again).
      if (job.cancel_requested_at !== null) throw new JobStoppingError(job.job_id, 'cancel');
      if (job.deadline_at !== null && now >= Date.parse(job.deadline_at)) throw new JobStoppingError(job.job_id, 'deadline');
      if (existing) return toEffect(existing);
      const row: EffectRow = { job_id: job.job_id, key, status: 'started', attempt: job.attempt, started_at: now, done_at: null, result: null };
      this.store.sql('INSERT INTO effects (job_id, key, status, attempt, started_at, done_at, result) VALUES (@job_id, @key, @status, @attempt, @started_at, @done_at, @result)').run(row);
      const effect = toEffect(row);
      job.effects.push(effect);
      job.updated_at = isoAt(now);
      this.store.save(job, fence);
      this.store.event(job, 'effect_started', 'running', 'running', now, { key });
      return effect;
    });
  }

  finishEffect(ref: LeaseRef, key: string, result: unknown): Effect {
    checkEffectKey(key);
    const text = result === undefined ? null : storedJson(result, `the result of effect ${JSON.stringify(key)}`, STORED_JSON_MAX_BYTES);
    return this.store.inWrite(() => {
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      const existing = this.store.sql('SELECT * FROM effects WHERE job_id = ? AND key = ?').get(job.job_id, key) as EffectRow | undefined;
      if (existing?.status === 'done') return toEffect(existing);
      const row: EffectRow = {
        job_id: job.job_id,
        key,
        status: 'done',
        attempt: existing?.attempt ?? job.attempt,
        started_at: existing?.started_at ?? now,
        done_at: now,
        result: text,
      };
      this.store.sql(
          `INSERT INTO effects (job_id, key, status, attempt, started_at, done_at, result) VALUES (@job_id, @key, @status, @attempt, @started_at, @done_at, @result)
           ON CONFLICT (job_id, key) DO UPDATE SET status = excluded.status, done_at = excluded.done_at, result = excluded.result`,
        )
        .run(row);
      const effect = toEffect(row);
      const i = job.effects.findIndex((e) => e.key === key);
      if (i >= 0) job.effects[i] = effect;
      else job.effects.push(effect);
      job.updated_at = isoAt(now);
      this.store.save(job, fence);
      this.store.event(job, 'effect_done', 'running', 'running', now, { key });
      return effect;
    });
  }

  complete(ref: LeaseRef, result: string | null): Job {
    return this.store.inWrite(() => {
      const done = this.endedBy(ref, 'succeeded');
      if (done) return done;
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      endAttempt(job, now, 'succeeded');
      job.result = result;
      this.endRunning(job, fence, 'succeeded', now, null);
      return job;
    });
  }

  /**
   * Completes `ref` and claims up to `next.max` more jobs for the slot it frees. The claims of the
   * completions of one group commit are made together, as one claim at the end of the commit (per
   * queue, worker and lease length), so a worker's 50 completions and the 50 jobs that follow them
   * are one transaction and one claim instead of two transactions. The leases fill in `next` when
   * that claim ran, before the caller is answered (after the COMMIT).
   */
  completeAndClaim(ref: LeaseRef, result: string | null, next: ClaimRequest): { next: Lease[] } {
    checkClaim(next);
    this.completeInPlace(ref, result);
    const out: Lease[] = [];
    this.store.batchEndItems<NextClaim>('next-claims', (items) => this.claimNext(items)).push({ req: next, out });
    return { next: out };
  }

  /**
   * `complete` for a caller that does not want the job back (completeAndClaim): the document is
   * patched by SQLite (`json_set`) in the UPDATE that checks the fence, instead of read, parsed,
   * changed and written back whole from JS. The patch is exactly what `complete` changes (state,
   * outcome, times, lease, result, the running attempt's end), and SQLite keeps the rest of the
   * text as it was, so the stored document is byte for byte what `complete` would write
   * (test/backend/sqlite-complete-claim.test.ts compares them). Any row the guard does not match
   * (lost lease, or an attempt record not as `startAttempt` left it) goes through `complete`,
   * which throws the precise LeaseLostError or completes it the long way.
   */
  private completeInPlace(ref: LeaseRef, result: string | null): void {
    const now = this.store.clock.now();
    const iso = isoAt(now);
    const row = this.store.sql(COMPLETE_IN_PLACE_SQL).get({ now, iso, result: JSON.stringify(result), id: ref.jobId, fence: ref.fence }) as CompletedRow | undefined;
    if (!row) {
      this.complete(ref, result);
      return;
    }
    this.store.counters.record({
      queue: row.queue,
      cls: row.class,
      tenant: row.tenant,
      from: 'running',
      to: 'succeeded',
      estimated: row.estimated_seconds,
      attempt: row.attempt,
      at: now,
      runAtBefore: row.run_at,
      seq: row.attempt_seq,
      startedAt: row.attempt_started_at,
    });
    this.store.eventRow(ref.jobId, row.queue, row.tenant, 'succeeded', now, 'running', 'succeeded', row.attempt, null);
  }

  /** One claim per (queue, worker, lease, classes) for the completions of a group commit; the leases shared out in order. */
  private claimNext(items: NextClaim[]): void {
    const groups = new Map<string, NextClaim[]>();
    for (const it of items) {
      const r = it.req;
      const key = JSON.stringify([r.queue, r.workerId, r.workerVersion ?? null, r.leaseMs, r.classes ?? null]);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(it);
    }
    for (const g of groups.values()) {
      const leases = this.claim({ ...g[0]!.req, max: g.reduce((n, it) => n + it.req.max, 0) });
      let i = 0;
      for (const it of g) while (it.out.length < it.req.max && i < leases.length) it.out.push(leases[i++]!);
    }
  }

  fail(ref: LeaseRef, failure: Failure): FailureOutcome {
    return this.store.inWrite(() => {
      const done = this.endedBy(ref, 'failed');
      if (done) return failureOutcomeOf(done);
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      const error = { code: failure.code, message: failure.message };
      endAttempt(job, now, 'failed', error);
      job.last_error = { ...error, retryable: failure.retryable };
      if (job.cancel_requested_at !== null) {
        // Failed after its cancel was requested (often because of it): a retry or the DLQ would undo the cancel.
        this.endRunning(job, fence, 'cancelled', now, { why: 'failed after a cancel request', error_code: failure.code });
        return { kind: 'cancelled', job };
      }
      const decision = decideFailure(
        { retryable: failure.retryable, attempt: job.attempt, maxAttempts: job.max_attempts, deadlineAt: job.deadline_at === null ? null : Date.parse(job.deadline_at) },
        now,
        this.store.random,
        this.store.recentTraffic(job.queue, now, this.config.retryPolicy.retryBudgetWindowMs),
        this.config.retryPolicy,
      );
      switch (decision.kind) {
        case 'retry':
          this.scheduleRetry(job, fence, decision.runAt, decision.overBudget, failure.code, now);
          return { kind: 'retry', runAt: decision.runAt, job };
        case 'expired':
          this.endRunning(job, fence, 'expired', now, { error_code: failure.code, why: 'no retry fits before the deadline' });
          return { kind: 'expired', job };
        case 'dead':
          this.bury(job, fence, decision.reason as 'exhausted' | 'permanent', failure.code, failure.message, failure.workerVersion ?? null, now);
          return { kind: 'dead', reason: decision.reason, job };
      }
    });
  }

  abort(ref: LeaseRef, outcome: AbortOutcome): Job {
    if (outcome !== 'cancelled' && outcome !== 'expired') throw new ValidationError(`abort outcome must be cancelled or expired, got ${String(outcome)}`);
    return this.store.inWrite(() => {
      const done = this.endedBy(ref, outcome);
      if (done && done.state === outcome) return done;
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      // (the Redis Lua, lua/worker.ts ABORT, says the same)
      const data = outcome === 'expired' ? { why: `the job's deadline passed while it was running; worker ${job.lease?.worker_id ?? '?'} stopped its handler` } : job.cancel_reason !== null ? { reason: job.cancel_reason } : null;
      endAttempt(job, now, outcome);
      this.endRunning(job, fence, outcome, now, data);
      return job;
    });
  }

  release(ref: LeaseRef): void {
    this.store.inWrite(() => {
      if (this.endedBy(ref, 'released')) return;
      const now = this.store.clock.now();
      const { job, fence } = this.leased(ref);
      if (job.cancel_requested_at !== null) {
        // Given back after a cancel request: nothing left to run. The attempt ended by the cancel, so it counts.
        endAttempt(job, now, 'cancelled');
        this.endRunning(job, fence, 'cancelled', now, { why: 'released after a cancel request' });
        return;
      }
      endAttempt(job, now, 'released');
      // Not counted: the worker stopped by choice (shutdown), not because the job failed.
      job.attempt = Math.max(0, job.attempt - 1);
      assertTransition(job.job_id, 'running', 'queued');
      moveTo(job, 'queued', now);
      job.run_at = isoAt(now);
      job.lease = null;
      this.store.save(job, fence);
      this.store.event(job, 'released', 'running', 'queued', now, null);
    });
  }
}

/**
 * The succeeded move of `complete` as one UPDATE: the columns a completion changes (state,
 * updated_at, the lease's expiry) and the document patched in place. Guarded like `leased` (running, same fence) and on the
 * last attempt record being the open one. RETURNING what the counters and the event need.
 * (`result` is the result as JSON, so its text is exactly what JSON.stringify gives.)
 */
const COMPLETE_IN_PLACE_SQL = `UPDATE jobs SET state = 'succeeded', updated_at = @now, lease_expires_at = NULL,
  doc = json_set(doc, '$.attempts[#-1].ended_at', @iso, '$.attempts[#-1].outcome', 'succeeded', '$.attempts[#-1].error_code', NULL,
    '$.attempts[#-1].error_message', NULL, '$.result', json(@result), '$.state', 'succeeded', '$.updated_at', @iso, '$.outcome', 'succeeded',
    '$.ended_at', @iso, '$.lease', NULL)
  WHERE id = @id AND fence = @fence AND state = 'running' AND json_type(doc, '$.attempts[#-1].ended_at') = 'null'
  RETURNING queue, class, tenant, estimated_seconds, attempt, run_at, attempt_seq, attempt_started_at`;

interface CompletedRow {
  queue: string;
  class: string;
  tenant: string;
  estimated_seconds: number | null;
  attempt: number;
  run_at: number;
  attempt_seq: number | null;
  attempt_started_at: number | null;
}

/** A `completeAndClaim`'s request for the next jobs, and where its leases go. */
interface NextClaim {
  req: ClaimRequest;
  out: Lease[];
}

/** A claim's `claimed` events, written by one `SqliteStore.events` call after its loop. */
type ClaimedEvents = Parameters<SqliteStore['events']>[0];

/**
 * Starts an attempt on a claimable job: bumps the fence and the attempt, sets a lease that never
 * outlives the deadline, and records the attempt and its `claimed` event. Shared by the claim
 * loop and the SQS claim-by-id.
 */
export function startAttempt(store: SqliteStore, job: Job, fence: number, req: ClaimRequest, now: number, events?: ClaimedEvents): Lease {
  const from = job.state;
  assertTransition(job.job_id, from, 'running');
  const newFence = fence + 1;
  const deadline = job.deadline_at === null ? Infinity : Date.parse(job.deadline_at);
  const expiresAt = Math.min(now + req.leaseMs, deadline);
  moveTo(job, 'running', now);
  job.attempt += 1;
  job.lease = { worker_id: req.workerId, fence: newFence, expires_at: isoAt(expiresAt) };
  job.attempts.push({
    attempt: job.attempt,
    worker_id: req.workerId,
    worker_version: req.workerVersion ?? null,
    started_at: isoAt(now),
    ended_at: null,
    outcome: null,
    error_code: null,
    error_message: null,
  });
  store.save(job, newFence);
  const data = { worker_id: req.workerId, fence: newFence, lease_expires_at: job.lease.expires_at };
  // The claim loop writes its events together after the loop (one multi-row INSERT per 16).
  if (events) events.push([job, 'claimed', from, 'running', now, data]);
  else store.event(job, 'claimed', from, 'running', now, data);
  return { jobId: job.job_id, fence: newFence, job, envelope: toEnvelope(job), expiresAt };
}

/** What a fail that applied decided, read back from the job it left (a re-sent fail's answer). */
function failureOutcomeOf(job: Job): FailureOutcome {
  if (job.state === 'dead') return { kind: 'dead', reason: job.dead!.reason, job };
  if (job.state === 'cancelled') return { kind: 'cancelled', job };
  if (job.state === 'expired') return { kind: 'expired', job };
  return { kind: 'retry', runAt: Date.parse(job.run_at), job };
}
