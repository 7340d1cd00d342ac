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
import { backlogFigure, failureCounts, foldExpiredLeases, type ExpiredLeases } from '../../core/queue-stats.js';
import { AgentqError, ExitCode } from '../../core/errors.js';
import { usageFigure } from '../../core/usage.js';
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

/**
 * A stats counter whose value is not a number (written by something other than agentq): the
 * figures it feeds would read NaN (a depth of `NaN` in /metrics, `null` where `-o json` promises a
 * whole number), so the read fails naming the queue, the shard, the key and the field instead.
 */
export class StatsDamagedError extends AgentqError {
  constructor(queue: string, shard: number, where: string, value: string) {
    super(
      'STATS_DAMAGED',
      `queue ${queue}: the stats of shard ${shard} are damaged: ${where} holds ${JSON.stringify(value.slice(0, 40))}, not a number (written by something other than agentq)`,
      ExitCode.failure,
      'agentq leaves it as it is: restore the key from a backup, or correct the value with redis-cli.',
    );
  }
}

/** Reads the counters of one shard's reply: each value a finite number, or StatsDamagedError. */
function figuresOf(queue: string, shard: number) {
  return (v: string | number | undefined, where: string): number => {
    if (v === undefined || v === '') return 0;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new StatsDamagedError(queue, shard, where, String(v));
    return n;
  };
}
type Figure = ReturnType<typeof figuresOf>;

function tenantRows(flat: string[], num: Figure): Map<string, TenantFigures> {
  const out = new Map<string, TenantFigures>();
  for (let i = 0; i + 5 < flat.length; i += 6) {
    const rank = num(flat[i + 1], `stn member ${JSON.stringify(flat[i])}`);
    const depth = Math.floor(rank / TENANT_DEPTH_UNIT);
    out.set(flat[i]!, {
      depth,
      dead: rank - depth * TENANT_DEPTH_UNIT,
      scheduled: num(flat[i + 2], `sts field ${JSON.stringify(flat[i])}`),
      running: num(flat[i + 3], `rt field ${JSON.stringify(flat[i])}`),
      backlog: num(flat[i + 4], `blt field ${JSON.stringify(flat[i])}`),
      oldest: flat[i + 5] === '' ? null : num(flat[i + 5], `the age index of tenant ${JSON.stringify(flat[i])}`),
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
  for (const [shard, [n, tot, oldest, blc, t, x, ba, act, , leases, , fc, use]] of parts.entries()) {
    const num = figuresOf(req.queue, shard);
    const field = (key: string, f: string) => `${key} field ${JSON.stringify(f)}`;
    const u = flatToMap(use ?? []);
    usage.tokens += num(u.tokens, field('use', 'tokens'));
    usage.cost_usd += num(u.cost_usd, field('use', 'cost_usd'));
    // (a shard keeps its own first STATS_MAX_FAILURE_CODES codes; failureCounts caps the sum again)
    for (const [k, v] of Object.entries(flatToMap(fc ?? []))) failures.set(k, (failures.get(k) ?? 0) + num(v, field('fc', k)));
    // count first, then (class, tenant, lease end) of the longest-expired ones
    let listed = 0;
    for (let i = 1; i + 2 < (leases?.length ?? 0); i += 3) {
      const cls = String(leases[i]);
      const tenant = String(leases[i + 1]);
      const at = Number(leases[i + 2]);
      const key = `${cls}\0${tenant}`;
      const e = expired.get(key) ?? { class: cls, tenant, count: 0, oldest_expires_at: at };
      e.count += 1;
      e.oldest_expires_at = Math.min(e.oldest_expires_at, at);
      expired.set(key, e);
      listed += 1;
    }
    expiredUnread += Number(leases?.[0] ?? 0) - listed;
    // '<class>:<state>' for the live states and dead, '<state>' for the others
    for (const [k, v] of Object.entries(flatToMap(n))) {
      const [c, state] = k.includes(':') ? (k.split(':') as [string, string]) : [null, k];
      const count = num(v, field('n', k));
      if (state in counts) counts[state as JobState] += count;
      const b = c === null ? undefined : byClass.get(c);
      if (!b) continue;
      if (state === 'queued' || state === 'scheduled' || state === 'running') b[state] += count;
      else if (state === 'dead') b.dlq_size += count;
    }
    for (const [k, v] of Object.entries(flatToMap(tot))) if (k in totals) totals[k as keyof OutcomeTotals] += num(v, field('tot', k));
    for (let i = 0; i + 1 < oldest.length; i += 2) {
      if (oldest[i + 1] === '') continue;
      const runAt = Number(oldest[i + 1]);
      const prev = classOldest.get(oldest[i]!);
      if (prev === undefined || runAt < prev) classOldest.set(oldest[i]!, runAt);
    }
    for (const [c, v] of Object.entries(flatToMap(blc))) {
      const b = byClass.get(c);
      if (b) b.backlog_seconds += num(v, field('blc', c));
    }
    for (const [k, v] of Object.entries(flatToMap(act))) activity.set(k, (activity.get(k) ?? 0) + num(v, field('act', k)));
    tiq.push(...t.map((v) => num(v, 'a tiq sample')));
    exec.push(...x.map((v) => num(v, 'an exec sample')));
    for (const [k, v] of Object.entries(flatToMap(ba))) {
      const [att, kind] = k.split(':');
      const e = byAttempt.get(Number(att)) ?? { attempt: Number(att), succeeded: 0, failed: 0 };
      if (kind === 'ok') e.succeeded += num(v, field('byatt', k));
      else e.failed += num(v, field('byatt', k));
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
    b.backlog_seconds = backlogFigure(b.backlog_seconds);
  }
  const classes = [...byClass.values()];

  return foldExpiredLeases({
    ...base,
    ...(await jobEnds(req)),
    at: now,
    // (to the millisecond, not the second: the sum of the float counters loses its noise, not a
    // queue's fractional estimates; SQLite rounds them the same, backlogFigure)
    backlog_seconds: backlogFigure(classes.reduce((s, b) => s + b.backlog_seconds, 0)),
    by_class: classes,
    ...(await tenantBreakdown(req, parts)),
    totals,
    by_attempt: [...byAttempt.values()].sort((a, b) => a.attempt - b.attempt),
    time_in_queue_ms: tiq.slice(-STATS_SAMPLE_LIMIT),
    execution_ms: exec.slice(-STATS_SAMPLE_LIMIT),
    recent: recentActivity(activity, now),
    failures_by_code: failureCounts(failures),
    usage: usageFigure(usage),
  }, expiredList, now);
}

async function tenantBreakdown(req: StatsRequest, parts: ShardStatsReply[]): Promise<{ by_tenant: StatsBreakdown[]; tenants_total: number }> {
  let figures = new Map<string, TenantFigures>();
  if (parts.length === 1) {
    figures = tenantRows(parts[0]![8], figuresOf(req.queue, 0));
  } else {
    // Each shard listed its deepest; read every candidate from every shard so the sums are whole.
    const candidates = [...new Set(parts.flatMap((p, s) => [...tenantRows(p[8], figuresOf(req.queue, s)).keys()]))];
    if (candidates.length > 0) {
      const again = await Promise.all(parts.map((_p, s) => req.readShard(s, candidates)));
      for (const [s, p] of again.entries()) for (const [k, t] of tenantRows(p[8], figuresOf(req.queue, s))) figures.set(k, addTenant(figures.get(k), t));
    }
  }
  const rows = [...figures].map(([key, t]): StatsBreakdown => ({
    key,
    queued: t.depth - t.running - t.scheduled,
    scheduled: t.scheduled,
    running: t.running,
    dlq_size: t.dead,
    oldest_queued_age_ms: ageOf(req.now, t.oldest),
    backlog_seconds: backlogFigure(t.backlog),
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
  for (const [shard, h] of hashes.entries()) {
    const num = figuresOf(req.queue, shard);
    for (const [k, v] of Object.entries(h)) {
      const [m, kind] = k.split(':');
      // (fields older than the longest window wait for the next prune; they are not counted)
      if (Number(m) < from) continue;
      // ok: succeeded, jx: ended otherwise (dead, expired, cancelled), jd: of those, dead
      if (kind === 'ok' || kind === 'jx') ends.ended += num(v, `jend field ${JSON.stringify(k)}`);
      if (kind === 'jd') ends.dead += num(v, `jend field ${JSON.stringify(k)}`);
    }
  }
  return { ends };
}

/** Whole minutes covering the window, as SQLite does; window_ms says exactly what was covered. */
function recentActivity(activity: Map<string, number>, now: number): QueueStats['recent'] {
  const fromMinute = Math.floor((now - STATS_RECENT_WINDOW_MS) / 60000);
  const recent = { window_ms: now - fromMinute * 60000, submitted: 0, succeeded: 0, failed: 0 };
  for (const [k, v] of activity) {
    const [m, kind] = k.split(':');
    const minute = Number(m);
    // (minutes past this clock's are counted, as SQLite and the job ends count them: written by a
    // worker whose clock runs ahead, they happened)
    if (minute < fromMinute) continue;
    if (kind === 's') recent.submitted += v;
    else if (kind === 'ok') recent.succeeded += v;
    else if (kind === 'f') recent.failed += v;
  }
  return recent;
}
