/**
 * The TUI's one door for untrusted text: every string from an entry (ids,
 * names, codes, messages, payloads) passes through the project's sanitiser
 * (`cli/output/sanitize`) before it reaches a frame. Ink's own handling of
 * escape sequences is not enough: it passes OSC and C1 controls through.
 */
import { sanitize } from '../cli/output/sanitize.js';
import { displayWidth, graphemes, graphemeWidth } from '../cli/output/width.js';

export function clean(text: unknown): string {
  return sanitize(text);
}

/**
 * Cuts to `width` terminal cells with an ellipsis; pads to `width` cells when `pad` (table cells).
 * Works on sanitised text. Cells, not characters: an error code in CJK or emoji counted by
 * characters took twice its column and pushed the deadline, partial and redrive columns off the row.
 */
export function fit(text: string, width: number, pad = true): string {
  if (width <= 0) return '';
  const w = displayWidth(text);
  if (w > width) {
    if (width === 1) return '…';
    const [head] = splitAtWidth(text, width - 1);
    // A wide character that would straddle the cut is left out: the head may be one cell short.
    const cut = displayWidth(head) > width - 1 ? '' : head;
    return pad ? cut + '…' + ' '.repeat(width - 1 - displayWidth(cut)) : cut + '…';
  }
  return pad ? text + ' '.repeat(width - w) : text;
}

/**
 * A job id cut to `width`, keeping what tells ids apart: the type prefix (`job_`) and the end.
 * Ids of one DLQ share their start (a ULID begins with its time), so `job_…V8GK` is kept rather
 * than `job_01M8K94S…`. Pads to `width`.
 */
export function fitId(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...text];
  if (chars.length <= width) return text + ' '.repeat(width - chars.length);
  const underscore = text.indexOf('_');
  const prefix = underscore > 0 && underscore < 8 && width - (underscore + 2) >= 4 ? chars.slice(0, underscore + 1).join('') : '';
  const tail = width - [...prefix].length - 1;
  return tail <= 0 ? '…' : `${prefix}…${chars.slice(chars.length - tail).join('')}`;
}

/**
 * Cuts to `width` cells in the middle, keeping the start and the end: names of one kind often
 * share a long start and differ at their end (`tenant-eu-…-prod`, `tenant-eu-…-test`), which an
 * end cut would make the same text. Works on sanitised text; pads to `width` cells.
 */
export function fitMiddle(text: string, width: number): string {
  if (width <= 0) return '';
  const w = displayWidth(text);
  if (w <= width) return text + ' '.repeat(width - w);
  if (width < 3) return fit(text, width);
  const gs = [...graphemes(text)];
  const tailRoom = Math.floor((width - 1) / 2);
  let tail = '';
  let tailWidth = 0;
  for (let i = gs.length - 1; i >= 0; i--) {
    const gw = graphemeWidth(gs[i]!);
    if (tailWidth + gw > tailRoom) break;
    tail = gs[i]! + tail;
    tailWidth += gw;
  }
  const [head] = splitAtWidth(text, width - 1 - tailWidth);
  // A wide character that would straddle the cut is left out: the head may be one cell short.
  const kept = displayWidth(head) > width - 1 - tailWidth ? '' : head;
  return kept + '…' + tail + ' '.repeat(width - 1 - tailWidth - displayWidth(kept));
}

/**
 * `text` without its last grapheme: what Backspace takes off a typed line. One code point was not
 * one character: after `👩‍💻` it left `👩` and a dangling joiner, after an accented `é` typed as
 * `e` and an accent it left the `e`.
 */
export function withoutLastGrapheme(text: string): string {
  let start = 0;
  let end = 0;
  for (const g of graphemes(text)) {
    start = end;
    end += g.length;
  }
  return text.slice(0, start);
}

/** Right-aligns within `width` (numbers). */
export function fitRight(text: string, width: number): string {
  const w = displayWidth(text);
  if (w >= width) return fit(text, width);
  return ' '.repeat(width - w) + text;
}

const groupFmt = new Intl.NumberFormat('en-US');

/** 100000 → "100,000": counts in the header are read at a glance. */
export function count(n: number): string {
  return groupFmt.format(n);
}

/**
 * Word-wraps sanitised text to `width` terminal cells (long words are cut); newlines are kept.
 * Measured in cells, not characters: a line of CJK counted by characters was twice the screen's
 * width, and Ink cut it, losing half of a Japanese error message.
 */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    let lineWidth = 0;
    for (const word of para.split(' ')) {
      let rest = word;
      let restWidth = displayWidth(rest);
      if (restWidth > width) {
        if (line !== '') {
          out.push(line);
          line = '';
        }
        const pieces = cutToWidth(rest, width);
        rest = pieces.pop()!;
        restWidth = displayWidth(rest);
        out.push(...pieces);
      }
      if (line === '') {
        line = rest;
        lineWidth = restWidth;
      } else if (lineWidth + 1 + restWidth <= width) {
        line += ` ${rest}`;
        lineWidth += 1 + restWidth;
      } else {
        out.push(line);
        line = rest;
        lineWidth = restWidth;
      }
    }
    out.push(line);
  }
  return out;
}

/**
 * A word longer than the line cut into pieces of at most `width` cells (the last one the rest), in
 * one pass: measuring what was left after every cut is quadratic (a 30,000-character CJK payload
 * of one word took 0.4 s to open in the detail view, about ten times that with widths counted per
 * grapheme; 63 ms in one pass).
 */
function cutToWidth(word: string, width: number): string[] {
  const pieces: string[] = [];
  let piece = '';
  let used = 0;
  for (const g of graphemes(word)) {
    const w = graphemeWidth(g);
    if (used + w > width && piece !== '') {
      pieces.push(piece);
      piece = '';
      used = 0;
    }
    piece += g;
    used += w;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * The longest start of `text` that takes at most `width` cells (at least one character), and the
 * rest. Cut between graphemes: an accent stays on its letter, `👩‍💻` and `⚠️` stay whole.
 */
export function splitAtWidth(text: string, width: number): [string, string] {
  let used = 0;
  let end = 0;
  for (const g of graphemes(text)) {
    const w = graphemeWidth(g);
    if (used + w > width && end > 0) break;
    used += w;
    end += g.length;
  }
  return [text.slice(0, end), text.slice(end)];
}
