/**
 * `agentq dlq runs` and `agentq dlq runs show RUN_ID`: the audit trail of
 * bulk actions — who, from which context, when, why, with which filters, and
 * what happened to every job (the ledger).
 */
import { LEDGER_STATUSES, MAX_PAGE_LIMIT, type LedgerStatus } from '../../backend/contract.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { isRunId } from '../../core/ids.js';
import { resumeCommand } from '../../dlq/engine.js';
import { withObservedStatus } from '../../dlq/run-status.js';
import { fieldLines } from '../output/fields.js';
import { RecordStream, printObject, printRecords } from '../output/format.js';
import { checkQueueName, checkRunId, parseIntOption } from '../parse.js';
import { ndjsonLine } from '../output/ndjson.js';
import { jsonSafeStringify, sanitize } from '../output/sanitize.js';
import { LEDGER_COLUMNS, RUN_COLUMNS } from './dlq-columns.js';
import type { DlqIo } from './dlq-io.js';

export interface DlqRunsOptions {
  queue?: string;
  limit?: string;
  cursor?: string;
}

export async function dlqRuns(o: DlqRunsOptions, io: DlqIo): Promise<void> {
  if (o.queue !== undefined) checkQueueName(o.queue);
  const limit = o.limit === undefined ? 50 : parseIntOption(o.limit, '--limit', 1, MAX_PAGE_LIMIT)!;
  if (o.cursor !== undefined && !isRunId(o.cursor)) {
    throw new ValidationError(`--cursor must be the cursor printed after the previous page (a run id, run_...), got ${JSON.stringify(sanitize(o.cursor))}`);
  }
  const backend = await io.backend();
  const listed = await backend.listRuns(o.queue ? { queue: o.queue } : {}, { limit, cursor: o.cursor ?? null });
  const page = { ...listed, items: await withObservedStatus(backend, listed.items, io.identity, io.probe) };
  if (io.out.format === 'json') {
    printObject(io.out, page);
    return;
  }
  await printRecords(io.out, { columns: RUN_COLUMNS, empty: o.cursor === undefined ? 'No bulk-action runs found.' : 'No more bulk-action runs.' }, page.items);
  if (page.next_cursor !== null) io.err.write(`More runs: add --cursor ${page.next_cursor}\n`);
}

export interface DlqRunShowOptions {
  status?: string;
  /** Ledger items to print (one page); without it, all of them. */
  limit?: string;
  /** Continue the ledger from the cursor printed after the previous page. */
  cursor?: string;
}

export async function dlqRunShow(given: string, o: DlqRunShowOptions, io: DlqIo): Promise<void> {
  const runId = checkRunId(given);
  if (o.status !== undefined && !(LEDGER_STATUSES as readonly string[]).includes(o.status)) {
    throw new ValidationError(`--status ${JSON.stringify(o.status)} must be one of ${LEDGER_STATUSES.join(', ')}`);
  }
  const status = o.status as LedgerStatus | undefined;
  const limit = o.limit === undefined ? undefined : Number(o.limit);
  if (limit !== undefined && (!/^\d+$/.test(o.limit!.trim()) || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)) {
    throw new ValidationError(`--limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`);
  }
  if (o.cursor !== undefined && o.cursor.trim() === '') throw new ValidationError('--cursor must be the cursor printed after the previous page');
  const backend = await io.backend();
  const stored = await backend.getRun(runId);
  if (!stored) throw new NotFoundError(`run ${runId} does not exist`, 'RUN_NOT_FOUND');
  const run = (await withObservedStatus(backend, [stored], io.identity, io.probe))[0] ?? stored;
  const ndjson = io.out.format === 'ndjson';
  const json = io.out.format === 'json' || ndjson;
  // Both stream, so memory stays bounded however big the run: -o ndjson the run record first, then
  // one line per ledger item; -o json one document, {"run": …, "items": [ … ]}, written as it goes.
  if (ndjson) io.out.write(ndjsonLine({ type: 'run', ...run }));
  else if (json) io.out.write(`{"run":${jsonSafeStringify(run)},"items":[`);
  else {
    const lines = [
      ['run', run.run_id],
      ['action', run.action],
      ['queue', run.queue],
      ['status', run.status],
      ['by', `${run.user}${run.context ? ` (context ${run.context})` : ''}`],
      ['created', run.created_at],
      ['updated', run.updated_at],
      ['reason', run.reason ?? '-'],
      ['filters', JSON.stringify(run.filters)],
      ['options', JSON.stringify(run.options)],
      ['counts', `moved ${run.counts.moved}, skipped ${run.counts.skipped}, failed ${run.counts.failed}, still planned ${run.counts.planned}`],
    ];
    // Plain (scripts, pipes): `key<TAB>value`; a terminal: `key:  value` aligned, as `inspect` and `dlq show` print it.
    for (const l of fieldLines(lines.map(([k, v]) => [k!, sanitize(v)] as const), io.out.format === 'plain')) io.out.write(`${l}\n`);
    io.out.write('\n');
  }
  if (run.status === 'interrupted') io.err.write(`This run stopped before it finished; continue it with: ${resumeCommand(run)}\n`);
  const stream = json ? null : new RecordStream(io.out, { columns: LEDGER_COLUMNS, empty: status !== undefined || o.cursor !== undefined ? 'No ledger items match this selection.' : 'The ledger of this run is empty.' });
  let cursor: string | null = o.cursor ?? null;
  let first = true;
  // --limit prints one page of the ledger and says how to continue; without it every item is printed.
  let left = limit ?? Infinity;
  let more: string | null = null;
  do {
    const page = await backend.ledger(runId, { limit: Math.min(MAX_PAGE_LIMIT, left), cursor }, status);
    left -= page.items.length;
    if (ndjson) for (const item of page.items) io.out.write(ndjsonLine({ type: 'ledger_item', ...item }));
    else if (json) {
      for (const item of page.items) {
        io.out.write(`${first ? '' : ','}${jsonSafeStringify(item)}`);
        first = false;
      }
    } else await stream!.page(page.items);
    await io.out.drain?.();
    cursor = page.next_cursor;
    if (left <= 0) {
      more = cursor;
      cursor = null;
    }
  } while (cursor !== null);
  if (json && !ndjson) io.out.write(limit === undefined ? ']}\n' : `],"next_cursor":${JSON.stringify(more)}}\n`);
  stream?.end();
  if (more !== null) io.err.write(`More ledger items: add --cursor ${sanitize(more)}\n`);
}
