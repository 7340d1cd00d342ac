import { Box, Text } from 'ink';
import type { PlannedRedrive } from './redrive-port.js';
import { STOPPING_NOTICE, typedCountRequired, type DialogFocus, type RedriveFlow } from './state.js';
import { clean, count, fitRight } from './text.js';

/**
 * The redrive flow on screen: the plan split, the confirmation (focused on
 * Cancel; typing the count for more than 20 jobs), the progress of the run,
 * and its result with the run id. Words, not colours, carry the meaning.
 */
export function RedriveDialog({ flow, width, hiddenSelected = 0 }: { flow: RedriveFlow; width: number; hiddenSelected?: number }) {
  const w = Math.max(40, Math.min(90, width - 2));
  return (
    <Box flexDirection="column" borderStyle="round" width={w} paddingX={1}>
      <Body flow={flow} />
      {(flow.step === 'planning' || flow.step === 'confirm') && hiddenSelected > 0 ? (
        <Text wrap="wrap">
          {count(hiddenSelected)} of the selected jobs are hidden by the current filter: the redrive includes them (c clears the selection).
        </Text>
      ) : null}
    </Box>
  );
}

function Body({ flow }: { flow: RedriveFlow }) {
  switch (flow.step) {
    case 'planning':
      return (
        <>
          <Text bold>Redrive {count(flow.jobIds.length)} selected jobs</Text>
          <Text>Building the plan (each job judged: expired, partial, quarantined)…</Text>
          <Text dimColor>Esc cancels</Text>
        </>
      );
    case 'confirm':
      return <Confirm planned={flow.planned} focus={flow.focus} typed={flow.typed} reason={flow.reason} />;
    case 'applying': {
      const p = flow.progress;
      const pct = p.total === 0 ? 100 : Math.floor((p.done * 100) / p.total);
      const bar = '#'.repeat(Math.floor(pct / 5)).padEnd(20, '.');
      return (
        <>
          <Text bold>Redriving {clean(flow.planned.split.queue ?? '')}</Text>
          <Text>
            [{bar}] {pct}% {count(p.done)}/{count(p.total)}
          </Text>
          <Text>
            moved {count(p.moved)} · skipped {count(p.skipped)} · failed {count(p.failed)}
          </Text>
          <Text dimColor>{flow.isStopRequested ? STOPPING_NOTICE : 'Esc / Ctrl-C / q stops after the current batch'}</Text>
        </>
      );
    }
    case 'done': {
      const r = flow.result;
      return (
        <>
          <Text bold>Redrive {r.resumeCommand === null ? 'finished' : 'stopped'}: run {clean(r.runId)}</Text>
          <Text>
            moved {count(r.moved)} · skipped {count(r.skipped)} · failed {count(r.failed)} · status {clean(r.status)}
          </Text>
          {r.resumeCommand !== null ? <Text>resume with: {clean(r.resumeCommand)}</Text> : null}
          <Text dimColor>audit: agentq dlq runs show {clean(r.runId)} · Enter back to the list</Text>
        </>
      );
    }
    case 'failed': {
      const run = flow.run;
      return (
        <>
          <Text bold>{run === null ? 'Redrive not done' : `Redrive stopped by an error: run ${clean(run.runId)}`}</Text>
          <Text wrap="wrap">{clean(flow.message)}</Text>
          {run !== null ? <Text>moved {count(run.moved)} before the error (the run's ledger records what moved; the rest stays planned)</Text> : null}
          {run?.resumeCommand ? <Text wrap="wrap">resume with: {clean(run.resumeCommand)}</Text> : null}
          <Text dimColor>{run !== null ? `audit: agentq dlq runs show ${clean(run.runId)} · ` : ''}Enter back to the list</Text>
        </>
      );
    }
  }
}

function Confirm({ planned, focus, typed, reason }: { planned: PlannedRedrive; focus: DialogFocus; typed: string; reason: string }) {
  const s = planned.split;
  const need = typedCountRequired(planned);
  const line = (label: string, n: number) => (
    <Text>
      {label.padEnd(26)}
      {fitRight(count(n), 9)}
    </Text>
  );
  return (
    <>
      <Text bold>
        Redrive plan for queue {clean(s.queue ?? '(none)')}: {count(s.total)} selected
      </Text>
      {line('redrive', s.redrive)}
      {line('skip: expired', s.skipExpired)}
      {line('skip: partial effects', s.skipPartial)}
      {line('skip: quarantined', s.quarantined)}
      {s.notInDlq > 0 ? line('skip: no longer in the DLQ', s.notInDlq) : null}
      {s.skipMalformed > 0 ? line('skip: malformed', s.skipMalformed) : null}
      {s.skipOther > 0 ? line('skip: other', s.skipOther) : null}
      {need !== null ? (
        <Text>
          Type {need} to confirm: <Text inverse>{typed === '' ? ' ' : typed}</Text>
          {typed === String(need) ? '  ✓' : ''}
        </Text>
      ) : null}
      <Text wrap="wrap">
        Reason (optional, recorded in the audit; Tab to it):{' '}
        {focus === 'reason' ? <Text inverse>{`${clean(reason)} `}</Text> : <Text dimColor>{reason === '' ? '(none)' : clean(reason)}</Text>}
      </Text>
      <Text>
        {focus === 'cancel' ? <Text inverse>{'> Cancel <'}</Text> : '  Cancel  '}
        {'   '}
        {focus === 'redrive' ? <Text inverse>{`> Redrive ${count(s.redrive)} <`}</Text> : `  Redrive ${count(s.redrive)}  `}
      </Text>
    </>
  );
}
