/**
 * The list's filter: what the operator narrowed the DLQ to. Applied in
 * memory to the triage rows, so a keystroke re-filters 100,000 rows without
 * a round trip to the backend.
 */
import { isRowExpired, type TriageRow } from './row.js';

export interface TriageFilter {
  /** `e`: drop jobs whose deadline passed (a redrive would skip them anyway). */
  hideExpired: boolean;
  /** `p`: drop jobs whose effect ledger shows an external effect started. */
  hidePartial: boolean;
  /**
   * `/`: case-insensitive substring of job id, workflow, tenant, error code or message, as
   * `--grep`. Live while typing on what the rows hold (the message's first 160 characters);
   * on Enter the backend's grep finds matches further into long messages.
   */
  text: string;
  errorCode: string | null;
  tenant: string | null;
  workflow: string | null;
  /** `Q`: one queue, when the app was started without `--queue` (a redrive works on one queue). */
  queue: string | null;
}

export const EMPTY_FILTER: TriageFilter = {
  hideExpired: false,
  hidePartial: false,
  text: '',
  errorCode: null,
  tenant: null,
  workflow: null,
  queue: null,
};

export function isFilterEmpty(f: TriageFilter): boolean {
  return !f.hideExpired && !f.hidePartial && f.text === '' && f.errorCode === null && f.tenant === null && f.workflow === null && f.queue === null;
}

/**
 * Rows the backend's grep found for a text filter beyond what the rows carry: job ids whose
 * full error message matches `text` (the rows hold only its start). Null while unknown.
 */
export interface FullTextMatches {
  text: string;
  ids: ReadonlySet<string> | null;
}

/** Builds the predicate once per filter change; the lower-casing happens here, not per row. */
export function rowPredicate(f: TriageFilter, now: number, full: FullTextMatches | null = null): (row: TriageRow) => boolean {
  const needle = f.text.toLowerCase();
  const more = full !== null && full.text === f.text ? full.ids : null;
  const textMatches = (row: TriageRow) => row.haystack.includes(needle) || (more !== null && row.isMessageCut && more.has(row.jobId));
  return (row) =>
    (!f.hideExpired || !isRowExpired(row, now)) &&
    (!f.hidePartial || !row.isPartial) &&
    (f.errorCode === null || row.errorCode === f.errorCode) &&
    (f.tenant === null || row.tenant === f.tenant) &&
    (f.workflow === null || row.workflow === f.workflow) &&
    (f.queue === null || row.queue === f.queue) &&
    (needle === '' || textMatches(row));
}

/** Indices of the rows that match, in row order. */
export function filterRows(rows: readonly TriageRow[], f: TriageFilter, now: number, from = 0, full: FullTextMatches | null = null): number[] {
  const keep = rowPredicate(f, now, full);
  const out: number[] = [];
  for (let i = from; i < rows.length; i++) if (keep(rows[i]!)) out.push(i);
  return out;
}

/**
 * A short description of the filter for labels ("selected all 4,210 matching
 * …"). Untrusted parts (text, codes, tenants) are returned raw: the caller
 * sanitises at render time like every other string from data.
 */
export function describeFilter(f: TriageFilter): string {
  const parts: string[] = [];
  if (f.queue !== null) parts.push(`queue=${f.queue}`);
  if (f.errorCode !== null) parts.push(`error=${f.errorCode}`);
  if (f.workflow !== null) parts.push(`workflow=${f.workflow}`);
  if (f.tenant !== null) parts.push(`tenant=${f.tenant}`);
  if (f.text !== '') parts.push(`text="${f.text}"`);
  if (f.hideExpired) parts.push('no expired');
  if (f.hidePartial) parts.push('no partial');
  return parts.length === 0 ? 'no filter' : parts.join(' ');
}

/** The filter as recorded in a run's audit (`filters.in_app_filter`): only what is set, raw values. */
export function filterRecord(f: TriageFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.queue !== null) out.queue = f.queue;
  if (f.errorCode !== null) out.error_code = f.errorCode;
  if (f.workflow !== null) out.workflow = f.workflow;
  if (f.tenant !== null) out.tenant = f.tenant;
  if (f.text !== '') out.text = f.text;
  if (f.hideExpired) out.hide_expired = true;
  if (f.hidePartial) out.hide_partial = true;
  return out;
}

