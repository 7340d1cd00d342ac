/**
 * Screen geometry and list cells, pure. The frame is kept at most
 * `rows - 1` lines high: when Ink's output reaches the terminal's height it
 * clears and redraws the whole screen on every update (flicker, and slow
 * over SSH), so the list gets what remains after the chrome.
 */
import { formatDuration } from '../core/duration.js';
import { isRowExpired, type TriageRow } from './row.js';
import { clean, fit, fitRight, fitId } from './text.js';

/** Header (2 lines), column header (1), status bar (1). */
export const CHROME_LINES = 4;

/** The fewest terminal rows the app is drawn in: the chrome, one list row, and the line kept free. */
export const MIN_ROWS = CHROME_LINES + 2;

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** The frame height: one line less than the terminal. */
export function frameHeight(size: TerminalSize): number {
  return Math.max(3, size.rows - 1);
}

/** How many list rows fit. */
export function listRows(size: TerminalSize): number {
  return Math.max(1, frameHeight(size) - CHROME_LINES);
}

export interface Column {
  key: 'cursor' | 'sel' | 'id' | 'queue' | 'workflow' | 'tenant' | 'error' | 'attempts' | 'age' | 'deadline' | 'partial' | 'redrives';
  title: string;
  width: number;
  isRight?: boolean;
}

const FIXED: Column[] = [
  { key: 'cursor', title: '', width: 1 },
  { key: 'sel', title: '[ ]', width: 3 },
  { key: 'id', title: 'JOB', width: 30 },
  { key: 'attempts', title: 'ATT', width: 5, isRight: true },
  { key: 'age', title: 'AGE', width: 6, isRight: true },
  { key: 'deadline', title: 'DEADLINE', width: 9, isRight: true },
  { key: 'partial', title: 'PARTIAL', width: 7 },
  { key: 'redrives', title: 'REDRV', width: 5, isRight: true },
];

/** Shown only when the list holds several queues; long names are cut (Q lists them whole). */
const QUEUE_COLUMN: Column = { key: 'queue', title: 'QUEUE', width: 12 };
const QUEUE_MAX = 16;
const QUEUE_MIN = 5;
const QUEUE_SHRINK_MIN = 8;

/** Fixed columns a narrow terminal drops first, in this order (deadline and partial stay: they decide a redrive). */
const DROPPABLE: ReadonlyArray<Column['key']> = ['redrives', 'age', 'attempts'];
/**
 * Room the error code needs to be told apart (PROVIDER_429 from PROVIDER_5XX): it is what triage
 * sorts by. 15: every built-in code whole (BUDGET_EXCEEDED is the longest; at 14 it read
 * "BUDGET_EXCEED…" even at 120 columns beside a QUEUE column).
 */
const ERROR_MIN = 15;
/** Workflow and tenant: what is left, at least this each. */
const NAME_MIN = 4;
/**
 * The job id's narrowest: `job_…` and its last 7 characters. Ids of one DLQ share their start (a
 * ULID begins with its time); the end tells them apart, and Enter shows the whole id.
 */
const ID_MIN = 12;
/** What workflow and tenant get, each, before the job id is shortened for them. */
const NAME_COMFORT = 10;
/** Below this room, workflow and tenant go (the group view and Enter show them) and the error code takes it all. */
const ERROR_ALONE_MIN = 8;

/**
 * Columns for a terminal `width` wide. Workflow, tenant and error code share what the fixed
 * columns leave (the error code gets the most). As the terminal narrows: the redrive count, age
 * and attempts go first; then the job id is shortened to its distinguishing end (down to 12,
 * so workflow and tenant keep 10 each); then workflow and tenant go. Deadline and partial, which decide a redrive, stay down to about 50 columns,
 * and nothing runs off the right edge; everything is cut with an ellipsis.
 */
export function listColumns(width: number, queueWidth = 0): Column[] {
  // Browsing several queues (no --queue), each row says its queue: a redrive works on one.
  // As wide as the longest name (queues are few), within 5..QUEUE_MAX.
  let queueW = Math.max(QUEUE_MIN, Math.min(QUEUE_MAX, queueWidth));
  let fixed = queueWidth > 0 ? [...FIXED.slice(0, 3), QUEUE_COLUMN, ...FIXED.slice(3)] : [...FIXED];
  let idWidth = FIXED.find((c) => c.key === 'id')!.width;
  const widthOf = (c: Column) => (c.key === 'id' ? idWidth : c.key === 'queue' ? queueW : c.width);
  const fixedWidth = () => fixed.reduce((n, c) => n + widthOf(c), 0);
  // Separators: one between each pair of the fixed columns plus the flexible ones.
  const room = (flexCols: number) => width - fixedWidth() - (fixed.length + flexCols - 1);
  const wanted = ERROR_MIN + 2 * NAME_MIN;
  for (const key of DROPPABLE) {
    if (room(3) >= wanted) break;
    fixed = fixed.filter((c) => c.key !== key);
  }
  // A workflow or tenant cut to 4 characters says nothing: the id gives up its shared start first.
  const comfortable = ERROR_MIN + 2 * NAME_COMFORT;
  if (room(3) < comfortable) idWidth = Math.max(ID_MIN, idWidth - (comfortable - room(3)));
  // Then a long queue name (down to 8: "billing…" still tells queues apart; Q lists them whole).
  if (room(3) < comfortable && queueW > QUEUE_SHRINK_MIN) queueW = Math.max(QUEUE_SHRINK_MIN, queueW - (comfortable - room(3)));
  const hasNames = room(3) >= wanted;
  // Narrower still, a long queue name is cut (to its start and an ellipsis) before the error code is.
  if (!hasNames && room(1) < ERROR_ALONE_MIN) queueW = Math.max(QUEUE_MIN, queueW - (ERROR_ALONE_MIN - room(1)));
  const byKey = Object.fromEntries(fixed.map((c) => [c.key, { ...c, width: widthOf(c) }])) as Partial<Record<Column['key'], Column>>;
  let flexCols: Column[];
  if (hasNames) {
    const flex = room(3);
    const error = Math.max(ERROR_MIN, Math.floor(flex * 0.4));
    const tenant = Math.max(NAME_MIN, Math.floor((flex - error) * 0.4));
    const workflow = Math.max(NAME_MIN, flex - error - tenant);
    flexCols = [
      { key: 'workflow', title: 'WORKFLOW', width: workflow },
      { key: 'tenant', title: 'TENANT', width: tenant },
      { key: 'error', title: 'ERROR', width: error },
    ];
  } else {
    flexCols = [{ key: 'error', title: 'ERROR', width: Math.max(ERROR_ALONE_MIN, room(1)) }];
  }
  const cols: Array<Column | undefined> = [byKey.cursor, byKey.sel, byKey.id, byKey.queue, ...flexCols, byKey.attempts, byKey.age, byKey.deadline, byKey.partial, byKey.redrives];
  return cols.filter((c): c is Column => c !== undefined);
}

export function headerLine(cols: readonly Column[]): string {
  return cols.map((c) => (c.isRight ? fitRight(c.title, c.width) : fit(c.title, c.width))).join(' ');
}

/** Deadline cell: "expired", "none", or the time left. */
export function deadlineCell(row: TriageRow, now: number): string {
  if (row.deadlineMs === null) return 'none';
  if (isRowExpired(row, now)) return 'expired';
  return formatDuration(row.deadlineMs - now);
}

/** One list line. Every string from the entry is sanitised before it is cut to width. */
export function rowLine(row: TriageRow, cols: readonly Column[], o: { now: number; isCursor: boolean; isSelected: boolean }): string {
  const cells: Record<Column['key'], string> = {
    cursor: o.isCursor ? '›' : ' ',
    sel: o.isSelected ? '[x]' : '[ ]',
    id: clean(row.jobId),
    queue: clean(row.queue),
    workflow: clean(row.workflow),
    tenant: clean(row.tenant),
    error: (row.isMalformed ? 'MALFORMED ' : '') + clean(row.errorCode),
    attempts: `${row.attempts}/${row.maxAttempts}`,
    age: formatDuration(Math.max(0, o.now - row.deadAtMs)),
    deadline: deadlineCell(row, o.now),
    partial: row.isPartial ? 'yes' : '-',
    redrives: String(row.redriveCount),
  };
  return cols.map((c) => (c.key === 'id' ? fitId(cells.id, c.width) : c.isRight ? fitRight(cells[c.key], c.width) : fit(cells[c.key], c.width))).join(' ');
}
