/**
 * The detail view's content: one entry as lines of text. Every string from
 * the entry goes through the project's sanitiser here, before it can reach a
 * frame; the component only lays the lines out and scrolls them.
 */
import { formatDuration } from '../core/duration.js';
import type { DlqEntry } from '../core/schemas.js';
import { clean } from './text.js';

/** How much of an inline payload the preview shows (it scrolls, but a 64 KiB blob is not triage). */
const PAYLOAD_PREVIEW_LINES = 200;
const PAYLOAD_LINE_CHARS = 200;

export function detailLines(entry: DlqEntry, now: number): string[] {
  const out: string[] = [];
  const job = entry.job;
  const deadline = entry.deadline_at === null ? 'none' : `${clean(entry.deadline_at)} (${timeLeft(Date.parse(entry.deadline_at), now)})`;
  out.push(`Job        ${clean(entry.job_id)}   queue ${clean(entry.queue)}   tenant ${clean(entry.tenant_id)}`);
  out.push(`Workflow   ${clean(entry.workflow)}   class ${entry.class}`);
  out.push(`Dead       ${clean(entry.dead_at)} (${formatDuration(now - Date.parse(entry.dead_at))} ago)   reason ${entry.reason}`);
  out.push(`Deadline   ${deadline}`);
  out.push(`Attempts   ${entry.attempts}/${entry.max_attempts}   redriven ${entry.redrive_count}×   partial ${entry.partial ? 'YES' : 'no'}`);
  if (entry.malformed !== null) out.push(`MALFORMED  ${clean(entry.malformed)} (never moved or deleted by bulk actions)`);
  out.push('');
  out.push('Error');
  out.push(`  ${clean(entry.error_code)}: ${clean(entry.error_message)}`);
  if (entry.worker_version !== null) out.push(`  worker version ${clean(entry.worker_version)}`);
  out.push('');
  out.push('Attempts timeline');
  if (job === null || job.attempts.length === 0) out.push('  (none recorded)');
  for (const a of job?.attempts ?? []) {
    const took = a.ended_at === null ? 'running' : formatDuration(Date.parse(a.ended_at) - Date.parse(a.started_at));
    const err = a.error_code === null ? '' : `  ${clean(a.error_code)}: ${clean(a.error_message ?? '')}`;
    out.push(`  #${a.attempt}  ${clean(a.started_at)}  ${took}  ${clean(a.outcome ?? '-')}  worker ${clean(a.worker_id)}${err}`);
  }
  out.push('');
  out.push('Checkpoint');
  out.push(...jsonLines(job?.checkpoint ?? null, 20).map((l) => `  ${l}`));
  out.push('');
  out.push('Effect ledger');
  if (job === null || job.effects.length === 0) out.push('  (no effects recorded)');
  for (const e of job?.effects ?? []) {
    out.push(`  ${clean(e.key)}  ${e.status === 'started' ? 'STARTED (not done)' : 'done'}  attempt ${e.attempt}  key ${clean(e.idempotency_key)}`);
  }
  out.push('');
  out.push(`Trace      ${job?.trace_id == null ? 'none' : clean(job.trace_id)}`);
  out.push('');
  out.push('Payload');
  if (job?.input_ref != null) out.push(`  ref ${clean(job.input_ref)}  sha256 ${clean(job.input_sha256 ?? '-')}`);
  if (job?.input != null) {
    const lines = job.input.split('\n');
    for (const line of lines.slice(0, PAYLOAD_PREVIEW_LINES)) out.push(`  ${clean(line.slice(0, PAYLOAD_LINE_CHARS))}`);
    if (lines.length > PAYLOAD_PREVIEW_LINES) out.push(`  … ${lines.length - PAYLOAD_PREVIEW_LINES} more lines (agentq dlq show ${clean(entry.job_id)})`);
  } else if (job?.input_ref == null) {
    out.push('  (no payload)');
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
