/**
 * THE sanitiser: every untrusted string (payloads, error messages, job and
 * tenant names, workflow names, anything that came from a store or a user
 * other than the operator) goes through here before it reaches a terminal,
 * a pipe, a TUI frame or a completion candidate.
 *
 * Why a strict allow-list of printable characters instead of "strip ANSI":
 * a job name like `\x1b]52;c;...\x07` writes to the operator's clipboard,
 * `\x1b]8;;http://evil\x07` hides a link, `\x1b]0;...\x07` retitles the
 * window, a bare `\r` or backspaces overwrite what was printed before, and
 * a bidi override (U+202E) makes `job_abc` read as something else. Dropping
 * such bytes silently would also hide the attack from the person triaging
 * it, so each one becomes a visible escape (`\x1b`, `\u202e`) instead.
 *
 * Pure: string in, string out. No I/O.
 */

export interface SanitizeOptions {
  /**
   * Keep line breaks (`\n`, and `\r\n` as `\n`) for multi-line text such as a
   * payload preview shown on its own. Off by default: in a table cell or a
   * tab-separated line a newline would forge a new row.
   */
  allowNewlines?: boolean;
  /** Keep tabs (multi-line previews). Off by default: a tab forges a column in plain output. */
  allowTabs?: boolean;
}

/**
 * Format characters (Unicode category Cf) are invisible: bidi controls (U+202E) reorder what a
 * reader sees, and zero-width ones (U+200B, U+2060, U+FEFF, the tag characters U+E0000-E007F)
 * make `PROVIDER_429` and `PROVIDER_429\u200b` look the same. All of them are escaped except the
 * zero-width joiner and non-joiner (U+200D, U+200C), which emoji sequences and Persian and Indic
 * scripts need to be written at all.
 */
const FORMAT_RE = /^(?![\u200c\u200d])\p{Cf}$/u;

/** Characters that can never be shown as themselves. */
export function isUnsafeCodePoint(cp: number): boolean {
  return (
    cp <= 0x1f || // C0 controls: ESC, BEL, BS, CR, LF, TAB, NUL ...
    cp === 0x7f || // DEL
    (cp >= 0x80 && cp <= 0x9f) || // C1 controls: CSI (0x9b), OSC (0x9d), ST (0x9c) act like ESC sequences on many terminals
    cp === 0x2028 || // line / paragraph separators break lines in some terminals and editors
    cp === 0x2029 ||
    (cp >= 0xd800 && cp <= 0xdfff) || // a lone surrogate (a paired one never reaches here as a single code point)
    FORMAT_RE.test(String.fromCodePoint(cp)) // bidi controls, zero-width and other invisible format characters
  );
}

// One pass over the string; the regex finds only what must change, so clean text costs one test.
// With the u flag a surrogate pair is one code point, so [\ud800-\udfff] matches only a lone one.
// eslint-disable-next-line no-control-regex, no-misleading-character-class
const UNSAFE_RE = /\r\n|[\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]|(?![\u200c\u200d])\p{Cf}/gu;

function hex2(cp: number): string {
  return cp.toString(16).padStart(2, '0');
}

/** The visible form of one unsafe character: `\x1b`, `\u202e`, `\u{e0041}`, `\t`, `\n`, `\r`. */
export function visibleEscape(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (ch === '\t') return '\\t';
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (cp <= 0xff) return `\\x${hex2(cp)}`;
  if (cp > 0xffff) return `\\u{${cp.toString(16)}}`;
  return `\\u${cp.toString(16).padStart(4, '0')}`;
}

/**
 * Makes an untrusted string safe to print: every control character, escape
 * sequence introducer, DEL, C1 control, line separator, lone surrogate, bidi
 * control and invisible format character (zero-width space, word joiner, BOM,
 * tag characters) becomes a visible escape. The rest (printable ASCII,
 * accents, CJK, emoji) is kept.
 */
export function sanitize(text: unknown, opts: SanitizeOptions = {}): string {
  const s = typeof text === 'string' ? text : text === null || text === undefined ? '' : String(text);
  return s.replace(UNSAFE_RE, (m) => {
    if (m === '\r\n') return opts.allowNewlines ? '\n' : '\\r\\n';
    if (m === '\n' && opts.allowNewlines) return '\n';
    if (m === '\t' && opts.allowTabs) return '\t';
    return visibleEscape(m);
  });
}

/** True when `sanitize` would change nothing (used by tests and by fast paths). */
export function isSafe(text: string): boolean {
  UNSAFE_RE.lastIndex = 0;
  const found = UNSAFE_RE.test(text);
  UNSAFE_RE.lastIndex = 0;
  return !found;
}

// JSON.stringify already escapes C0 controls (and lone surrogates); these it leaves raw.
// eslint-disable-next-line no-control-regex, no-misleading-character-class
const JSON_UNSAFE_RE = /[\u007f-\u009f\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu;

/**
 * JSON for machines that may still end up on a terminal (`jq .` with raw
 * strings, `cat out.json`): valid JSON whose text contains no control byte
 * at all, because DEL, C1 and bidi characters are written as `\uXXXX`
 * escapes. Parsing it gives back the original strings unchanged.
 */
export function jsonSafeStringify(value: unknown, indent?: number): string {
  const json = JSON.stringify(value, null, indent) ?? 'null';
  // A tag character (U+E0041) is two UTF-16 units: each is written as its own `\uXXXX`, as JSON spells it.
  return json.replace(JSON_UNSAFE_RE, (ch) => [...Array(ch.length).keys()].map((i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}
