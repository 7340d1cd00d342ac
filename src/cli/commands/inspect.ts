/**
 * `agentq inspect JOB`: everything about one job, for the person on call.
 * `-o json` prints the job as the `Job` schema describes it, plus `trace_url`: the link to its
 * trace made from the trace link template (null without a template or a trace id).
 */
import { NotFoundError } from '../../core/errors.js';
import { formatDuration } from '../../core/duration.js';
import type { DlqEntry, Job, JobEvent } from '../../core/schemas.js';
import { leaseExpiredFor } from '../../core/states.js';
import { budgetBreach, formatUsage, jobUsage } from '../../core/usage.js';
import type { CommandContext } from '../context.js';
import { fieldLines } from '../output/fields.js';
import { isMachineFormat, printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { checkJobId, parseIntOption } from '../parse.js';
import { traceLink } from '../trace-link.js';
import { damagedWarning } from './tail-gap.js';

export interface InspectOptions {
  job: string;
  events?: string;
}

export async function run(o: InspectOptions, ctx: CommandContext): Promise<void> {
  const id = checkJobId(o.job);
  const eventCount = parseIntOption(o.events ?? '10', '--events', 0, 1000)!;
  const backend = await ctx.openBackend();
  const job = await backend.get(id);
  if (!job) throw new NotFoundError(`job ${id} not found in ${backend.description}`);
  const template = ctx.config().traceUrl ?? null;
  if (isMachineFormat(ctx.format)) {
    printObject(ctx.out, { ...job, trace_url: traceLink(template, job.trace_id) });
    return;
  }
  const dlq = job.state === 'dead' ? await backend.dlqGet(id) : null;
  const events = eventCount > 0 ? await lastEvents(backend.events({ jobId: id, onDamaged: (d) => ctx.warn(damagedWarning('inspect', d)) }), eventCount) : [];
  ctx.out.write(renderJob(job, dlq, events, ctx.clock.now(), ctx.format === 'plain', template));
}

/** Keeps only the newest `n` events: memory stays bounded however long the history. */
async function lastEvents(it: AsyncIterable<JobEvent>, n: number): Promise<JobEvent[]> {
  const ring: JobEvent[] = [];
  for await (const e of it) {
    ring.push(e);
    if (ring.length > n) ring.shift();
  }
  return ring;
}

/** `2026-11-29T10:00:00.000Z (in 1h20m)` / `(5m ago)`. */
function when(iso: string | null, now: number, plain: boolean): string {
  if (iso === null) return '-';
  if (plain) return iso;
  const delta = Date.parse(iso) - now;
  const rel = delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
  return `${iso} (${rel})`;
}

const s = (v: unknown) => sanitize(v);

/**
 * The text view: `label:  value` lines (output/fields.ts, as `dlq show` prints them), then
 * sections. Plain output uses a tab between label and value and exact ISO times, so it stays greppable.
 */
export function renderJob(job: Job, dlq: DlqEntry | null, events: JobEvent[], now: number, plain: boolean, traceUrlTemplate: string | null = null): string {
  const lines: string[] = [];
  const fields: Array<[string, string]> = [];
  const row = (label: string, value: string) => fields.push([label, value]);
  const section = (title: string) => lines.push('', plain ? `# ${title}` : `${title}:`);

  row('job', s(job.job_id));
  row('workflow', s(job.workflow) + (job.operation ? ` / ${s(job.operation)}` : ''));
  row('queue', s(job.queue));
  row('tenant', s(job.tenant_id));
  row('class', s(job.class));
  row('state', s(job.state) + (job.outcome ? ` (outcome: ${s(job.outcome)})` : ''));
  row('attempts', `${job.attempt} of ${job.max_attempts}`);
  row('created', when(job.created_at, now, plain));
  row('updated', when(job.updated_at, now, plain));
  if (job.state === 'queued' || job.state === 'scheduled') row('runs at', when(job.run_at, now, plain));
  if (job.ended_at) row('ended', when(job.ended_at, now, plain));
  if (job.deadline_at) {
    const left = Date.parse(job.deadline_at) - now;
    row('deadline', `${plain ? job.deadline_at : job.deadline_at + (left > 0 ? ` (${formatDuration(left)} left)` : ` (passed ${formatDuration(-left)} ago)`)}`);
  } else row('deadline', 'none');
  const expiredFor = leaseExpiredFor(job, now);
  if (job.lease && expiredFor !== null) {
    // The lease ran out and nobody took the job back yet (reaping is lazy): no worker is running it.
    const ago = plain ? `at ${job.lease.expires_at}` : `${formatDuration(expiredFor)} ago`;
    row('lease', `expired ${ago} (worker gone? the next claim on queue ${s(job.queue)} takes the job back); was held by ${s(job.lease.worker_id)}, fence ${job.lease.fence}`);
  } else if (job.lease) row('lease', `held by ${s(job.lease.worker_id)}, fence ${job.lease.fence}, expires ${when(job.lease.expires_at, now, plain)}`);
  else row('lease', job.state === 'running' ? 'none (lost?)' : 'none');
  if (job.cancel_requested_at) row('cancel', `requested ${when(job.cancel_requested_at, now, plain)}${job.cancel_reason ? `: ${s(job.cancel_reason)}` : ''}`);
  if (job.input_ref) row('input', `ref ${s(job.input_ref)} sha256 ${s(job.input_sha256)}`);
  else if (job.input !== null) row('input', `inline, ${Buffer.byteLength(job.input, 'utf8')} bytes: ${preview(job.input, 80)}`);
  else row('input', 'none');
  if (job.idempotency_key) row('idempotency', s(job.idempotency_key));
  if (job.trace_id) row('trace', s(job.trace_id));
  const link = traceLink(traceUrlTemplate, job.trace_id);
  if (link !== null) row('trace link', s(link));
  if (job.budget) row('budget', [job.budget.tokens !== null ? `${job.budget.tokens} tokens` : null, job.budget.cost_usd !== null ? `$${job.budget.cost_usd}` : null].filter(Boolean).join(', ') || 'none');
  // What the attempts reported spending (`ctx.reportUsage`, `agentq job usage`), over the attempts kept.
  const spent = jobUsage(job.attempts);
  if (spent) row('usage', `${formatUsage(spent)} (reported by ${job.attempts.filter((a) => a.usage).length} of ${job.attempts.length} attempts)`);
  if (job.allowed_tools.length) row('tools', job.allowed_tools.map(s).join(', '));
  if (job.last_error) row('last error', `${s(job.last_error.code)}: ${s(job.last_error.message)} (${job.last_error.retryable ? 'retryable' : 'permanent'})`);
  if (job.result !== null) row('result', preview(job.result, 200));
  const dead = job.dead;
  if (dead) {
    row('dlq', `${s(dead.reason)} since ${when(dead.dead_at, now, plain)}: ${s(dead.error_code)}: ${s(dead.error_message)}`);
    if (dead.worker_version) row('worker version', s(dead.worker_version));
    // a redriven job keeps what it spent: one with its budget used up would fail again at once (skip:over_budget)
    const usedUp = budgetBreach(spent, job.budget, false);
    if (dlq) row('redrive', dlq.partial ? 'skipped by default: partial (effects started)' : dlq.malformed ? `never: malformed (${s(dlq.malformed)})` : usedUp ? `skipped: its budget is used up (${usedUp})` : 'eligible if not expired');
  }
  if (job.lineage.redrive_count > 0) {
    row('lineage', `redriven ${job.lineage.redrive_count}x, last ${when(job.lineage.redriven_at, now, plain)}${job.lineage.redrive_run ? ` in ${s(job.lineage.redrive_run)}` : ''}`);
  }
  if (job.checkpoint !== null && job.checkpoint !== undefined) row('checkpoint', preview(JSON.stringify(job.checkpoint), 200));
  lines.push(...fieldLines(fields, plain));

  if (job.attempts.length) {
    section(`attempts (${job.attempts.length})`);
    // Plain lines get two more columns (tokens, cost_usd) only for a job whose handler reported usage.
    const withUsage = spent !== null;
    for (const a of job.attempts) {
      const err = a.error_code ? ` ${s(a.error_code)}${a.error_message ? `: ${preview(a.error_message, 80)}` : ''}` : '';
      const fields = [a.attempt, s(a.worker_id), s(a.worker_version ?? ''), a.started_at, a.ended_at ?? '', s(a.outcome ?? 'running'), s(a.error_code ?? '')];
      if (withUsage) fields.push(a.usage?.tokens ?? '', a.usage?.cost_usd ?? '');
      lines.push(
        plain
          ? fields.join('\t')
          : `  #${a.attempt} ${s(a.worker_id)}${a.worker_version ? `@${s(a.worker_version)}` : ''} started ${when(a.started_at, now, false)} → ${s(a.outcome ?? 'running')}${err}${a.usage ? ` (spent ${formatUsage(a.usage)})` : ''}`,
      );
    }
  }
  if (job.effects.length) {
    section(`effects (${job.effects.length})${job.effects.some((e) => e.status === 'started') ? ' — some started but not recorded done' : ''}`);
    for (const e of job.effects) {
      lines.push(
        plain
          ? [s(e.key), e.status, e.attempt, e.started_at, e.done_at ?? '', s(e.idempotency_key)].join('\t')
          : `  ${s(e.key)}: ${e.status} (attempt ${e.attempt}, idempotency key ${s(e.idempotency_key)})`,
      );
    }
  }
  if (events.length) {
    section(`recent events (${events.length})`);
    for (const ev of events) {
      const move = ev.from_state || ev.to_state ? ` ${ev.from_state ?? '-'} → ${ev.to_state ?? '-'}` : '';
      lines.push(plain ? [s(ev.at), s(ev.type), s(ev.from_state ?? ''), s(ev.to_state ?? ''), ev.attempt].join('\t') : `  ${s(ev.at)} ${s(ev.type)}${s(move)} (attempt ${ev.attempt})`);
    }
  }
  return lines.join('\n') + '\n';
}

/** A one-line, sanitised, shortened view of a long text. */
function preview(text: string, max: number): string {
  const cut = text.length > max ? text.slice(0, max) : text;
  return sanitize(cut) + (text.length > max ? `… (${text.length} chars)` : '');
}
