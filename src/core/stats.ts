/**
 * Queue statistics, derived: percentiles, rates, throughput, backlog and the
 * sparklines of `agentq stats --watch`. Pure: the figures come in as a
 * `QueueStats` snapshot (maintained counters and bounded samples from the
 * backend) and go out as a `StatsReport`, the shape `agentq stats -o json`
 * prints.
 *
 * A figure the backend does not provide is `null` ("n/a"), never 0: a zero
 * would tell an operator that nothing is wrong when we simply do not know.
 */
import { z } from 'zod';
import type { QueueStats, StatsBreakdown } from './queue-stats.js';
import { count } from './plural.js';

// ---------------------------------------------------------------- percentiles

/**
 * The p-th percentile (0..100) by linear interpolation between closest ranks
 * (the method of numpy's default and most dashboards). Null for no samples.
 */
export function percentile(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

export interface DurationSummary {
  count: number;
  sum_ms: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

export function summarizeDurations(samples: readonly number[] | undefined): DurationSummary | null {
  if (samples === undefined) return null;
  let sum = 0;
  let max: number | null = null;
  for (const s of samples) {
    sum += s;
    if (max === null || s > max) max = s;
  }
  return {
    count: samples.length,
    sum_ms: sum,
    p50_ms: percentile(samples, 50),
    p95_ms: percentile(samples, 95),
    p99_ms: percentile(samples, 99),
    max_ms: max,
  };
}

/** a / b, or null when b is 0 (a rate of nothing is unknown, not zero). */
export function ratio(a: number, b: number): number | null {
  return b > 0 ? a / b : null;
}

// ---------------------------------------------------------------- sparklines

const BARS = '▁▂▃▄▅▆▇█';

/**
 * A sparkline of the last `width` values, scaled from 0 to the largest value
 * shown (depth and age are never negative, and a flat non-zero line should
 * read as "high", not as "bottom"). Missing values (null) are a space.
 * `bars`: the levels, lowest first (an ASCII set for a terminal whose locale is not UTF-8).
 */
export function sparkline(values: ReadonlyArray<number | null>, width = 20, bars = BARS): string {
  const levels = [...bars];
  const shown = values.slice(-width);
  const max = Math.max(0, ...shown.map((v) => v ?? 0));
  return shown
    .map((v) => {
      if (v === null || !Number.isFinite(v)) return ' ';
      if (max === 0) return levels[0];
      const i = Math.min(levels.length - 1, Math.max(0, Math.round((v / max) * (levels.length - 1))));
      return levels[i];
    })
    .join('');
}

/** A bounded history of readings per key, for `--watch` sparklines. */
export class StatsHistory {
  private readonly series = new Map<string, Array<number | null>>();
  constructor(private readonly capacity = 30) {}

  push(key: string, value: number | null): void {
    let s = this.series.get(key);
    if (!s) {
      s = [];
      this.series.set(key, s);
    }
    s.push(value);
    if (s.length > this.capacity) s.splice(0, s.length - this.capacity);
  }

  get(key: string): ReadonlyArray<number | null> {
    return this.series.get(key) ?? [];
  }
}

// ---------------------------------------------------------------- the report

const Breakdown = z.object({
  key: z.string(),
  queued: z.number().int(),
  scheduled: z.number().int(),
  running: z.number().int(),
  dlq_size: z.number().int(),
  oldest_queued_age_ms: z.number().nullable(),
  backlog_seconds: z.number(),
});

const Durations = z
  .object({
    count: z.number().int(),
    sum_ms: z.number(),
    p50_ms: z.number().nullable(),
    p95_ms: z.number().nullable(),
    p99_ms: z.number().nullable(),
    max_ms: z.number().nullable(),
  })
  .nullable();

/** One queue's figures as `agentq stats -o json` prints them (the public shape). */
export const StatsReport = z.object({
  queue: z.string(),
  at: z.string().nullable(),
  queued: z.number().int(),
  scheduled: z.number().int(),
  running: z.number().int(),
  /** Of `running`, jobs whose lease ran out (no worker holds them; the next claim on the queue takes them back). */
  lease_expired: z.number().int().nullable(),
  dlq_size: z.number().int(),
  /** Age of the oldest claimable job, a job whose lease expired counting as waiting since its lease ended. */
  oldest_queued_age_ms: z.number().nullable(),
  /** Estimated seconds of queued work. */
  backlog_seconds: z.number().nullable(),
  /** Backlog divided by recent throughput: how long the queue takes to drain at the current pace. */
  drain_estimate_seconds: z.number().nullable(),
  time_in_queue: Durations,
  execution: Durations,
  /** Share of attempt N that succeeded. */
  success_rate_by_attempt: z.array(z.object({ attempt: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), rate: z.number().nullable() })),
  /** Retried attempts / attempts started. */
  retry_rate: z.number().nullable(),
  /** Jobs that went to the DLQ / jobs that ended. */
  dlq_rate: z.number().nullable(),
  /** Attempts ended per second over the recent window. */
  throughput_per_s: z.number().nullable(),
  recent_window_ms: z.number().nullable(),
  totals: z
    .object({
      submitted: z.number().int(),
      attempts: z.number().int(),
      succeeded: z.number().int(),
      retried: z.number().int(),
      dead: z.number().int(),
      expired: z.number().int(),
      cancelled: z.number().int(),
    })
    .nullable(),
  by_class: z.array(Breakdown).nullable(),
  by_tenant: z.array(Breakdown).nullable(),
  /** Tenants with jobs or DLQ entries (`by_tenant` lists the deepest STATS_MAX_TENANTS); a lower bound on a Redis queue of several shards. */
  tenants_total: z.number().int().nullable(),
  /** Whether `by_tenant` leaves tenants out. */
  by_tenant_truncated: z.boolean().nullable(),
  /**
   * Attempts that ended in failure, by error code (LEASE_EXPIRED for a lost lease), cumulative
   * since the queue was created, largest first; at most STATS_MAX_FAILURE_CODES codes, later
   * ones counted as OTHER. Null when the backend does not keep them.
   */
  failures_by_code: z.array(z.object({ code: z.string(), count: z.number().int() })).nullable(),
  /**
   * What the queue's attempts reported spending (`ctx.reportUsage`, `agentq job usage`), cumulative
   * since the queue was created. Null when the backend does not keep it.
   */
  usage: z.object({ tokens: z.number(), cost_usd: z.number() }).nullable(),
  /** usage.cost_usd / jobs that ended (succeeded, dead, expired, cancelled): cost per job. Null with no ended job or no usage figures. */
  cost_per_job_usd: z.number().nullable(),
  /** usage.tokens / jobs that ended. */
  tokens_per_job: z.number().nullable(),
});
export type StatsReport = z.infer<typeof StatsReport>;

/** Turns a backend snapshot into the report: every derived figure is computed here, once. */
export function buildStatsReport(s: QueueStats): StatsReport {
  const totals = s.totals ?? null;
  const recent = s.recent ?? null;
  const endedRecently = recent ? recent.succeeded + recent.failed : null;
  const throughput = recent && recent.window_ms > 0 && endedRecently !== null ? endedRecently / (recent.window_ms / 1000) : null;
  const backlog = s.backlog_seconds ?? null;
  // Backlog is in seconds of work; throughput in jobs/s. Drain time needs jobs, so use the depth.
  const depth = s.counts.queued + s.counts.scheduled;
  const drain = throughput !== null && throughput > 0 ? depth / throughput : null;
  const ended = totals ? totals.succeeded + totals.dead + totals.expired + totals.cancelled : 0;
  return {
    queue: s.queue,
    at: s.at !== undefined ? new Date(s.at).toISOString() : null,
    queued: s.counts.queued,
    scheduled: s.counts.scheduled,
    running: s.running,
    lease_expired: s.lease_expired ?? null,
    dlq_size: s.dlq_size,
    oldest_queued_age_ms: s.oldest_queued_age_ms,
    backlog_seconds: backlog,
    drain_estimate_seconds: drain,
    time_in_queue: summarizeDurations(s.time_in_queue_ms),
    execution: summarizeDurations(s.execution_ms),
    success_rate_by_attempt: (s.by_attempt ?? [])
      .slice()
      .sort((a, b) => a.attempt - b.attempt)
      .map((a) => ({ ...a, rate: ratio(a.succeeded, a.succeeded + a.failed) })),
    retry_rate: totals ? ratio(totals.retried, totals.attempts) : null,
    dlq_rate: totals ? ratio(totals.dead, ended) : null,
    throughput_per_s: throughput,
    recent_window_ms: recent?.window_ms ?? null,
    totals,
    by_class: s.by_class ? s.by_class.map(copyBreakdown) : null,
    by_tenant: s.by_tenant ? s.by_tenant.map(copyBreakdown) : null,
    tenants_total: s.tenants_total ?? null,
    by_tenant_truncated: s.by_tenant && s.tenants_total !== undefined ? s.tenants_total > s.by_tenant.length : null,
    failures_by_code: s.failures_by_code ? s.failures_by_code.map((c) => ({ ...c })) : null,
    usage: s.usage ? { ...s.usage } : null,
    cost_per_job_usd: s.usage && totals ? ratio(s.usage.cost_usd, ended) : null,
    tokens_per_job: s.usage && totals ? ratio(s.usage.tokens, ended) : null,
  };
}

function copyBreakdown(b: StatsBreakdown): StatsBreakdown {
  return { ...b };
}

// ---------------------------------------------------------------- DLQ alert limits

export interface DlqLimits {
  maxSize?: number;
  /** Age of the oldest DLQ entry, ms. */
  maxAgeMs?: number;
  /** DLQ rate (0..1): jobs that went to the DLQ / jobs that ended. */
  maxRate?: number;
  /** Over what the DLQ rate is taken (ms, whole minutes covering it); null: the queue's whole life. */
  windowMs?: number | null;
  /** The fewest jobs that must have ended for the rate to be judged (1: any). */
  minEnded?: number;
}

export interface DlqObservation {
  queue: string;
  dlq_size: number;
  /** Age (ms) of an entry older than `maxAgeMs` if there is one (the backend is asked for any such entry, not scanned); else null. */
  oldest_dead_age_ms: number | null;
  dlq_rate: number | null;
  /** What the rate is over, said after it in the reason: `over the last 1h (2 of 3 jobs that ended)`. */
  rate_basis?: string;
}

/**
 * The first limit a queue's DLQ breaks, as a one-line reason, or null when it
 * is within every limit. A rate that cannot be computed (no job ended yet) is
 * within the limit: an alert must not fire on a queue that has done nothing.
 */
export function checkDlqLimits(o: DlqObservation, limits: DlqLimits, fmtAge: (ms: number) => string): string | null {
  if (limits.maxSize !== undefined && o.dlq_size > limits.maxSize) {
    return `queue ${o.queue}: DLQ holds ${count(o.dlq_size, 'job')}, more than --max-size ${limits.maxSize}`;
  }
  if (limits.maxAgeMs !== undefined && o.oldest_dead_age_ms !== null && o.oldest_dead_age_ms > limits.maxAgeMs) {
    return `queue ${o.queue}: a DLQ entry is ${fmtAge(o.oldest_dead_age_ms)} old, older than --max-age ${fmtAge(limits.maxAgeMs)}`;
  }
  if (limits.maxRate !== undefined && o.dlq_rate !== null && o.dlq_rate > limits.maxRate) {
    return `queue ${o.queue}: DLQ rate is ${(o.dlq_rate * 100).toFixed(2)}%${o.rate_basis ? ` ${o.rate_basis}` : ''}, above --max-rate ${(limits.maxRate * 100).toFixed(2)}%`;
  }
  return null;
}

/** `--max-rate 5%` or `--max-rate 0.05`. */
export function parseRate(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  if (!m) return null;
  const v = Number(m[1]) / (m[2] === '%' ? 100 : 1);
  return v >= 0 && v <= 1 ? v : null;
}
