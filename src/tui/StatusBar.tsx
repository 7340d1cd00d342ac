import { Text } from 'ink';
import { HELP_KEYS_HINT } from './keymap.js';
import type { TriageState } from './state.js';
import { clean } from './text.js';

/**
 * One line per mode, cut at the right edge: `? help` and `q quit` come first so they are on
 * screen at any width (the rest is in the help, which scrolls).
 */
const HINTS: Record<TriageState['mode'], string> = {
  list: '? help · q quit · Enter open · / filter · Space select · a all · R redrive · r reload · g groups · e/p expired/partial · E/T/Q error/tenant/queue · x clear',
  groups: '? help · q quit · Enter show group · Esc back · r reload · e/p filters',
  detail: '? help · q quit · Esc back · j/k PgUp/PgDn scroll',
  picker: '? help · q quit · Enter choose · Esc back',
  filter: 'Enter keep · Esc restore the previous filter · Ctrl-C quit',
  confirm: 'Esc/Ctrl-C cancel · Tab Cancel → Redrive → reason · digits type the count · Enter press',
  progress: 'Esc / Ctrl-C / q stop after the current batch (resumable); Ctrl-C / q again quits at once',
  result: 'Enter back to the list (reloaded) · ? help · q quit',
  help: HELP_KEYS_HINT,
};

/**
 * The result screen's hint: the list is reloaded on the way back only when the redrive may have
 * moved jobs (state.ts `result`); after a refused one (a lock, a failed plan) it is not, and saying
 * "(reloaded)" there made the operator take the unchanged list for a fresh read of the store.
 */
export function resultHint(state: TriageState): string {
  const r = state.redrive;
  const isKept = r?.step === 'failed' && (!r.hasApplied || r.run === null);
  return isKept ? 'Enter back to the list (nothing moved: the list and the selection are kept) · ? help · q quit' : HINTS.result;
}

export function StatusBar({ state }: { state: TriageState }) {
  // Said in place of the text being typed (the header shows the filter), so the width cannot cut it off.
  if (state.mode === 'filter' && state.notice !== null) {
    return (
      <Text wrap="truncate-end">
        {clean(state.notice)} · <Text dimColor>{HINTS.filter}</Text>
      </Text>
    );
  }
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
      {state.mode === 'result' ? resultHint(state) : HINTS[state.mode]}
    </Text>
  );
}
