/**
 * Renders queue statistics in the Prometheus text exposition format (0.0.4),
 * for `agentq stats -o prometheus` and `agentq metrics serve`.
 *
 * Gauges describe the queue now (depth, oldest age, DLQ size, backlog);
 * counters are the backend's cumulative totals (so `rate()` works across
 * scrapes); time in queue and execution time are gauges of quantiles
 * (0.5/0.95/0.99) over the backend's bounded recent samples. They are not
 * summaries: a summary's `_sum`/`_count` must be cumulative for
 * `rate(_sum)/rate(_count)`, and those of a 1,000-sample ring stop growing
 * and can fall; no backend keeps cumulative duration totals.
 *
 * A figure a backend does not keep is left out rather than written as 0, so
 * an alert on it cannot be silently satisfied.
 */
import type { QueueStats } from '../backend/contract.js';
import { sanitize } from '../cli/output/sanitize.js';
import { percentile } from '../core/stats.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Record<string, string>;

interface Family {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  samples: Array<{ suffix?: string; labels: Labels; value: number }>;
}

/**
 * Label values may hold anything; the format needs `\`, `"` and newline escaped. The format
 * allows any other character, but this text is also read on terminals (`stats -o prometheus`,
 * `curl` of the endpoint), and a queue name a foreign writer stored may hold ESC, BEL or bidi
 * controls: those become the sanitiser's visible escapes first (`\x1b`, whose backslash the
 * format then escapes, so a scraper reads the label as the text `\x1b`).
 *
 * That rewriting must not make two names one label: a series repeated in an exposition makes
 * Prometheus reject the whole scrape. So it is reversible: a backslash of the name itself is
 * doubled in the label (a code `A\B` reads `A\\B`, so the text `\x1b` reads `\\x1b`, not the
 * label of an ESC), and a carriage return is shown as `\r` even before a line break (`A\r\nB`
 * and `A\nB` stay two labels). Names without a backslash or a control character are unchanged.
 */
export function escapeLabelValue(v: string): string {
  return labelText(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The label's text as a scraper reads it (before the format's own escaping): see escapeLabelValue. */
function labelText(v: string): string {
  // Line by line, so the sanitiser sees no `\r\n` pair to fold into a bare line break.
  return v
    .split('\n')
    .map((line) => sanitize(line.replace(/\\/g, '\\\\')))
    .join('\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function renderFamilies(families: Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.samples.length === 0) continue;
    out.push(`# HELP ${f.name} ${f.help}`);
    out.push(`# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) out.push(`${f.name}${s.suffix ?? ''}${formatLabels(s.labels)} ${formatValue(s.value)}`);
  }
  return out.join('\n') + '\n';
}

const QUANTILES = [0.5, 0.95, 0.99];

/** Quantiles of the recent samples as gauge samples; NaN (unknown) while the ring is empty. */
function quantileSamples(queue: string, samplesMs: number[] | undefined): Family['samples'] {
  if (samplesMs === undefined) return [];
  return QUANTILES.map((q) => {
    const v = percentile(samplesMs, q * 100);
    return { labels: { queue, quantile: String(q) }, value: v === null ? NaN : v / 1000 };
  });
}

/** The exposition of every given queue, one family at a time (the format wants a family's samples together). */
export function renderPrometheus(stats: readonly QueueStats[], extra: { scrapeSeconds?: number; damagedQueues?: readonly string[] } = {}): string {
  const fam = (name: string, type: Family['type'], help: string): Family => ({ name, type, help, samples: [] });
  const depth = fam('agentq_queue_depth', 'gauge', 'Jobs by queue, service class and state (queued, scheduled, running).');
  const oldest = fam('agentq_oldest_age_seconds', 'gauge', 'Age of the oldest claimable job (a job whose lease expired counts from the lease end), 0 when none.');
  const dlq = fam('agentq_dlq_size', 'gauge', 'Jobs in the dead-letter queue.');
  const stale = fam('agentq_lease_expired_jobs', 'gauge', 'Running jobs whose lease ran out (worker gone); the next claim on the queue takes them back.');
  const backlog = fam('agentq_backlog_seconds', 'gauge', 'Estimated seconds of queued work.');
  const tenantDepth = fam('agentq_tenant_queue_depth', 'gauge', 'Jobs by queue, tenant and state (the deepest tenants only).');
  const tiq = fam('agentq_time_in_queue_recent_seconds', 'gauge', 'Quantiles of the time from claimable to claimed, over the last 1000 claims (not cumulative).');
  const exec = fam('agentq_execution_recent_seconds', 'gauge', 'Quantiles of the time from claim to the end of the attempt, over the last 1000 attempts (not cumulative).');
  const jobs = fam('agentq_jobs_total', 'counter', 'Jobs by how they were submitted or ended: submitted, succeeded, dead, expired, cancelled.');
  const attempts = fam('agentq_attempts_total', 'counter', 'Attempts started (claims).');
  const retries = fam('agentq_retries_total', 'counter', 'Failed attempts that were scheduled for another try.');
  const byAttempt = fam('agentq_attempt_outcomes_total', 'counter', 'How attempt number N ended: succeeded or failed.');
  const failures = fam(
    'agentq_attempt_failures_total',
    'counter',
    'Attempts that ended in failure, by error code (LEASE_EXPIRED: lease lost), retried or not; codes past the first 100 of a queue count as OTHER.',
  );
  const usageTokens = fam('agentq_usage_tokens_total', 'counter', 'Tokens the handlers reported their attempts spent (ctx.reportUsage, agentq job usage).');
  const usageCost = fam('agentq_usage_cost_usd_total', 'counter', 'US dollars the handlers reported their attempts spent; per job: divide its rate by that of the ended jobs.');

  for (const s of stats) {
    const queue = s.queue;
    if (s.by_class) {
      for (const c of s.by_class) {
        for (const state of ['queued', 'scheduled', 'running'] as const) {
          depth.samples.push({ labels: { queue, class: c.key, state }, value: c[state] });
        }
        oldest.samples.push({ labels: { queue, class: c.key }, value: (c.oldest_queued_age_ms ?? 0) / 1000 });
        backlog.samples.push({ labels: { queue, class: c.key }, value: c.backlog_seconds });
      }
    } else {
      // Without a class breakdown the whole queue is one series; `class="all"` keeps the label set stable.
      for (const state of ['queued', 'scheduled'] as const) {
        depth.samples.push({ labels: { queue, class: 'all', state }, value: s.counts[state] });
      }
      depth.samples.push({ labels: { queue, class: 'all', state: 'running' }, value: s.running });
      oldest.samples.push({ labels: { queue, class: 'all' }, value: (s.oldest_queued_age_ms ?? 0) / 1000 });
      if (s.backlog_seconds !== undefined) backlog.samples.push({ labels: { queue, class: 'all' }, value: s.backlog_seconds });
    }
    dlq.samples.push({ labels: { queue }, value: s.dlq_size });
    if (s.lease_expired !== undefined) stale.samples.push({ labels: { queue }, value: s.lease_expired });
    for (const t of s.by_tenant ?? []) {
      for (const state of ['queued', 'scheduled', 'running'] as const) {
        tenantDepth.samples.push({ labels: { queue, tenant: t.key, state }, value: t[state] });
      }
    }
    tiq.samples.push(...quantileSamples(queue, s.time_in_queue_ms));
    exec.samples.push(...quantileSamples(queue, s.execution_ms));
    if (s.totals) {
      for (const outcome of ['submitted', 'succeeded', 'dead', 'expired', 'cancelled'] as const) {
        jobs.samples.push({ labels: { queue, outcome }, value: s.totals[outcome] });
      }
      attempts.samples.push({ labels: { queue }, value: s.totals.attempts });
      retries.samples.push({ labels: { queue }, value: s.totals.retried });
    }
    for (const a of s.by_attempt ?? []) {
      byAttempt.samples.push({ labels: { queue, attempt: String(a.attempt), outcome: 'succeeded' }, value: a.succeeded });
      byAttempt.samples.push({ labels: { queue, attempt: String(a.attempt), outcome: 'failed' }, value: a.failed });
    }
    for (const c of s.failures_by_code ?? []) failures.samples.push({ labels: { queue, code: c.code }, value: c.count });
    if (s.usage) {
      usageTokens.samples.push({ labels: { queue }, value: s.usage.tokens });
      usageCost.samples.push({ labels: { queue }, value: s.usage.cost_usd });
    }
  }

  // 1 for a queue whose figures were read, 0 for one whose stored stats are damaged (its other
  // series are left out): one bad key in one queue does not make the whole scrape fail, and
  // `agentq_queue_stats_up == 0` alerts on it.
  const up = fam('agentq_queue_stats_up', 'gauge', "1 when the queue's stats were read, 0 when they are damaged (a counter another writer left holding text; agentq stats names it).");
  for (const s of stats) up.samples.push({ labels: { queue: s.queue }, value: 1 });
  for (const queue of extra.damagedQueues ?? []) up.samples.push({ labels: { queue }, value: 0 });

  const families = [depth, oldest, dlq, stale, backlog, tenantDepth, tiq, exec, jobs, attempts, retries, byAttempt, failures, usageTokens, usageCost, up];
  if (extra.scrapeSeconds !== undefined) {
    const scrape = fam('agentq_stats_collect_seconds', 'gauge', 'Time taken to collect these statistics from the backend.');
    scrape.samples.push({ labels: {}, value: extra.scrapeSeconds });
    families.push(scrape);
  }
  return renderFamilies(families);
}
