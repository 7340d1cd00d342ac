/**
 * The redrive confirmation's geometry, pure. The dialog is shown whole or not
 * at all: Ink squeezes a column that is taller than its box, so on a short
 * terminal (60×15 with a hidden selection, 40×10 always) lines of the plan
 * vanished or were drawn over each other ("redrive 1,885571 selected", no
 * "Type N to confirm" prompt) while Redrive could still be pressed. Every line
 * is laid out here (wrapped by us, cut by Ink, never re-wrapped), so the height
 * is exact, and the reducer refuses Redrive when it does not fit.
 */
import type { PlannedRedrive } from './redrive-port.js';
import { displayWidth } from '../cli/output/width.js';
import { clean, count, wrapText } from './text.js';

/** The narrowest dialog: the plan's label and count columns (35) inside border and padding. */
export const DIALOG_MIN_COLUMNS = 40;

/** The dialog box's width on a terminal `columns` wide. */
export function dialogWidth(columns: number): number {
  return Math.max(DIALOG_MIN_COLUMNS, Math.min(90, columns - 2));
}

/** Columns inside the border (2) and the padding (2). */
export function dialogInnerWidth(columns: number): number {
  return dialogWidth(columns) - 4;
}

export function confirmTitleLines(planned: PlannedRedrive, columns: number): string[] {
  const s = planned.split;
  return wrapText(`Redrive plan for queue ${clean(s.queue ?? '(none)')}: ${count(s.total)} selected`, dialogInnerWidth(columns));
}

/** The split's lines beyond the four always shown (redrive, expired, partial, quarantined). */
export function extraSplitLines(planned: PlannedRedrive): Array<[string, number]> {
  const s = planned.split;
  const extra: Array<[string, number]> = [];
  if (s.notInDlq > 0) extra.push(['skip: no longer in the DLQ', s.notInDlq]);
  if (s.skipMalformed > 0) extra.push(['skip: malformed', s.skipMalformed]);
  if (s.skipOther > 0) extra.push(['skip: other', s.skipOther]);
  return extra;
}

export function hiddenNoteLines(hiddenSelected: number, columns: number): string[] {
  if (hiddenSelected <= 0) return [];
  return wrapText(
    `${count(hiddenSelected)} of the selected jobs are hidden by the current filter: the redrive includes them (c clears the selection).`,
    dialogInnerWidth(columns),
  );
}

/**
 * Terminal lines the confirmation takes: border (2), title, the four split lines and the extra
 * ones, the typed-count prompt, the reason (one line), the buttons, the hidden-selection note.
 */
export function confirmRows(planned: PlannedRedrive, o: { hiddenSelected: number; columns: number; needsTyping: boolean }): number {
  return (
    2 +
    confirmTitleLines(planned, o.columns).length +
    4 +
    extraSplitLines(planned).length +
    (o.needsTyping ? 1 : 0) +
    2 +
    hiddenNoteLines(o.hiddenSelected, o.columns).length
  );
}

/** Whether the whole confirmation fits in `bodyRows` lines of a terminal `columns` wide. */
export function confirmFits(planned: PlannedRedrive, o: { hiddenSelected: number; columns: number; bodyRows: number; needsTyping: boolean }): boolean {
  return o.columns >= DIALOG_MIN_COLUMNS && confirmRows(planned, o) <= o.bodyRows;
}

const REASON_LABEL = 'Reason (optional, recorded in the audit; Tab to it): ';
const REASON_LABEL_SHORT = 'Reason (Tab to it): ';
/**
 * Focused, the line is marked in text as the focused button is (`> Cancel <`): the typing cursor is
 * only an inverse cell, which NO_COLOR and monochrome terminals do not draw, so the focus seemed to
 * have left the dialog (neither button marked) while keys typed into the reason.
 */
const REASON_LABEL_FOCUSED = '> Reason (optional, recorded in the audit): ';
const REASON_LABEL_FOCUSED_SHORT = '> Reason: ';

/**
 * The reason's one line: its label, and the typed text. While it is being typed and is longer
 * than the room left, its end is shown (`…` first), as a one-line input shows where you type.
 */
export function reasonLine(reason: string, o: { isFocused: boolean; columns: number }): { label: string; value: string } {
  const inner = dialogInnerWidth(o.columns);
  const [long, short] = o.isFocused ? [REASON_LABEL_FOCUSED, REASON_LABEL_FOCUSED_SHORT] : [REASON_LABEL, REASON_LABEL_SHORT];
  const label = long.length + 8 <= inner ? long : short;
  const text = clean(reason);
  if (!o.isFocused) return { label, value: text === '' ? '(none)' : text };
  const room = Math.max(2, inner - label.length - 1);
  if (displayWidth(text) <= room) return { label, value: text };
  const chars = [...text];
  let tail = '';
  for (let i = chars.length - 1; i >= 0 && displayWidth(chars[i]! + tail) <= room - 1; i--) tail = chars[i]! + tail;
  return { label, value: `…${tail}` };
}
