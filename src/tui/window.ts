/**
 * Cursor-and-window arithmetic for every scrolling list in the TUI: only
 * `size` rows are ever rendered, whatever the length of the list.
 */
export interface ListWindow {
  cursor: number;
  /** Index of the first rendered row. */
  top: number;
}

/** Moves the cursor to `cursor` (clamped) and scrolls the least needed to keep it in a window of `size` rows. */
export function placeCursor(w: ListWindow, cursor: number, length: number, size: number): ListWindow {
  const page = Math.max(1, size);
  if (length <= 0) return { cursor: 0, top: 0 };
  const c = Math.min(Math.max(0, cursor), length - 1);
  let top = Math.min(w.top, c);
  if (c >= top + page) top = c - page + 1;
  top = Math.max(0, Math.min(top, Math.max(0, length - page)));
  return { cursor: c, top };
}

export type Motion = 'down' | 'up' | 'pageDown' | 'pageUp' | 'top' | 'bottom';

export function moveCursor(w: ListWindow, motion: Motion, length: number, size: number): ListWindow {
  const page = Math.max(1, size);
  switch (motion) {
    case 'down':
      return placeCursor(w, w.cursor + 1, length, page);
    case 'up':
      return placeCursor(w, w.cursor - 1, length, page);
    case 'pageDown':
      // Page like less/k9s: the window moves a whole page and the cursor with it.
      return placeCursor({ cursor: w.cursor, top: w.top + page }, w.cursor + page, length, page);
    case 'pageUp':
      return placeCursor({ cursor: w.cursor, top: Math.max(0, w.top - page) }, w.cursor - page, length, page);
    case 'top':
      return placeCursor(w, 0, length, page);
    case 'bottom':
      return placeCursor(w, length - 1, length, page);
  }
}

/** Binary search in an ascending array; -1 when absent. */
export function indexOfSorted(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === value) return mid;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
