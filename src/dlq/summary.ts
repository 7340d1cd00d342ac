/**
 * `dlq summary --by error_code,workflow,tenant`: triage by error. One paged
 * walk; memory grows with the number of groups, never with the number of
 * entries.
 */
import { ValidationError } from '../core/errors.js';
import type { Backend, DlqFilter } from '../backend/contract.js';
import type { DlqEntry } from '../core/schemas.js';
import { isExpiredAt } from '../core/verdict.js';
import { walkDlq } from './select.js';

export const SUMMARY_KEYS = ['error_code', 'workflow', 'tenant', 'queue', 'reason', 'worker_version', 'class'] as const;
export type SummaryKey = (typeof SUMMARY_KEYS)[number];

export interface SummaryGroup {
  key: Partial<Record<SummaryKey, string | null>>;
  count: number;
  oldest_dead_at: string;
  newest_dead_at: string;
  expired: number;
  partial: number;
  malformed: number;
}

export interface Summary {
  by: SummaryKey[];
  total: number;
  groups: SummaryGroup[];
}

export function parseSummaryKeys(text: string): SummaryKey[] {
  const keys = text.split(',').map((k) => k.trim()).filter((k) => k.length > 0);
  if (keys.length === 0) throw new ValidationError(`--by needs at least one of ${SUMMARY_KEYS.join(', ')}`);
  for (const k of keys) {
    if (!(SUMMARY_KEYS as readonly string[]).includes(k)) {
      throw new ValidationError(`--by ${JSON.stringify(k)}: group by one or more of ${SUMMARY_KEYS.join(', ')} (comma-separated)`);
    }
  }
  return [...new Set(keys)] as SummaryKey[];
}

function fieldOf(e: DlqEntry, k: SummaryKey): string | null {
  switch (k) {
    case 'error_code':
      return e.error_code;
    case 'workflow':
      return e.workflow;
    case 'tenant':
      return e.tenant_id;
    case 'queue':
      return e.queue;
    case 'reason':
      return e.reason;
    case 'worker_version':
      return e.worker_version;
    case 'class':
      return e.class;
  }
}

/** Pure fold step, exported for tests: adds one entry to the groups map. */
export function addToSummary(groups: Map<string, SummaryGroup>, by: SummaryKey[], e: DlqEntry, now: number, minRemainingMs: number): void {
  const key: SummaryGroup['key'] = {};
  for (const k of by) key[k] = fieldOf(e, k);
  const id = JSON.stringify(by.map((k) => key[k]));
  let g = groups.get(id);
  if (!g) {
    g = { key, count: 0, oldest_dead_at: e.dead_at, newest_dead_at: e.dead_at, expired: 0, partial: 0, malformed: 0 };
    groups.set(id, g);
  }
  g.count++;
  // ISO-8601 UTC strings from the store compare in time order; Date.parse guards mixed offsets.
  if (Date.parse(e.dead_at) < Date.parse(g.oldest_dead_at)) g.oldest_dead_at = e.dead_at;
  if (Date.parse(e.dead_at) > Date.parse(g.newest_dead_at)) g.newest_dead_at = e.dead_at;
  if (isExpiredAt(e.deadline_at, now, minRemainingMs)) g.expired++;
  if (e.partial) g.partial++;
  if (e.malformed !== null) g.malformed++;
}

export async function summarizeDlq(
  backend: Pick<Backend, 'dlqList'>,
  filter: DlqFilter,
  by: SummaryKey[],
  opts: { now: number; minRemainingMs?: number; signal?: AbortSignal },
): Promise<Summary> {
  const groups = new Map<string, SummaryGroup>();
  let total = 0;
  for await (const page of walkDlq(backend, filter, { signal: opts.signal })) {
    for (const e of page) {
      addToSummary(groups, by, e, opts.now, opts.minRemainingMs ?? 0);
      total++;
    }
  }
  // Biggest groups first: triage starts with what hurts most.
  const sorted = [...groups.values()].sort((a, b) => b.count - a.count || a.oldest_dead_at.localeCompare(b.oldest_dead_at));
  return { by, total, groups: sorted };
}
