/**
 * `agentq dlq show JOB`: everything in one DLQ entry. The payload preview is
 * sanitised (it is untrusted text); `--raw` writes the exact stored bytes —
 * refused on a terminal unless `--force`, since raw bytes may carry escape
 * sequences that take over the terminal.
 */
import { canonicalJobId, isJobId } from '../../core/ids.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import type { DlqEntry } from '../../core/schemas.js';
import { formatUsage, jobUsage } from '../../core/usage.js';
import { fieldLines } from '../output/fields.js';
import { printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { traceLink } from '../trace-link.js';
import type { DlqIo } from './dlq-io.js';

export interface DlqShowOptions {
  raw?: boolean;
  force?: boolean;
}

export const PREVIEW_CHARS = 2000;

export async function dlqShow(given: string, opts: DlqShowOptions, io: DlqIo): Promise<void> {
  // Not refused before looking when it does not look like a job id: an entry taken into custody keeps what it had.
  const jobId = canonicalJobId(given);
  // Not found and not a job id either: a typo (exit 2, as inspect), not a missing entry (exit 5).
  const notFound = () =>
    isJobId(jobId)
      ? new NotFoundError(`${jobId} is not in the DLQ`)
      : new ValidationError(`${JSON.stringify(given)} is not a job id and no DLQ entry has it: job ids look like job_ followed by 26 ULID characters (job_01JD3K...)`);
  if (opts.raw && io.out.isTTY && !opts.force) {
    throw new ValidationError('--raw writes the stored bytes unfiltered and stdout is a terminal: refused', 'Redirect to a file (> entry.bin) or pipe it, or add --force.');
  }
  const backend = await io.backend();
  if (opts.raw) {
    const bytes = await backend.dlqRaw(jobId);
    if (bytes === null) throw notFound();
    await io.out.writeBytes(bytes);
    return;
  }
  const entry = await backend.dlqGet(jobId);
  if (entry === null) throw notFound();
  const template = io.traceUrlTemplate?.() ?? null;
  if (io.out.format === 'json' || io.out.format === 'ndjson') {
    // `trace_url` is made here, from the entry's trace id: the same on every backend, null when there is no link
    printObject(io.out, { ...entry, trace_url: traceLink(template, entry.job?.trace_id) });
    return;
  }
  io.out.write(renderEntry(entry, io.out.format === 'plain', template));
}

const s = (v: unknown) => sanitize(v === null || v === undefined ? '-' : String(v));

/**
 * The view of one entry. Every untrusted value goes through the sanitiser. A terminal gets
 * `label:  value` lines aligned as `inspect` prints them (output/fields.ts) and indented sections;
 * plain output (`-o plain`, or stdout not a terminal) is `label<TAB>value` with `# section` headers
 * and tab-separated section rows, one record per line, as `inspect` prints it — for `cut -f2` and
 * `awk -F'\t'`. With a trace link template, the link to the job's trace follows its trace id.
 */
export function renderEntry(e: DlqEntry, plain = false, traceUrlTemplate: string | null = null): string {
  const lines: string[] = [];
  const fields: Array<[string, string]> = [];
  const field = (k: string, v: unknown) => fields.push([k, s(v)]);
  const section = (title: string) => lines.push('', plain ? `# ${title}` : `${title}:`);
  field('job', e.job_id);
  field('queue', e.queue);
  field('tenant', e.tenant_id);
  field('workflow', e.workflow);
  field('class', e.class);
  field('dead at', e.dead_at);
  field('reason', e.reason);
  field('error', `${e.error_code}: ${e.error_message}`);
  field('worker version', e.worker_version);
  field('attempts', `${e.attempts}/${e.max_attempts}`);
  field('deadline', e.deadline_at ?? 'none');
  field('partial', e.partial ? 'yes — the effect ledger shows an external effect started' : 'no');
  field('redrives', e.redrive_count);
  if (e.malformed !== null) {
    fields.push(['MALFORMED', s(e.malformed) + (plain ? '' : ' (a malformed entry is never moved or deleted by bulk actions; read it with --raw)')]);
  }
  const job = e.job;
  if (job) {
    field('operation', job.operation);
    field('trace', job.trace_id);
    const link = traceLink(traceUrlTemplate, job.trace_id);
    if (link !== null) field('trace link', link);
    field('created', job.created_at);
    field('input ref', job.input_ref ? `${job.input_ref} (sha256 ${job.input_sha256})` : null);
    if (job.lineage.redriven_at) field('last redrive', `${job.lineage.redriven_at} by run ${job.lineage.redrive_run}`);
    // what the attempts reported spending before the job died: what a redrive may spend again
    const spent = jobUsage(job.attempts);
    if (spent) field('usage', formatUsage(spent));
    // Plain: with the other fields, before the sections (as `inspect` has them), one line each
    // (newlines made visible). After the effects rows, a script reading that section took them
    // for effects.
    if (plain && job.checkpoint !== null && job.checkpoint !== undefined) fields.push(['checkpoint', previewLine(JSON.stringify(job.checkpoint))]);
    if (plain && job.input !== null) fields.push(['input', previewLine(job.input)]);
  }
  lines.push(...fieldLines(fields, plain));
  if (job) {
    section(plain ? `attempts (${job.attempts.length})` : 'attempts');
    for (const a of job.attempts) {
      lines.push(
        plain
          ? [a.attempt, s(a.started_at), s(a.ended_at ?? ''), s(a.outcome ?? ''), s(a.error_code ?? ''), sanitize(a.error_message ?? ''), s(a.worker_id), sanitize(a.worker_version ?? '')].join('\t')
          : `  #${a.attempt} ${s(a.started_at)} → ${s(a.ended_at)} ${s(a.outcome)} ${a.error_code ? `${s(a.error_code)}: ${s(a.error_message)}` : ''} (worker ${s(a.worker_id)} ${s(a.worker_version)})${a.usage ? ` spent ${formatUsage(a.usage)}` : ''}`,
      );
    }
    if (plain) section(`effects (${job.effects.length})`);
    else lines.push('', job.effects.length === 0 ? 'effects: none' : 'effects:');
    for (const ef of job.effects) {
      lines.push(
        plain
          ? [s(ef.key), s(ef.status), ef.attempt, s(ef.started_at), s(ef.done_at ?? ''), s(ef.idempotency_key)].join('\t')
          : `  ${s(ef.key)} ${ef.status} attempt ${ef.attempt} started ${s(ef.started_at)}${ef.done_at ? ` done ${s(ef.done_at)}` : ''} idempotency key ${s(ef.idempotency_key)}`,
      );
    }
    // (plain: among the fields above)
    if (!plain && job.checkpoint !== null && job.checkpoint !== undefined) lines.push('', 'checkpoint:', indent(preview(JSON.stringify(job.checkpoint))));
    if (!plain && job.input !== null) lines.push('', 'input (preview):', indent(preview(job.input)));
  }
  return `${lines.join('\n')}\n`;
}

function preview(text: string): string {
  const cut = text.length > PREVIEW_CHARS;
  return sanitize(cut ? text.slice(0, PREVIEW_CHARS) : text, { allowNewlines: true }) + (cut ? `\n… (${text.length - PREVIEW_CHARS} more characters; -o json or --raw for all)` : '');
}

/** The preview on one line (a newline shows as `\n`), cut like `preview`. */
function previewLine(text: string): string {
  const cut = text.length > PREVIEW_CHARS;
  return sanitize(cut ? text.slice(0, PREVIEW_CHARS) : text) + (cut ? `… (${text.length - PREVIEW_CHARS} more characters; -o json or --raw for all)` : '');
}

function indent(t: string): string {
  return t
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
