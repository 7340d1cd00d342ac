import { useEffect, type Dispatch } from 'react';
import { performance } from 'node:perf_hooks';
import { StringPool, toTriageRow, type TriageRow } from './row.js';
import type { TriageSource } from './source.js';
import type { TriageAction } from './state.js';

/**
 * While loading, rows reach the screen at most this often (the first page
 * at once): each dispatch re-renders the whole frame. Measured on 100,000
 * entries (loaded machine): 3.9 s of CPU for the load with no redraw in
 * between, 8.8 s redrawing twice a second, 10 s at every 150 ms. Once a
 * second keeps the counts visibly moving.
 */
const LOAD_DISPATCH_EVERY_MS = 1000;

/**
 * Loads the DLQ into triage rows, starting again whenever `generation`
 * changes (after a redrive). The first page renders at once; the rest
 * streams in, in batches, while the operator already moves around.
 */
export function useDlqRows(source: TriageSource, generation: number, dispatch: Dispatch<TriageAction>, now: () => number): void {
  useEffect(() => {
    const abort = new AbortController();
    const pool = new StringPool();
    // The count comes from counters, not from the walk: it is on screen long before the rows are.
    source.expectedTotal?.().then(
      (total) => {
        if (!abort.signal.aborted && total !== null) dispatch({ type: 'rows/expected', total, generation });
      },
      () => undefined, // only a hint: the walk itself reports a failing backend
    );
    void (async () => {
      let pending: TriageRow[] = [];
      let lastDispatch = -Infinity;
      try {
        for await (const page of source.pages(abort.signal)) {
          if (abort.signal.aborted) return;
          for (const e of page) pending.push(toTriageRow(e, pool));
          const now = performance.now();
          if (now - lastDispatch >= LOAD_DISPATCH_EVERY_MS) {
            dispatch({ type: 'rows/append', rows: pending, isDone: false });
            pending = [];
            lastDispatch = now;
          }
          // Let key presses in between pages: a synchronous store (SQLite) would otherwise
          // hold the event loop for the whole load.
          await new Promise((r) => setImmediate(r));
        }
        if (!abort.signal.aborted) dispatch({ type: 'rows/append', rows: pending, isDone: true, at: now() });
      } catch (e) {
        if (!abort.signal.aborted) dispatch({ type: 'rows/failed', message: e instanceof Error ? e.message : String(e) });
      }
    })();
    return () => abort.abort();
    // `now` is the clock's method: it never changes for one app.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source, generation, dispatch]);
}
