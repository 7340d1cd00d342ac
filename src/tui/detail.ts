/**
 * The detail view's content: one entry as lines of text. Every string from
 * the entry goes through the project's sanitiser here, before it can reach a
 * frame; the component only lays the lines out and scrolls them.
 */
import { formatDuration } from '../core/duration.js';
import type { DlqEntry } from '../core/schemas.js';
import { sanitize } from '../cli/output/sanitize.js';
import { displayWidth } from '../cli/output/width.js';
import { clean, splitAtWidth, wrapText } from './text.js';
import { budgetBreach, formatUsage, jobUsage } from '../core/usage.js';
import { traceLink } from '../cli/trace-link.js';

/** How much of an inline payload the preview shows (it scrolls, but a 64 KiB blob is not triage). */
const PAYLOAD_PREVIEW_LINES = 200;
const PAYLOAD_LINE_CHARS = 200;
/** The error message is wrapped over at most this many lines; the rest is in `agentq dlq show`. */
export const ERROR_MESSAGE_LINES = 30;
/** An attempt's error message, in the timeline: a few lines each. */
const ATTEMPT_ERROR_LINES = 4;

/**
 * `width`: the terminal's columns. Long text (the error message, attempt errors, payload and
 * checkpoint lines) is wrapped to it instead of running off the right edge, bounded so one
 * huge message cannot bury the rest; what is left out says where to read it whole.
 * `traceUrlTemplate` (`traceUrl`, `AGENTQ_TRACE_URL`): the link to the job's trace goes under its id.
 */
export function detailLines(entry: DlqEntry, now: number, width = 100, traceUrlTemplate: string | null = null): string[] {
  const out: string[] = [];
  const showAll = `agentq dlq show ${clean(entry.job_id)}`;
  /** Pushes `text` (raw, untrusted) wrapped under `indent`, at most `max` lines. */
  const wrapped = (indent: string, text: string, max: number) => {
    const lines = wrapText(sanitize(text, { allowNewlines: true }), Math.max(20, width - indent.length - 1));
    for (const l of lines.slice(0, max)) out.push(`${indent}${l}`);
    if (lines.length > max) out.push(`${indent}… ${lines.length - max} more lines: ${showAll}`);
  };
  const job = entry.job;
  const deadline = entry.deadline_at === null ? 'none' : `${clean(entry.deadline_at)} (${timeLeft(Date.parse(entry.deadline_at), now)})`;
  // The summary lines are wrapped too: cut at the edge, a narrow terminal lost `partial YES`.
  const line = (text: string) => out.push(...wrapLine('', text, width));
  line(`Job        ${clean(entry.job_id)}   queue ${clean(entry.queue)}   tenant ${clean(entry.tenant_id)}`);
  // Even the enum and number fields are cleaned: a record from a foreign writer may hold any text in them.
  line(`Workflow   ${clean(entry.workflow)}   class ${clean(entry.class)}`);
  line(`Dead       ${clean(entry.dead_at)} (${formatDuration(now - Date.parse(entry.dead_at))} ago)   reason ${clean(entry.reason)}`);
  line(`Deadline   ${deadline}`);
  line(`Attempts   ${clean(entry.attempts)}/${clean(entry.max_attempts)}   redriven ${clean(entry.redrive_count)}×   partial ${entry.partial ? 'YES' : 'no'}`);
  // what the attempts reported spending (ctx.reportUsage, agentq job usage): what a redrive may spend again
  const spent = job === null ? null : jobUsage(job.attempts);
  if (spent) {
    // a redriven job keeps what it spent: with its budget used up it would fail again at once
    const usedUp = budgetBreach(spent, job!.budget, false);
    line(`Usage      ${formatUsage(spent)}${usedUp ? `   budget used up (${usedUp}): a redrive skips it` : ''}`);
  }
  if (entry.malformed !== null) line(`MALFORMED  ${clean(entry.malformed)} (never moved or deleted by bulk actions)`);
  out.push('');
  out.push('Error');
  // Only the message keeps its line breaks: a code with a newline would forge a line of its own.
  wrapped('  ', `${clean(entry.error_code)}: ${entry.error_message}`, ERROR_MESSAGE_LINES);
  if (entry.worker_version !== null) out.push(`  worker version ${clean(entry.worker_version)}`);
  out.push('');
  out.push('Attempts timeline');
  if (job === null || job.attempts.length === 0) out.push('  (none recorded)');
  for (const a of job?.attempts ?? []) {
    const took = a.ended_at === null ? 'running' : formatDuration(Date.parse(a.ended_at) - Date.parse(a.started_at));
    const err = a.error_code === null ? '' : `  ${clean(a.error_code)}: ${a.error_message ?? ''}`;
    const usage = a.usage ? `  spent ${formatUsage(a.usage)}` : '';
    wrapped('  ', `#${clean(a.attempt)}  ${clean(a.started_at)}  ${took}  ${clean(a.outcome ?? '-')}  worker ${clean(a.worker_id)}${usage}${err}`, ATTEMPT_ERROR_LINES);
  }
  out.push('');
  out.push('Checkpoint');
  for (const l of jsonLines(job?.checkpoint ?? null, 20)) out.push(...wrapLine('  ', l, width));
  out.push('');
  out.push('Effect ledger');
  if (job === null || job.effects.length === 0) out.push('  (no effects recorded)');
  for (const e of job?.effects ?? []) {
    line(`  ${clean(e.key)}  ${e.status === 'started' ? 'STARTED (not done)' : 'done'}  attempt ${clean(e.attempt)}  key ${clean(e.idempotency_key)}`);
  }
  out.push('');
  out.push(`Trace      ${job?.trace_id == null ? 'none' : clean(job.trace_id)}`);
  // Wrapped, not cut at the edge: the trace id is at the end of most links.
  const link = traceLink(traceUrlTemplate, job?.trace_id);
  if (link !== null) line(`Trace link ${clean(link)}`);
  out.push('');
  out.push('Payload');
  if (job?.input_ref != null) line(`  ref ${clean(job.input_ref)}  sha256 ${clean(job.input_sha256 ?? '-')}`);
  if (job?.input != null) {
    const lines = job.input.split('\n');
    for (const line of lines.slice(0, PAYLOAD_PREVIEW_LINES)) {
      const cut = line.length > PAYLOAD_LINE_CHARS ? `${line.slice(0, PAYLOAD_LINE_CHARS)}…` : line;
      out.push(...wrapLine('  ', clean(cut), width));
    }
    if (lines.length > PAYLOAD_PREVIEW_LINES) out.push(`  … ${lines.length - PAYLOAD_PREVIEW_LINES} more lines (agentq dlq show ${clean(entry.job_id)})`);
  } else if (job?.input_ref == null) {
    out.push('  (no payload)');
  }
  return out;
}

/** One sanitised line wrapped to the screen (continuations indented two more), so nothing runs off the right edge. */
function wrapLine(indent: string, line: string, width: number): string[] {
  const w = Math.max(20, width - indent.length - 3);
  if (displayWidth(line) <= w + 2) return [`${indent}${line}`];
  let [head, rest] = splitAtWidth(line, w + 2);
  const out = [`${indent}${head}`];
  while (rest !== '') {
    [head, rest] = splitAtWidth(rest, w);
    out.push(`${indent}  ${head}`);
  }
  return out;
}

export function timeLeft(deadlineMs: number, now: number): string {
  const left = deadlineMs - now;
  return left <= 0 ? `expired ${formatDuration(-left)} ago` : `${formatDuration(left)} left`;
}

function jsonLines(value: unknown, max: number): string[] {
  if (value === null || value === undefined) return ['(none)'];
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = String(value);
  }
  const lines = text.split('\n');
  const shown = lines.slice(0, max).map((l) => clean(l.slice(0, PAYLOAD_LINE_CHARS)));
  if (lines.length > max) shown.push(`… ${lines.length - max} more lines`);
  return shown;
}
