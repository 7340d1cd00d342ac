/**
 * Terminal cells a sanitised string takes, counted per grapheme (what a reader sees as one
 * character): wide (East Asian, emoji) ones two, combining marks and joiners none. Apart from
 * table.ts so the TUI can wrap text by it without loading cli-table3.
 *
 * It must agree with what the terminal draws and with string-width, by which cli-table3 cuts a
 * cell wider than its column and Ink lays out a frame: an emoji drawn two cells wide but counted
 * one (`⚠️ retry ⏰`, `✅ done`) got its message cut to `⚠️ retry…` on a terminal with room to spare.
 */

// Emoji drawn as emoji by default (✅ ⏰ ⭐ 🆗 …): two cells. A lone regional indicator is not one.
const EMOJI_PRESENTATION_RE = /\p{Emoji_Presentation}/u;
// Combining marks (accents, Thai and Hebrew vowel signs, the keycap U+20E3, variation selectors).
const MARK_RE = /\p{M}/u;
// A grapheme of several code points drawn as one emoji: a VS16 (`⚠️`), a skin tone (`👍🏽`), a
// ZWJ sequence (`👩‍💻`), a keycap (`#️⃣`), a flag (two regional indicators).
const EMOJI_SEQUENCE_RE = /\ufe0f|\p{Extended_Pictographic}|[\u{1f1e6}-\u{1f1ff}]/u;

/** Cells one code point takes on its own. */
function codePointWidth(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp < 0x300) return 1; // ASCII and Latin-1: the common case, no regex
  // joiners (the sanitiser keeps ZWJ and ZWNJ; other format characters reach here escaped), combining marks
  if (cp === 0x200d || cp === 0x200c || MARK_RE.test(ch)) return 0;
  if (isWide(cp)) return 2;
  return cp >= 0x2300 && !isRegionalIndicator(cp) && EMOJI_PRESENTATION_RE.test(ch) ? 2 : 1;
}

/** Cells one grapheme takes. */
export function graphemeWidth(g: string): number {
  const first = g.codePointAt(0);
  if (first === undefined) return 0;
  if (g.length === (first > 0xffff ? 2 : 1)) return codePointWidth(g);
  // Several code points drawn as one emoji: two cells, whatever its parts would add up to.
  if (EMOJI_SEQUENCE_RE.test(g)) return 2;
  let w = 0;
  for (const ch of g) w += codePointWidth(ch);
  return w;
}

/**
 * The graphemes of a string, in order: a code point with the combining marks, variation selectors
 * and skin tones after it, what a zero-width joiner joins to it, and a flag's two regional
 * indicators. A cut between two of them never splits what reads as one character. (Close to
 * Unicode's extended grapheme clusters for what is drawn; a hundred times cheaper than
 * Intl.Segmenter, which made a page of long messages take a visible moment to print.)
 */
export function* graphemes(s: string): Generator<string> {
  let i = 0;
  while (i < s.length) {
    const start = i;
    const cp = s.codePointAt(i)!;
    i += cp > 0xffff ? 2 : 1;
    if (isRegionalIndicator(cp) && isRegionalIndicator(s.codePointAt(i) ?? 0)) i += 2;
    for (;;) {
      const next = s.codePointAt(i);
      if (next === undefined) break;
      if (next === 0x200d) {
        // a zero-width joiner takes the code point after it into the same grapheme (`👩‍💻`)
        i += 1;
        const joined = s.codePointAt(i);
        if (joined !== undefined) i += joined > 0xffff ? 2 : 1;
        continue;
      }
      if ((next >= 0x1f3fb && next <= 0x1f3ff) || (next >= 0x300 && MARK_RE.test(String.fromCodePoint(next)))) {
        i += next > 0xffff ? 2 : 1;
        continue;
      }
      break;
    }
    yield s.slice(start, i);
  }
}

const isRegionalIndicator = (cp: number) => cp >= 0x1f1e6 && cp <= 0x1f1ff;

// Printable ASCII and Latin-1 only: one cell per character, nothing to group.
const NARROW_RE = /^[\x20-\x7e\xa0-\xff]*$/;

/** Display width of a sanitised string: wide (East Asian, emoji) characters take two cells. */
export function displayWidth(s: string): number {
  if (NARROW_RE.test(s)) return s.length;
  let w = 0;
  for (const g of graphemes(s)) w += graphemeWidth(g);
  return w;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f3fa) || // 0x1f3fb-0x1f3ff: skin tones, drawn as part of the emoji before them
    (cp >= 0x1f400 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}
