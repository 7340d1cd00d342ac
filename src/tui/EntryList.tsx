import { Text } from 'ink';
import { headerLine, listColumns, rowLine } from './layout.js';
import type { TriageState } from './state.js';

/**
 * The windowed list: only the `pageSize` rows in view are built, whatever
 * the DLQ's size, so a frame costs the same for 100 or 100,000 entries.
 */
export function EntryList({ state, width }: { state: TriageState; width: number }) {
  const cols = listColumns(width);
  const { top, cursor } = state.list;
  const end = Math.min(state.visible.length, top + state.pageSize);
  const lines = [];
  for (let at = top; at < end; at++) {
    const row = state.rows[state.visible[at]!]!;
    const isCursor = at === cursor;
    lines.push(
      <Text key={row.jobId} wrap="truncate-end" inverse={isCursor}>
        {rowLine(row, cols, { now: state.now, isCursor, isSelected: state.selected.has(row.jobId) })}
      </Text>,
    );
  }
  return (
    <>
      <Text wrap="truncate-end" bold>
        {headerLine(cols)}
      </Text>
      {lines.length === 0 ? (
        <Text wrap="truncate-end">{state.isLoading ? '  loading the DLQ…' : state.rows.length === 0 ? '  the DLQ is empty' : '  no entry matches the filter (x clears it)'}</Text>
      ) : (
        lines
      )}
    </>
  );
}
