/**
 * Can this terminal show UTF-8? agentq draws some of its own chrome with non-ASCII glyphs: the
 * `·` between hints, `…` where a cell is cut, arrows, the sparkline blocks of `stats --watch`,
 * the TUI's `›` cursor, `✓` and the redrive dialog's rounded border. In a `LANG=C` terminal (a
 * minimal container, a jump host, a serial console) each of them came out as two or three bytes
 * of mojibake. This module decides, from the environment alone, and maps those glyphs to ASCII.
 *
 * Pure: environment in, answer out; string in, string out. No I/O.
 */

export type Charset = 'utf8' | 'ascii';

/**
 * The locale that governs character handling, as POSIX resolves it: the first set and non-empty
 * of LC_ALL, LC_CTYPE, LANG. Unset everywhere is the "C" locale.
 */
export function ctypeLocale(env: Readonly<Record<string, string | undefined>>): string {
  for (const name of ['LC_ALL', 'LC_CTYPE', 'LANG'] as const) {
    const v = env[name];
    if (v !== undefined && v !== '') return v;
  }
  return 'C';
}

/** `en_US.UTF-8`, `C.utf8`, `de_DE.utf-8@euro`: the codeset part names UTF-8. */
export function isUtf8Locale(locale: string): boolean {
  return /\.utf-?8(@|$)/i.test(locale) || /^utf-?8$/i.test(locale);
}

/**
 * `utf8` or `ascii` for agentq's own chrome. `AGENTQ_ASCII=1` forces ASCII (a terminal that lies
 * about its locale, a log viewer that mangles UTF-8); `AGENTQ_ASCII=0` forces UTF-8 (a terminal
 * that shows UTF-8 on a host whose locale is C). Otherwise the locale decides: UTF-8 only when it
 * names UTF-8; `C`, `POSIX`, unset and any other codeset (`en_US.ISO-8859-1`) get ASCII, as
 * ncurses, tmux and systemctl do.
 */
export function terminalCharset(env: Readonly<Record<string, string | undefined>>): Charset {
  const forced = env.AGENTQ_ASCII;
  if (forced === '1' || forced?.toLowerCase() === 'true') return 'ascii';
  if (forced === '0' || forced?.toLowerCase() === 'false') return 'utf8';
  return isUtf8Locale(ctypeLocale(env)) ? 'utf8' : 'ascii';
}

/** The sparkline levels, lowest first (eight of them in both sets: the scale does not change). */
export const SPARK_BARS: Readonly<Record<Charset, string>> = {
  utf8: '▁▂▃▄▅▆▇█',
  ascii: '_.-:=+*#',
};

/**
 * Every glyph agentq draws itself, and its ASCII stand-in of the same width: one column for one.
 * The same width matters in the TUI, where a frame is laid out before it is written and a wider
 * line would wrap and shift every row below it (Ink erases a frame by counting lines).
 */
const SAME_WIDTH: Readonly<Record<string, string>> = {
  '…': '~',
  '·': '|',
  '—': '-',
  '–': '-',
  '→': '>',
  '←': '<',
  '↑': '^',
  '↓': 'v',
  '›': '>',
  '×': 'x',
  '✓': '*',
  '≥': '>',
  '≤': '<',
  '∞': '~',
  // Ink's border styles: round (the redrive dialog), single, bold, double.
  '╭': '+', '╮': '+', '╰': '+', '╯': '+',
  '┌': '+', '┐': '+', '└': '+', '┘': '+', '├': '+', '┤': '+', '┬': '+', '┴': '+', '┼': '+',
  '┏': '+', '┓': '+', '┗': '+', '┛': '+', '╔': '+', '╗': '+', '╚': '+', '╝': '+',
  '─': '-', '━': '-', '═': '-',
  '│': '|', '┃': '|', '║': '|',
  // sparklines (stats --watch): each level to the ASCII level of the same rank
  ...Object.fromEntries([...SPARK_BARS.utf8].map((bar, i) => [bar, SPARK_BARS.ascii[i]!])),
};

/** Where the width is free (a line of prose on stderr), the clearer form. */
const WIDER: Readonly<Record<string, string>> = { '…': '...', '→': '->', '←': '<-', '≥': '>=', '≤': '<=', '∞': 'unlimited', '—': '-', '·': '|' };

const GLYPH_RE = new RegExp(`[${Object.keys(SAME_WIDTH).join('')}]`, 'gu');

/**
 * Text with agentq's glyphs replaced by ASCII. `sameWidth` keeps every line's width (a TUI frame,
 * a table); otherwise `…` becomes `...` and `→` `->`. Other characters are left alone: user data
 * is shown as it is (sanitising already turned its controls into ASCII escapes such as `\x1b`).
 */
export function asciiChrome(text: string, opts: { sameWidth?: boolean } = {}): string {
  return text.replace(GLYPH_RE, (g) => (opts.sameWidth ? undefined : WIDER[g]) ?? SAME_WIDTH[g]!);
}

/** `asciiChrome` when the charset is ASCII, else the text unchanged. */
export function chromeFor(charset: Charset, text: string, opts: { sameWidth?: boolean } = {}): string {
  return charset === 'ascii' ? asciiChrome(text, opts) : text;
}
