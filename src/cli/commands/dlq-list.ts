/**
 * `agentq dlq list` and `agentq dlq export`.
 *
 * `list` shows one page (`--limit`, `--cursor`) or, with `--all`, streams the
 * whole selection page by page; `export` streams NDJSON (`-o json`: one array). Streaming
 * waits for stdout to drain after each page, so memory stays bounded however
 * large the DLQ and however slow the reader.
 */
import { MAX_PAGE_LIMIT, type Backend } from '../../backend/contract.js';
import { ValidationError } from '../../core/errors.js';
import { hasJobIdShape } from '../../core/ids.js';
import { parseSelector, type SelectorInput } from '../../dlq/filter.js';
import { walkDlq } from '../../dlq/select.js';
import { printObject, RecordStream } from '../output/format.js';
import { ndjsonLine } from '../output/ndjson.js';
import { sanitize } from '../output/sanitize.js';
import { unknownQueueNote } from '../unknown-queue.js';
import { DLQ_ENTRY_COLUMNS, NO_DLQ_ENTRIES } from './dlq-columns.js';
import type { DlqIo } from './dlq-io.js';

export interface DlqListOptions extends SelectorInput {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

export const DEFAULT_LIST_LIMIT = 50;

/**
 * Page size when streaming (`--all`, export). Smaller than the backend's
 * maximum on purpose: a parsed entry is large, and 1,000 of them in flight
 * pushed peak RSS well past 150 MB on a 200,000-entry DLQ; 200 keeps it flat
 * (see BENCHMARKS.md, "Redrive (SQLite)") at no measurable cost in speed.
 */
export const STREAM_PAGE = 200;

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIST_LIMIT;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE_LIMIT)) throw new ValidationError(`--limit ${JSON.stringify(text)} must be a whole number from 1 to ${MAX_PAGE_LIMIT}`);
  return n;
}

export async function dlqList(opts: DlqListOptions, io: DlqIo): Promise<void> {
  const selector = parseSelector(opts, io.clock.now());
  const limit = parseLimit(opts.limit);
  if (opts.all && opts.cursor !== undefined) throw new ValidationError('--all walks the whole selection; it cannot start at --cursor');
  // DLQ pages go by job id, so a cursor is the last job id of the previous page (as for `list`).
  if (opts.cursor !== undefined && !hasJobIdShape(opts.cursor)) {
    throw new ValidationError(`--cursor must be the cursor printed after the previous page (a job id, job_...), got ${JSON.stringify(sanitize(opts.cursor))}`);
  }
  const backend = await io.backend();
  if (opts.all) {
    // `--all` streams NDJSON unless the operator chose a format (json streams as one array, plain/table page by page).
    const format = io.formatChosen ? io.out.format : 'ndjson';
    const stream = new RecordStream({ ...io.out, format }, { columns: DLQ_ENTRY_COLUMNS, empty: NO_DLQ_ENTRIES });
    let n = 0;
    for await (const page of walkDlq(backend, selector.filter, { pageSize: STREAM_PAGE, signal: io.signal })) {
      await stream.page(page);
      n += page.length;
      await io.out.drain?.();
    }
    stream.end();
    if (n === 0) await noteUnknownQueue(backend, selector.filter.queue, io);
    return;
  }
  const page = await backend.dlqList(selector.filter, { limit, cursor: opts.cursor ?? null });
  if (io.out.format === 'json') {
    printObject(io.out, page);
    if (page.items.length === 0 && opts.cursor === undefined) await noteUnknownQueue(backend, selector.filter.queue, io);
    return;
  }
  const stream = new RecordStream(io.out, { columns: DLQ_ENTRY_COLUMNS, empty: NO_DLQ_ENTRIES });
  await stream.page(page.items);
  stream.end();
  if (page.items.length === 0 && opts.cursor === undefined) await noteUnknownQueue(backend, selector.filter.queue, io);
  if (page.next_cursor !== null) io.err.write(`More entries: add --cursor ${page.next_cursor} (or --all to stream them all).\n`);
}

export async function dlqExport(opts: SelectorInput, io: DlqIo): Promise<number> {
  const selector = parseSelector(opts, io.clock.now());
  // NDJSON unless `-o json` asks for one document (an array, streamed as `list --all -o json` does);
  // a table format asked for is refused rather than answered with NDJSON regardless.
  const asArray = io.formatChosen && io.out.format === 'json';
  if (io.formatChosen && !asArray && io.out.format !== 'ndjson') {
    throw new ValidationError(`dlq export writes NDJSON (or with -o json one JSON array), not -o ${io.out.format}`, 'For a table or plain rows use: agentq dlq list --all -o ' + io.out.format);
  }
  const backend = await io.backend();
  const stream = asArray ? new RecordStream(io.out, { columns: DLQ_ENTRY_COLUMNS, empty: NO_DLQ_ENTRIES }) : null;
  let n = 0;
  for await (const page of walkDlq(backend, selector.filter, { pageSize: STREAM_PAGE, signal: io.signal })) {
    if (stream) await stream.page(page);
    else for (const e of page) io.out.write(ndjsonLine(e));
    n += page.length;
    await io.out.drain?.();
  }
  stream?.end();
  io.err.write(`exported ${n} DLQ entr${n === 1 ? 'y' : 'ies'}\n`);
  if (n === 0) await noteUnknownQueue(backend, selector.filter.queue, io);
  return n;
}

/** After finding nothing: says on stderr that the queue named is one the store never saw (unknown-queue.ts). True when it did. */
export async function noteUnknownQueue(backend: Pick<Backend, 'queues'>, queue: string | undefined, io: Pick<DlqIo, 'err'>): Promise<boolean> {
  const note = await unknownQueueNote(backend, queue);
  if (note) io.err.write(`${note}\n`);
  return note !== null;
}
