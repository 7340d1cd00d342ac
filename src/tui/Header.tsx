import { Text } from 'ink';
import { describeFilter, isFilterEmpty } from './filter.js';
import type { TriageState } from './state.js';
import { clean, count } from './text.js';

export interface HeaderInfo {
  /** Config context name, null when none. */
  context: string | null;
  /** Backend description, credentials already redacted. */
  backend: string;
  /** The queue the command was narrowed to, null for all queues. */
  queue: string | null;
  /**
   * The command's other selector flags (`error_code=PROVIDER_429 since=…`), raw, or null: the
   * list holds only what they select, so "total" and an empty list are about that selection.
   */
  selection?: string | null;
}

/** HH:MM:SS in the operator's time zone: when the list was read, next to the wall clock they look at. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** Two lines: where we are (queue, selection, context, backend) and the counts. */
export function Header({ info, state }: { info: HeaderInfo; state: TriageState }) {
  // The queue and what the command's flags narrowed the list to come before the backend: the line is
  // cut at the right edge, and an SQS URL or a Cluster seed list alone is wider than most terminals.
  const where = [
    // Narrowed in the app with Q: said here, where the queue is read (the filter at the end of the next line is often cut).
    `queue ${info.queue !== null ? clean(info.queue) : state.filter.queue !== null ? `${clean(state.filter.queue)} (Q; of all)` : '(all)'}`,
    ...(info.selection ? [`only ${clean(info.selection)}`] : []),
    `context ${info.context === null ? '(none)' : clean(info.context)}`,
    clean(info.backend),
  ].join(' · ');
  // The error itself is in the body (wrapped): this line is cut at the right edge.
  const loading = state.loadError !== null ? '  LOAD FAILED (r retries)' : state.isLoading ? '  loading…' : '';
  const loaded = state.loadedAt === null ? '' : ` · loaded ${clockTime(state.loadedAt)}`;
  const ro = state.readOnlyReason === null ? '' : '  [read-only]';
  const hidden = state.selectedHidden > 0 ? ` [${count(state.selectedHidden)} hidden by the filter]` : '';
  // The hidden count comes before the label: the label is long and the line is cut at the right.
  const selected = count(state.selected.size) + hidden + (state.selectionLabel === null ? '' : ` (${clean(state.selectionLabel)})`);
  const searching = state.fullText !== null && state.fullText.ids === null && state.fullText.text === state.filter.text ? ' (searching whole messages…)' : '';
  const filter = isFilterEmpty(state.filter) ? '' : `  filter: ${clean(describeFilter(state.filter))}${searching}`;
  return (
    <>
      <Text wrap="truncate-end">
        <Text bold>agentq DLQ triage</Text>
        {loading}
        {ro}
        {loaded} · {where}
      </Text>
      <Text wrap="truncate-end">
        total {count(state.rows.length)}
        {state.isLoading && state.expectedTotal !== null ? ` of ~${count(state.expectedTotal)}` : ''} · shown {count(state.visible.length)} · expired {count(state.expiredCount)} · partial{' '}
        {count(state.partialCount)} · selected {selected}
        {filter}
      </Text>
    </>
  );
}
