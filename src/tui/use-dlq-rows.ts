import { useEffect, type Dispatch } from 'react';
import { StringPool, toTriageRow } from './row.js';
import type { TriageSource } from './source.js';
import type { TriageAction } from './state.js';

/**
 * Loads the DLQ into triage rows, one page per dispatch, starting again
 * whenever `generation` changes (after a redrive). The first page renders
 * at once; the rest stream in while the operator already moves around.
 */
export function useDlqRows(source: TriageSource, generation: number, dispatch: Dispatch<TriageAction>): void {
  useEffect(() => {
    const abort = new AbortController();
    const pool = new StringPool();
    void (async () => {
      try {
        for await (const page of source.pages(abort.signal)) {
          if (abort.signal.aborted) return;
          dispatch({ type: 'rows/append', rows: page.map((e) => toTriageRow(e, pool)), isDone: false });
          // Let key presses in between pages: a synchronous store (SQLite) would otherwise
          // hold the event loop for the whole load.
          await new Promise((r) => setImmediate(r));
        }
        if (!abort.signal.aborted) dispatch({ type: 'rows/append', rows: [], isDone: true });
      } catch (e) {
        if (!abort.signal.aborted) dispatch({ type: 'rows/failed', message: e instanceof Error ? e.message : String(e) });
      }
    })();
    return () => abort.abort();
  }, [source, generation, dispatch]);
}
