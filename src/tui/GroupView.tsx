import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean, count, fit, fitRight } from './text.js';

/** Counts per error code × workflow over the entries the filter shows; Enter drills into one. */
export function GroupView({ state, width }: { state: TriageState; width: number }) {
  const g = state.groups;
  if (g === null) return null;
  const codeW = Math.max(10, Math.floor((width - 34) * 0.5));
  const wfW = Math.max(10, width - 34 - codeW);
  const head = `  ${fit('ERROR', codeW)} ${fit('WORKFLOW', wfW)} ${fitRight('COUNT', 9)} ${fitRight('EXPIRED', 9)} ${fitRight('PARTIAL', 9)}`;
  const end = Math.min(g.items.length, g.top + state.pageSize);
  const lines = [];
  for (let at = g.top; at < end; at++) {
    const item = g.items[at]!;
    const isCursor = at === g.cursor;
    lines.push(
      <Text key={`${at}`} wrap="truncate-end" inverse={isCursor}>
        {`${isCursor ? '›' : ' '} ${fit(clean(item.errorCode), codeW)} ${fit(clean(item.workflow), wfW)} ${fitRight(count(item.count), 9)} ${fitRight(count(item.expired), 9)} ${fitRight(count(item.partial), 9)}`}
      </Text>,
    );
  }
  return (
    <>
      <Text wrap="truncate-end" bold>
        {head}
      </Text>
      {lines.length === 0 ? <Text>  no entries</Text> : lines}
    </>
  );
}
