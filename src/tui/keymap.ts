/**
 * The keymap: one table that both the input handler and the `?` help
 * overlay read, so the help can never drift from what the keys do.
 *
 * Keys follow k9s / lazygit habits: j/k and arrows move, PgUp/PgDn page,
 * `<`/Home and `>`/End/`G` jump to the top and bottom (lazygit's keys), `/`
 * filters, Enter opens, Esc goes back, `?` helps, `q` quits. `g` is the
 * group-by-error view (issue 6), so it is NOT "top" as in vim: a single key
 * with one meaning beats a `gg` chord that needs a timeout to tell apart.
 */

/** Where the input goes; each mode has its own bindings. */
export type Mode = 'list' | 'groups' | 'detail' | 'picker' | 'filter' | 'confirm' | 'progress' | 'result' | 'help';

export type Command =
  | 'cursor.down'
  | 'cursor.up'
  | 'page.down'
  | 'page.up'
  | 'cursor.top'
  | 'cursor.bottom'
  | 'open'
  | 'back'
  | 'select.toggle'
  | 'select.allMatching'
  | 'select.clear'
  | 'filter.expired'
  | 'filter.partial'
  | 'filter.text'
  | 'filter.clear'
  | 'pick.errorCode'
  | 'pick.tenant'
  | 'pick.queue'
  | 'groups.open'
  | 'reload'
  | 'redrive.open'
  | 'help.toggle'
  | 'quit'
  | 'input.submit'
  | 'input.cancel'
  | 'input.backspace'
  | 'dialog.focusNext'
  | 'dialog.focusPrev'
  | 'run.stop'
  | 'run.stopOrQuit';

/** A normalised key: a printable character (`j`, `G`, `/`, `?`), or a name (`down`, `pgdn`, `home`, `enter`, `esc`, `space`, `tab`, `backspace`, `C-c`). */
export type KeyName = string;

export interface Binding {
  modes: readonly Mode[];
  keys: readonly KeyName[];
  command: Command;
  /** One line in the help overlay. */
  help: string;
}

const BROWSE: readonly Mode[] = ['list', 'groups', 'detail', 'picker'];

export const BINDINGS: readonly Binding[] = [
  { modes: BROWSE, keys: ['j', 'down'], command: 'cursor.down', help: 'move down' },
  { modes: BROWSE, keys: ['k', 'up'], command: 'cursor.up', help: 'move up' },
  { modes: BROWSE, keys: ['pgdn', 'C-f', 'C-d'], command: 'page.down', help: 'page down' },
  { modes: BROWSE, keys: ['pgup', 'C-b', 'C-u'], command: 'page.up', help: 'page up' },
  { modes: BROWSE, keys: ['home', '<'], command: 'cursor.top', help: 'go to the top' },
  { modes: BROWSE, keys: ['end', '>', 'G'], command: 'cursor.bottom', help: 'go to the bottom' },
  { modes: ['list'], keys: ['enter'], command: 'open', help: 'open the entry: error (wrapped), attempts, checkpoint, effects, payload' },
  { modes: ['groups'], keys: ['enter'], command: 'open', help: 'show the entries of this group' },
  { modes: ['picker'], keys: ['enter'], command: 'input.submit', help: 'use this value' },
  { modes: ['list'], keys: ['space'], command: 'select.toggle', help: 'select / unselect the entry' },
  { modes: ['list'], keys: ['a'], command: 'select.allMatching', help: 'select ALL entries matching the filter (not only this page)' },
  { modes: ['list'], keys: ['c'], command: 'select.clear', help: 'clear the selection' },
  { modes: ['list', 'groups'], keys: ['e'], command: 'filter.expired', help: 'hide / show expired jobs' },
  { modes: ['list', 'groups'], keys: ['p'], command: 'filter.partial', help: 'hide / show partially completed jobs' },
  { modes: ['list', 'groups'], keys: ['/'], command: 'filter.text', help: 'text filter, as --grep: live on the start of messages, Enter searches them whole (Esc restores)' },
  { modes: ['list', 'groups'], keys: ['E'], command: 'pick.errorCode', help: 'pick an error code' },
  { modes: ['list', 'groups'], keys: ['T'], command: 'pick.tenant', help: 'pick a tenant' },
  { modes: ['list', 'groups'], keys: ['Q'], command: 'pick.queue', help: 'pick a queue (browsing all queues: a redrive works on one)' },
  { modes: ['list', 'groups'], keys: ['x'], command: 'filter.clear', help: 'clear every filter' },
  { modes: ['list', 'groups'], keys: ['r', 'C-r'], command: 'reload', help: 'reload the DLQ from the store (new failures; keeps the cursor and the selection)' },
  { modes: ['list'], keys: ['g'], command: 'groups.open', help: 'group by error code × workflow' },
  { modes: ['list'], keys: ['R'], command: 'redrive.open', help: 'redrive the selection (plan, confirm, apply)' },
  { modes: ['groups', 'detail', 'picker'], keys: ['esc', 'backspace'], command: 'back', help: 'back' },
  { modes: ['groups'], keys: ['g'], command: 'back', help: 'back to the list' },
  { modes: ['filter'], keys: ['enter'], command: 'input.submit', help: 'apply the filter' },
  { modes: ['filter'], keys: ['esc'], command: 'input.cancel', help: 'restore the previous filter' },
  { modes: ['filter', 'confirm'], keys: ['backspace'], command: 'input.backspace', help: 'delete a character' },
  { modes: ['confirm'], keys: ['tab', 'right'], command: 'dialog.focusNext', help: 'move focus: Cancel → Redrive → reason (optional, typed, for the audit)' },
  // ← goes back, towards Cancel: it used to move forward too, so ← on Cancel focused Redrive.
  { modes: ['confirm'], keys: ['S-tab', 'left'], command: 'dialog.focusPrev', help: 'move focus back: reason → Redrive → Cancel' },
  { modes: ['confirm'], keys: ['enter'], command: 'input.submit', help: 'press the focused button (in the reason: back to Cancel)' },
  // Ctrl-C in the dialog cancels it, as at the CLI's confirmation prompt (a decline: nothing moves).
  { modes: ['confirm'], keys: ['esc', 'C-c'], command: 'input.cancel', help: 'cancel (nothing moves)' },
  { modes: ['progress'], keys: ['esc'], command: 'run.stop', help: 'stop after the current batch (resume later)' },
  { modes: ['progress'], keys: ['C-c', 'q'], command: 'run.stopOrQuit', help: 'stop after the current batch; pressed again, quit at once (the run shows as interrupted)' },
  { modes: ['result'], keys: ['enter', 'esc'], command: 'back', help: 'back to the list (reloaded when the redrive may have moved jobs)' },
  { modes: ['list', 'groups', 'detail', 'picker', 'result'], keys: ['?'], command: 'help.toggle', help: 'this help' },
  { modes: ['help'], keys: ['?', 'esc', 'q'], command: 'help.toggle', help: 'close the help' },
  { modes: ['help'], keys: ['j', 'down'], command: 'cursor.down', help: 'scroll down' },
  { modes: ['help'], keys: ['k', 'up'], command: 'cursor.up', help: 'scroll up' },
  { modes: ['help'], keys: ['pgdn', 'C-f', 'C-d', 'space'], command: 'page.down', help: 'page down' },
  { modes: ['help'], keys: ['pgup', 'C-b', 'C-u'], command: 'page.up', help: 'page up' },
  { modes: ['help'], keys: ['home', '<'], command: 'cursor.top', help: 'top' },
  { modes: ['help'], keys: ['end', '>', 'G'], command: 'cursor.bottom', help: 'bottom' },
  { modes: ['list', 'groups', 'detail', 'picker', 'result'], keys: ['q', 'C-c'], command: 'quit', help: 'quit' },
  // Ctrl-C quits from everywhere but a dialog or a running redrive (q is text in the filter, and closes the help).
  { modes: ['filter', 'help'], keys: ['C-c'], command: 'quit', help: 'quit' },
];

/** The modes where printable keys are text, not commands. */
export const TEXT_MODES: ReadonlySet<Mode> = new Set(['filter', 'confirm']);

/** The subset of Ink's `Key` the keymap reads (kept structural so tests need no Ink). */
export interface InkKey {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  tab?: boolean;
  shift?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  meta?: boolean;
}

/** Ink's `(input, key)` as one key name. */
export function keyName(input: string, key: InkKey): KeyName {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pgup';
  if (key.pageDown) return 'pgdn';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'enter';
  if (key.escape) return 'esc';
  if (key.tab) return key.shift ? 'S-tab' : 'tab';
  // Terminals send DEL (0x7f) for the Backspace key, which Ink reports as `delete`.
  if (key.backspace || key.delete) return 'backspace';
  if (key.ctrl && input.length === 1) return `C-${input.toLowerCase()}`;
  if (input === ' ') return 'space';
  return input;
}

const CONTROL_NAMES: Record<string, KeyName> = { '\r': 'enter', '\n': 'enter', '\t': 'tab', '\x7f': 'backspace', '\b': 'backspace', '\x1b': 'esc' };

/**
 * The keys in one read from the terminal. Ink hands over a whole chunk as one
 * "input" when several keys arrive together (a fast typist, a busy process,
 * tmux `send-keys`, a paste): `/429` must still be `/` (open the filter) then
 * `4`, `2`, `9` typed into it, so a chunk of plain characters is split into
 * keys and each is resolved in the mode the previous one left.
 */
export function inputKeys(input: string, key: InkKey, pastesMarked = false): KeyName[] {
  // Esc followed at once by a key arrives as one "ESC x" read, which Ink reports as Meta-x.
  // The TUI binds no Meta keys, so it is what it most likely was: Esc, then x.
  if (key.meta && !key.ctrl && input.length === 1 && !key.escape) return ['esc', keyName(input, { ...key, meta: false })];
  const isNamed = key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.pageUp || key.pageDown || key.home || key.end || key.ctrl || key.meta;
  if (isNamed || [...input].length <= 1) return [keyName(input, key)];
  const chars = [...input];
  // A line break or tab with text after it in the same read is a paste, not Enter or Tab: a
  // two-line error pasted into `/` submitted the filter and ran its second line as commands
  // (`a` selected everything, `e` hid expired jobs). Keys sent together stay keys: "26\r",
  // and Tab then Enter ("\t\r", as tmux send-keys Tab Enter delivers them). Only on a terminal not
  // known to mark pastes (bracketed paste, use-keys.ts): on one that does, a paste comes marked, so
  // an unmarked read is keys, and Enter then `r` in one read (a laggy ssh) kept only the `r`.
  if (pastesMarked) return chars.map((ch) => CONTROL_NAMES[ch] ?? (ch === ' ' ? 'space' : ch));
  let lastText = -1;
  chars.forEach((ch, i) => {
    // eslint-disable-next-line no-control-regex
    if (!/[\u0000-\u001f\u007f]/.test(ch)) lastText = i;
  });
  return chars.map((ch, i) => (i < lastText && PASTE_BREAKS.has(ch) ? PASTE_BREAK : (CONTROL_NAMES[ch] ?? (ch === ' ' ? 'space' : ch))));
}

/** A line break or tab inside a pasted chunk: a space in text modes, nothing elsewhere. */
export const PASTE_BREAK: KeyName = 'paste-break';
const PASTE_BREAKS: ReadonlySet<string> = new Set(['\r', '\n', '\t']);

export type Resolved = { kind: 'command'; command: Command } | { kind: 'text'; text: string } | { kind: 'none' };

/**
 * What a key means in a mode. In text modes, a key bound to a command runs
 * it and any other printable text is typed (so `q` types a q in the filter).
 */
export function resolveKey(mode: Mode, name: KeyName): Resolved {
  for (const b of BINDINGS) {
    if (b.modes.includes(mode) && b.keys.includes(name)) return { kind: 'command', command: b.command };
  }
  if (name === PASTE_BREAK) return TEXT_MODES.has(mode) ? { kind: 'text', text: ' ' } : { kind: 'none' };
  if (TEXT_MODES.has(mode)) {
    if (name === 'space') return { kind: 'text', text: ' ' };
    if (isPrintable(name)) return { kind: 'text', text: name };
  }
  return { kind: 'none' };
}

/** One key or a paste of printable characters; named keys (`down`, `C-x`) are not text. */
function isPrintable(name: KeyName): boolean {
  if (name.length === 0) return false;
  if (name.length > 1 && /^(up|down|left|right|pgup|pgdn|home|end|enter|esc|tab|S-tab|backspace|space|C-.)$/.test(name)) return false;
  // Control bytes never become filter text; everything else typed or pasted does.
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u001f\u007f-\u009f]/.test(name);
}

const KEY_LABELS: Record<string, string> = {
  down: '↓',
  up: '↑',
  left: '←',
  right: '→',
  pgdn: 'PgDn',
  pgup: 'PgUp',
  home: 'Home',
  end: 'End',
  enter: 'Enter',
  esc: 'Esc',
  space: 'Space',
  tab: 'Tab',
  backspace: 'Backspace',
};

export function keyLabel(name: KeyName): string {
  if (name.startsWith('C-')) return `Ctrl-${name.slice(2)}`;
  return KEY_LABELS[name] ?? name;
}

export const MODE_TITLES: Record<Mode, string> = {
  list: 'List',
  groups: 'Groups (by error)',
  detail: 'Entry detail',
  picker: 'Picker',
  filter: 'Text filter',
  confirm: 'Redrive dialog',
  progress: 'Redrive running',
  result: 'Redrive result',
  help: 'Help',
};

export interface HelpLine {
  keys: string;
  help: string;
}

/** The help overlay's sections, generated from `BINDINGS` in table order. */
export function helpSections(): Array<{ mode: Mode; title: string; lines: HelpLine[] }> {
  const modes = Object.keys(MODE_TITLES) as Mode[];
  return modes.map((mode) => ({
    mode,
    title: MODE_TITLES[mode],
    lines: BINDINGS.filter((b) => b.modes.includes(mode)).map((b) => ({ keys: b.keys.map(keyLabel).join(' '), help: b.help })),
  }));
}

/** What the help overlay's title says; the status bar says the same. */
export const HELP_KEYS_HINT = '? / Esc / q close · j/k ↑/↓ PgUp/PgDn scroll · Ctrl-C quits';

export interface HelpTextLine {
  text: string;
  isTitle: boolean;
}

/** The overlay's scrolling lines (the title is fixed above them): the current mode's keys first. */
export function helpLines(mode: Mode): HelpTextLine[] {
  const sections = helpSections().filter((s) => s.lines.length > 0);
  // As wide as the longest keys (the help's "PgDn Ctrl-f Ctrl-d Space" ran into its description).
  const keysWidth = 1 + Math.max(...sections.flatMap((s) => s.lines.map((l) => [...l.keys].length)));
  sections.sort((a, b) => (a.mode === mode ? -1 : b.mode === mode ? 1 : 0));
  const lines: HelpTextLine[] = [];
  for (const s of sections) {
    lines.push({ text: s.title, isTitle: true });
    for (const l of s.lines) lines.push({ text: `  ${l.keys.padEnd(keysWidth)} ${l.help}`, isTitle: false });
  }
  return lines;
}

/** How far the help can scroll when `rows` lines show under its title (the last page stays full). */
export function helpScrollMax(mode: Mode, rows: number): number {
  return Math.max(0, helpLines(mode).length - Math.max(1, rows));
}
