import { Box, Text } from 'ink';
import { HELP_KEYS_HINT, helpLines, type Mode } from './keymap.js';

/**
 * The `?` overlay, generated from the keymap the input handler uses (so it
 * cannot list a key that does nothing). Shows the current mode's keys first;
 * `height` lines: a fixed title, then the lines from `scroll` (j/k, PgUp/PgDn).
 */
export function HelpOverlay({ mode, height, scroll }: { mode: Mode; height: number; scroll: number }) {
  const lines = helpLines(mode);
  const room = Math.max(1, height - 1);
  const top = Math.max(0, Math.min(scroll, lines.length - room));
  const shown = lines.slice(top, top + room);
  const where = lines.length > room ? ` — lines ${top + 1}-${top + shown.length} of ${lines.length}` : '';
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end" bold>
        {`Keys${where} (${HELP_KEYS_HINT})`}
      </Text>
      {shown.map((l, i) => (
        <Text key={`${top + i}`} wrap="truncate-end" bold={l.isTitle}>
          {l.text}
        </Text>
      ))}
    </Box>
  );
}
