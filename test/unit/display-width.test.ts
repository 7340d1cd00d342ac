/**
 * Terminal cells of free text (error messages, reasons, payload previews): what the tables size
 * their columns by and the TUI cuts and wraps by must be what the terminal draws, and what
 * cli-table3 (which cuts a cell wider than its column) and Ink measure with string-width. An
 * emoji drawn two cells wide but counted one (`⚠️ retry ⏰`, `✅ done`) got its message cut to
 * `⚠️ retry…` on a terminal with room to spare, and overflowed a TUI line.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/cli/output/width.js';
import { renderTable } from '../../src/cli/output/table.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import type { Column } from '../../src/cli/output/columns.js';
import { fit, splitAtWidth, wrapText } from '../../src/tui/text.js';

const CASES: Array<[string, number]> = [
  ['plain ascii', 11],
  ['東京', 4],
  ['🚀', 2],
  // emoji whose default presentation is an emoji: two cells (East Asian Width W)
  ['✅', 2], ['❌', 2], ['⚡', 2], ['⭐', 2], ['⌛', 2], ['☕', 2], ['⏰', 2], ['🀄', 2], ['🆗', 2],
  // a text-style symbol made an emoji by VS16, a keycap: two cells; the bare symbol one
  ['❤️', 2], ['⚠️', 2], ['#️⃣', 2], ['⚠', 1], ['❤', 1], ['©', 1],
  // one emoji drawn from several code points: a skin tone, a ZWJ sequence, a flag
  ['👍🏽', 2], ['👩\u200d💻', 2], ['🇯🇵', 2],
  // combining marks take no cell of their own
  ['e\u0301', 1], ['ก่', 1], ['ש\u05b0', 1],
];

describe('displayWidth', () => {
  it.each(CASES)('%s takes %i cells', (text, cells) => {
    expect(displayWidth(text)).toBe(cells);
  });

  it('agrees with string-width (cli-table3 cuts by it) on every emoji, CJK and ASCII case', () => {
    for (const [text] of CASES.filter(([t]) => !/\p{M}/u.test(t) || /\p{Extended_Pictographic}/u.test(t))) expect({ text, w: displayWidth(text) }).toEqual({ text, w: stringWidth(text) });
  });
});

describe('tables and the TUI measure emoji as the terminal draws them', () => {
  it('a message with an emoji is not cut when the terminal has room for it', () => {
    const cols: Column<{ id: string; msg: string }>[] = [
      { header: 'job', get: (r) => r.id, keepWhole: true },
      { header: 'message', get: (r) => r.msg, flexible: true },
    ];
    const { text } = renderTable(cols, [{ id: 'job_1', msg: '⚠️ retry ⏰' }, { id: 'job_2', msg: '✅ done' }], { palette: NO_COLOUR, width: 150 });
    expect(text).toContain('⚠️ retry ⏰\n');
    expect(text).toContain('✅ done\n');
    expect(text).not.toContain('…');
  });

  it('TUI lines of emoji text stay within the width, and no emoji or accent is split in two', () => {
    const text = `${'✅ ok ⚠️ '.repeat(20)}${'👩\u200d💻'.repeat(30)} ${'e\u0301'.repeat(50)}`;
    for (const width of [20, 41, 79]) {
      for (const line of wrapText(text, width)) expect({ line, w: stringWidth(line) <= width }).toEqual({ line, w: true });
      const [head, tail] = splitAtWidth('👩\u200d💻👩\u200d💻', 3);
      expect([head, tail]).toEqual(['👩\u200d💻', '👩\u200d💻']);
      expect(splitAtWidth('e\u0301e\u0301', 1)).toEqual(['e\u0301', 'e\u0301']);
      expect(stringWidth(fit('⚠️ retry ⏰ ✅✅✅✅✅✅', width))).toBe(width);
    }
  });
});

describe('wrapText', () => {
  it('cuts a word longer than the line into full lines and keeps every character, in order', () => {
    const word = `${'東'.repeat(100)}x${'✅'.repeat(50)}`;
    const lines = wrapText(`a ${word} b c`, 20);
    expect(lines[0]).toBe('a');
    expect(lines.join('').replace(/ /g, '')).toBe(`a${word}bc`);
    for (const l of lines.slice(1, -2)) expect(displayWidth(l)).toBeGreaterThanOrEqual(19);
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(20);
  });
});
