import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean, count, fit, fitRight } from './text.js';

const TITLES = { errorCode: 'Pick an error code', tenant: 'Pick a tenant', queue: 'Pick a queue' } as const;

export function PickerView({ state, width }: { state: TriageState; width: number }) {
  const p = state.picker;
  if (p === null) return null;
  const nameW = Math.max(10, Math.min(60, width - 14));
  const end = Math.min(p.options.length, p.top + state.pageSize);
  const lines = [];
  for (let at = p.top; at < end; at++) {
    const o = p.options[at]!;
    const isCursor = at === p.cursor;
    lines.push(
      <Text key={`${at}`} wrap="truncate-end" inverse={isCursor}>
        {`${isCursor ? '›' : ' '} ${fit(o.value === null ? '(any)' : clean(o.value), nameW)} ${fitRight(count(o.count), 9)}`}
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
