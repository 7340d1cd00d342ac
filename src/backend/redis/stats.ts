/**
 * `QueueStats` for a Redis queue (issue 8), from the counters and bounded
 * samples the transition scripts keep (lua/stats.ts, lua/prelude.ts): one
 * `stats` script call per shard, never a walk of the jobs.
 *
 * A queue spread over several shards is added up here. Per-tenant figures
 * are exact for the tenants listed; which tenants are listed is the union of
 * each shard's deepest STATS_MAX_TENANTS, re-read from every shard, so with
 * several shards a tenant that is just outside every shard's top list can be
 * missed (with one shard, the default, the list is exact).
 */
import { JOB_CLASSES, JOB_STATES, type JobState } from '../../core/schemas.js';
import {
  STATS_MAX_TENANTS,
  STATS_RECENT_WINDOW_MS,
  STATS_SAMPLE_LIMIT,
  endsFromMinute,
  type AttemptOutcomes,
  type JobEnds,
  type OutcomeTotals,
  type QueueStats,
  type StatsBreakdown,
} from '../contract.js';
import { failureCounts, foldExpiredLeases, type ExpiredLeases } from '../../core/queue-stats.js';
import { flatToMap } from './codec.js';
import { TENANT_DEPTH_UNIT } from './lua/stats.js';

/** What the `stats` script returns for one shard (see STATS_READ). */
export type ShardStatsReply = [
  counts: string[],
  totals: string[],
  classOldest: string[],
  classBacklog: string[],
  timeInQueue: string[],
  execution: string[],
  byAttempt: string[],
  activity: string[],
  tenants: string[],
  expiredLeases: Array<number | string>,
  tenantCount: number,
  failuresByCode: string[],
  usage: string[],
];

/** Runs the `stats` script on one shard; `tenants` empty = that shard's deepest. */
export type ReadShard = (shard: number, tenants: string[]) => Promise<ShardStatsReply>;

export interface StatsRequest {
  queue: string;
  now: number;
  /** Whether the queue was ever used (its metadata exists). */
  known: boolean;
  shards: number;
  readShard: ReadShard;
  /** Job ends over this window too (`QueueStats.ends`), read with `readEnds`. */
  endsWindowMs?: number;
  /** One shard's per-minute job ends (the `jend` hash: '<minute>:ok|jx|jd' → count). */
  readEnds?: (shard: number) => Promise<Record<string, string>>;
}

interface TenantFigures {
  depth: number;
  dead: number;
  scheduled: number;
  running: number;
  backlog: number;
  oldest: number | null;
}

const num = (v: string | undefined): number => (v === undefined || v === '' ? 0 : Number(v));

function tenantRows(flat: string[]): Map<string, TenantFigures> {
  const out = new Map<string, TenantFigures>();
  for (let i = 0; i + 5 < flat.length; i += 6) {
    const rank = num(flat[i + 1]);
    const depth = Math.floor(rank / TENANT_DEPTH_UNIT);
    out.set(flat[i]!, {
      depth,
      dead: rank - depth * TENANT_DEPTH_UNIT,
      scheduled: num(flat[i + 2]),
      running: num(flat[i + 3]),
      backlog: num(flat[i + 4]),
      oldest: flat[i + 5] === '' ? null : Number(flat[i + 5]),
    });
  }
  return out;
}

function addTenant(into: TenantFigures | undefined, t: TenantFigures): TenantFigures {
  if (!into) return { ...t };
  into.depth += t.depth;
  into.dead += t.dead;
  into.scheduled += t.scheduled;
  into.running += t.running;
  into.backlog += t.backlog;
  if (t.oldest !== null && (into.oldest === null || t.oldest < into.oldest)) into.oldest = t.oldest;
  return into;
}

const ageOf = (now: number, runAt: number | null): number | null => (runAt === null ? null : Math.max(0, now - runAt));

export async function readQueueStats(req: StatsRequest): Promise<QueueStats> {
  const { now, shards } = req;
  const parts = await Promise.all(Array.from({ length: shards }, (_v, s) => req.readShard(s, [])));

  const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  const totals: OutcomeTotals = { submitted: 0, attempts: 0, succeeded: 0, retried: 0, dead: 0, expired: 0, cancelled: 0 };
  const byAttempt = new Map<number, AttemptOutcomes>();
  const byClass = new Map<string, StatsBreakdown>(
    JOB_CLASSES.map((c) => [c, { key: c, queued: 0, scheduled: 0, running: 0, dlq_size: 0, oldest_queued_age_ms: null, backlog_seconds: 0 }]),
  );
  const classOldest = new Map<string, number>();
  const activity = new Map<string, number>();
  const tiq: number[] = [];
  const exec: number[] = [];

  const expired = new Map<string, ExpiredLeases>();
  let expiredUnread = 0;
  const failures = new Map<string, number>();
  const usage = { tokens: 0, cost_usd: 0 };
  for (const [n, tot, oldest, blc, t, x, ba, act, , leases, , fc, use] of parts) {
    const u = flatToMap(use ?? []);
    usage.tokens += num(u.tokens);
    usage.cost_usd += num(u.cost_usd);
    // (a shard keeps its own first STATS_MAX_FAILURE_CODES codes; failureCounts caps the sum again)
    for (const [k, v] of Object.entries(flatToMap(fc ?? []))) failures.set(k, (failures.get(k) ?? 0) + Number(v));
    // count first, then (class, lease end) pairs of the longest-expired ones
    let listed = 0;
    for (let i = 1; i + 1 < (leases?.length ?? 0); i += 2) {
      const cls = String(leases[i]);
      const at = Number(leases[i + 1]);
      const e = expired.get(cls) ?? { class: cls, count: 0, oldest_expires_at: at };
      e.count += 1;
      e.oldest_expires_at = Math.min(e.oldest_expires_at, at);
      expired.set(cls, e);
      listed += 1;
    }
    expiredUnread += Number(leases?.[0] ?? 0) - listed;
    // '<class>:<state>' for the live states and dead, '<state>' for the others
    for (const [k, v] of Object.entries(flatToMap(n))) {
      const [c, state] = k.includes(':') ? (k.split(':') as [string, string]) : [null, k];
      if (state in counts) counts[state as JobState] += Number(v);
      const b = c === null ? undefined : byClass.get(c);
      if (!b) continue;
      if (state === 'queued' || state === 'scheduled' || state === 'running') b[state] += Number(v);
      else if (state === 'dead') b.dlq_size += Number(v);
    }
    for (const [k, v] of Object.entries(flatToMap(tot))) if (k in totals) totals[k as keyof OutcomeTotals] += Number(v);
    for (let i = 0; i + 1 < oldest.length; i += 2) {
      if (oldest[i + 1] === '') continue;
      const runAt = Number(oldest[i + 1]);
      const prev = classOldest.get(oldest[i]!);
      if (prev === undefined || runAt < prev) classOldest.set(oldest[i]!, runAt);
    }
    for (const [c, v] of Object.entries(flatToMap(blc))) {
      const b = byClass.get(c);
      if (b) b.backlog_seconds += Number(v);
    }
    for (const [k, v] of Object.entries(flatToMap(act))) activity.set(k, (activity.get(k) ?? 0) + Number(v));
    tiq.push(...t.map(Number));
    exec.push(...x.map(Number));
    for (const [k, v] of Object.entries(flatToMap(ba))) {
      const [att, kind] = k.split(':');
      const e = byAttempt.get(Number(att)) ?? { attempt: Number(att), succeeded: 0, failed: 0 };
      if (kind === 'ok') e.succeeded += Number(v);
      else e.failed += Number(v);
      byAttempt.set(Number(att), e);
    }
  }

  let oldestRunAt: number | null = null;
  for (const runAt of classOldest.values()) if (oldestRunAt === null || runAt < oldestRunAt) oldestRunAt = runAt;
  const base: QueueStats = {
    queue: req.queue,
    counts,
    dlq_size: counts.dead,
    oldest_queued_age_ms: ageOf(now, oldestRunAt),
    running: counts.running,
  };
  // Expired leases past the ones read are counted (their class unknown, their expiry later than those read).
  const expiredList = [...expired.values()];
  if (expiredUnread > 0) expiredList.push({ class: '', count: expiredUnread, oldest_expires_at: now });
  // A queue that never existed has no counters to report beyond zeros ("n/a").
  if (!req.known) return foldExpiredLeases(base, expiredList, now);

  for (const b of byClass.values()) {
    b.oldest_queued_age_ms = ageOf(now, classOldest.get(b.key) ?? null);
    b.backlog_seconds = Math.max(0, b.backlog_seconds);
  }
  const classes = [...byClass.values()];

  return foldExpiredLeases({
    ...base,
    ...(await jobEnds(req)),
    at: now,
    // (to the millisecond, not the second: the sum of the float counters loses its noise, not a
    // queue's fractional estimates; SQLite keeps them the same)
    backlog_seconds: Math.max(0, Math.round(classes.reduce((s, b) => s + b.backlog_seconds, 0) * 1000) / 1000),
    by_class: classes,
    ...(await tenantBreakdown(req, parts)),
    totals,
    by_attempt: [...byAttempt.values()].sort((a, b) => a.attempt - b.attempt),
    time_in_queue_ms: tiq.slice(-STATS_SAMPLE_LIMIT),
    execution_ms: exec.slice(-STATS_SAMPLE_LIMIT),
    recent: recentActivity(activity, now),
    failures_by_code: failureCounts(failures),
    usage,
  }, expiredList, now);
}

async function tenantBreakdown(req: StatsRequest, parts: ShardStatsReply[]): Promise<{ by_tenant: StatsBreakdown[]; tenants_total: number }> {
  let figures = new Map<string, TenantFigures>();
  if (parts.length === 1) {
    figures = tenantRows(parts[0]![8]);
  } else {
    // Each shard listed its deepest; read every candidate from every shard so the sums are whole.
    const candidates = [...new Set(parts.flatMap((p) => [...tenantRows(p[8]).keys()]))];
    if (candidates.length > 0) {
      const again = await Promise.all(parts.map((_p, s) => req.readShard(s, candidates)));
      for (const p of again) for (const [k, t] of tenantRows(p[8])) figures.set(k, addTenant(figures.get(k), t));
    }
  }
  const rows = [...figures].map(([key, t]): StatsBreakdown => ({
    key,
    queued: t.depth - t.running - t.scheduled,
    scheduled: t.scheduled,
    running: t.running,
    dlq_size: t.dead,
    oldest_queued_age_ms: ageOf(req.now, t.oldest),
    backlog_seconds: Math.max(0, t.backlog),
  }));
  const depth = (b: StatsBreakdown) => b.queued + b.scheduled + b.running;
  const withJobs = rows.filter((b) => depth(b) + b.dlq_size > 0);
  // (the stn set holds exactly the tenants with jobs or DLQ entries, per shard)
  const total = Math.max(withJobs.length, ...parts.map((p) => Number(p[10] ?? 0)));
  return {
    by_tenant: withJobs.sort((a, b) => depth(b) - depth(a) || b.dlq_size - a.dlq_size || a.key.localeCompare(b.key)).slice(0, STATS_MAX_TENANTS),
    tenants_total: total,
  };
}

/** Job ends over the window asked for, summed over the shards (whole minutes, as SQLite counts them). */
async function jobEnds(req: StatsRequest): Promise<{ ends?: JobEnds }> {
  if (req.endsWindowMs === undefined || !req.readEnds) return {};
  const from = endsFromMinute(req.now, req.endsWindowMs);
  const ends: JobEnds = { window_ms: req.now - from * 60000, ended: 0, dead: 0 };
  const hashes = await Promise.all(Array.from({ length: req.shards }, (_v, s) => req.readEnds!(s)));
  for (const h of hashes) {
    for (const [k, v] of Object.entries(h)) {
      const [m, kind] = k.split(':');
      // (fields older than the longest window wait for the next prune; they are not counted)
      if (Number(m) < from) continue;
      // ok: succeeded, jx: ended otherwise (dead, expired, cancelled), jd: of those, dead
      if (kind === 'ok' || kind === 'jx') ends.ended += Number(v);
      if (kind === 'jd') ends.dead += Number(v);
    }
  }
  return { ends };
}

/** Whole minutes covering the window, as SQLite does; window_ms says exactly what was covered. */
function recentActivity(activity: Map<string, number>, now: number): QueueStats['recent'] {
  const fromMinute = Math.floor((now - STATS_RECENT_WINDOW_MS) / 60000);
  const nowMinute = Math.floor(now / 60000);
  const recent = { window_ms: now - fromMinute * 60000, submitted: 0, succeeded: 0, failed: 0 };
  for (const [k, v] of activity) {
    const [m, kind] = k.split(':');
    const minute = Number(m);
    if (minute < fromMinute || minute > nowMinute) continue;
    if (kind === 's') recent.submitted += v;
    else if (kind === 'ok') recent.succeeded += v;
    else if (kind === 'f') recent.failed += v;
  }
  return recent;
}
