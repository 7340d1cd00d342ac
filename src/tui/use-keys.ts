/**
 * Ink's `useInput`, with the terminal's escape sequences screened first.
 *
 * Ink names the keys it knows; for an escape sequence it does not know that
 * carries a Ctrl modifier (xterm's Ctrl-F1 `ESC[1;5P`, Ctrl-F13 `ESC[25;5~`,
 * or an `ESC[31m` pasted from a coloured log into the filter) it hands
 * `undefined` on as the key's text and throws inside its own stdin listener:
 * the process died with a stack trace, mid-redrive too (the run never recorded
 * `interrupted`). The app binds no such key, so every escape sequence other
 * than the keys it can use (arrows, Home/End, PgUp/PgDn, Insert/Delete,
 * Shift-Tab, and kitty's `CSI … u` keys, which Ink reads safely) is dropped
 * before Ink's listener sees it. Plain text and Esc pass as before.
 *
 * Esc and the key typed right after it often arrive in one read (a fast typist,
 * ssh, tmux). Ink takes such a pair for one Alt key and keeps only the second
 * key when it is not a letter or digit: Esc then `/` in an entry was `/` alone
 * (nothing), then the search typed as commands (`?` opened the help), and Esc
 * then Backspace or Tab was lost whole. The app binds no Alt key, so the pair is
 * handed to Ink as the two keys it was.
 *
 * The app turns on the terminal's bracketed paste (run.tsx): a paste arrives
 * between `ESC[200~` and `ESC[201~`, which Ink splits into reads like typed
 * keys. Read as keys, a job id pasted into the list opened pickers, toggled
 * filters and quit on its `q`. What comes between the markers is collected and
 * handed over as one paste instead, never to Ink's key handler; escape
 * sequences inside it (a coloured log) are dropped.
 */
import { useInput, useStdin } from 'ink';
import { useEffect, useLayoutEffect, useRef } from 'react';
import type { InkKey } from './keymap.js';

/** CSI (`ESC [`) or SS3 (`ESC O`), after an optional second ESC (Alt/Option held). */
// eslint-disable-next-line no-control-regex
const SEQUENCE = /^(\x1b\x1b?)(\[|O)([\s\S]+)$/;

/** Esc and one more key that starts no escape sequence (CSI `[`, SS3 `O`, a second Esc). */
// eslint-disable-next-line no-control-regex
const ESC_THEN_KEY = /^\x1b([^\x1b[O])$/u;

/** One read of the terminal as Ink split it, as the reads it stands for: Esc-then-a-key is two. */
export function splitEscPair(seq: string): string[] {
  const m = ESC_THEN_KEY.exec(seq);
  return m === null ? [seq] : ['\x1b', m[1]!];
}

/** Whether Ink may be handed `seq`, one read of the terminal as Ink split it. */
export function isUsableInput(seq: string): boolean {
  const m = SEQUENCE.exec(seq);
  if (m === null) return true;
  const [, escapes, introducer, body] = m as unknown as [string, string, string, string];
  if (introducer === 'O') return /^[ABCDHF]$/.test(body);
  // Arrows, Home/End and Shift-Tab, with or without modifiers (ESC [ 1 ; 5 A).
  if (/^(\d+(;\d+)?)?[ABCDHFZ]$/.test(body)) return true;
  // ESC [ n ~ and ESC [ n ; mod ~: Home, Insert, Delete, End, PgUp, PgDn (1-8).
  if (/^[1-8](;\d+)?~$/.test(body)) return true;
  // kitty's keyboard protocol (ESC [ code ; mods u), which Ink parses itself; not after Alt's ESC.
  return escapes.length === 1 && /^\d+([:;]\d+)*u$/.test(body);
}

/**
 * The terminal's answer to the DECRQM query for mode 2004 that run.tsx sends once raw mode is on:
 * `ESC[?2004;Ps$y`, Ps 1 (set, as the app set it): pastes come marked. Any other Ps (0 not
 * recognised, 2 reset, 4 permanently reset) says they may not; a terminal that knows no DECRQM
 * (tmux 3.3) does not answer at all, and the older rule for unmarked reads stays (keymap.ts).
 */
// eslint-disable-next-line no-control-regex
const PASTE_MODE_REPORT = /^\x1b\[\?2004;([0-4])\$y$/;
const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';
/** More than any text field takes (200 characters), so cutting a paste is still said; a log of megabytes is not held. */
const PASTE_MAX = 4096;

/**
 * `pastesMarked` is set once the terminal is known to mark pastes (it reported mode 2004, or a
 * marked paste arrived): line breaks in an unmarked read are keys then, not a paste (keymap.ts).
 */
export function useKeys(handler: (input: string, key: InkKey) => void, onPaste: (text: string) => void, pastesMarked?: { current: boolean }, onReady?: () => void): void {
  const { internal_eventEmitter: events } = useStdin();
  const pasteRef = useRef(onPaste);
  pasteRef.current = onPaste;
  useLayoutEffect(() => {
    // Ink's App emits every read on this emitter; its useInput listener is what throws.
    const emit = events.emit;
    let paste: string[] | null = null;
    let pasted = 0;
    events.emit = function screened(this: typeof events, name: string | symbol, ...args: unknown[]): boolean {
      if (name !== 'input' || typeof args[0] !== 'string') return emit.call(this, name, ...args);
      const read = args[0];
      const report = PASTE_MODE_REPORT.exec(read);
      if (report !== null) {
        if (pastesMarked && report[1] === '1') pastesMarked.current = true;
        return true;
      }
      if (read === PASTE_START) {
        if (pastesMarked) pastesMarked.current = true;
        paste = [];
        pasted = 0;
        return true;
      }
      if (paste !== null) {
        // A Ctrl-C read alone ends a paste whose end marker never came (it would otherwise swallow every key).
        if (read !== PASTE_END && read !== '\x03') {
          // Kept up to PASTE_MAX characters: the filter and the reason take 200, and say what was cut.
          if (!read.startsWith('\x1b') && pasted < PASTE_MAX) {
            paste.push(read);
            pasted += read.length;
          }
          return true;
        }
        const text = paste.join('');
        paste = null;
        if (text !== '') pasteRef.current(text);
        if (read === PASTE_END) return true;
      }
      if (!isUsableInput(read)) return false;
      let isHandled = false;
      for (const one of splitEscPair(read)) isHandled = emit.call(this, name, one) || isHandled;
      return isHandled;
    };
    return () => {
      events.emit = emit;
    };
  }, [events]);
  useInput(handler);
  // After useInput's effect, which has put the terminal in raw mode.
  const readyRef = useRef(onReady);
  useEffect(() => readyRef.current?.(), []);
}
