/**
 * What a backend reports about one queue (`Backend.stats`): the snapshot that
 * `core/stats` derives `agentq stats` and the metrics from. Declared in core
 * because the core computes from it and must not depend on the backend layer;
 * `backend/contract.ts` re-exports every name here unchanged, with the limits a
 * backend keeps (`STATS_SAMPLE_LIMIT`, `STATS_MAX_TENANTS`,
 * `STATS_RECENT_WINDOW_MS`; `STATS_MAX_FAILURE_CODES` is declared here).
 */
import type { JobState } from './schemas.js';
import type { Usage } from './usage.js';

export interface QueueStats {
  queue: string;
  counts: Record<JobState, number>;
  dlq_size: number;
  /** Age of the oldest claimable job (ms), null when none. */
  oldest_queued_age_ms: number | null;
  running: number;
  /**
   * Of `running`, the jobs whose lease has run out: no worker holds them (it died or hung), and
   * they stay `running` until the next claim on the queue takes them back (leases are reaped
   * lazily). `oldest_queued_age_ms` (queue and class) counts them as waiting since their lease
   * ended, so an alert on the oldest age fires when every worker of a queue is gone.
   */
  lease_expired?: number;

  // The fields below are optional (added for `agentq stats` / metrics, issue 8):
  // a backend that lacks one is shown as "n/a", never as zero. Every figure
  // comes from maintained counters, index seeks and bounded samples, never a
  // scan of the queue, so stats stay fast on a queue of millions of jobs.

  /** When the figures were taken (epoch ms, backend clock). */
  at?: number;
  /** Estimated seconds of queued + scheduled work (`estimated_seconds`, default per job when unset). */
  backlog_seconds?: number;
  /** The same figures per service class (every class, zeros included). */
  by_class?: StatsBreakdown[];
  /** The same figures per tenant: at most `STATS_MAX_TENANTS`, deepest first. */
  by_tenant?: StatsBreakdown[];
  /**
   * How many tenants have jobs or DLQ entries in the queue, `by_tenant` showing the deepest of
   * them. Exact on SQLite and on a one-shard Redis queue; on several shards, the most any one
   * shard has or the number listed, whichever is larger (a lower bound).
   */
  tenants_total?: number;
  /** Cumulative outcome counters for the queue since it was created. */
  totals?: OutcomeTotals;
  /** How attempt number N ended, cumulative: success rate by attempt. */
  by_attempt?: AttemptOutcomes[];
  /** Most recent time-in-queue samples (ms from becoming claimable to claim), newest last, at most `STATS_SAMPLE_LIMIT`. */
  time_in_queue_ms?: number[];
  /** Most recent execution-time samples (ms from claim to the attempt's end), newest last, at most `STATS_SAMPLE_LIMIT`. */
  execution_ms?: number[];
  /** Attempts that ended in the last `window_ms`: for recent throughput. */
  recent?: RecentActivity;
  /**
   * Attempts that ended in failure, by the error code their attempt record got (a failure the
   * handler reported, retried or not; LEASE_EXPIRED for a lease that ran out), cumulative since
   * the queue was created, largest first. Codes are the caller's strings, so a queue keeps at most
   * `STATS_MAX_FAILURE_CODES` of them: attempts with a code first seen after that are counted under
   * `FAILURE_CODE_OTHER`.
   */
  failures_by_code?: FailureCount[];
  /**
   * What the queue's attempts reported spending (`ctx.reportUsage`, `agentq job usage`), cumulative
   * since the queue was created, counted where the usage is added to the attempt's record.
   */
  usage?: Usage;
  /**
   * Jobs that ended (succeeded, dead, expired, cancelled) and, of them, those that went to the DLQ,
   * over a recent window: only when `StatsOptions.endsWindowMs` asks for it (`dlq check --window`).
   */
  ends?: JobEnds;
}

/** What `Backend.stats` is asked for beyond the figures it always gives. */
export interface StatsOptions {
  /**
   * Count the jobs that ended over this window (ms, at most `STATS_ENDS_MAX_WINDOW_MS`), in whole
   * minutes: from the start of the minute `endsWindowMs` ago up to now.
   */
  endsWindowMs?: number;
}

/**
 * Job ends over a recent window, kept per minute as the jobs end (the same moments that count
 * `OutcomeTotals`): a DLQ entry expired or purged later is not a second end, and a redriven job
 * that ends again counts again.
 */
export interface JobEnds {
  /** What the whole minutes cover: at least the window asked for, less than a minute more. */
  window_ms: number;
  /** Jobs that ended: succeeded, dead, expired, cancelled. */
  ended: number;
  /** Of them, jobs that went to the DLQ. */
  dead: number;
}

/** The longest window of `StatsOptions.endsWindowMs`: how long the per-minute job ends are kept. */
export const STATS_ENDS_MAX_WINDOW_MS = 24 * 3_600_000;

/** The first minute (epoch minutes) of an ends window: whole minutes covering at least `windowMs`. */
export function endsFromMinute(now: number, windowMs: number): number {
  return Math.floor((now - windowMs) / 60_000);
}

export interface FailureCount {
  code: string;
  count: number;
}

/** How many distinct error codes a queue's failure counts keep (the first seen); later ones count as `FAILURE_CODE_OTHER`. */
export const STATS_MAX_FAILURE_CODES = 100;
/** The bucket of failures whose code came after the first `STATS_MAX_FAILURE_CODES` of a queue. */
export const FAILURE_CODE_OTHER = 'OTHER';

/**
 * Failure counts as `failures_by_code` lists them: largest first (ties by code), at most
 * `STATS_MAX_FAILURE_CODES` codes plus `FAILURE_CODE_OTHER`, the smallest beyond that folded into
 * it. (A backend keeps at most that many per queue; only the sum over a Redis queue's shards, each
 * keeping its own, can hold more.)
 */
export function failureCounts(counts: ReadonlyMap<string, number>): FailureCount[] {
  let other = counts.get(FAILURE_CODE_OTHER) ?? 0;
  const codes = [...counts]
    .filter(([code, n]) => code !== FAILURE_CODE_OTHER && n > 0)
    .map(([code, count]) => ({ code, count }))
    .sort(byCountThenCode);
  for (const c of codes.splice(STATS_MAX_FAILURE_CODES)) other += c.count;
  if (other > 0) codes.push({ code: FAILURE_CODE_OTHER, count: other });
  return codes.sort(byCountThenCode);
}

const byCountThenCode = (a: FailureCount, b: FailureCount) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);

export interface StatsBreakdown {
  /** The class name or tenant id. */
  key: string;
  queued: number;
  scheduled: number;
  running: number;
  dlq_size: number;
  oldest_queued_age_ms: number | null;
  backlog_seconds: number;
}

export interface OutcomeTotals {
  submitted: number;
  /** Attempts started (claims). */
  attempts: number;
  succeeded: number;
  /** Failed attempts that were scheduled for another try. */
  retried: number;
  /** Jobs that went to the DLQ. */
  dead: number;
  expired: number;
  cancelled: number;
}

export interface AttemptOutcomes {
  attempt: number;
  succeeded: number;
  /** Ended any other way (retry scheduled, dead, expired, lease lost). */
  failed: number;
}

export interface RecentActivity {
  window_ms: number;
  submitted: number;
  succeeded: number;
  failed: number;
}

/**
 * Backlog seconds as reported: to the millisecond and never below 0. The stores keep them as float
 * sums of each job's estimate, added and taken away as jobs come and go, so they carry residue
 * (0.1 + 0.2 is 0.30000000000000004; the same taken away again leaves 2.8e-17, not 0): an alert on
 * `agentq_backlog_seconds > 0` stayed firing on an empty queue. Every backend rounds the same way.
 */
export function backlogFigure(seconds: number): number {
  return Math.max(0, Math.round(seconds * 1000) / 1000);
}

/** Running jobs of one class whose lease has run out, as a backend reads them (an index seek). */
export interface ExpiredLeases {
  class: string;
  /** Their tenant, when the backend read it: its oldest age in `by_tenant` counts them too. */
  tenant?: string;
  count: number;
  /** Epoch ms when the longest-expired lease of the class ran out. */
  oldest_expires_at: number;
}

/**
 * Adds the expired leases to a snapshot: their count as `lease_expired`, and each as a job waiting
 * since its lease ended in the queue's, its class's and its tenant's oldest age (the job is claimable again, only
 * nobody has claimed yet). Shared by every backend so they count them the same way.
 */
export function foldExpiredLeases(s: QueueStats, expired: readonly ExpiredLeases[], now: number): QueueStats {
  // A queue that never had a job (no `at`) reports its counts only, and has no lease anyway.
  if (s.at === undefined) return s;
  const ageOf = (at: number) => Math.max(0, now - at);
  const older = (a: number | null, b: number) => (a === null || b > a ? b : a);
  let total = 0;
  let oldest = s.oldest_queued_age_ms;
  for (const e of expired) {
    if (e.count <= 0) continue;
    total += e.count;
    oldest = older(oldest, ageOf(e.oldest_expires_at));
    const b = s.by_class?.find((c) => c.key === e.class);
    if (b) b.oldest_queued_age_ms = older(b.oldest_queued_age_ms, ageOf(e.oldest_expires_at));
    const t = e.tenant === undefined ? undefined : s.by_tenant?.find((x) => x.key === e.tenant);
    if (t) t.oldest_queued_age_ms = older(t.oldest_queued_age_ms, ageOf(e.oldest_expires_at));
  }
  return { ...s, oldest_queued_age_ms: oldest, lease_expired: total };
}
