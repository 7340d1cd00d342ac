import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSafe, jsonSafeStringify, sanitize } from '../../src/cli/output/sanitize.js';
import { BENIGN_STRINGS, HOSTILE_STRINGS, findUnsafe } from '../support/hostile.js';

describe('sanitize: the one sanitiser', () => {
  it.each(HOSTILE_STRINGS.map((h) => [h.name, h.value]))('neutralises %s', (_name, value) => {
    const out = sanitize(value);
    expect(findUnsafe(out)).toEqual([]);
    expect(isSafe(out)).toBe(true);
    expect(isSafe(value)).toBe(false);
  });

  it('turns each dangerous character into a visible escape instead of dropping it', () => {
    expect(sanitize('\x1b]0;pwned\x07')).toBe('\\x1b]0;pwned\\x07');
    expect(sanitize('\x1b[31mred')).toBe('\\x1b[31mred');
    expect(sanitize('invoice_\u202egnp.exe')).toBe('invoice_\\u202egnp.exe');
    expect(sanitize('\u009b2J')).toBe('\\x9b2J');
    expect(sanitize('a\x7fb')).toBe('a\\x7fb');
    expect(sanitize('evil\rgood')).toBe('evil\\rgood');
    expect(sanitize('x\b')).toBe('x\\x08');
    expect(sanitize('a\tb\nc')).toBe('a\\tb\\nc');
    expect(sanitize('a\ud800b')).toBe('a\\ud800b');
    expect(sanitize('\u2066x\u2069\u200e\u061c')).toBe('\\u2066x\\u2069\\u200e\\u061c');
  });

  it('regression: zero-width and other invisible format characters are escaped, so look-alike codes tell apart', () => {
    expect(sanitize('PROVIDER_429\u200b')).toBe('PROVIDER_429\\u200b');
    expect(sanitize('a\u2060b\ufeffc\u00add')).toBe('a\\u2060b\\ufeffc\\xadd');
    expect(sanitize('x\u{e0041}\u{e007f}')).toBe('x\\u{e0041}\\u{e007f}');
    // the joiners emoji sequences and Persian need are kept
    expect(sanitize('👨\u200d👩\u200d👧 می\u200cخواهم')).toBe('👨\u200d👩\u200d👧 می\u200cخواهم');
  });

  it.each(BENIGN_STRINGS)('keeps harmless text unchanged: %s', (s) => {
    expect(sanitize(s)).toBe(s);
  });

  it('keeps line breaks only when asked, and never a bare CR', () => {
    expect(sanitize('a\r\nb\nc\rd', { allowNewlines: true })).toBe('a\nb\nc\\rd');
    expect(sanitize('a\r\nb')).toBe('a\\r\\nb');
    expect(sanitize('a\tb', { allowTabs: true })).toBe('a\tb');
  });

  it('accepts non-strings (numbers, null) without throwing', () => {
    expect(sanitize(42)).toBe('42');
    expect(sanitize(null)).toBe('');
    expect(sanitize(undefined)).toBe('');
  });

  it('never lets an unsafe code point through, whatever the input (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(findUnsafe(sanitize(s))).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('is stable: sanitising twice changes nothing more (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const once = sanitize(s);
        expect(sanitize(once)).toBe(once);
      }),
    );
  });
});

describe('jsonSafeStringify', () => {
  it.each(HOSTILE_STRINGS.map((h) => [h.name, h.value]))('escapes %s and round-trips', (_name, value) => {
    const json = jsonSafeStringify({ v: value, nested: [value] }, 2);
    expect(findUnsafe(json)).toEqual([]);
    expect(JSON.parse(json)).toEqual({ v: value, nested: [value] });
  });

  it('writes C1 and bidi characters as \\uXXXX', () => {
    expect(jsonSafeStringify('\u009b\u202e\x7f')).toBe('"\\u009b\\u202e\\u007f"');
  });

  it('writes zero-width and tag characters as \\uXXXX (a tag character as its surrogate pair)', () => {
    expect(jsonSafeStringify('a\u200bb\u{e0041}')).toBe('"a\\u200bb\\udb40\\udc41"');
    expect(JSON.parse(jsonSafeStringify('a\u200bb\u{e0041}'))).toBe('a\u200bb\u{e0041}');
  });

  it('round-trips any string with no unsafe code point in the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const json = jsonSafeStringify({ s });
        expect(findUnsafe(json)).toEqual([]);
        const back = JSON.parse(json).s as string;
        // JSON.stringify writes a lone surrogate as an escape, and parsing restores it exactly.
        expect(back).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});
