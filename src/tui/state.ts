/**
 * The TUI's state and its pure reducer. Every key press becomes a `Command`
 * (through the keymap) and every I/O result an action; the reducer is the
 * only place state changes, so the whole UI can be tested without a terminal.
 *
 * Side effects (fetch a detail, build a plan, apply it, reload) are started
 * by the app when the state asks for them (`detail.entry === undefined`,
 * `redrive.step === 'planning'`...), never by the reducer.
 */
import { EMPTY_FILTER, describeFilter, filterRecord, filterRows, type FullTextMatches, type TriageFilter } from './filter.js';
import { distinctCounts, groupByError, type ErrorGroup } from './groups.js';
import { helpScrollMax, resolveKey, TEXT_MODES, type Command, type KeyName, type Mode } from './keymap.js';
import type { PlannedRedrive, RedriveProgress, RedriveResult, SelectionContext } from './redrive-port.js';
import { isRowExpired, type TriageRow } from './row.js';
import { indexOfSorted, moveCursor, placeCursor, type ListWindow, type Motion } from './window.js';
import { count, withoutLastGrapheme } from './text.js';
import { graphemes } from '../cli/output/width.js';
import { confirmFits } from './confirm-layout.js';
import { DLQ_GREP_MAX_CHARS, DLQ_ROW_MESSAGE_CHARS } from '../backend/contract.js';

export type PickerKind = 'errorCode' | 'tenant' | 'queue';

export interface PickerState extends ListWindow {
  kind: PickerKind;
  /** `value: null` is "(any)". */
  options: Array<{ value: string | null; count: number }>;
  /**
   * Opened by `R` on a selection spanning several queues (a run locks one queue): the options are
   * the selection's queues, and choosing one narrows the list and the selection to it.
   */
  forRedrive?: boolean;
  /**
   * The list is still loading: the options are those of the entries loaded so far (the picker
   * says so, and follows the rows as they arrive), not yet everything the command selected.
   */
  isPartial?: boolean;
}

export interface GroupsState extends ListWindow {
  items: ErrorGroup[];
}

export interface DetailState {
  jobId: string;
  /** Undefined while loading; null when the entry left the DLQ. */
  lines: string[] | null | undefined;
  error: string | null;
  scroll: number;
  /** Where to go back to. */
  from: Mode;
}

export type RedriveFlow =
  | { step: 'planning'; jobIds: string[]; context: SelectionContext }
  /** `reason`: typed by the operator when `focus` is on the reason field; recorded in the audit. */
  | { step: 'confirm'; planned: PlannedRedrive; focus: DialogFocus; typed: string; reason: string }
  | { step: 'applying'; planned: PlannedRedrive; progress: RedriveProgress; isStopRequested: boolean; reason: string }
  | { step: 'done'; result: RedriveResult }
  /**
   * `hasApplied`: the failure came during apply, so the DLQ may have changed and is reloaded.
   * `run`: the run it cut short, once recorded (its id, what it moved, the command that resumes it).
   * `hint`: the error's advice (a lock left by a dead process: resume its run, or --break-lock), as the CLI prints it.
   */
  | { step: 'failed'; message: string; hasApplied: boolean; run: CutRun | null; hint?: string | null };

/** A run a failure cut short: what the operator needs to check and resume it. */
export interface CutRun {
  runId: string;
  moved: number;
  resumeCommand: string | null;
}

/** A redrive an error cut short or refused: what quitting says, and the exit code it ends with. */
export interface ApplyFailure {
  message: string;
  /** The error's code and exit code (75 for a passing backend failure), as `dlq redrive` exits. */
  code: string;
  exitCode: number;
  /** The run, once recorded. */
  run: CutRun | null;
  /** The error's advice, when it has one. */
  hint?: string | null;
}

export const STOPPING_NOTICE = 'stopping after the current batch… (Ctrl-C or q again quits at once)';

/** Where Tab goes round in the confirm dialog: the buttons, then the optional reason. */
export type DialogFocus = 'cancel' | 'redrive' | 'reason';
const FOCUS_NEXT: Record<DialogFocus, DialogFocus> = { cancel: 'redrive', redrive: 'reason', reason: 'cancel' };
const FOCUS_PREV: Record<DialogFocus, DialogFocus> = { cancel: 'reason', redrive: 'cancel', reason: 'redrive' };
/** The audit reason's longest (a sentence, not a document). */
export const REASON_MAX_CHARS = 200;

/** Above this many jobs, the dialog asks to type the count (as `dlq redrive` does on a terminal). */
export const TYPED_CONFIRM_ABOVE = 20;

export interface TriageState {
  rows: TriageRow[];
  /** The distinct queues of `rows` (owned, grown in place as `rows`): the list shows a QUEUE column when there are several. */
  queueNames: Set<string>;
  isLoading: boolean;
  /** What the backend's counters say the load will bring (shown while loading), null when unknown. */
  expectedTotal: number | null;
  loadError: string | null;
  /** Bumped to ask the app to load the DLQ again (after a redrive, or `r`). */
  loadGeneration: number;
  /** When the last load completed (epoch ms), null before that: new failures only show after a reload. */
  loadedAt: number | null;
  /** The job the cursor was on when `r` reloaded: the cursor goes back to it when it arrives. */
  reloadAnchor: string | null;
  now: number;
  filter: TriageFilter;
  /**
   * The backend's grep for the submitted text filter (`ids: null` while it runs: the app starts
   * it): rows carry only the start of long error messages, and `/` must match what `--grep` does.
   */
  fullText: FullTextMatches | null;
  /** Indices into `rows` matching `filter`, ascending. */
  visible: number[];
  list: ListWindow;
  /** How many list rows fit on screen (the body below the header has one line more). */
  pageSize: number;
  /** The terminal's width: the redrive confirmation is refused while the plan does not fit. */
  columns: number;
  expiredCount: number;
  partialCount: number;
  selected: ReadonlySet<string>;
  /**
   * How many selected jobs the current filter hides: a redrive acts on all of them, so the
   * header and the dialog say so instead of letting "all 33 matching" stand for 11 on screen.
   */
  selectedHidden: number;
  /** Set by `a`: says the selection is every entry matching a filter, not only what is on screen. */
  selectionLabel: string | null;
  /**
   * The filter `a` selected every match of, while the selection is exactly that (no picks before or
   * since), else null: narrowed to one queue by `R`, it is then "all K matching" that filter and the
   * queue, said as `a` says it instead of wrapped around the first label.
   */
  selectionFilter: TriageFilter | null;
  mode: Mode;
  isHelpOpen: boolean;
  /** The help overlay's first shown line (it scrolls: it is longer than most screens). */
  helpScroll: number;
  /** The text filter being typed, and the one to restore on Esc. */
  textDraft: string;
  textBefore: string;
  picker: PickerState | null;
  groups: GroupsState | null;
  detail: DetailState | null;
  redrive: RedriveFlow | null;
  /** Why redrive is disabled (read-only context), or null. */
  readOnlyReason: string | null;
  /** A one-line message in the status bar (cleared by the next key). */
  notice: string | null;
  isQuitting: boolean;
  /**
   * Set when the process was told to stop (SIGTERM, SIGHUP, or Ctrl-C outside raw mode): the
   * signal's name. A running redrive finishes its batch and records `interrupted` before the
   * app quits; the command then exits 130 and prints the resume command, as the CLI does.
   */
  interruptedBy: string | null;
  /** Quit without waiting for the running batch (a second Ctrl-C / q while stopping). */
  isForceQuit: boolean;
  /**
   * The redrives an error cut short while they applied or refused (at their plan or their start), oldest first. Kept after the result
   * screen is left: quitting then still exits with the error's code and says how to resume. One
   * that failed before its run was recorded is dropped when a later run is recorded (withoutUnrecorded).
   */
  cutShort: ApplyFailure[];
  /**
   * The runs stopped early (Esc, Ctrl-C, q) with work left, oldest first. Kept after the result
   * screen is left, as `cutShort`: the alternate screen that showed their resume command is gone
   * once the app quits, so quitting says it again on the normal screen.
   */
  stoppedRuns: RedriveResult[];
  /** What finished runs left for later (`RedriveResult.notes`), oldest first: said again on the normal screen on quit. */
  runNotes: string[];
}

export type TriageAction =
  /** `at`: the clock when the load completed (with `isDone`). */
  | { type: 'rows/append'; rows: TriageRow[]; isDone: boolean; at?: number }
  | { type: 'rows/failed'; message: string }
  | { type: 'rows/expected'; total: number; generation: number }
  | { type: 'tick'; now: number }
  | { type: 'resize'; pageSize: number; columns?: number }
  /** A key press; resolved through the keymap against the current mode here, so a fast typist never hits a stale mode. */
  | { type: 'key'; name: KeyName }
  /** A bracketed paste (the terminal marks it): text in the filter and the dialog, never keys. */
  | { type: 'paste'; text: string }
  | { type: 'detail/loaded'; jobId: string; lines: string[] | null; error?: string }
  | { type: 'redrive/planned'; planned: PlannedRedrive }
  | { type: 'redrive/progress'; progress: RedriveProgress }
  | { type: 'redrive/finished'; result: RedriveResult }
  /** `code`/`exitCode`: the error's (default `REDRIVE_FAILED`, 1). */
  | { type: 'redrive/failed'; message: string; code?: string; exitCode?: number; hint?: string }
  /** The process was told to stop (`reason`: the signal's name). */
  | { type: 'interrupt'; reason: string }
  | { type: 'fulltext/found'; text: string; ids: ReadonlySet<string> }
  | { type: 'fulltext/failed'; text: string; message: string };

export function initialState(o: { now: number; pageSize: number; columns?: number; readOnlyReason?: string | null; filter?: Partial<TriageFilter> }): TriageState {
  return {
    rows: [],
    queueNames: new Set(),
    isLoading: true,
    expectedTotal: null,
    loadError: null,
    loadGeneration: 0,
    loadedAt: null,
    reloadAnchor: null,
    now: o.now,
    filter: { ...EMPTY_FILTER, ...o.filter },
    fullText: null,
    visible: [],
    list: { cursor: 0, top: 0 },
    pageSize: Math.max(1, o.pageSize),
    columns: o.columns ?? 100,
    expiredCount: 0,
    partialCount: 0,
    selected: new Set(),
    selectedHidden: 0,
    selectionLabel: null,
    selectionFilter: null,
    mode: 'list',
    isHelpOpen: false,
    helpScroll: 0,
    textDraft: '',
    textBefore: '',
    picker: null,
    groups: null,
    detail: null,
    redrive: null,
    readOnlyReason: o.readOnlyReason ?? null,
    notice: null,
    isQuitting: false,
    interruptedBy: null,
    isForceQuit: false,
    cutShort: [],
    stoppedRuns: [],
    runNotes: [],
  };
}

/** The keymap mode for the next key: the help overlay captures input while open. */
export function inputMode(s: TriageState): Mode {
  return s.isHelpOpen ? 'help' : s.mode;
}

/** The row under the cursor, if any. */
export function currentRow(s: TriageState): TriageRow | undefined {
  const i = s.visible[s.list.cursor];
  return i === undefined ? undefined : s.rows[i];
}

export function reduce(s: TriageState, a: TriageAction): TriageState {
  switch (a.type) {
    case 'rows/append': {
      const next = appendRows(s, a.rows, a.isDone);
      return withPickerOptions(a.isDone ? loadCompleted({ ...next, loadedAt: a.at ?? next.now }) : next);
    }
    case 'rows/failed':
      return { ...s, isLoading: false, loadError: a.message, reloadAnchor: null };
    case 'rows/expected':
      // A count for an earlier load (before a redrive) says nothing about this one.
      return a.generation === s.loadGeneration ? { ...s, expectedTotal: a.total } : s;
    case 'tick':
      return refilter({ ...s, now: a.now, expiredCount: countExpired(s.rows, a.now) }, s.filter);
    case 'resize': {
      const pageSize = Math.max(1, a.pageSize);
      // A taller screen shows more of the help and of an open entry: scrolled to their end, they
      // stayed where they were and showed blank lines below it, until a key scrolled them back.
      const helpScroll = Math.min(s.helpScroll, helpScrollMax(s.mode, pageSize));
      const d = s.detail;
      const detail = d !== null && Array.isArray(d.lines) ? { ...d, scroll: Math.min(d.scroll, Math.max(0, d.lines.length - pageSize)) } : d;
      // The group view and the picker keep their cursor on screen too (a smaller screen hid it).
      const groups = s.groups === null ? null : { ...s.groups, ...placeCursor(s.groups, s.groups.cursor, s.groups.items.length, pageSize) };
      const picker = s.picker === null ? null : { ...s.picker, ...placeCursor(s.picker, s.picker.cursor, s.picker.options.length, pageSize) };
      return { ...s, pageSize, helpScroll, detail, groups, picker, columns: a.columns ?? s.columns, list: placeCursor(s.list, s.list.cursor, s.visible.length, pageSize) };
    }
    case 'detail/loaded':
      if (s.detail === null || s.detail.jobId !== a.jobId) return s;
      // Wrapped again after a resize, the entry may have fewer lines: the last page stays full.
      return { ...s, detail: { ...s.detail, lines: a.lines, error: a.error ?? null, scroll: a.lines === null ? 0 : Math.min(s.detail.scroll, Math.max(0, a.lines.length - s.pageSize)) } };
    case 'redrive/planned':
      if (s.redrive?.step !== 'planning') return s;
      return { ...s, redrive: { step: 'confirm', planned: a.planned, focus: 'cancel', typed: '', reason: '' } };
    case 'redrive/progress':
      if (s.redrive?.step !== 'applying') return s;
      return { ...s, redrive: { ...s.redrive, progress: a.progress } };
    // The notice ("stopping after the current batch…") belonged to the run that just ended.
    // After a signal, the app quits once the run has recorded its outcome.
    case 'redrive/finished':
      return {
        ...s,
        mode: 'result',
        redrive: { step: 'done', result: a.result },
        notice: null,
        isQuitting: s.isQuitting || s.interruptedBy !== null,
        stoppedRuns: a.result.resumeCommand ? [...s.stoppedRuns, a.result] : s.stoppedRuns,
        runNotes: a.result.notes?.length ? [...s.runNotes, ...a.result.notes] : s.runNotes,
        cutShort: withoutUnrecorded(s.cutShort),
      };
    case 'redrive/failed': {
      const hasApplied = s.redrive?.step === 'applying';
      const run = cutRun(s.redrive);
      const hint = a.hint ?? null;
      const failure: ApplyFailure = { message: a.message, code: a.code ?? 'REDRIVE_FAILED', exitCode: a.exitCode ?? 1, run, hint };
      // A plan refused (the store removed, the backend unreachable) is a redrive refused before its
      // run was recorded, as a run refused at its start: quitting on it exits with its code.
      const counts = hasApplied || s.redrive?.step === 'planning';
      return {
        ...s,
        mode: 'result',
        redrive: { step: 'failed', message: a.message, hasApplied, run, hint },
        notice: null,
        isQuitting: s.isQuitting || s.interruptedBy !== null,
        cutShort: !counts ? s.cutShort : [...(run !== null ? withoutUnrecorded(s.cutShort) : s.cutShort), failure],
      };
    }
    case 'fulltext/found':
      if (s.fullText?.text !== a.text) return s;
      return refilter({ ...s, fullText: { text: a.text, ids: a.ids } }, s.filter);
    case 'fulltext/failed':
      if (s.fullText?.text !== a.text) return s;
      return { ...s, fullText: null, notice: `searching whole error messages failed (only their first ${DLQ_ROW_MESSAGE_CHARS} characters were searched): ${a.message}` };
    case 'interrupt':
      if (s.redrive?.step === 'applying') {
        // As the CLI on its first signal: the batch in flight finishes and the ledger says `interrupted`.
        return { ...s, interruptedBy: a.reason, redrive: { ...s.redrive, isStopRequested: true }, notice: `${a.reason}: stopping after the current batch, then quitting…` };
      }
      return { ...s, interruptedBy: a.reason, isQuitting: true };
    case 'paste': {
      // While a run applies, the status bar's note is about the run ("stopping after the current batch…").
      if (!TEXT_MODES.has(inputMode(s))) return s.redrive?.step === 'applying' ? s : { ...s, notice: PASTE_IGNORED };
      const text = pastedText(a.text);
      return text === '' ? s : typeText({ ...s, notice: null }, text);
    }
    case 'key': {
      const resolved = resolveKey(inputMode(s), a.name);
      if (resolved.kind === 'none') return s;
      if (resolved.kind === 'text') return typeText({ ...s, notice: null }, resolved.text);
      return command({ ...s, notice: null }, resolved.command);
    }
  }
}

/**
 * The failures that still stand once a later redrive of the session got its run recorded.
 * A redrive that failed before its run was recorded moved nothing and left nothing to resume:
 * a later recorded run (the operator's retry) replaces it, so the session's exit code says what
 * the operator was left with, not a refusal they already got past. A run cut short after it was
 * recorded stays: its ledger says failed, with its remaining jobs to resume.
 */
function withoutUnrecorded(cuts: ApplyFailure[]): ApplyFailure[] {
  return cuts.some((c) => c.run === null) ? cuts.filter((c) => c.run !== null) : cuts;
}

// ------------------------------------------------------------------ rows and filters

function appendRows(s: TriageState, rows: TriageRow[], isDone: boolean): TriageState {
  if (rows.length === 0) return { ...s, isLoading: !isDone };
  const from = s.rows.length;
  // Appending in place: the array is owned by the state and never shared with a previous
  // state's consumers (React only compares the state object), and copying 100,000 rows
  // for each page would make loading quadratic.
  const all = s.rows;
  for (const r of rows) all.push(r);
  let expired = s.expiredCount;
  let partial = s.partialCount;
  for (const r of rows) {
    s.queueNames.add(r.queue);
    if (isRowExpired(r, s.now)) expired++;
    if (r.isPartial) partial++;
  }
  const more = filterRows(all, s.filter, s.now, from, s.fullText);
  const visible = more.length === 0 ? s.visible : s.visible.concat(more);
  // After `r`: back to the job the cursor was on, once it arrives (it usually does: loads keep their order).
  let cursor = s.list.cursor;
  let anchor = s.reloadAnchor;
  if (anchor !== null) {
    const at = more.findIndex((i) => all[i]!.jobId === anchor);
    if (at !== -1) {
      cursor = s.visible.length + at;
      anchor = null;
    }
  }
  return withSelection(
    {
      ...s,
      rows: all,
      isLoading: !isDone,
      expiredCount: expired,
      partialCount: partial,
      visible,
      reloadAnchor: anchor,
      list: placeCursor(cursor === s.list.cursor ? s.list : { cursor, top: Math.max(0, cursor - Math.floor(s.pageSize / 2)) }, cursor, visible.length, s.pageSize),
    },
    s.selected,
  );
}

/** Asks the app for a fresh load of the DLQ; the selection is kept (pruned when the load completes). */
function startReload(s: TriageState): TriageState {
  return {
    ...s,
    rows: [],
    queueNames: new Set(),
    visible: [],
    list: { cursor: 0, top: 0 },
    expiredCount: 0,
    partialCount: 0,
    isLoading: true,
    loadError: null,
    expectedTotal: null,
    groups: s.mode === 'groups' ? { items: [], cursor: 0, top: 0 } : s.groups,
    fullText: s.filter.text === '' ? null : { text: s.filter.text, ids: null },
    loadGeneration: s.loadGeneration + 1,
    // Nothing is loaded yet: no selected job is hidden by the filter (withSelection recounts as rows come).
    selectedHidden: 0,
  };
}

/**
 * A load completed: selected jobs that left the DLQ meanwhile are unselected (a redrive could not act
 * on them), and a queue narrowed to with Q that has no entry left is let go.
 */
function loadCompleted(loaded: TriageState): TriageState {
  const s = withoutEmptiedQueue(loaded);
  const next = { ...s, reloadAnchor: null };
  if (s.selected.size === 0) return s.groups === null ? next : { ...next, groups: regroup(next) };
  const present = new Set<string>();
  for (const r of s.rows) if (s.selected.has(r.jobId)) present.add(r.jobId);
  const gone = s.selected.size - present.size;
  const kept = gone === 0 ? next : withSelection({ ...next, selectionLabel: null, selectionFilter: null, notice: joinNotices(next.notice, `${count(gone)} selected jobs left the DLQ since the last load: no longer selected`) }, present);
  return kept.groups === null ? kept : { ...kept, groups: regroup(kept) };
}

/**
 * Narrowed with Q to a queue the DLQ no longer holds (a redrive of it, here or from another shell,
 * emptied it): the header kept naming the queue over an empty list that said "no entry matches the
 * filter", and Q no longer listed the queue. The narrowing is dropped and the status bar
 * says why; the other filters stay.
 */
function withoutEmptiedQueue(s: TriageState): TriageState {
  const queue = s.filter.queue;
  if (queue === null || s.queueNames.has(queue)) return s;
  const gone = `queue ${queue}'s DLQ is empty now: showing every queue (Q picks one)`;
  return refilter({ ...s, notice: joinNotices(gone, s.notice) }, { ...s.filter, queue: null });
}

function joinNotices(first: string | null, then: string | null): string | null {
  return first === null ? then : then === null ? first : `${first} · ${then}`;
}

/**
 * Sets the selection and recounts how much of it the filter hides: selected rows loaded but not
 * shown. Counted over the loaded rows, not as "selected minus shown": during a reload the selected
 * jobs not loaded again yet are not hidden by any filter, and counting them made the header, the
 * redrive dialog and the run's audit (`selected_hidden_by_filter`) name a filter that hid nothing.
 */
function withSelection(s: TriageState, selected: ReadonlySet<string>): TriageState {
  if (selected.size === 0) return { ...s, selected, selectedHidden: 0 };
  let shown = 0;
  for (const i of s.visible) if (selected.has(s.rows[i]!.jobId)) shown++;
  if (!s.isLoading) return { ...s, selected, selectedHidden: selected.size - shown };
  let loaded = 0;
  for (const r of s.rows) if (selected.has(r.jobId)) loaded++;
  return { ...s, selected, selectedHidden: loaded - shown };
}

function countExpired(rows: readonly TriageRow[], now: number): number {
  let n = 0;
  for (const r of rows) if (isRowExpired(r, now)) n++;
  return n;
}

/** Applies a new filter, keeping the cursor on the same job when it still matches. */
function refilter(s: TriageState, filter: TriageFilter): TriageState {
  const before = s.visible[s.list.cursor];
  const visible = filterRows(s.rows, filter, s.now, 0, s.fullText);
  const at = before === undefined ? -1 : indexOfSorted(visible, before);
  const list = placeCursor(at === -1 ? { cursor: 0, top: 0 } : s.list, at === -1 ? 0 : at, visible.length, s.pageSize);
  const next = withSelection({ ...s, filter, visible, list }, s.selected);
  return next.groups === null ? next : { ...next, groups: regroup(next) };
}

function regroup(s: TriageState): GroupsState {
  const items = groupByError(s.rows, s.visible, s.now, s.queueNames.size > 1);
  return { items, ...placeCursor(s.groups ?? { cursor: 0, top: 0 }, s.groups?.cursor ?? 0, items.length, s.pageSize) };
}

// ------------------------------------------------------------------ text input

function typeText(s: TriageState, text: string): TriageState {
  if (s.mode === 'filter') {
    // As long as --grep takes (Enter hands it to the backend's grep): a paste of a whole log
    // was typed key by key, each one refiltering and redrawing, and froze the app for minutes.
    const isCut = s.textDraft.length + text.length > DLQ_GREP_MAX_CHARS;
    const textDraft = isCut ? appendWithin(s.textDraft, text, DLQ_GREP_MAX_CHARS, (t) => t.length) : s.textDraft + text;
    const notice = isCut ? `the text filter takes at most ${DLQ_GREP_MAX_CHARS} characters, as --grep` : s.notice;
    if (textDraft === s.textDraft) return { ...s, notice };
    // Live filtering: the list follows each keystroke, Enter keeps it, Esc restores.
    return refilter({ ...s, textDraft, notice }, { ...s.filter, text: textDraft });
  }
  if (s.mode === 'confirm' && s.redrive?.step === 'confirm' && s.redrive.focus === 'reason') {
    const all = s.redrive.reason + text;
    const isCut = codePoints(all) > REASON_MAX_CHARS;
    // Said, not silently dropped: the rest of a pasted note would otherwise be missing from the audit.
    const notice = isCut ? `the reason takes at most ${REASON_MAX_CHARS} characters: the rest was not typed` : s.notice;
    return { ...s, notice, redrive: { ...s.redrive, reason: isCut ? appendWithin(s.redrive.reason, text, REASON_MAX_CHARS, codePoints) : all } };
  }
  if (s.mode === 'confirm' && s.redrive?.step === 'confirm') {
    const digits = text.replace(/[^0-9]/g, '');
    if (digits === '') return s;
    return { ...s, redrive: { ...s.redrive, typed: (s.redrive.typed + digits).slice(0, 12) } };
  }
  return s;
}

/** Said when a paste lands where nothing is typed: it is not run as keys. */
export const PASTE_IGNORED = 'a paste is not typed here (it is never run as keys): / opens the text filter';

/**
 * A paste as one line of text: a line copied with its line break ends without it (it would be a
 * trailing space the filter then looks for), line breaks and tabs inside are spaces, other control
 * characters are dropped.
 */
function pastedText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\r\n]+$/, '').replace(/\r\n|[\r\n\t]/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

/** `text` typed after `base` in a field of at most `max` (by `size`), cut as withinLimit cuts. */
function appendWithin(base: string, text: string, max: number, size: (t: string) => number): string {
  // The common overflow, a long paste typed key by key once the field is full: a key that starts a
  // new character (below U+0300, no joiner before it) cannot fit, and nothing is walked for it.
  if (size(base) >= max && text.charCodeAt(0) < 0x300 && base.charCodeAt(base.length - 1) !== 0x200d) return base;
  return withinLimit(base + text, max, size);
}

function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++; // a low surrogate belongs to the code point before it
  }
  return n;
}

/**
 * The longest start of `text` whose graphemes add up to at most `max` by `size`: a limit cuts
 * between what shows as characters. Cut between code points, an emoji sequence across the limit
 * left its first half and a dangling joiner, which the terminal drew further along the line.
 */
function withinLimit(text: string, max: number, size: (t: string) => number): string {
  let used = 0;
  let end = 0;
  for (const g of graphemes(text)) {
    used += size(g);
    if (used > max) break;
    end += g.length;
  }
  return text.slice(0, end);
}

// ------------------------------------------------------------------ commands

const MOTIONS: Partial<Record<Command, Motion>> = {
  'cursor.down': 'down',
  'cursor.up': 'up',
  'page.down': 'pageDown',
  'page.up': 'pageUp',
  'cursor.top': 'top',
  'cursor.bottom': 'bottom',
};

function command(s: TriageState, c: Command): TriageState {
  if (c === 'help.toggle') return { ...s, isHelpOpen: !s.isHelpOpen, helpScroll: 0 };
  if (c === 'quit') return { ...s, isQuitting: true };
  if (s.isHelpOpen) {
    // The overlay shows pageSize lines under its title (App gives it pageSize + 1 rows).
    const m = MOTIONS[c];
    return m === undefined ? s : { ...s, helpScroll: Math.min(helpScrollMax(s.mode, s.pageSize), scrollBy(s.helpScroll, m, Infinity, s.pageSize)) };
  }
  // The overlay covers the screen: keys do not act behind it (the keymap's `help` mode only closes it, scrolls it, or quits).
  if (s.isHelpOpen) return s;
  const motion = MOTIONS[c];
  if (motion !== undefined) return move(s, motion);
  switch (s.mode) {
    case 'list':
      return listCommand(s, c);
    case 'groups':
      return groupsCommand(s, c);
    case 'detail':
      return c === 'back' ? { ...s, mode: s.detail?.from ?? 'list', detail: null } : s;
    case 'picker':
      return pickerCommand(s, c);
    case 'filter':
      return filterInputCommand(s, c);
    case 'confirm':
      return confirmCommand(s, c);
    case 'progress':
      if (s.redrive?.step !== 'applying') return s;
      // Pressed again while stopping (a hung backend never ends the batch): quit now, as the CLI's second Ctrl-C.
      if (c === 'run.stopOrQuit' && s.redrive.isStopRequested) return { ...s, isQuitting: true, isForceQuit: true };
      if (c === 'run.stop' || c === 'run.stopOrQuit') return { ...s, redrive: { ...s.redrive, isStopRequested: true }, notice: STOPPING_NOTICE };
      return s;
    case 'result':
      // Nothing moved (the plan failed, or the run was refused before it was recorded, e.g. the queue
      // locked by another): the list is still right and the selection is kept, to try again.
      if (c === 'back' && s.redrive?.step === 'failed' && (!s.redrive.hasApplied || s.redrive.run === null)) return { ...s, mode: 'list', redrive: null };
      // The DLQ changed: drop the rows and the selection (it was redriven), and load it again.
      if (c === 'back') return startReload({ ...s, mode: 'list', redrive: null, selected: new Set(), selectionLabel: null, selectionFilter: null, reloadAnchor: null });
      return s;
    case 'help':
      return s;
  }
}

function move(s: TriageState, m: Motion): TriageState {
  switch (s.mode) {
    case 'list':
      return { ...s, list: moveCursor(s.list, m, s.visible.length, s.pageSize) };
    case 'groups':
      return s.groups === null ? s : { ...s, groups: { ...s.groups, ...moveCursor(s.groups, m, s.groups.items.length, s.pageSize) } };
    case 'picker':
      return s.picker === null ? s : { ...s, picker: { ...s.picker, ...moveCursor(s.picker, m, s.picker.options.length, s.pageSize) } };
    case 'detail': {
      if (s.detail === null || !Array.isArray(s.detail.lines)) return s;
      return { ...s, detail: { ...s.detail, scroll: scrollBy(s.detail.scroll, m, s.detail.lines.length, s.pageSize) } };
    }
    default:
      return s;
  }
}

/** Scrolling text (the detail view): the last page stays full instead of scrolling into blank lines. */
function scrollBy(scroll: number, m: Motion, lines: number, page: number): number {
  const max = Math.max(0, lines - page);
  const step = { down: 1, up: -1, pageDown: page, pageUp: -page, top: -Infinity, bottom: Infinity }[m];
  return Math.min(max, Math.max(0, scroll + step));
}

function listCommand(s: TriageState, c: Command): TriageState {
  switch (c) {
    case 'open': {
      const row = currentRow(s);
      if (row === undefined) return s;
      return { ...s, mode: 'detail', detail: { jobId: row.jobId, lines: undefined, error: null, scroll: 0, from: 'list' } };
    }
    case 'select.toggle': {
      const row = currentRow(s);
      if (row === undefined) return s;
      const selected = new Set(s.selected);
      if (selected.has(row.jobId)) selected.delete(row.jobId);
      else selected.add(row.jobId);
      // Moving down after a toggle lets space-space-space select a run of rows (as in lazygit).
      return withSelection({ ...s, selectionLabel: null, selectionFilter: null, list: moveCursor(s.list, 'down', s.visible.length, s.pageSize) }, selected);
    }
    case 'select.allMatching': {
      // "All matching" must mean all: rows still streaming in would be left out silently.
      if (s.isLoading) {
        const of = s.expectedTotal === null ? '' : ` of ~${count(s.expectedTotal)}`;
        return { ...s, notice: `still loading (${count(s.rows.length)}${of}): a selects all matching once every entry is loaded; Space selects one now` };
      }
      if (s.loadError !== null) return { ...s, notice: 'the DLQ is not loaded (see the error): nothing to select' };
      // Nor while the backend still searches whole messages for the text filter: the rows hold only
      // their start, and the matches further in would be left out of "all matching" without a word.
      if (s.fullText !== null && s.fullText.ids === null && s.fullText.text === s.filter.text) {
        return { ...s, notice: 'still searching whole error messages: a selects all matching once the search is done; Space selects one now' };
      }
      // "all 0 matching" would stand in the header, and in a run's audit next to earlier picks.
      if (s.visible.length === 0) return { ...s, notice: s.rows.length === 0 ? 'the DLQ is empty: nothing to select' : 'nothing matches the filter: nothing to select (x clears the filter)' };
      const selected = new Set(s.selected);
      for (const i of s.visible) selected.add(s.rows[i]!.jobId);
      const label = `all ${count(s.visible.length)} matching ${describeFilter(s.filter)}`;
      // Earlier picks that all match (a pressed again, a narrower a before) add nothing: the selection
      // is then exactly "all matching", not "(+ earlier picks)" that a narrowing by R carried on.
      const isOnlyThese = selected.size === s.visible.length;
      return withSelection({ ...s, selectionLabel: isOnlyThese ? label : `${label} (+ earlier picks)`, selectionFilter: isOnlyThese ? s.filter : null, notice: `selected ${label}` }, selected);
    }
    case 'select.clear':
      return { ...s, selected: new Set(), selectedHidden: 0, selectionLabel: null, selectionFilter: null };
    case 'groups.open':
      return { ...s, mode: 'groups', groups: regroup({ ...s, groups: null }) };
    case 'redrive.open':
      if (s.readOnlyReason !== null) return { ...s, notice: `redrive disabled: ${s.readOnlyReason}` };
      if (s.selected.size === 0) return { ...s, notice: 'nothing selected: Space selects an entry, a selects all matching the filter' };
      if (s.queueNames.size > 1) {
        // A run locks one queue: instead of the plan's refusal ("add --queue", a restart), offer the selection's queues.
        const options = selectedQueues(s);
        if (options.length > 1) {
          return {
            ...s,
            mode: 'picker',
            groups: null,
            picker: { kind: 'queue', options, forRedrive: true, ...placeCursor({ cursor: 0, top: 0 }, 0, options.length, s.pageSize) },
            notice: `selection spans ${options.length} queues; a redrive works on one: Enter narrows, Esc keeps all`,
          };
        }
      }
      {
        const queues = selectedQueues(s);
        return {
          ...s,
          mode: 'confirm',
          redrive: {
            step: 'planning',
            jobIds: [...s.selected],
            context: { inAppFilter: filterRecord(s.filter), selection: s.selectionLabel, hiddenByFilter: s.selectedHidden, queue: queues.length === 1 ? queues[0]!.value : null },
          },
        };
      }
    default:
      return filterCommand(s, c);
  }
}

/** Filter commands shared by the list and the groups view. */
function filterCommand(s: TriageState, c: Command): TriageState {
  switch (c) {
    case 'filter.expired':
      return refilter(s, { ...s.filter, hideExpired: !s.filter.hideExpired });
    case 'filter.partial':
      return refilter(s, { ...s.filter, hidePartial: !s.filter.hidePartial });
    case 'filter.clear':
      return refilter({ ...s, textDraft: '' }, EMPTY_FILTER);
    case 'reload':
      return startReload({ ...s, reloadAnchor: currentRow(s)?.jobId ?? null, notice: null });
    case 'filter.text':
      return { ...s, mode: 'filter', textDraft: s.filter.text, textBefore: s.filter.text, groups: null };
    case 'pick.errorCode':
    case 'pick.tenant':
    case 'pick.queue': {
      const kind: PickerKind = c === 'pick.errorCode' ? 'errorCode' : c === 'pick.tenant' ? 'tenant' : 'queue';
      const options = pickerOptions(s, kind);
      const currentValue = s.filter[kind];
      const at = Math.max(0, options.findIndex((o) => o.value === currentValue));
      return { ...s, mode: 'picker', groups: null, picker: { kind, options, isPartial: s.isLoading, ...placeCursor({ cursor: 0, top: 0 }, at, options.length, s.pageSize) } };
    }
    default:
      return s;
  }
}

function groupsCommand(s: TriageState, c: Command): TriageState {
  if (s.groups === null) return s;
  if (c === 'back') return { ...s, mode: 'list', groups: null };
  if (c === 'open') {
    const g = s.groups.items[s.groups.cursor];
    if (g === undefined) return s;
    return refilter({ ...s, mode: 'list', groups: null }, { ...s.filter, errorCode: g.errorCode, workflow: g.workflow, queue: g.queue ?? s.filter.queue });
  }
  return filterCommand(s, c);
}

/**
 * A picker's options: "(any)", then every value of the loaded rows with how many entries the
 * other filters let through (narrowed to a queue, T counts that queue's tenants: the whole DLQ's
 * counts promised entries the list then did not show). Values found only elsewhere count 0.
 */
function pickerOptions(s: TriageState, kind: PickerKind): PickerState['options'] {
  const through = filterRows(s.rows, { ...s.filter, [kind]: null }, s.now, 0, s.fullText).map((i) => s.rows[i]!);
  const counted = distinctCounts(through, kind);
  const seen = new Set(counted.map((o) => o.value));
  const elsewhere = distinctCounts(s.rows, kind).filter((o) => !seen.has(o.value)).map((o) => ({ value: o.value, count: 0 }));
  return [{ value: null, count: through.length }, ...counted, ...elsewhere];
}

/**
 * An open picker follows the rows that arrive after it was opened: opened early on a big DLQ,
 * it listed only the codes of the first pages, and a group that came later could not be picked.
 * The cursor stays on the value it was on.
 */
function withPickerOptions(s: TriageState): TriageState {
  const p = s.picker;
  if (p === null || p.forRedrive === true) return s;
  const on = p.options[p.cursor]?.value ?? null;
  const options = pickerOptions(s, p.kind);
  const at = Math.max(0, options.findIndex((o) => o.value === on));
  return { ...s, picker: { ...p, options, isPartial: s.isLoading, ...placeCursor(p, at, options.length, s.pageSize) } };
}

/** The queues the selected (loaded) jobs are in, with how many each, most first. */
function selectedQueues(s: TriageState): Array<{ value: string; count: number }> {
  const counts = new Map<string, number>();
  for (const r of s.rows) if (s.selected.has(r.jobId)) counts.set(r.queue, (counts.get(r.queue) ?? 0) + 1);
  return [...counts.entries()].map(([value, n]) => ({ value, count: n })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

/** Keeps only the selected jobs of `queue` (the others would make the plan refuse the run), and says what was dropped. */
function narrowSelectionToQueue(s: TriageState, queue: string): TriageState {
  const kept = new Set<string>();
  for (const r of s.rows) if (r.queue === queue && s.selected.has(r.jobId)) kept.add(r.jobId);
  const dropped = s.selected.size - kept.size;
  const notice = `${count(kept.size)} selected in queue ${queue} kept; ${count(dropped)} in other queues unselected · R redrives`;
  return withSelection({ ...s, ...narrowedLabel(s, queue, kept.size), notice }, kept);
}

/**
 * The label of a selection narrowed to `queue`. Every match of a filter `a` selected, narrowed to a
 * queue, is every match of that filter and the queue: said as `a` says it ("all 3 matching
 * queue=support error=X", which the run's `in_app_filter` repeats exactly), not wrapped around the
 * first label ("3 in queue support of all 6 matching error=X"), which repeated the filter's text.
 * A selection `a` did not make alone (picks, or a filter changed since) keeps its label, once.
 */
function narrowedLabel(s: TriageState, queue: string, kept: number): Pick<TriageState, 'selectionLabel' | 'selectionFilter'> {
  if (s.selectionLabel === null) return { selectionLabel: null, selectionFilter: null };
  const was = s.selectionFilter;
  if (was !== null && sameFilter({ ...was, queue }, s.filter)) return { selectionLabel: `all ${count(kept)} matching ${describeFilter(s.filter)}`, selectionFilter: s.filter };
  return { selectionLabel: `${count(kept)} in queue ${queue} of ${s.selectionLabel}`, selectionFilter: null };
}

function sameFilter(a: TriageFilter, b: TriageFilter): boolean {
  return (Object.keys(a) as Array<keyof TriageFilter>).every((k) => a[k] === b[k]);
}

function pickerCommand(s: TriageState, c: Command): TriageState {
  if (s.picker === null) return s;
  if (c === 'back') return { ...s, mode: 'list', picker: null };
  if (c === 'input.submit') {
    const chosen = s.picker.options[s.picker.cursor]?.value ?? null;
    const filter = { ...s.filter, [s.picker.kind]: chosen };
    if (s.picker.forRedrive === true && chosen !== null) return narrowSelectionToQueue(refilter({ ...s, mode: 'list', picker: null }, filter), chosen);
    return refilter({ ...s, mode: 'list', picker: null }, filter);
  }
  return s;
}

/**
 * The full-text search the submitted text filter needs: none for no text, the one already known
 * for the same text, else a new one (only when some message was cut, or rows are still coming).
 */
function fullTextFor(s: TriageState): FullTextMatches | null {
  const text = s.filter.text;
  if (text === '') return null;
  if (s.fullText?.text === text) return s.fullText;
  return s.isLoading || s.rows.some((r) => r.isMessageCut) ? { text, ids: null } : null;
}

function filterInputCommand(s: TriageState, c: Command): TriageState {
  switch (c) {
    case 'input.submit':
      return { ...s, mode: 'list', fullText: fullTextFor(s) };
    case 'input.cancel':
      return refilter({ ...s, mode: 'list', textDraft: s.textBefore }, { ...s.filter, text: s.textBefore });
    case 'input.backspace': {
      const textDraft = withoutLastGrapheme(s.textDraft);
      return refilter({ ...s, textDraft }, { ...s.filter, text: textDraft });
    }
    default:
      return s;
  }
}

/** How many jobs the operator must type to confirm, or null when no typing is needed. */
export function typedCountRequired(planned: PlannedRedrive): number | null {
  return planned.split.redrive > TYPED_CONFIRM_ABOVE ? planned.split.redrive : null;
}

function confirmCommand(s: TriageState, c: Command): TriageState {
  const r = s.redrive;
  if (c === 'input.cancel' || (r?.step === 'planning' && c === 'back')) return { ...s, mode: 'list', redrive: null, notice: 'redrive cancelled: nothing moved' };
  if (r?.step === 'failed' || r === null) return c === 'input.submit' ? { ...s, mode: 'list', redrive: null } : s;
  if (r.step !== 'confirm') return s;
  switch (c) {
    case 'dialog.focusNext':
      return { ...s, redrive: { ...r, focus: FOCUS_NEXT[r.focus] } };
    case 'dialog.focusPrev':
      return { ...s, redrive: { ...r, focus: FOCUS_PREV[r.focus] } };
    case 'input.backspace':
      if (r.focus === 'reason') return { ...s, redrive: { ...r, reason: withoutLastGrapheme(r.reason) } };
      return { ...s, redrive: { ...r, typed: r.typed.slice(0, -1) } };
    case 'input.submit': {
      // Enter ends the reason and goes back to Cancel: it never presses Redrive by itself.
      if (r.focus === 'reason') return { ...s, redrive: { ...r, focus: 'cancel' } };
      if (r.focus === 'cancel') return { ...s, mode: 'list', redrive: null, notice: 'redrive cancelled: nothing moved' };
      if (r.planned.split.redrive === 0) return { ...s, notice: 'nothing to redrive: every selected job would be skipped' };
      const need = typedCountRequired(r.planned);
      // The plan must be on screen, whole, when it is confirmed (RedriveDialog shows a note instead).
      if (!confirmFits(r.planned, { hiddenSelected: s.selectedHidden, columns: s.columns, bodyRows: s.pageSize + 1, needsTyping: need !== null })) {
        return { ...s, notice: 'the plan does not fit on this terminal: enlarge it to confirm (Esc cancels)' };
      }
      if (need !== null && r.typed !== String(need)) return { ...s, notice: `type ${need} to confirm` };
      return {
        ...s,
        mode: 'progress',
        redrive: { step: 'applying', planned: r.planned, progress: { done: 0, total: r.planned.split.total, moved: 0, skipped: 0, failed: 0 }, isStopRequested: false, reason: r.reason },
      };
    }
    default:
      return s;
  }
}

/** The run a failure during apply cut short, as the last progress named it. */
function cutRun(r: RedriveFlow | null | undefined): CutRun | null {
  if (r?.step !== 'applying' || r.progress.runId === undefined) return null;
  return { runId: r.progress.runId, moved: r.progress.moved, resumeCommand: r.progress.resumeCommand ?? null };
}
