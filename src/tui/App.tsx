import { Box, Text, useApp } from 'ink';
import { useCallback, useEffect, useReducer, useRef } from 'react';
import type { Clock } from '../core/clock.js';
import { DetailView } from './DetailView.js';
import { EntryList } from './EntryList.js';
import type { TriageFilter } from './filter.js';
import { GroupView } from './GroupView.js';
import { Header, type HeaderInfo } from './Header.js';
import { HelpOverlay } from './HelpOverlay.js';
import { inputKeys, type InkKey } from './keymap.js';
import { frameHeight, listRows, MIN_ROWS, type TerminalSize } from './layout.js';
import { PickerView } from './PickerView.js';
import { RedriveDialog } from './RedriveDialog.js';
import type { RedrivePort } from './redrive-port.js';
import type { TriageSource } from './source.js';
import { initialState, reduce, type TriageAction, type TriageState } from './state.js';
import { StatusBar } from './StatusBar.js';
import { useDetail } from './use-detail.js';
import { useDlqRows } from './use-dlq-rows.js';
import { useFullText } from './use-full-text.js';
import { useKeys } from './use-keys.js';
import { useRedrive } from './use-redrive.js';
import { useTerminalSize } from './use-terminal-size.js';

export interface AppProps {
  source: TriageSource;
  /** The DLQ engine's redrive, or null when it is not available. */
  redrive: RedrivePort | null;
  info: HeaderInfo;
  /** Why mutations are refused (read-only context), or null. */
  readOnlyReason: string | null;
  clock: Clock;
  /** The trace link template (`traceUrl`, `AGENTQ_TRACE_URL`): the detail view links each job's trace. */
  traceUrlTemplate?: string | null;
  initialFilter?: Partial<TriageFilter>;
  /** A fixed terminal size (tests); by default the output stream's size, following resizes. */
  size?: TerminalSize;
  /**
   * How often ages, deadlines and the expired count are refreshed.
   * @default 10000 (0 disables it: tests move a ManualClock instead)
   */
  tickMs?: number;
  /** Called with every state after it changes (tests, benchmarks). */
  onState?: (s: TriageState) => void;
  /** Told when a key arrives (benchmark trace). */
  onKey?: () => void;
  /**
   * Called once the terminal is in raw mode (keys are read): run.tsx asks the terminal then whether
   * it marks pastes (an answer sent before raw mode would be echoed on the screen by the tty).
   */
  onInputReady?: () => void;
  /**
   * Aborted when the process is told to stop (SIGTERM, SIGHUP): a running redrive finishes its
   * batch and records `interrupted`, then the app quits. Its reason's message names the signal.
   */
  interrupt?: AbortSignal;
}

export function App(props: AppProps) {
  const { source, redrive, info, clock } = props;
  const size = useTerminalSize(props.size);
  const { exit } = useApp();
  const [state, dispatch] = useReducer(
    reduce,
    undefined,
    (): TriageState => initialState({ now: clock.now(), pageSize: listRows(size), columns: size.columns, readOnlyReason: props.readOnlyReason, filter: props.initialFilter }),
  );

  useDlqRows(source, state.loadGeneration, dispatch as (a: TriageAction) => void, () => clock.now());
  useDetail(source, state.detail, clock, dispatch, size.columns, state.now, props.traceUrlTemplate ?? null);
  useFullText(source, state.fullText, dispatch);
  useRedrive(redrive, state.redrive, dispatch);

  useEffect(() => {
    dispatch({ type: 'resize', pageSize: listRows(size), columns: size.columns });
  }, [size.rows, size.columns]);

  const tickMs = props.tickMs ?? 10_000;
  useEffect(() => {
    if (tickMs <= 0) return;
    const t = setInterval(() => dispatch({ type: 'tick', now: clock.now() }), tickMs);
    t.unref?.();
    return () => clearInterval(t);
  }, [tickMs, clock]);

  const interrupt = props.interrupt;
  useEffect(() => {
    if (interrupt === undefined) return;
    const onAbort = () => dispatch({ type: 'interrupt', reason: signalName(interrupt.reason) });
    if (interrupt.aborted) onAbort();
    else interrupt.addEventListener('abort', onAbort, { once: true });
    return () => interrupt.removeEventListener('abort', onAbort);
  }, [interrupt]);

  useEffect(() => {
    if (state.isQuitting) exit();
  }, [state.isQuitting, exit]);

  const onState = props.onState;
  useEffect(() => {
    onState?.(state);
  }, [state, onState]);

  const onKey = props.onKey;
  const pastesMarked = useRef(false);
  const onInput = useCallback(
    (input: string, key: InkKey) => {
      onKey?.();
      for (const name of inputKeys(input, key, pastesMarked.current)) dispatch({ type: 'key', name });
    },
    [onKey],
  );
  const onPaste = useCallback((text: string) => dispatch({ type: 'paste', text }), []);
  useKeys(onInput, onPaste, pastesMarked, props.onInputReady);

  if (size.rows < MIN_ROWS) {
    // A frame taller than the screen scrolled and was drawn over itself (lines of the list over the
    // column header, the title gone): one line says why instead. Keys keep working; enlarged, it is back.
    // As tall as a frame (blank under the note): narrowed, a terminal that reflows (tmux) re-wraps a
    // long line into two; Ink erased only the one line it wrote, and half the old note stayed above
    // the new one. Redrawing the whole height clears what the reflow left, as the list's frame does.
    return (
      <Box height={Math.max(1, size.rows - 1)} width={size.columns} flexDirection="column">
        <Text wrap="truncate-end">{`this terminal (${size.columns}×${size.rows}) is too small: the app needs at least ${MIN_ROWS} rows · q quits`}</Text>
      </Box>
    );
  }
  const height = frameHeight(size);
  return (
    // No overflow="hidden": every view renders at most the rows that fit (pageSize), and
    // clipping makes Ink re-slice every line of every frame (most of a frame's cost).
    <Box flexDirection="column" height={height} width={size.columns}>
      <Header info={info} state={state} />
      <Box flexDirection="column" flexGrow={1}>
        <Body state={state} width={size.columns} selection={info.selection ?? null} />
      </Box>
      <StatusBar state={state} />
    </Box>
  );
}

/** `runCli` aborts with `new Error('SIGTERM')`; anything else is a plain interruption. */
function signalName(reason: unknown): string {
  const text = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : '';
  return /^SIG[A-Z]+$/.test(text) ? text : 'interrupted';
}

function Body({ state, width, selection }: { state: TriageState; width: number; selection: string | null }) {
  if (state.isHelpOpen) return <HelpOverlay mode={state.mode} height={state.pageSize + 1} scroll={state.helpScroll} />;
  switch (state.mode) {
    case 'groups':
      return <GroupView state={state} width={width} />;
    case 'detail':
      return <DetailView state={state} />;
    case 'picker':
      return <PickerView state={state} width={width} />;
    case 'confirm':
    case 'progress':
    case 'result':
      return state.redrive === null ? <Text> </Text> : <RedriveDialog flow={state.redrive} width={width} hiddenSelected={state.selectedHidden} bodyRows={state.pageSize + 1} />;
    default:
      return <EntryList state={state} width={width} selection={selection} />;
  }
}
