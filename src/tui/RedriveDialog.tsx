import { Box, Text } from 'ink';
import type { TerminalSize } from './layout.js';
import type { PlannedRedrive } from './redrive-port.js';
import { STOPPING_NOTICE, typedCountRequired, type DialogFocus, type RedriveFlow } from './state.js';
import { confirmFits, confirmRows, confirmTitleLines, DIALOG_MIN_COLUMNS, dialogWidth, extraSplitLines, hiddenNoteLines, reasonLine } from './confirm-layout.js';
import { clean, count, fitRight, wrapText } from './text.js';

/**
 * The redrive flow on screen: the plan split, the confirmation (focused on
 * Cancel; typing the count for more than 20 jobs), the progress of the run,
 * and its result with the run id. Words, not colours, carry the meaning.
 */
export function RedriveDialog({ flow, width, hiddenSelected = 0, bodyRows = Infinity }: { flow: RedriveFlow; width: number; hiddenSelected?: number; bodyRows?: number }) {
  if (flow.step === 'confirm') {
    const needsTyping = typedCountRequired(flow.planned) !== null;
    const o = { hiddenSelected, columns: width, bodyRows, needsTyping };
    // The body is the terminal less the header (2), the status bar and the line kept free (layout.ts).
    if (!confirmFits(flow.planned, o)) return <TooSmall need={{ columns: DIALOG_MIN_COLUMNS, rows: confirmRows(flow.planned, o) + 4 }} has={{ columns: width, rows: bodyRows + 4 }} bodyRows={bodyRows} />;
  }
  const boxWidth = flow.step === 'confirm' ? dialogWidth(width) : Math.min(dialogWidth(width), Math.max(10, width));
  // Inside the border and the padding.
  const inner = Math.max(6, boxWidth - 4);
  return (
    // The confirmation is refused below its 40 columns (TooSmall above); the other steps must still be
    // read there, so they take at most the terminal's width: a wider box wrapped at the edge into garbage.
    <Box flexDirection="column" borderStyle="round" width={boxWidth} paddingX={1}>
      {flow.step === 'confirm' ? (
        <Confirm planned={flow.planned} focus={flow.focus} typed={flow.typed} reason={flow.reason} width={width} hiddenSelected={hiddenSelected} />
      ) : (
        <Body flow={flow} width={inner} />
      )}
      {flow.step === 'planning' && hiddenSelected > 0 ? (
        <Wrapped text={`${count(hiddenSelected)} of the selected jobs are hidden by the current filter: the redrive includes them (c clears the selection).`} width={inner} />
      ) : null}
    </Box>
  );
}

/**
 * In place of a plan that would not be shown whole: Redrive is refused until it is (state.ts).
 * Wrapped here and cut to the body's rows: taller than the body, the note itself overflowed the
 * screen and drew over the header on a 6-row terminal.
 */
function TooSmall({ need, has, bodyRows }: { need: TerminalSize; has: TerminalSize; bodyRows: number }) {
  const text = `The redrive plan needs a terminal of at least ${Math.max(need.columns, has.columns)}×${Math.max(need.rows, has.rows)} (this one is ${has.columns}×${has.rows}): enlarge it to confirm, or Esc to cancel. Nothing moves until the plan is on screen.`;
  const lines = wrapText(text, Math.max(10, has.columns)).slice(0, Math.max(1, Number.isFinite(bodyRows) ? bodyRows : Infinity));
  return (
    <>
      {lines.map((l, i) => (
        <Text key={`${i}`} wrap="truncate-end">
          {l}
        </Text>
      ))}
    </>
  );
}

/**
 * Text wrapped here, at word boundaries, one <Text> per line: Ink's own wrapping keeps the space it
 * breaks at, so a wrapped error line started with a space (" (pid 4242 on host …").
 */
function Wrapped({ text, width, dim = false }: { text: string; width: number; dim?: boolean }) {
  return (
    <>
      {wrapText(text, width).map((l, i) => (
        <Text key={`${i}`} wrap="truncate-end" dimColor={dim}>
          {l}
        </Text>
      ))}
    </>
  );
}

function Body({ flow, width }: { flow: RedriveFlow; width: number }) {
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
      return null;
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
          {r.resumeCommand !== null ? <Wrapped text={`resume with: ${clean(r.resumeCommand)}`} width={width} /> : null}
          {(r.notes ?? []).map((n, i) => (
            <Wrapped key={`n${i}`} text={clean(n)} width={width} />
          ))}
          <Wrapped text={`audit: agentq dlq runs show ${clean(r.runId)} · Enter back to the list`} width={width} dim />
        </>
      );
    }
    case 'failed': {
      const run = flow.run;
      return (
        <>
          <Text bold>{run === null ? 'Redrive not done' : `Redrive stopped by an error: run ${clean(run.runId)}`}</Text>
          <Wrapped text={clean(flow.message)} width={width} />
          {flow.hint ? <Wrapped text={clean(flow.hint)} width={width} /> : null}
          {run !== null ? <Wrapped text={`moved ${count(run.moved)} before the error (the run's ledger records what moved; the rest stays planned)`} width={width} /> : null}
          {run?.resumeCommand ? <Wrapped text={`resume with: ${clean(run.resumeCommand)}`} width={width} /> : null}
          <Wrapped text={`${run !== null ? `audit: agentq dlq runs show ${clean(run.runId)} · ` : ''}Enter back to the list`} width={width} dim />
        </>
      );
    }
  }
}

/**
 * One terminal line per <Text> (wrapped by confirm-layout, cut by Ink, never re-wrapped), so
 * confirmRows counts exactly what is drawn.
 */
function Confirm(p: { planned: PlannedRedrive; focus: DialogFocus; typed: string; reason: string; width: number; hiddenSelected: number }) {
  const { planned, focus, typed } = p;
  const s = planned.split;
  const need = typedCountRequired(planned);
  const line = (label: string, n: number) => (
    <Text key={label} wrap="truncate-end">
      {label.padEnd(26)}
      {fitRight(count(n), 9)}
    </Text>
  );
  const reason = reasonLine(p.reason, { isFocused: focus === 'reason', columns: p.width });
  return (
    <>
      {confirmTitleLines(planned, p.width).map((t, i) => (
        <Text key={`t${i}`} bold wrap="truncate-end">
          {t}
        </Text>
      ))}
      {line('redrive', s.redrive)}
      {line('skip: expired', s.skipExpired)}
      {line('skip: partial effects', s.skipPartial)}
      {line('skip: quarantined', s.quarantined)}
      {extraSplitLines(planned).map(([label, n]) => line(label, n))}
      {need !== null ? (
        <Text wrap="truncate-end">
          Type {need} to confirm: <Text inverse>{typed === '' ? ' ' : typed}</Text>
          {typed === String(need) ? '  ✓' : ''}
        </Text>
      ) : null}
      <Text wrap="truncate-end">
        {reason.label}
        {focus === 'reason' ? <Text inverse>{`${reason.value} `}</Text> : <Text dimColor>{reason.value}</Text>}
      </Text>
      <Text wrap="truncate-end">
        {focus === 'cancel' ? <Text inverse>{'> Cancel <'}</Text> : '  Cancel  '}
        {'   '}
        {focus === 'redrive' ? <Text inverse>{`> Redrive ${count(s.redrive)} <`}</Text> : `  Redrive ${count(s.redrive)}  `}
      </Text>
      {hiddenNoteLines(p.hiddenSelected, p.width).map((t, i) => (
        <Text key={`h${i}`} wrap="truncate-end">
          {t}
        </Text>
      ))}
    </>
  );
}
