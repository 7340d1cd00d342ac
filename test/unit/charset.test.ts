import { describe, expect, it } from 'vitest';
import { asciiChrome, chromeFor, ctypeLocale, isUtf8Locale, SPARK_BARS, terminalCharset } from '../../src/cli/output/charset.js';
import { sanitize } from '../../src/cli/output/sanitize.js';

const isAscii = (s: string) => [...Buffer.from(s, 'utf8')].every((b) => b < 0x80);

describe('terminalCharset', () => {
  it('takes the first set of LC_ALL, LC_CTYPE, LANG', () => {
    expect(ctypeLocale({ LC_ALL: 'C', LC_CTYPE: 'en_US.UTF-8', LANG: 'en_US.UTF-8' })).toBe('C');
    expect(ctypeLocale({ LC_ALL: '', LC_CTYPE: 'C', LANG: 'en_US.UTF-8' })).toBe('C');
    expect(ctypeLocale({ LANG: 'de_DE.UTF-8' })).toBe('de_DE.UTF-8');
    expect(ctypeLocale({})).toBe('C');
    expect(terminalCharset({ LC_ALL: 'C', LANG: 'en_US.UTF-8' })).toBe('ascii');
    expect(terminalCharset({ LC_ALL: 'en_US.UTF-8', LANG: 'C' })).toBe('utf8');
    expect(terminalCharset({ LC_CTYPE: 'C.UTF-8', LANG: 'C' })).toBe('utf8');
  });

  it('is UTF-8 only when the locale names UTF-8 (any spelling); C, POSIX, unset and other codesets are ASCII', () => {
    for (const l of ['en_US.UTF-8', 'C.UTF-8', 'C.utf8', 'de_DE.utf-8@euro', 'UTF-8']) expect(isUtf8Locale(l), l).toBe(true);
    for (const l of ['C', 'POSIX', 'en_US', 'en_US.ISO-8859-1', 'ja_JP.eucJP', 'utf8ish', '']) expect(isUtf8Locale(l), l).toBe(false);
    expect(terminalCharset({ LANG: 'C' })).toBe('ascii');
    expect(terminalCharset({ LC_ALL: 'POSIX' })).toBe('ascii');
    expect(terminalCharset({})).toBe('ascii');
  });

  it('AGENTQ_ASCII overrides the locale both ways', () => {
    expect(terminalCharset({ LANG: 'en_US.UTF-8', AGENTQ_ASCII: '1' })).toBe('ascii');
    expect(terminalCharset({ LANG: 'en_US.UTF-8', AGENTQ_ASCII: 'true' })).toBe('ascii');
    expect(terminalCharset({ LANG: 'C', AGENTQ_ASCII: '0' })).toBe('utf8');
    expect(terminalCharset({ LANG: 'C', AGENTQ_ASCII: '' })).toBe('ascii');
  });
});

describe('the glyph sets', () => {
  it('ASCII sets are ASCII and keep the shape of the UTF-8 ones', () => {
    expect(isAscii(SPARK_BARS.ascii)).toBe(true);
    expect([...SPARK_BARS.ascii]).toHaveLength([...SPARK_BARS.utf8].length);
    expect(asciiChrome(SPARK_BARS.utf8)).toBe(SPARK_BARS.ascii);
  });

  it('maps every chrome glyph to ASCII, one column for one when the width must stay', () => {
    const chrome = '… · — – → ← ↑ ↓ › × ✓ ≥ ≤ ∞ ╭─╮│╰╯ ┌┐└┘├┤┬┴┼ ┏┓┗┛╔╗╚╝━═┃║ ▁▂▃▄▅▆▇█';
    const same = asciiChrome(chrome, { sameWidth: true });
    expect(isAscii(same)).toBe(true);
    expect(same).toHaveLength([...chrome].length);
    expect(isAscii(asciiChrome(chrome))).toBe(true);
    expect(asciiChrome('loading… a → b ≥ 0')).toBe('loading... a -> b >= 0');
    expect(asciiChrome('shown 3 · expired 0', { sameWidth: true })).toBe('shown 3 | expired 0');
    expect(asciiChrome('╭──╮', { sameWidth: true })).toBe('+--+');
  });

  it('leaves other text alone, and chromeFor only acts for ASCII', () => {
    expect(asciiChrome('café 東京 👩‍💻')).toBe('café 東京 👩‍💻');
    expect(chromeFor('utf8', 'a · b…')).toBe('a · b…');
    expect(chromeFor('ascii', 'a · b…')).toBe('a | b...');
  });

  it('sanitised untrusted text stays ASCII-safe: its escapes are ASCII', () => {
    expect(isAscii(sanitize('evil\x1b]52;c;x\x07\u202e\u200b\x9b done'))).toBe(true);
  });
});
