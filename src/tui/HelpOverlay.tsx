import { Box, Text } from 'ink';
import { helpSections, type Mode } from './keymap.js';
import { fit } from './text.js';

/**
 * The `?` overlay, generated from the keymap the input handler uses (so it
 * cannot list a key that does nothing). Shows the current mode's keys first;
 * cut to the frame height like everything else.
 */
export function HelpOverlay({ mode, height }: { mode: Mode; height: number }) {
  const sections = helpSections().filter((s) => s.lines.length > 0);
  sections.sort((a, b) => (a.mode === mode ? -1 : b.mode === mode ? 1 : 0));
  const lines: Array<{ text: string; isTitle: boolean }> = [{ text: 'Keys (? or Esc closes)', isTitle: true }];
  for (const s of sections) {
    lines.push({ text: s.title, isTitle: true });
    for (const l of s.lines) lines.push({ text: `  ${fit(l.keys, 22)} ${l.help}`, isTitle: false });
  }
  const shown = lines.slice(0, Math.max(1, height));
  return (
    <Box flexDirection="column">
      {shown.map((l, i) => (
        <Text key={`${i}`} wrap="truncate-end" bold={l.isTitle}>
          {l.text}
        </Text>
      ))}
    </Box>
  );
}
