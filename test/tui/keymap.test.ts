import { describe, expect, it } from 'vitest';
import { BINDINGS, helpLines, helpSections, keyLabel, keyName, resolveKey, type Mode } from '../../src/tui/keymap.js';
import { isUsableInput } from '../../src/tui/use-keys.js';
import { KEYS } from './support/harness.js';

describe('keyName', () => {
  it('names Ink keys the way the keymap spells them', () => {
    expect(keyName('', { downArrow: true })).toBe('down');
    expect(keyName('', { upArrow: true })).toBe('up');
    expect(keyName('', { pageDown: true })).toBe('pgdn');
    expect(keyName('', { pageUp: true })).toBe('pgup');
    expect(keyName('', { home: true })).toBe('home');
    expect(keyName('', { end: true })).toBe('end');
    expect(keyName('\r', { return: true })).toBe('enter');
    expect(keyName('', { escape: true })).toBe('esc');
    expect(keyName('\t', { tab: true })).toBe('tab');
    expect(keyName(' ', {})).toBe('space');
    expect(keyName('G', { shift: true })).toBe('G');
    expect(keyName('c', { ctrl: true })).toBe('C-c');
  });

  it('treats DEL (what terminals send for Backspace, reported by Ink as delete) as backspace', () => {
    expect(keyName('', { delete: true })).toBe('backspace');
    expect(keyName('', { backspace: true })).toBe('backspace');
  });
});

describe('resolveKey', () => {
  it('moves with j/k and the arrows in every browsing mode', () => {
    for (const mode of ['list', 'groups', 'detail', 'picker'] as Mode[]) {
      expect(resolveKey(mode, 'j')).toEqual({ kind: 'command', command: 'cursor.down' });
      expect(resolveKey(mode, 'down')).toEqual({ kind: 'command', command: 'cursor.down' });
      expect(resolveKey(mode, 'k')).toEqual({ kind: 'command', command: 'cursor.up' });
      expect(resolveKey(mode, 'up')).toEqual({ kind: 'command', command: 'cursor.up' });
    }
  });

  it('gives g to the group view and top/bottom to Home/< and End/>/G (no g ambiguity)', () => {
    expect(resolveKey('list', 'g')).toEqual({ kind: 'command', command: 'groups.open' });
    expect(resolveKey('list', 'home')).toEqual({ kind: 'command', command: 'cursor.top' });
    expect(resolveKey('list', '<')).toEqual({ kind: 'command', command: 'cursor.top' });
    expect(resolveKey('list', 'G')).toEqual({ kind: 'command', command: 'cursor.bottom' });
    expect(resolveKey('list', 'end')).toEqual({ kind: 'command', command: 'cursor.bottom' });
    expect(resolveKey('groups', 'g')).toEqual({ kind: 'command', command: 'back' });
  });

  it('types printable keys in the text filter instead of running their commands', () => {
    expect(resolveKey('filter', 'q')).toEqual({ kind: 'text', text: 'q' });
    expect(resolveKey('filter', 'e')).toEqual({ kind: 'text', text: 'e' });
    expect(resolveKey('filter', 'space')).toEqual({ kind: 'text', text: ' ' });
    expect(resolveKey('filter', 'esc')).toEqual({ kind: 'command', command: 'input.cancel' });
    expect(resolveKey('filter', 'enter')).toEqual({ kind: 'command', command: 'input.submit' });
  });

  it('never types control characters or named keys as filter text', () => {
    expect(resolveKey('filter', '\x1b[31m')).toEqual({ kind: 'none' });
    expect(resolveKey('filter', 'down')).toEqual({ kind: 'none' });
    expect(resolveKey('filter', 'C-x')).toEqual({ kind: 'none' });
  });

  it('does not quit from the redrive dialog; while a run is applying q and Ctrl-C stop it first (pressed again they quit)', () => {
    expect(resolveKey('confirm', 'q')).toEqual({ kind: 'text', text: 'q' });
    expect(resolveKey('progress', 'q')).toEqual({ kind: 'command', command: 'run.stopOrQuit' });
    expect(resolveKey('progress', 'C-c')).toEqual({ kind: 'command', command: 'run.stopOrQuit' });
    expect(resolveKey('progress', 'esc')).toEqual({ kind: 'command', command: 'run.stop' });
  });

  it('captures every key while the help is open; only ?, Esc and q close it, j/k/PgUp/PgDn scroll it', () => {
    expect(resolveKey('help', 'j')).toEqual({ kind: 'command', command: 'cursor.down' });
    expect(resolveKey('help', 'pgdn')).toEqual({ kind: 'command', command: 'page.down' });
    expect(resolveKey('help', 'R')).toEqual({ kind: 'none' });
    for (const k of ['?', 'esc', 'q']) expect(resolveKey('help', k)).toEqual({ kind: 'command', command: 'help.toggle' });
  });

  it('has no key bound twice in one mode (the first binding would silently win)', () => {
    const seen = new Map<string, string>();
    for (const b of BINDINGS) {
      for (const mode of b.modes) {
        for (const k of b.keys) {
          const id = `${mode} ${k}`;
          expect(seen.get(id), `${id} bound to ${seen.get(id)} and ${b.command}`).toBeUndefined();
          seen.set(id, b.command);
        }
      }
    }
  });
});

describe('help overlay', () => {
  it('is generated from the same bindings the input handler resolves', () => {
    const sections = helpSections();
    const list = sections.find((s) => s.mode === 'list')!;
    for (const b of BINDINGS.filter((b) => b.modes.includes('list'))) {
      expect(list.lines).toContainEqual({ keys: b.keys.map(keyLabel).join(' '), help: b.help });
      for (const k of b.keys) expect(resolveKey('list', k)).toEqual({ kind: 'command', command: b.command });
    }
  });

  it('labels keys for people', () => {
    expect(keyLabel('pgdn')).toBe('PgDn');
    expect(keyLabel('C-c')).toBe('Ctrl-c');
    expect(keyLabel('j')).toBe('j');
  });
});

describe('inputKeys (several keys in one read)', () => {
  it('splits a chunk of typed characters into keys, so "/429" opens the filter and types 429', async () => {
    const { inputKeys } = await import('../../src/tui/keymap.js');
    expect(inputKeys('/429', {})).toEqual(['/', '4', '2', '9']);
    expect(inputKeys('26\r', {})).toEqual(['2', '6', 'enter']);
    expect(inputKeys('a b', {})).toEqual(['a', 'space', 'b']);
    expect(inputKeys('x\x7f', {})).toEqual(['x', 'backspace']);
  });

  it('a line break or tab inside a pasted chunk is a space in text modes, never Enter or Tab (a last \\r still is Enter)', async () => {
    const { inputKeys, PASTE_BREAK } = await import('../../src/tui/keymap.js');
    expect(inputKeys('ab\nc\td\r', {})).toEqual(['a', 'b', PASTE_BREAK, 'c', PASTE_BREAK, 'd', 'enter']);
    expect(inputKeys('\t\r', {})).toEqual(['tab', 'enter']);
    expect(inputKeys('26\t\r', {})).toEqual(['2', '6', 'tab', 'enter']);
    expect(resolveKey('filter', PASTE_BREAK)).toEqual({ kind: 'text', text: ' ' });
    expect(resolveKey('confirm', PASTE_BREAK)).toEqual({ kind: 'text', text: ' ' });
    expect(resolveKey('list', PASTE_BREAK)).toEqual({ kind: 'none' });
  });

  it('reads Meta-x (ESC and x in one read) as Esc then x: quick "Esc e" in a terminal', async () => {
    const { inputKeys } = await import('../../src/tui/keymap.js');
    expect(inputKeys('e', { meta: true })).toEqual(['esc', 'e']);
  });

  it('keeps a single key or a named key whole', async () => {
    const { inputKeys } = await import('../../src/tui/keymap.js');
    expect(inputKeys('j', {})).toEqual(['j']);
    expect(inputKeys('', { downArrow: true })).toEqual(['down']);
    expect(inputKeys('c', { ctrl: true })).toEqual(['C-c']);
  });
});

describe('Ctrl-C', () => {
  it('does something in every mode: quits, cancels the redrive dialog, or stops a running redrive', () => {
    const expected: Record<string, string> = {
      list: 'quit',
      groups: 'quit',
      detail: 'quit',
      picker: 'quit',
      filter: 'quit',
      help: 'quit',
      result: 'quit',
      confirm: 'input.cancel',
      progress: 'run.stopOrQuit',
    };
    for (const [mode, command] of Object.entries(expected)) {
      expect(resolveKey(mode as Parameters<typeof resolveKey>[0], 'C-c'), mode).toEqual({ kind: 'command', command });
    }
  });
});

describe('isUsableInput (what reaches Ink\'s key parser)', () => {
  it('passes text, Esc, Esc-then-a-key and every named key the app binds, with modifiers', () => {
    for (const k of Object.values(KEYS)) expect(isUsableInput(k)).toBe(true);
    for (const k of ['q', '/429', '\x1bj', '\x1b\x1b', '\x1b[1;5A', '\x1bOB', '\x1b[Z', '\x1b[5;5~', '\x1b[3~', '\x1b[99;5u', 'café 東京']) {
      expect(isUsableInput(k), JSON.stringify(k)).toBe(true);
    }
  });

  it('drops escape sequences Ink cannot name (they crashed it): Ctrl-F1, Ctrl-F13, a pasted colour code, mouse and focus reports', () => {
    for (const k of ['\x1b[1;5P', '\x1b[25;5~', '\x1b[31m', '\x1b[<0;1;1M', '\x1b[I', '\x1b\x1b[5u', '\x1b[[200H', '\x1bOP']) {
      expect(isUsableInput(k), JSON.stringify(k)).toBe(false);
    }
  });
});

describe('helpLines', () => {
  it('puts every description in one column, after the longest keys (help view: "PgDn Ctrl-f Ctrl-d Space")', () => {
    const lines = helpLines('list').filter((l) => !l.isTitle);
    const pageDown = lines.find((l) => l.text.includes('Space') && l.text.includes('page down'))!;
    const column = pageDown.text.indexOf('page down');
    expect(pageDown.text.slice(0, column)).toMatch(/Space {2,}$/);
    for (const l of lines) {
      const m = /^ {2}(\S+(?: \S+)*?) {2,}(\S.*)$/.exec(l.text);
      expect(m, l.text).not.toBeNull();
      expect(l.text.length - m![2]!.length, l.text).toBe(column);
    }
  });
});
