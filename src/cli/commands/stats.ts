/**
 * `agentq stats [--queue Q] [--by class|tenant] [--watch]`: queue health from
 * the backend's maintained counters and bounded samples (never a scan), with
 * every derived figure computed once in `core/stats`.
 */
import type { Backend, QueueStats, StatsBreakdown } from '../../backend/contract.js';
import { AgentqError, ExitCode, ValidationError } from '../../core/errors.js';
import { formatDuration, parseDuration } from '../../core/duration.js';
import { formatUsd } from '../../core/usage.js';
import { buildStatsReport, sparkline, StatsHistory, type StatsReport } from '../../core/stats.js';
import { renderPrometheus } from '../../metrics/prometheus.js';
import type { CommandContext } from '../context.js';
import type { Column } from '../output/columns.js';
import { isMachineFormat, printObject, printRecords, type OutputTarget } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { chromeFor, SPARK_BARS, type Charset } from '../output/charset.js';
import { abortableSleep, unlessAborted } from '../../util/sleep.js';
import { checkQueueName, queuesHere } from '../parse.js';
import { allQueues, surveyQueues } from '../../backend/queue-walk.js';
import { mapBounded, QUEUE_READS_AT_ONCE } from '../../util/bounded.js';

export interface StatsOptions {
  queue?: string;
  by?: 'class' | 'tenant' | 'code';
  watch?: boolean;
  interval?: string;
  /** Set by the registration when `-o prometheus` was given. */
  prometheus?: boolean;
}

/** A queue whose stats could not be read because they are damaged (a counter holding text). */
export interface DamagedQueue {
  queue: string;
  error: AgentqError;
}

export interface StatsRead {
  stats: QueueStats[];
  damaged: DamagedQueue[];
}

/**
 * Reads the figures of the given queues (or every queue the backend knows). A queue whose stored
 * figures are damaged (STATS_DAMAGED: written by something other than agentq) is set aside and
 * named, not allowed to fail the read of every other queue: one bad key once turned every scrape
 * into a 503. Any other failure (the store down) still fails the whole read.
 */
export async function collectStats(backend: Backend, queue: string | undefined): Promise<StatsRead> {
  const queues = queue !== undefined ? [queue] : await allQueues(backend);
  // (a few queues at a time: one after the other, 1,500 queues took longer than a scrape may wait)
  const read = await mapBounded(queues, QUEUE_READS_AT_ONCE, async (q): Promise<QueueStats | DamagedQueue> => {
    try {
      return await backend.stats(q);
    } catch (e) {
      if (isStatsDamaged(e)) return { queue: q, error: e };
      throw e;
    }
  });
  const stats: QueueStats[] = [];
  const damaged: DamagedQueue[] = [];
  for (const r of read) {
    if ('error' in r) damaged.push(r);
    else stats.push(r);
  }
  return { stats, damaged };
}

/** The code of a queue's damaged stats (see StatsDamagedError in backend/redis/stats.ts). */
const STATS_DAMAGED = 'STATS_DAMAGED';

/** A read that failed because one queue's stored stats are damaged, not because the store is down. */
export function isStatsDamaged(e: unknown): e is AgentqError {
  return e instanceof AgentqError && e.code === STATS_DAMAGED;
}

/**
 * After the readable queues were shown: each damaged one named on stderr, and exit 1. One is
 * thrown as it is (its message names the queue, the key and the field, its hint what to do).
 */
function failOnDamaged(ctx: CommandContext, damaged: DamagedQueue[]): void {
  if (damaged.length === 0) return;
  if (damaged.length === 1) throw damaged[0]!.error;
  for (const d of damaged) ctx.warn(d.error.message);
  throw new AgentqError(
    STATS_DAMAGED,
    `the stats of ${damaged.length} queues are damaged (named above); the other queues' figures are shown`,
    ExitCode.failure,
    damaged[0]!.error.hint,
  );
}

// ---------------------------------------------------------------- columns

type Fmt = {
  dur: (ms: number | null | undefined) => string | number | null;
  pct: (r: number | null) => string | number | null;
  usd: (x: number | null) => string | number | null;
};

function formatters(plain: boolean): Fmt {
  return plain
    ? {
        // Plain output is for scripts: seconds and fractions as numbers.
        dur: (ms) => (ms === null || ms === undefined ? null : Math.round(ms) / 1000),
        pct: (r) => (r === null ? null : Number(r.toFixed(4))),
        usd: (x) => (x === null ? null : Number(x.toPrecision(6))),
      }
    : {
        dur: (ms) => (ms === null || ms === undefined ? null : formatDuration(ms)),
        pct: (r) => (r === null ? null : `${(r * 100).toFixed(1)}%`),
        usd: (x) => (x === null ? null : formatUsd(x)),
      };
}

/**
 * On a terminal too narrow for every column with its header whole (80-120 columns), `-o table`
 * leaves out the `dropWhenNarrow` ones, highest first, rather than cut `WAIT P50` and `WAIT P95`
 * to the same `WAIT …`; the queue name is cut last (it is what goes into the next `--queue`).
 * `-o wide` and plain output keep every column.
 */
export function queueColumns(f: Fmt): Column<StatsReport>[] {
  return [
    { header: 'QUEUE', get: (r) => r.queue, shrinkLast: true },
    { header: 'QUEUED', get: (r) => r.queued },
    { header: 'SCHED', get: (r) => r.scheduled },
    { header: 'RUNNING', get: (r) => r.running },
    // running jobs whose lease ran out: their worker is gone, nobody has taken them back yet
    { header: 'STALE', get: (r) => r.lease_expired },
    { header: 'DLQ', get: (r) => r.dlq_size },
    { header: 'OLDEST', get: (r) => f.dur(r.oldest_queued_age_ms) },
    { header: 'WAIT P50', get: (r) => f.dur(r.time_in_queue?.p50_ms), dropWhenNarrow: 8 },
    { header: 'WAIT P95', get: (r) => f.dur(r.time_in_queue?.p95_ms), dropWhenNarrow: 1 },
    { header: 'EXEC P50', get: (r) => f.dur(r.execution?.p50_ms), dropWhenNarrow: 7 },
    { header: 'EXEC P95', get: (r) => f.dur(r.execution?.p95_ms), dropWhenNarrow: 3 },
    { header: 'RETRY', get: (r) => f.pct(r.retry_rate), dropWhenNarrow: 4 },
    { header: 'DLQ RATE', get: (r) => f.pct(r.dlq_rate), dropWhenNarrow: 2 },
    { header: 'BACKLOG', get: (r) => f.dur(r.backlog_seconds === null ? null : r.backlog_seconds * 1000), dropWhenNarrow: 5 },
    // (agent jobs take minutes: 0.0033/s is a queue at work, which two decimals showed as 0)
    { header: 'JOBS/S', get: (r) => jobsPerSecond(r.throughput_per_s), dropWhenNarrow: 6 },
    // what the handlers reported spending, per job that ended (ctx.reportUsage, agentq job usage)
    { header: 'COST/JOB', get: (r) => f.usd(r.cost_per_job_usd), dropWhenNarrow: 9 },
    { header: 'DRAIN', get: (r) => f.dur(r.drain_estimate_seconds === null ? null : r.drain_estimate_seconds * 1000), wide: true },
    {
      header: 'SUCCESS BY ATTEMPT',
      wide: true,
      get: (r) => r.success_rate_by_attempt.map((a) => `#${a.attempt} ${f.pct(a.rate) ?? '-'}`).join(' ') || null,
    },
  ];
}

/** Two decimals from 1/s up, two significant digits under it (never a working queue shown as 0). */
function jobsPerSecond(x: number | null): number | null {
  if (x === null) return null;
  return Number(x >= 1 ? x.toFixed(2) : x.toPrecision(2));
}

interface BreakdownRow extends StatsBreakdown {
  queue: string;
}

export function breakdownColumns(by: 'class' | 'tenant', f: Fmt): Column<BreakdownRow>[] {
  return [
    { header: 'QUEUE', get: (r) => r.queue, flexible: true },
    { header: by === 'class' ? 'CLASS' : 'TENANT', get: (r) => r.key, flexible: true },
    { header: 'QUEUED', get: (r) => r.queued },
    { header: 'SCHED', get: (r) => r.scheduled },
    { header: 'RUNNING', get: (r) => r.running },
    { header: 'DLQ', get: (r) => r.dlq_size },
    { header: 'OLDEST', get: (r) => f.dur(r.oldest_queued_age_ms) },
    { header: 'BACKLOG', get: (r) => f.dur(r.backlog_seconds * 1000) },
  ];
}

function breakdownRows(reports: StatsReport[], by: 'class' | 'tenant'): BreakdownRow[] {
  const rows: BreakdownRow[] = [];
  for (const r of reports) {
    const parts = by === 'class' ? r.by_class : r.by_tenant;
    if (parts === null) continue;
    for (const b of parts) rows.push({ ...b, queue: r.queue });
  }
  return rows;
}

interface FailureRow {
  queue: string;
  code: string;
  count: number;
  /** Of the queue's failed attempts that have a code. */
  share: number;
}

export function failureColumns(f: Fmt): Column<FailureRow>[] {
  return [
    { header: 'QUEUE', get: (r) => r.queue, flexible: true },
    { header: 'CODE', get: (r) => r.code, shrinkLast: true },
    { header: 'FAILURES', get: (r) => r.count },
    { header: 'SHARE', get: (r) => f.pct(r.share) },
  ];
}

/** Each queue's failure counts, largest first; `perQueue` keeps only the largest few of each. */
function failureRows(reports: StatsReport[], perQueue = Infinity): FailureRow[] {
  const rows: FailureRow[] = [];
  for (const r of reports) {
    const codes = r.failures_by_code ?? [];
    const all = codes.reduce((n, c) => n + c.count, 0);
    for (const c of codes.slice(0, perQueue)) rows.push({ queue: r.queue, code: c.code, count: c.count, share: all > 0 ? c.count / all : 0 });
  }
  return rows;
}

/** Codes per queue in the short section under the table (`--by code` lists every one). */
const TOP_FAILURE_CODES = 3;

/** What a stats table with no rows says (RecordSpec.empty), by what left it empty. */
function emptyLine(reports: StatsReport[], by: StatsOptions['by'], damaged: number): string {
  if (reports.length === 0) return damaged > 0 ? 'No queue could be read: the damaged ones are named below.' : 'No queues yet: submit a job first (agentq submit ...).';
  if (by === 'code') return 'No failed attempts yet.';
  return `No figures by ${by} yet.`;
}

async function printReports(out: OutputTarget, reports: StatsReport[], by: StatsOptions['by'], damaged: number): Promise<void> {
  if (out.format === 'json' || out.format === 'ndjson') {
    if (out.format === 'json') printObject(out, reports);
    else for (const r of reports) printObject(out, r);
    return;
  }
  const f = formatters(out.format === 'plain');
  const empty = emptyLine(reports, by, damaged);
  if (by === 'code') await printRecords(out, { columns: failureColumns(f), empty }, failureRows(reports));
  else if (by) await printRecords(out, { columns: breakdownColumns(by, f), empty }, breakdownRows(reports, by));
  else {
    await printRecords(out, { columns: queueColumns(f), empty }, reports);
    // For a person at a terminal, the codes behind the retries and the DLQ (429s most often),
    // under the table: plain output stays one line per queue, for scripts.
    const top = failureRows(reports, TOP_FAILURE_CODES);
    if (out.format !== 'plain' && top.length > 0) {
      out.write(`\nFAILURES BY CODE (failed attempts since the queue was created; all: --by code)\n`);
      await printRecords(out, { columns: failureColumns(f), empty: 'No failed attempts yet.' }, top);
    }
  }
}

// ---------------------------------------------------------------- watch

/** The sparkline block under the table in `--watch`: depth and oldest age per queue. */
export function renderSparklines(reports: StatsReport[], history: StatsHistory, width = 30, charset: Charset = 'utf8'): string {
  // (no queue, no block: the table above already said so, and a header alone reads as cut short)
  if (reports.length === 0) return '';
  const nameWidth = Math.min(24, Math.max(5, ...reports.map((r) => sanitize(r.queue).length)));
  const lines = [`${'QUEUE'.padEnd(nameWidth)}  ${'DEPTH'.padEnd(width)}  OLDEST AGE`];
  for (const r of reports) {
    const name = sanitize(r.queue).slice(0, nameWidth).padEnd(nameWidth);
    const depth = sparkline(history.get(`${r.queue}\0depth`), width, SPARK_BARS[charset]).padEnd(width);
    const age = sparkline(history.get(`${r.queue}\0age`), width, SPARK_BARS[charset]);
    lines.push(`${name}  ${depth}  ${age}`);
  }
  return lines.join('\n') + '\n';
}

export function recordHistory(history: StatsHistory, reports: StatsReport[]): void {
  for (const r of reports) {
    history.push(`${r.queue}\0depth`, r.queued + r.scheduled);
    history.push(`${r.queue}\0age`, r.oldest_queued_age_ms);
  }
}

const CLEAR = '\x1b[H\x1b[2J';

async function watch(opts: StatsOptions, ctx: CommandContext, backend: Backend): Promise<void> {
  // A redrawn table with a JSON document in it is neither: one document per frame would be a stream
  // nobody asked for, and the table is the point of --watch.
  if (isMachineFormat(ctx.out.format)) {
    throw new ValidationError(`--watch redraws a table for a terminal; it cannot be combined with -o ${ctx.out.format}`, 'For snapshots in a script, run `agentq stats -o ndjson` on a schedule, or scrape `agentq metrics serve`.');
  }
  if (ctx.io.stdout.isTTY !== true) {
    throw new ValidationError('--watch redraws a terminal, but stdout is not one', 'For scripts, run `agentq stats -o json` on a schedule, or scrape `agentq metrics serve`.');
  }
  const intervalMs = parseDuration(opts.interval ?? '2s', '--interval');
  if (intervalMs < 200) throw new ValidationError('--interval must be at least 200ms');
  const history = new StatsHistory(60);
  const charset = ctx.out.charset ?? 'utf8';
  const width = Math.max(10, Math.min(60, Math.floor(((ctx.io.stdout.columns ?? 100) - 30) / 2)));
  // Lines are cut at the right edge while watching, not wrapped (as top does): a wrapped table
  // scrolled the screen on a narrow terminal and left pieces of the last frame behind.
  ctx.io.stdout.write(NO_WRAP);
  // (also when a second Ctrl-C exits at once, past the finally below: a terminal left without
  // wrapping cuts every long line until `reset`)
  const rewrap = (): void => void ctx.io.stdout.write(WRAP);
  process.once('exit', rewrap);
  const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  // The last figures read, shown (marked stale) while the backend is unreachable.
  let reports: StatsReport[] = [];
  let unreachableSince: number | null = null;
  let why = '';
  // Queues whose stats are damaged: named under the table each frame, while the others are shown.
  let damagedLines: string[] = [];
  // Ctrl-C ends the watch (exit 0) as soon as it comes, also during a read the store does not answer.
  const releaseStops = ctx.handleStops();
  const ABORTED = Symbol('aborted');
  try {
    while (!ctx.signal.aborted) {
      try {
        const read = await unlessAborted(collectStats(backend, opts.queue), ctx.signal, ABORTED);
        if (read === ABORTED) {
          // (its close would wait for the unanswered call too)
          ctx.abandonBackend?.();
          break;
        }
        reports = read.stats.map(buildStatsReport);
        damagedLines = read.damaged.map((d) => `${ctx.palette.warn('DAMAGED')}: ${sanitize(d.error.message)}`);
        recordHistory(history, reports);
        unreachableSince = null;
      } catch (e) {
        // A transient outage (exit 75: Redis restarting, a held SQLite lock) is ridden out, as
        // `tail --follow` does: the last figures stay up, marked stale, and the next round retries.
        if (!(e instanceof AgentqError) || e.exitCode !== ExitCode.retryLater || ctx.signal.aborted) throw e;
        unreachableSince ??= ctx.clock.now();
        why = e.message;
      }
      const frame: string[] = [];
      // (a table with no rows says so in the frame, not on stderr, which the next frame would not clear)
      const buffer: OutputTarget = { ...ctx.out, write: (s) => void frame.push(s), note: (line) => void frame.push(`${line}\n`) };
      await printReports(buffer, reports, opts.by, damagedLines.length);
      const stale = unreachableSince === null ? '' : `\n${ctx.palette.warn('STALE')}: backend unreachable since ${stamp(unreachableSince)}, retrying (figures as last read): ${sanitize(why)}`;
      const damagedBlock = damagedLines.length === 0 ? '' : `\n${damagedLines.join('\n')}\n`;
      // Same width: the table's columns were measured with its glyphs (a `…` cut becomes `~`).
      const text = `${CLEAR}agentq stats — ${stamp(ctx.clock.now())} — every ${formatDuration(intervalMs)}, Ctrl-C to stop${stale}\n\n${frame.join('')}${damagedBlock}\n${renderSparklines(reports, history, width, charset)}`;
      ctx.io.stdout.write(chromeFor(charset, text, { sameWidth: true }));
      await abortableSleep(intervalMs, ctx.signal);
    }
  } finally {
    releaseStops();
    process.removeListener('exit', rewrap);
    rewrap();
  }
}

/** DECAWM off and on: the terminal cuts long lines instead of wrapping them. */
const NO_WRAP = '\x1b[?7l';
const WRAP = '\x1b[?7h';

// ---------------------------------------------------------------- the command

/**
 * A queue the store never saw (most likely a typo) has nothing but zeros: say so, as kubectl says
 * "No resources found", rather than let the zeros pass for a healthy queue. True when it said so.
 */
async function noteUnknownQueue(opts: StatsOptions, ctx: CommandContext, backend: Backend): Promise<boolean> {
  if (opts.queue === undefined) return false;
  const survey = await surveyQueues(backend, opts.queue);
  if (survey.known) return false;
  ctx.note(`queue ${sanitize(opts.queue)} has never had a job in this store, so its figures are all zero${queuesHere(survey)}`);
  return true;
}

export async function run(opts: StatsOptions, ctx: CommandContext): Promise<void> {
  if (opts.queue !== undefined) checkQueueName(opts.queue);
  const backend = await ctx.openBackend();
  if (opts.prometheus) {
    if (opts.watch) throw new ValidationError('-o prometheus prints one snapshot; it cannot be combined with --watch', 'Use `agentq metrics serve` for a live endpoint.');
    const t0 = ctx.clock.now();
    const { stats, damaged } = await collectStats(backend, opts.queue);
    ctx.io.stdout.write(renderPrometheus(stats, { scrapeSeconds: (ctx.clock.now() - t0) / 1000, damagedQueues: damaged.map((d) => d.queue) }));
    // (a typo in a textfile-collector job writes zeros for a queue nobody uses: said as below)
    await noteUnknownQueue(opts, ctx, backend);
    failOnDamaged(ctx, damaged);
    return;
  }
  if (opts.watch) return watch(opts, ctx, backend);
  const read = await collectStats(backend, opts.queue);
  const reports = read.stats.map(buildStatsReport);
  await printReports(ctx.out, reports, opts.by, read.damaged.length);
  const unknown = await noteUnknownQueue(opts, ctx, backend);
  if (unknown) {
    // (said: nothing more to say about a queue that has no figures)
  } else if (opts.by && reports.some((r) => (opts.by === 'class' ? r.by_class : opts.by === 'tenant' ? r.by_tenant : r.failures_by_code) === null)) {
    ctx.note(`This backend does not keep figures by ${opts.by} yet: queues without them are left out.`);
  }
  if (opts.by === 'tenant') {
    // The list is capped (the deepest first): say so, or the missing tenants pass for idle ones.
    for (const r of reports) {
      if (r.by_tenant_truncated && r.by_tenant !== null && r.tenants_total !== null) {
        ctx.note(`queue ${sanitize(r.queue)}: showing the ${r.by_tenant.length} deepest of ${r.tenants_total} tenants`);
      }
    }
  }
  failOnDamaged(ctx, read.damaged);
}
