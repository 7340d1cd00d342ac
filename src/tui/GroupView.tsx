import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean, count, fit, fitRight } from './text.js';
import { displayWidth } from '../cli/output/width.js';

/** The three counts (9 each), the cursor and the separators. */
const FIXED_WIDTH = 34;
const NAME_MIN = 10;

/**
 * Widths of the error code and workflow columns: the error code (what triage reads) gets what its
 * longest value needs, the workflow the rest, down to NAME_MIN; only a code longer than that
 * leaves is cut. Groups are told apart by their code first (PROVIDER_429 / PROVIDER_5XX).
 */
export function groupColumns(items: ReadonlyArray<{ errorCode: string; workflow: string }>, width: number): { codeW: number; wfW: number } {
  const room = Math.max(2 * NAME_MIN, width - FIXED_WIDTH);
  let codeNeed = 'ERROR'.length;
  for (const i of items) codeNeed = Math.max(codeNeed, displayWidth(clean(i.errorCode)));
  const codeW = Math.min(room - NAME_MIN, Math.max(NAME_MIN, codeNeed));
  return { codeW, wfW: room - codeW };
}

/** Counts per error code × workflow over the entries the filter shows; Enter drills into one. */
export function GroupView({ state, width }: { state: TriageState; width: number }) {
  const g = state.groups;
  if (g === null) return null;
  // Split by queue (several in the list): the queue comes first, as wide as its longest name (5..16).
  const isByQueue = g.items.some((i) => i.queue !== null);
  const queueW = isByQueue ? Math.max(5, Math.min(16, Math.max(...g.items.map((i) => displayWidth(clean(i.queue ?? '')))))) : 0;
  const queueCell = (q: string) => (isByQueue ? `${fit(q, queueW)} ` : '');
  const { codeW, wfW } = groupColumns(g.items, width - (isByQueue ? queueW + 1 : 0));
  const head = `  ${queueCell('QUEUE')}${fit('ERROR', codeW)} ${fit('WORKFLOW', wfW)} ${fitRight('COUNT', 9)} ${fitRight('EXPIRED', 9)} ${fitRight('PARTIAL', 9)}`;
  const end = Math.min(g.items.length, g.top + state.pageSize);
  const lines = [];
  for (let at = g.top; at < end; at++) {
    const item = g.items[at]!;
    const isCursor = at === g.cursor;
    lines.push(
      <Text key={`${at}`} wrap="truncate-end" inverse={isCursor}>
        {`${isCursor ? '›' : ' '} ${queueCell(clean(item.queue ?? ''))}${fit(clean(item.errorCode), codeW)} ${fit(clean(item.workflow), wfW)} ${fitRight(count(item.count), 9)} ${fitRight(count(item.expired), 9)} ${fitRight(count(item.partial), 9)}`}
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
