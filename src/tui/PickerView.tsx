import { Text } from 'ink';
import type { TriageState } from './state.js';
import { displayWidth } from '../cli/output/width.js';
import { clean, count, fitMiddle, fitRight } from './text.js';

const TITLES = { errorCode: 'Pick an error code', tenant: 'Pick a tenant', queue: 'Pick a queue' } as const;

export function PickerView({ state, width }: { state: TriageState; width: number }) {
  const p = state.picker;
  if (p === null) return null;
  const names = p.options.map((o) => (o.value === null ? '(any)' : clean(o.value)));
  // At least 60 cells (the counts line up where they always did), wider for a longer name while
  // the terminal has room: a tenant may have 128 characters. Cut in the middle beyond that, since
  // names that differ only at their end were rows of the same text when cut at 60.
  const room = Math.max(10, width - 14);
  const nameW = Math.min(room, names.reduce((w, n) => Math.max(w, displayWidth(n)), 60));
  const end = Math.min(p.options.length, p.top + state.pageSize);
  const lines = [];
  for (let at = p.top; at < end; at++) {
    const o = p.options[at]!;
    const isCursor = at === p.cursor;
    lines.push(
      <Text key={`${at}`} wrap="truncate-end" inverse={isCursor}>
        {`${isCursor ? '›' : ' '} ${fitMiddle(names[at]!, nameW)} ${fitRight(count(o.count), 9)}`}
      </Text>,
    );
  }
  return (
    <>
      <Text wrap="truncate-end" bold>
        {p.forRedrive === true ? `Redrive: pick the queue (the selection spans ${p.options.length} queues; a run works on one) · Esc back` : TITLES[p.kind]}
        {p.isPartial === true ? ` · still loading: only the ${count(state.rows.length)}${state.expectedTotal === null ? '' : ` of ~${count(state.expectedTotal)}`} entries loaded so far (the list follows as they arrive)` : ''}
      </Text>
      {lines}
    </>
  );
}
