/**
 * The TUI's one door for untrusted text: every string from an entry (ids,
 * names, codes, messages, payloads) passes through the project's sanitiser
 * (`cli/output/sanitize`) before it reaches a frame. Ink's own handling of
 * escape sequences is not enough: it passes OSC and C1 controls through.
 */
import { sanitize } from '../cli/output/sanitize.js';

export function clean(text: unknown): string {
  return sanitize(text);
}

/** Cuts to `width` columns with an ellipsis; pads to `width` when `pad` (table cells). Works on sanitised text. */
export function fit(text: string, width: number, pad = true): string {
  if (width <= 0) return '';
  const chars = [...text];
  if (chars.length > width) return width === 1 ? '…' : chars.slice(0, width - 1).join('') + '…';
  return pad ? text + ' '.repeat(width - chars.length) : text;
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

/** Right-aligns within `width` (numbers). */
export function fitRight(text: string, width: number): string {
  const chars = [...text];
  if (chars.length >= width) return fit(text, width);
  return ' '.repeat(width - chars.length) + text;
}

const groupFmt = new Intl.NumberFormat('en-US');

/** 100000 → "100,000": counts in the header are read at a glance. */
export function count(n: number): string {
  return groupFmt.format(n);
}

/** Word-wraps sanitised text to `width` columns (long words are cut); newlines are kept. */
export function wrapText(text: string, width: number): string[] {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(' ')) {
      let rest = word;
      while ([...rest].length > width) {
        if (line !== '') {
          out.push(line);
          line = '';
        }
        out.push([...rest].slice(0, width).join(''));
        rest = [...rest].slice(width).join('');
      }
      if (line === '') line = rest;
      else if ([...line].length + 1 + [...rest].length <= width) line += ` ${rest}`;
      else {
        out.push(line);
        line = rest;
      }
    }
    out.push(line);
  }
  return out;
}

