/**
 * Terminal cells a sanitised string takes: wide (East Asian, emoji) characters two, joiners and
 * combining marks none. Apart from table.ts so the TUI can wrap text by it without loading
 * cli-table3.
 */
/** Cells one character takes. */
export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0)!;
  // joiners (the sanitiser keeps ZWJ and ZWNJ; other format characters reach here escaped), variation selectors, combining marks
  if (cp === 0x200d || cp === 0x200c || (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x300 && cp <= 0x36f)) return 0;
  return isWide(cp) ? 2 : 1;
}

/** Display width of a sanitised string: wide (East Asian, emoji) characters take two cells. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch);
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
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}
