/**
 * `agentq dlq check`: an alert check for cron and CI. Exit 0 when every
 * checked queue's DLQ is within the limits; exit 1 with a one-line reason
 * (the first broken queue, and how many more) when not.
 *
 * `main` prints the reason as one `error: ...` line on stderr. With `-o json`
 * the result (ok, the limits, per-queue figures, the reasons) is also printed
 * on stdout, with the same exit code.
 *
 * Reads only maintained counters (`stats`) and, for `--max-age`, asks the
 * backend for one entry older than the limit (`dlqList` with `until`, limit
 * 1): never a walk of the DLQ.
 */
import { MAX_PAGE_LIMIT, type Backend } from '../../backend/contract.js';
import { AgentqError, ExitCode, NotFoundError, ValidationError } from '../../core/errors.js';
import { formatDuration, parseDuration } from '../../core/duration.js';
import { STATS_ENDS_MAX_WINDOW_MS } from '../../core/queue-stats.js';
import { count } from '../../core/plural.js';
import { buildStatsReport, checkDlqLimits, parseRate, ratio, type DlqLimits } from '../../core/stats.js';
import type { CommandContext } from '../context.js';
import { isMachineFormat, printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { checkQueueName, queuesHere } from '../parse.js';
import { allQueues, surveyQueues } from '../../backend/queue-walk.js';
import { isStatsDamaged } from './stats.js';
import { mapBounded, QUEUE_READS_AT_ONCE } from '../../util/bounded.js';

export interface DlqCheckOptions {
  queue?: string;
  /** The queue is the context's (set by cli/queue-scope.ts). */
  queueFromContext?: boolean;
  maxSize?: string;
  maxAge?: string;
  maxRate?: string;
  /** The window of the DLQ rate: a duration up to 24h, or `all` (the queue's whole life). */
  window?: string;
  /** The fewest ended jobs the rate is judged on (a whole number, 1 or more). */
  minEnded?: string;
}

/** `--window` when none is given: the last hour, as an alert looks at what is happening now. */
export const DEFAULT_RATE_WINDOW_MS = 3_600_000;

/**
 * `--window`: a duration from 1m to STATS_ENDS_MAX_WINDOW_MS (the per-minute job ends a store
 * keeps; whole minutes, so under a minute cannot be counted), or `all`: null, the cumulative totals.
 */
export function parseWindow(text: string | undefined): number | null {
  if (text === undefined) return DEFAULT_RATE_WINDOW_MS;
  if (text.trim().toLowerCase() === 'all') return null;
  const ms = parseDuration(text, '--window');
  const max = `${STATS_ENDS_MAX_WINDOW_MS / 3_600_000}h`;
  if (ms < 60_000 || ms > STATS_ENDS_MAX_WINDOW_MS) {
    throw new ValidationError(
      `--window ${JSON.stringify(text)} must be from 1m to ${max} (job ends are counted per minute and kept for ${max}), or all for the queue's whole life`,
    );
  }
  return ms;
}

/** Exit 1 with the reason; `main` prints `error: <reason>` on stderr. */
export class DlqCheckFailed extends AgentqError {
  constructor(reason: string, hint?: string) {
    super('DLQ_CHECK_FAILED', reason, ExitCode.failure, hint);
  }
}

export function parseLimits(opts: DlqCheckOptions): DlqLimits {
  const limits: DlqLimits = {};
  if (opts.maxSize !== undefined) {
    if (!/^\d+$/.test(opts.maxSize)) throw new ValidationError(`--max-size ${JSON.stringify(opts.maxSize)} must be a whole number of jobs (0 or more)`);
    limits.maxSize = Number(opts.maxSize);
  }
  if (opts.maxAge !== undefined) limits.maxAgeMs = parseDuration(opts.maxAge, '--max-age');
  if (opts.maxRate !== undefined) {
    // A bare number of 1 or more is ambiguous: "1" meant as 1% reads as the fraction 1 (100%), a
    // check that can never fire, silently. It is refused; 100% has to be written as a percentage.
    const bare = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(opts.maxRate);
    if (bare && Number(bare[1]) >= 1) {
      throw new ValidationError(
        `--max-rate ${JSON.stringify(opts.maxRate)} is ambiguous: a bare number is a fraction from 0 to 1 (0.05 is 5%); for ${bare[1]} percent write --max-rate ${bare[1]}%, and for a rate that never fires write 100%`,
      );
    }
    const r = parseRate(opts.maxRate);
    if (r === null) throw new ValidationError(`--max-rate ${JSON.stringify(opts.maxRate)} must be a fraction from 0 to 1 (0.05) or a percentage (5%)`);
    limits.maxRate = r;
  }
  // No limit at all: the strictest useful check, "the DLQ is empty".
  if (limits.maxSize === undefined && limits.maxAgeMs === undefined && limits.maxRate === undefined) limits.maxSize = 0;
  limits.windowMs = parseWindow(opts.window);
  if (opts.minEnded !== undefined) {
    if (limits.maxRate === undefined) throw new ValidationError('--min-ended applies to --max-rate: give --max-rate too');
    if (!/^\d+$/.test(opts.minEnded) || Number(opts.minEnded) < 1) throw new ValidationError(`--min-ended ${JSON.stringify(opts.minEnded)} must be a whole number of jobs, 1 or more`);
    limits.minEnded = Number(opts.minEnded);
  }
  return limits;
}

/** One checked queue in `-o json` (documented in the README, "DLQ alerts"). */
export interface CheckedQueue {
  queue: string;
  ok: boolean;
  /** Null (as ended and dead) when the queue's stats could not be read (damaged); the reason says why. */
  dlq_size: number | null;
  /** Jobs that went to the DLQ / jobs that ended (0..1) over the window (`limits.window_ms`); null when none ended in it. */
  dlq_rate: number | null;
  /** Jobs that ended (succeeded, dead, expired, cancelled) over the window. */
  ended: number | null;
  /** Of them, jobs that went to the DLQ. */
  dead: number | null;
  /** With --max-age: the age of one entry older than it (null when none is, or without --max-age). */
  aged_entry_age_ms: number | null;
  /** Why the queue is out of limits; null when it is within them. */
  reason: string | null;
}

/** The `-o json` document of `dlq check`. */
export interface CheckResult {
  ok: boolean;
  /** window_ms: what the DLQ rate is over (null: the queue's whole life); min_ended: the fewest ends it is judged on. */
  limits: { max_size: number | null; max_age_ms: number | null; max_rate: number | null; window_ms: number | null; min_ended: number | null };
  queues: CheckedQueue[];
  reasons: string[];
}

export function checkResult(limits: DlqLimits, queues: CheckedQueue[], reasons: string[]): CheckResult {
  return {
    ok: reasons.length === 0,
    limits: {
      max_size: limits.maxSize ?? null,
      max_age_ms: limits.maxAgeMs ?? null,
      max_rate: limits.maxRate ?? null,
      window_ms: limits.windowMs ?? null,
      min_ended: limits.minEnded ?? null,
    },
    queues,
    reasons,
  };
}

/**
 * Age of one DLQ entry older than `maxAgeMs`, if any. A store whose DLQ is not kept in dead_at
 * order (Redis: job-id order) answers a filtered page short, with a cursor, once it has looked at
 * a bounded number of entries: an aged entry behind younger ones of older jobs (a redrive that
 * failed again) is on a later page, so the cursor is followed until an entry or the end.
 */
async function agedEntry(backend: Backend, queue: string, now: number, maxAgeMs: number): Promise<AgedEntry | null> {
  let cursor: string | null = null;
  do {
    // (one entry is all it takes; past a short first page, big pages: each looks at ten times its limit)
    const limit = cursor === null ? 1 : MAX_PAGE_LIMIT;
    const page = await backend.dlqList({ queue, until: now - maxAgeMs }, { limit, ...(cursor !== null ? { cursor } : {}) });
    const e = page.items[0];
    if (e) {
      const deadAt = Date.parse(e.dead_at);
      // (a malformed record with no time of death anywhere reads as 1970: its age is unknown, not 56 years)
      return deadAt > 0 || e.malformed === null ? { ageMs: now - deadAt, jobId: e.job_id, malformed: e.malformed } : { ageMs: null, jobId: e.job_id, malformed: e.malformed };
    }
    cursor = page.next_cursor;
  } while (cursor !== null);
  return null;
}

interface AgedEntry {
  /** Null: a malformed entry whose time of death cannot be read. */
  ageMs: number | null;
  jobId: string;
  malformed: string | null;
}

/**
 * A queue whose stored stats are damaged (a counter another writer left holding text): its DLQ
 * cannot be judged, which is a failed check of its own (exit 1: an alert that silently skipped it
 * would pass for ever), while the other queues are judged as usual. Its figures are unknown: null.
 */
function uncheckable(queue: string, damage: AgentqError): CheckedQueue {
  // (the error's message begins with the queue's name, given here once)
  const own = `queue ${queue}: `;
  const why = damage.message.startsWith(own) ? damage.message.slice(own.length) : damage.message;
  const reason = `queue ${sanitize(queue)}: its DLQ could not be checked: ${sanitize(why)}`;
  return { queue, ok: false, dlq_size: null, dlq_rate: null, ended: null, dead: null, aged_entry_age_ms: null, reason };
}

/** The reason for a malformed DLQ entry whose age cannot be read: a person must look at it (exit 1), named so they can. */
function timelessReason(queue: string, e: AgedEntry, maxAgeMs: number): string {
  return `queue ${sanitize(queue)}: DLQ entry ${sanitize(e.jobId)} is malformed and has no readable time of death, so its age cannot be held against --max-age ${formatDuration(maxAgeMs)} (${sanitize(e.malformed ?? '')}); see agentq dlq show ${sanitize(e.jobId)} --raw`;
}

export async function run(opts: DlqCheckOptions, ctx: CommandContext): Promise<void> {
  const limits = parseLimits(opts);
  if (opts.queue !== undefined) checkQueueName(opts.queue);
  const backend = await ctx.openBackend();
  // A queue the store has never seen is most likely a typo, and a check that passes on it would
  // never alert: it fails, naming (some of) the queues there are.
  const survey = opts.queue !== undefined ? await surveyQueues(backend, opts.queue) : null;
  if (opts.queue !== undefined && survey !== null && !survey.known) {
    const here = queuesHere(survey);
    const from = opts.queueFromContext ? ` (the context's queue; check every queue with -A, or another with --queue)` : '';
    throw new NotFoundError(`queue ${sanitize(opts.queue)}${from} is not known to this store: nothing was ever submitted to it${here}`, 'QUEUE_NOT_FOUND');
  }
  // Every queue, past the first page too (the cron alert once never checked those past 1,000).
  const queues = opts.queue !== undefined ? [opts.queue] : await allQueues(backend);
  const now = ctx.clock.now();
  const windowMs = limits.windowMs ?? null;
  // The damage of queues that could not be checked: its hint (what to do about the key) is shown too.
  const damage: AgentqError[] = [];
  // (a few queues at a time, in order: one after the other, 1,500 queues took seconds)
  const checked = await mapBounded(queues, QUEUE_READS_AT_ONCE, async (queue): Promise<CheckedQueue> => {
    let stats: Awaited<ReturnType<Backend['stats']>>;
    try {
      stats = await backend.stats(queue, windowMs === null ? {} : { endsWindowMs: windowMs });
    } catch (e) {
      if (isStatsDamaged(e)) {
        damage.push(e);
        return uncheckable(queue, e);
      }
      throw e;
    }
    const report = buildStatsReport(stats);
    // The rate over the window from the per-minute job ends; over the whole life from the totals.
    const t = report.totals;
    const { ended, dead } =
      windowMs !== null
        ? (stats.ends ?? { ended: 0, dead: 0 })
        : { ended: t ? t.succeeded + t.dead + t.expired + t.cancelled : 0, dead: t?.dead ?? 0 };
    const dlqRate = ratio(dead, ended);
    const over = windowMs === null ? "over the queue's whole life" : `over the last ${formatDuration(windowMs)}`;
    const aged = limits.maxAgeMs !== undefined && report.dlq_size > 0 ? await agedEntry(backend, queue, now, limits.maxAgeMs) : null;
    const agedMs = aged?.ageMs ?? null;
    // Too few ends to judge (one death among two jobs is 50%): the rate is reported, not checked.
    const judged = ended >= (limits.minEnded ?? 1);
    const limitReason = checkDlqLimits(
      { queue: sanitize(queue), dlq_size: report.dlq_size, dlq_rate: judged ? dlqRate : null, oldest_dead_age_ms: agedMs, rate_basis: `${over} (${dead} of ${count(ended, 'job')} that ended)` },
      limits,
      formatDuration,
    );
    const reason = limitReason ?? (aged !== null && aged.ageMs === null ? timelessReason(queue, aged, limits.maxAgeMs!) : null);
    return { queue, ok: reason === null, dlq_size: report.dlq_size, dlq_rate: dlqRate, ended, dead, aged_entry_age_ms: agedMs, reason };
  });
  const reasons = checked.flatMap((c) => (c.reason === null ? [] : [c.reason]));
  // -o json/ndjson: the whole result on stdout for a script, with the same exit code (the reason line
  // still goes to stderr, for cron mail).
  if (isMachineFormat(ctx.format)) printObject(ctx.out, checkResult(limits, checked, reasons));
  if (queues.length === 0) {
    // Nothing checked: on a Redis with another db or prefix, or the wrong context, every check would
    // pass for ever. It still passes (a new store is not an alert), but says which store was read.
    ctx.note(`ok: no queue here has had a job yet, so there was nothing to check (${sanitize(backend.description)}): is --url / the context the store you meant?`);
    return;
  }
  if (reasons.length === 0) {
    // Named when it is one: a context's queue narrows the check, and the line says which was checked.
    ctx.note(queues.length === 1 ? `ok: queue ${sanitize(queues[0]!)} within limits${opts.queueFromContext ? " (the context's queue)" : ''}` : `ok: ${queues.length} queues within limits`);
    return;
  }
  throw new DlqCheckFailed(reasons.length === 1 ? reasons[0]! : `${reasons[0]} (and ${reasons.length - 1} more queue${reasons.length === 2 ? '' : 's'})`, damage[0]?.hint);
}
