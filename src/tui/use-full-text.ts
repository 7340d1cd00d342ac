import { useEffect, type Dispatch } from 'react';
import type { FullTextMatches } from './filter.js';
import type { TriageSource } from './source.js';
import type { TriageAction } from './state.js';

/**
 * Runs the backend's grep for a submitted text filter (the state asks with
 * `fullText.ids === null`): rows hold only the start of long error messages,
 * and `/` must find what `--grep` finds. A newer text cancels the older walk.
 */
export function useFullText(source: TriageSource, full: FullTextMatches | null, dispatch: Dispatch<TriageAction>): void {
  const pending = full !== null && full.ids === null ? full.text : null;
  useEffect(() => {
    if (pending === null || source.grepIds === undefined) return;
    const abort = new AbortController();
    source.grepIds(pending, abort.signal).then(
      (ids) => {
        if (!abort.signal.aborted) dispatch({ type: 'fulltext/found', text: pending, ids });
      },
      (e: unknown) => {
        if (!abort.signal.aborted) dispatch({ type: 'fulltext/failed', text: pending, message: e instanceof Error ? e.message : String(e) });
      },
    );
    return () => abort.abort();
  }, [source, pending, dispatch]);
}
