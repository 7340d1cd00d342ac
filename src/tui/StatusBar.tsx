import { Text } from 'ink';
import type { TriageState } from './state.js';
import { clean } from './text.js';

const HINTS: Record<TriageState['mode'], string> = {
  list: 'j/k move · Enter open · / text · e expired · p partial · E error · T tenant · g groups · Space select · a all · R redrive · ? help · q quit',
  groups: 'j/k move · Enter show group · e/p filters · Esc back · ? help · q quit',
  detail: 'j/k scroll · PgUp/PgDn · Esc back · q quit',
  picker: 'j/k move · Enter choose · Esc back',
  filter: 'type to filter · Enter keep · Esc restore the previous filter',
  confirm: 'Tab switch button · digits type the count · Enter press · Esc/Ctrl-C cancel',
  progress: 'Esc / Ctrl-C stop after the current batch (resumable)',
  result: 'Enter back to the list (reloaded) · q quit',
  help: '? / Esc / q close the help',
};

export function StatusBar({ state }: { state: TriageState }) {
  if (state.mode === 'filter') {
    return (
      <Text wrap="truncate-end">
        /{clean(state.textDraft)}
        <Text inverse> </Text>
        {'   '}
        <Text dimColor>{HINTS.filter}</Text>
      </Text>
    );
  }
  if (state.isHelpOpen) return <Text wrap="truncate-end" dimColor>{HINTS.help}</Text>;
  if (state.notice !== null) return <Text wrap="truncate-end">{clean(state.notice)}</Text>;
  return (
    <Text wrap="truncate-end" dimColor>
      {HINTS[state.mode]}
    </Text>
  );
}
