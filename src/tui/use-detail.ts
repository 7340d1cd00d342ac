import { useEffect, type Dispatch } from 'react';
import type { Clock } from '../core/clock.js';
import { detailLines } from './detail.js';
import type { TriageSource } from './source.js';
import type { DetailState, TriageAction } from './state.js';

/** Fetches the full entry when the detail view opens on a job. */
export function useDetail(source: TriageSource, detail: DetailState | null, clock: Clock, dispatch: Dispatch<TriageAction>, width: number): void {
  const jobId = detail?.lines === undefined ? detail?.jobId : undefined;
  useEffect(() => {
    if (jobId === undefined) return;
    let isLive = true;
    source.get(jobId).then(
      (entry) => {
        if (isLive) dispatch({ type: 'detail/loaded', jobId, lines: entry === null ? null : detailLines(entry, clock.now(), width) });
      },
      (e: unknown) => {
        if (isLive) dispatch({ type: 'detail/loaded', jobId, lines: null, error: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => {
      isLive = false;
    };
    // The lines are wrapped to the width when the entry is fetched; a resize while it is open keeps them.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source, jobId, clock, dispatch]);
}
