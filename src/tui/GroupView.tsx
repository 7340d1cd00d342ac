import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean, count, fit, fitRight } from './text.js';
import { displayWidth } from '../cli/output/width.js';

/** A count column's width (its header, "EXPIRED", and 100,000,000 fit); narrower on a narrow terminal. */
const COUNT_W = 9;
/** "EXPIRED", "PARTIAL" and up to 9,999,999 entries. */
const COUNT_W_NARROW = 7;
const NAME_MIN = 10;
/** What the names keep on the narrowest terminal (50 columns, 52 with a QUEUE column). */
const NAME_FLOOR = 5;
/** The queue name's narrowest, as in the list ("billing…" still tells queues apart). */
const QUEUE_W_NARROW = 8;

/** The cursor, the separators and the three counts, with a spare cell. */
function fixedWidth(countW: number): number {
  return 4 + 3 * (countW + 1);
}

/**
 * Widths of the error code and workflow columns and of the counts: the error code (what triage
 * reads) gets what its longest value needs, the workflow the rest, down to NAME_MIN; only a code
 * longer than that leaves is cut. Groups are told apart by their code first (PROVIDER_429 /
 * PROVIDER_5XX). Where both names cannot have NAME_MIN, the counts narrow first, then the names
 * (to NAME_FLOOR): the counts, PARTIAL among them, are what the view is for, and were cut off the
 * right edge below 54 columns.
 */
export function groupColumns(items: ReadonlyArray<{ errorCode: string; workflow: string; count?: number }>, width: number): { codeW: number; wfW: number; countW: number } {
  let countW = COUNT_W;
  if (width - fixedWidth(COUNT_W) < 2 * NAME_MIN) {
    let widest = 0;
    for (const i of items) widest = Math.max(widest, count(i.count ?? 0).length);
    countW = Math.min(COUNT_W, Math.max(COUNT_W_NARROW, widest));
  }
  const room = Math.max(2 * NAME_FLOOR, width - fixedWidth(countW));
  const nameMin = Math.min(NAME_MIN, Math.floor(room / 2));
  let codeNeed = 'ERROR'.length;
  for (const i of items) codeNeed = Math.max(codeNeed, displayWidth(clean(i.errorCode)));
  const codeW = Math.min(room - nameMin, Math.max(nameMin, codeNeed));
  return { codeW, wfW: room - codeW, countW };
}

/** Counts per error code × workflow over the entries the filter shows; Enter drills into one. */
export function GroupView({ state, width }: { state: TriageState; width: number }) {
  const g = state.groups;
  if (g === null) return null;
  // Split by queue (several in the list): the queue comes first, as wide as its longest name (5..16).
  const isByQueue = g.items.some((i) => i.queue !== null);
  let queueW = isByQueue ? g.items.reduce((w, i) => Math.max(w, displayWidth(clean(i.queue ?? ''))), 5) : 0;
  queueW = Math.min(16, queueW);
  // On a narrow terminal the queue gives way before the names do, as in the list.
  if (isByQueue && width - (queueW + 1) - fixedWidth(COUNT_W_NARROW) < 2 * NAME_MIN) queueW = Math.min(queueW, QUEUE_W_NARROW);
  const queueCell = (q: string) => (isByQueue ? `${fit(q, queueW)} ` : '');
  const { codeW, wfW, countW } = groupColumns(g.items, width - (isByQueue ? queueW + 1 : 0));
  const head = `  ${queueCell('QUEUE')}${fit('ERROR', codeW)} ${fit('WORKFLOW', wfW)} ${fitRight('COUNT', countW)} ${fitRight('EXPIRED', countW)} ${fitRight('PARTIAL', countW)}`;
  const end = Math.min(g.items.length, g.top + state.pageSize);
  const lines = [];
  for (let at = g.top; at < end; at++) {
    const item = g.items[at]!;
    const isCursor = at === g.cursor;
    lines.push(
      <Text key={`${at}`} wrap="truncate-end" inverse={isCursor}>
        {`${isCursor ? '›' : ' '} ${queueCell(clean(item.queue ?? ''))}${fit(clean(item.errorCode), codeW)} ${fit(clean(item.workflow), wfW)} ${fitRight(count(item.count), countW)} ${fitRight(count(item.expired), countW)} ${fitRight(count(item.partial), countW)}`}
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
