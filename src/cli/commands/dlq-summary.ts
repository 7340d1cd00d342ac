/** `agentq dlq summary --by error_code,workflow,tenant`: triage by error. */
import { parseSelector, type SelectorInput } from '../../dlq/filter.js';
import { parseSummaryKeys, summarizeDlq, type SummaryGroup } from '../../dlq/summary.js';
import type { Column } from '../output/columns.js';
import { NO_DLQ_ENTRIES } from './dlq-columns.js';
import { printObject, printRecords } from '../output/format.js';
import type { DlqIo } from './dlq-io.js';
import { noteUnknownQueue } from './dlq-list.js';
import { count } from '../../core/plural.js';

export interface DlqSummaryOptions extends SelectorInput {
  by?: string;
}

export async function dlqSummary(opts: DlqSummaryOptions, io: DlqIo): Promise<void> {
  const now = io.clock.now();
  const selector = parseSelector(opts, now);
  const by = parseSummaryKeys(opts.by ?? 'error_code');
  const backend = await io.backend();
  const summary = await summarizeDlq(backend, selector.filter, by, { now, minRemainingMs: selector.minRemainingMs, signal: io.signal });
  // (stderr, whatever the format: a script reading the JSON sees the empty summary it asked for)
  if (summary.total === 0) await noteUnknownQueue(backend, selector.filter.queue, io);
  if (io.out.format === 'json' || io.out.format === 'ndjson') {
    printObject(io.out, summary);
    return;
  }
  // On a narrow terminal the times stay whole (NEWEST, then OLDEST are left out), and an error code is cut
  // only when nothing else can be: `PROVIDER…` would be PROVIDER_429 and PROVIDER_5XX alike.
  const columns: Column<SummaryGroup>[] = [
    ...by.map((k) => ({ header: k.toUpperCase().replace('_', ' '), get: (g: SummaryGroup) => g.key[k] ?? null, ...(k === 'error_code' ? { shrinkLast: true } : { flexible: true }) })),
    { header: 'COUNT', get: (g) => g.count },
    { header: 'OLDEST', get: (g) => ({ time: g.oldest_dead_at }), keepWhole: true, dropWhenNarrow: 0 },
    { header: 'NEWEST', get: (g) => ({ time: g.newest_dead_at }), keepWhole: true, dropWhenNarrow: 1 },
    { header: 'EXPIRED', get: (g) => g.expired },
    { header: 'PARTIAL', get: (g) => g.partial },
    { header: 'MALFORMED', get: (g) => g.malformed, wide: true },
  ];
  await printRecords(io.out, { columns, empty: NO_DLQ_ENTRIES }, summary.groups);
  // (with no group, the line on stderr says it: "0 entries in 0 groups" under no table is noise)
  if ((io.out.format === 'table' || io.out.format === 'wide') && summary.groups.length > 0) io.out.write(`${count(summary.total, 'entry', 'entries')} in ${count(summary.groups.length, 'group')}\n`);
}
