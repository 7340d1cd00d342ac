/**
 * `agentq list`: jobs page by page. One page by default (the next cursor is
 * printed on stderr, so stdout stays pure data); `--all` walks every page in
 * bounded memory, writing each page before fetching the next.
 */
import { unknownQueueNote } from '../unknown-queue.js';
import { parsePastTime, toIso } from '../../core/duration.js';
import { NAME_RE, NAME_RULE, WORKFLOW_RE, WORKFLOW_RULE } from '../../core/model.js';
import type { Job, JobClass } from '../../core/schemas.js';
import type { JobFilter } from '../../backend/contract.js';
import type { CommandContext } from '../context.js';
import type { Column } from '../output/columns.js';
import { RecordStream } from '../output/format.js';
import { hasJobIdShape } from '../../core/ids.js';
import { ValidationError } from '../../core/errors.js';
import { checkQueueName, parseIntOption, parseStates } from '../parse.js';
import { sanitize } from '../output/sanitize.js';

export interface ListOptions {
  queue?: string;
  state?: string;
  tenant?: string;
  class?: string;
  workflow?: string;
  since?: string;
  until?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
}

// On a terminal too narrow for every column with its header whole (`-o table`, 80-100 columns):
// ids, times, queue names and states stay whole (`cance…`, `2026-…` help nobody), and the
// `dropWhenNarrow` columns are left out, highest first. `-o wide` and plain keep every column.
export const JOB_COLUMNS: readonly Column<Job>[] = [
  { header: 'job', get: (j) => j.job_id, keepWhole: true },
  { header: 'queue', get: (j) => j.queue, shrinkLast: true },
  { header: 'tenant', get: (j) => j.tenant_id, dropWhenNarrow: 1 },
  { header: 'workflow', get: (j) => j.workflow, flexible: true },
  { header: 'class', get: (j) => j.class, wide: true },
  { header: 'state', get: (j) => ({ text: j.state, style: 'state' }), shrinkLast: true },
  { header: 'attempts', get: (j) => `${j.attempt}/${j.max_attempts}`, dropWhenNarrow: 2 },
  { header: 'created', get: (j) => ({ time: j.created_at }), keepWhole: true, dropWhenNarrow: 0 },
  { header: 'deadline', get: (j) => ({ time: j.deadline_at }), wide: true },
  { header: 'outcome', get: (j) => j.outcome, wide: true },
  { header: 'error', get: (j) => j.last_error?.code ?? null, wide: true, flexible: true },
];

export function buildFilter(o: ListOptions, now: number): JobFilter {
  const f: JobFilter = {};
  // (the rules submit and `dlq list` apply: a value no job can have is a typo, not an empty list)
  if (o.queue !== undefined) checkQueueName(o.queue);
  if (o.tenant !== undefined && !NAME_RE.test(o.tenant)) throw new ValidationError(`--tenant ${JSON.stringify(sanitize(o.tenant))}: a tenant id ${NAME_RULE}`);
  if (o.workflow !== undefined && !WORKFLOW_RE.test(o.workflow)) throw new ValidationError(`--workflow ${JSON.stringify(sanitize(o.workflow))}: a workflow ${WORKFLOW_RULE}`);
  if (o.queue !== undefined) f.queue = o.queue;
  const states = parseStates(o.state);
  if (states) f.states = states;
  if (o.tenant !== undefined) f.tenant = o.tenant;
  if (o.class !== undefined) f.class = o.class as JobClass;
  if (o.workflow !== undefined) f.workflow = o.workflow;
  if (o.since !== undefined) f.since = parsePastTime(o.since, now, '--since');
  if (o.until !== undefined) f.until = parsePastTime(o.until, now, '--until');
  // (as `dlq list`: an empty window is a mistake in the flags, not an empty list)
  if (f.since !== undefined && f.until !== undefined && f.since >= f.until) {
    throw new ValidationError(`--since (${toIso(f.since)}) must be before --until (${toIso(f.until)})`);
  }
  return f;
}

export async function run(o: ListOptions, ctx: CommandContext): Promise<void> {
  const filter = buildFilter(o, ctx.clock.now());
  const limit = parseIntOption(o.limit ?? '50', '--limit', 1, 1000)!;
  // Every backend pages by job id, so a cursor is the last job id of the previous page.
  if (o.cursor !== undefined && !hasJobIdShape(o.cursor)) {
    throw new ValidationError(`--cursor must be the cursor printed after the previous page (a job id, job_...), got ${JSON.stringify(sanitize(o.cursor))}`);
  }
  const backend = await ctx.openBackend();
  // After a cursor, nothing found means the pages ran out, not that the selection is empty (as dlq runs says it).
  const empty = o.cursor === undefined ? 'No jobs match this selection.' : 'No more jobs match this selection.';
  const stream = new RecordStream(ctx.out, { columns: JOB_COLUMNS, empty });
  let cursor: string | null = o.cursor ?? null;
  let shown = 0;
  do {
    const page = await backend.list(filter, { limit, cursor });
    await stream.page(page.items);
    shown += page.items.length;
    // A record that cannot be read is reported (stderr), not a reason to stop listing the others.
    for (const u of page.unreadable ?? []) ctx.warn(`${u.why} (not listed; agentq leaves it as it is)`);
    cursor = page.next_cursor;
  } while (o.all && cursor !== null && !ctx.signal.aborted);
  stream.end();
  const unknown = shown === 0 && o.cursor === undefined ? await unknownQueueNote(backend, filter.queue) : null;
  if (unknown) ctx.note(unknown);
  if (!o.all && cursor !== null) ctx.note(`more jobs: continue with --cursor ${sanitize(cursor)} (or use --all)`);
}
