import { useEffect, useRef, type Dispatch } from 'react';
import type { RedrivePort } from './redrive-port.js';
import type { RedriveFlow, TriageAction } from './state.js';

/**
 * Runs the redrive flow's I/O when the state asks for it: builds the plan
 * when the dialog opens, applies it once confirmed, and aborts (after the
 * current batch, as the engine guarantees) when a stop is requested.
 */
export function useRedrive(port: RedrivePort | null, flow: RedriveFlow | null, dispatch: Dispatch<TriageAction>): void {
  const applyAbort = useRef<AbortController | null>(null);
  const planJobIds = flow?.step === 'planning' ? flow.jobIds : null;
  const planContext = flow?.step === 'planning' ? flow.context : undefined;
  const reason = flow?.step === 'applying' ? flow.reason : '';
  const applying = flow?.step === 'applying' ? flow.planned : null;
  const isStopRequested = flow?.step === 'applying' && flow.isStopRequested;

  useEffect(() => {
    if (planJobIds === null) return;
    if (port === null) {
      dispatch({ type: 'redrive/failed', message: 'redrive is not available here' });
      return;
    }
    const abort = new AbortController();
    port.plan(planJobIds, abort.signal, planContext).then(
      (planned) => {
        if (!abort.signal.aborted) dispatch({ type: 'redrive/planned', planned });
      },
      (e: unknown) => {
        if (!abort.signal.aborted) dispatch({ type: 'redrive/failed', message: e instanceof Error ? e.message : String(e), ...exitOf(e), ...hintOf(e) });
      },
    );
    // Esc while planning: stop the walk; the reducer already left the dialog.
    return () => abort.abort();
    // The context belongs to these job ids (same flow step).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [port, planJobIds, dispatch]);

  useEffect(() => {
    if (applying === null || port === null) return;
    const abort = new AbortController();
    applyAbort.current = abort;
    port
      .apply(applying, (progress) => dispatch({ type: 'redrive/progress', progress }), abort.signal, reason === '' ? null : reason)
      .then(
        (result) => dispatch({ type: 'redrive/finished', result }),
        (e: unknown) =>
          dispatch({
            type: 'redrive/failed',
            message: e instanceof Error ? e.message : String(e),
            ...exitOf(e),
            ...hintOf(e),
          }),
      )
      .finally(() => {
        applyAbort.current = null;
      });
    // No abort on cleanup: once a run has started it finishes its batch and records the ledger.
    // The reason belongs to this plan (same flow step).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [port, applying, dispatch]);

  useEffect(() => {
    if (isStopRequested) applyAbort.current?.abort();
  }, [isStopRequested]);
}

/**
 * The code and exit code of an AgentqError. Read from its fields, not by `instanceof`: the app is
 * bundled apart from the CLI (scripts/build-tui-bundle.mjs), so the engine's errors are instances
 * of the CLI's class, not of this bundle's copy.
 */
/** An AgentqError's advice (what to do instead), read from its field for the same reason. */
function hintOf(e: unknown): { hint?: string } {
  const h = typeof e === 'object' && e !== null ? (e as { hint?: unknown }).hint : undefined;
  return typeof h === 'string' && h !== '' ? { hint: h } : {};
}

function exitOf(e: unknown): { code?: string; exitCode?: number } {
  const x = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; exitCode?: unknown };
  return typeof x.code === 'string' && typeof x.exitCode === 'number' ? { code: x.code, exitCode: x.exitCode } : {};
}
