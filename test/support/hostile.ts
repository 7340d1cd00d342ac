/**
 * A corpus of hostile strings: what an attacker (or a buggy agent) can put in
 * a job name, tenant id, error message or payload to take over the terminal
 * of the person reading it. Reused by the CLI, TUI and completion tests: feed
 * these into data, render it, and check with `findUnsafe` that none of the
 * bytes reached the output.
 */
export interface HostileString {
  name: string;
  value: string;
}

const ESC = '\x1b';
const BEL = '\x07';

export const HOSTILE_STRINGS: readonly HostileString[] = [
  { name: 'CSI colour', value: `${ESC}[31mred${ESC}[0m` },
  { name: 'CSI clear screen', value: `${ESC}[2J${ESC}[H` },
  { name: 'CSI cursor up and erase line (rewrites earlier output)', value: `ok${ESC}[1A${ESC}[2Kforged` },
  { name: 'OSC 0 window title (BEL terminated)', value: `${ESC}]0;pwned${BEL}` },
  { name: 'OSC 2 window title (ST terminated)', value: `${ESC}]2;pwned${ESC}\\` },
  { name: 'OSC 8 hyperlink', value: `${ESC}]8;;https://evil.example/${ESC}\\click me${ESC}]8;;${ESC}\\` },
  { name: 'OSC 52 clipboard write', value: `${ESC}]52;c;cm0gLXJmIH4K${BEL}` },
  { name: 'DCS sequence', value: `${ESC}P+q544e${ESC}\\` },
  { name: 'C1 CSI (0x9b)', value: '\u009b31mred' },
  { name: 'C1 OSC (0x9d) with ST (0x9c)', value: '\u009d0;title\u009c' },
  { name: 'C1 NEL and others', value: 'a\u0085b\u0090c\u009fd' },
  { name: 'BEL', value: `ding${BEL}${BEL}` },
  { name: 'backspace overwrite', value: 'rm -rf /\b\b\b\b\b\b\bls -l   ' },
  { name: 'bare CR overwrite', value: 'evil command\rgood command' },
  { name: 'DEL', value: 'abc\x7fdef' },
  { name: 'NUL', value: 'a\x00b' },
  { name: 'newline forging a row', value: 'job_fake\tqueued\ninjected\trow' },
  { name: 'tab forging a column', value: 'a\tb\tc' },
  { name: 'bidi RLO override', value: 'invoice_\u202egnp.exe' },
  { name: 'bidi isolates', value: '\u2066admin\u2069 \u2067x\u2069 \u2068y\u2069' },
  { name: 'bidi LRE/RLE/PDF/LRO', value: '\u202aa\u202bb\u202cc\u202dd' },
  { name: 'LRM, RLM and Arabic letter mark', value: 'a\u200eb\u200fc\u061cd' },
  { name: 'line and paragraph separators', value: 'a\u2028b\u2029c' },
  { name: 'lone surrogate', value: 'a\ud800b' },
  { name: 'vertical tab and form feed', value: 'a\x0bb\x0cc' },
  { name: 'zero-width space, word joiner and BOM (look-alike codes)', value: 'PROVIDER_429\u200b \u2060x\ufeff' },
  { name: 'tag characters (invisible text)', value: 'ok\u{e0001}\u{e0069}\u{e0067}\u{e006e}\u{e007f}' },
  { name: 'soft hyphen and other format characters', value: 'a\u00adb\u180ec\u2061d\ufff9e' },
  { name: 'everything at once', value: `${ESC}]0;t${BEL}\u009b2J\u202e\r\b\x7f${ESC}[5m` },
];

/** A harmless value that must survive unchanged (accents, CJK, emoji, backslash). */
export const BENIGN_STRINGS: readonly string[] = ['café ñ', '東京', '🚀 done', 'C:\\path\\to', 'plain ascii 123', '👩\u200d💻 family 👨\u200d👩\u200d👧', 'می\u200cخواهم بروم'];

/**
 * Code points that must never appear in rendered output that came from data.
 * `\n` is allowed (it separates lines of our own output); `\t` only where the
 * caller says so (plain output uses it as the column separator).
 */
export function findUnsafe(output: string | Buffer, opts: { allowTabs?: boolean } = {}): string[] {
  const text = typeof output === 'string' ? output : output.toString('utf8');
  const found: string[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\n') continue;
    if (ch === '\t' && opts.allowTabs) continue;
    const bad =
      cp <= 0x1f ||
      cp === 0x7f ||
      (cp >= 0x80 && cp <= 0x9f) ||
      cp === 0x2028 ||
      cp === 0x2029 ||
      (cp >= 0xd800 && cp <= 0xdfff) ||
      // format characters: bidi controls, zero-width ones, tag characters (the joiners emoji need excepted)
      (cp !== 0x200c && cp !== 0x200d && /^\p{Cf}$/u.test(ch));
    if (bad) found.push(`U+${cp.toString(16).padStart(4, '0')}`);
  }
  return found;
}

/** Raw ESC bytes in a buffer (the simplest check for "no escape bytes in non-terminal output"). */
export function hasEscapeByte(output: string | Buffer): boolean {
  const buf = typeof output === 'string' ? Buffer.from(output, 'utf8') : output;
  return buf.includes(0x1b) || buf.includes(Buffer.from('\u009b', 'utf8')) || buf.includes(Buffer.from('\u009d', 'utf8'));
}
