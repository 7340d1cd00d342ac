import { useEffect, useRef, type Dispatch } from 'react';
import type { Clock } from '../core/clock.js';
import type { DlqEntry } from '../core/schemas.js';
import { detailLines } from './detail.js';
import type { TriageSource } from './source.js';
import type { DetailState, TriageAction } from './state.js';

/**
 * Fetches the full entry when the detail view opens on a job, and lays it out again when the
 * terminal's width changes or the clock ticks (`now`: the state's, moved by the tick that also
 * refreshes the list's ages and deadlines).
 */
export function useDetail(
  source: TriageSource,
  detail: DetailState | null,
  clock: Clock,
  dispatch: Dispatch<TriageAction>,
  width: number,
  now?: number,
  traceUrlTemplate: string | null = null,
): void {
  const jobId = detail?.lines === undefined ? detail?.jobId : undefined;
  // The entry on screen, kept to wrap it again on a resize: lines wrapped for a wider terminal were
  // cut at the new edge, and the end of a long error message could no longer be read.
  const shown = useRef<{ jobId: string; entry: DlqEntry; width: number; now?: number } | null>(null);
  const widthRef = useRef(width);
  widthRef.current = width;
  const nowRef = useRef(now);
  nowRef.current = now;
  useEffect(() => {
    if (jobId === undefined) return;
    let isLive = true;
    shown.current = null;
    source.get(jobId).then(
      (entry) => {
        if (!isLive) return;
        const at = widthRef.current;
        if (entry !== null) shown.current = { jobId, entry, width: at, now: nowRef.current };
        dispatch({ type: 'detail/loaded', jobId, lines: entry === null ? null : detailLines(entry, clock.now(), at, traceUrlTemplate) });
      },
      (e: unknown) => {
        if (isLive) dispatch({ type: 'detail/loaded', jobId, lines: null, error: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      isLive = false;
    };
  }, [source, jobId, clock, dispatch, traceUrlTemplate]);

  const openJobId = Array.isArray(detail?.lines) ? detail.jobId : undefined;
  useEffect(() => {
    const s = shown.current;
    // Its "N left" and "ago" were computed when it was fetched: a deadline that passed while it was
    // open still read "5m left" beside a list and header that said expired.
    if (openJobId === undefined || s === null || s.jobId !== openJobId || (s.width === width && s.now === now)) return;
    shown.current = { ...s, width, now };
    dispatch({ type: 'detail/loaded', jobId: openJobId, lines: detailLines(s.entry, clock.now(), width, traceUrlTemplate) });
  }, [openJobId, width, now, clock, dispatch, traceUrlTemplate]);
}
