import { Box, Text } from 'ink';
import { headerLine, listColumns, rowLine } from './layout.js';
import type { TriageState } from './state.js';
import { clean, count, wrapText } from './text.js';
import { displayWidth } from '../cli/output/width.js';

/**
 * The windowed list: only the `pageSize` rows in view are built, whatever
 * the DLQ's size, so a frame costs the same for 100 or 100,000 entries.
 */
export function EntryList({ state, width, selection = null }: { state: TriageState; width: number; selection?: string | null }) {
  if (state.loadError !== null) return <LoadFailed state={state} width={width} />;
  const cols = listColumns(width, state.queueNames.size > 1 ? Math.max(...[...state.queueNames].map((q) => displayWidth(clean(q)))) : 0);
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
        <Text wrap="truncate-end">{state.isLoading ? '  loading the DLQ…' : state.rows.length === 0 ? emptyText(selection) : '  no entry matches the filter (x clears it)'}</Text>
      ) : (
        lines
      )}
    </>
  );
}

/** Nothing loaded: with selector flags that is "none of these", not "nothing failed". */
function emptyText(selection: string | null): string {
  return selection ? `  no DLQ entry matches ${clean(selection)} (the command's selector; other entries may be in the DLQ)` : '  the DLQ is empty';
}

/** Lines of the load error shown at most: a long one (a stack of causes) must not push the hints off screen. */
const ERROR_LINES_MAX = 8;

/**
 * A failed load is said in the body, not taken for an empty DLQ: the list is not loaded (or only
 * partly), so nothing on screen may be read as "nothing failed".
 */
function LoadFailed({ state, width }: { state: TriageState; width: number }) {
  const w = Math.max(20, width - 4);
  const wrapped = wrapText(clean(state.loadError ?? ''), w);
  const shown = wrapped.slice(0, Math.min(ERROR_LINES_MAX, Math.max(1, state.pageSize - 3)));
  return (
    <Box flexDirection="column" paddingLeft={2}>
      <Text bold wrap="truncate-end">
        {state.rows.length === 0 ? 'The DLQ is not loaded: reading it failed.' : `The DLQ is only partly loaded (${count(state.rows.length)} entries read): reading it failed.`}
      </Text>
      {shown.map((l, i) => (
        <Text key={`${i}`} wrap="truncate-end">
          {l}
        </Text>
      ))}
      {wrapped.length > shown.length ? <Text dimColor>…</Text> : null}
      <Text dimColor wrap="truncate-end">
        r reloads · q quits
      </Text>
    </Box>
  );
}
