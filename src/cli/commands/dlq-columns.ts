/**
 * How DLQ entries, plan items and runs look in tables and plain output. Sanitised by the renderers.
 *
 * Job and run ids are kept whole: ULIDs made in the same second share their first characters, so a
 * cut id (`job_01M8ND…`) looks the same on every row and cannot be copied into `dlq show` or
 * `--resume`. On a narrow terminal (80 columns) `-o table` leaves out the `dropWhenNarrow` columns
 * instead, highest first, so the headers stay whole; `-o wide` and plain output keep every column.
 */
import type { LedgerItem, RunRecord } from '../../backend/contract.js';
import type { PlanItem } from '../../core/plan.js';
import type { DlqEntry } from '../../core/schemas.js';
import type { Column } from '../output/columns.js';

function flags(e: DlqEntry): string {
  const f: string[] = [];
  if (e.malformed !== null) f.push('malformed');
  if (e.partial) f.push('partial');
  if (e.redrive_count > 0) f.push(`redriven×${e.redrive_count}`);
  return f.join(',');
}

export const DLQ_ENTRY_COLUMNS: readonly Column<DlqEntry>[] = [
  { header: 'JOB', get: (e) => e.job_id, keepWhole: true },
  { header: 'QUEUE', get: (e) => e.queue, wide: true },
  { header: 'TENANT', get: (e) => e.tenant_id, dropWhenNarrow: 4 },
  { header: 'WORKFLOW', get: (e) => e.workflow, dropWhenNarrow: 3 },
  { header: 'ERROR', get: (e) => e.error_code, shrinkLast: true },
  { header: 'REASON', get: (e) => e.reason, wide: true },
  { header: 'DEAD AT', get: (e) => ({ time: e.dead_at }), keepWhole: true, ageWhenNarrow: true },
  { header: 'ATTEMPTS', get: (e) => `${e.attempts}/${e.max_attempts}`, dropWhenNarrow: 2 },
  { header: 'DEADLINE', get: (e) => ({ time: e.deadline_at }), keepWhole: true, dropWhenNarrow: 5, ageWhenNarrow: true },
  { header: 'FLAGS', get: flags },
  { header: 'WORKER', get: (e) => e.worker_version, wide: true },
  { header: 'MESSAGE', get: (e) => e.malformed ?? e.error_message, flexible: true },
];

export const PLAN_ITEM_COLUMNS: readonly Column<PlanItem>[] = [
  { header: 'JOB', get: (i) => i.job_id, keepWhole: true },
  { header: 'VERDICT', get: (i) => i.verdict },
  { header: 'DETAIL', get: (i) => i.detail, flexible: true },
];

/** What a DLQ listing (list, summary, a plan's items) with no rows says (RecordSpec.empty). */
export const NO_DLQ_ENTRIES = 'The DLQ has no entries matching this selection.';

export const LEDGER_COLUMNS: readonly Column<LedgerItem>[] = [
  { header: 'JOB', get: (i) => i.job_id, keepWhole: true },
  { header: 'VERDICT', get: (i) => i.verdict },
  { header: 'STATUS', get: (i) => i.status },
  { header: 'UPDATED', get: (i) => ({ time: i.updated_at }), dropWhenNarrow: 1 },
  { header: 'DETAIL', get: (i) => i.detail, flexible: true },
];

export const RUN_COLUMNS: readonly Column<RunRecord>[] = [
  { header: 'RUN', get: (r) => r.run_id, keepWhole: true },
  { header: 'ACTION', get: (r) => r.action },
  { header: 'QUEUE', get: (r) => r.queue },
  { header: 'USER', get: (r) => r.user, dropWhenNarrow: 3 },
  { header: 'CONTEXT', get: (r) => r.context, wide: true },
  { header: 'CREATED', get: (r) => ({ time: r.created_at }), keepWhole: true, dropWhenNarrow: 0 },
  { header: 'STATUS', get: (r) => r.status, keepWhole: true },
  { header: 'MOVED', get: (r) => r.counts.moved, dropWhenNarrow: 2 },
  { header: 'SKIPPED', get: (r) => r.counts.skipped, dropWhenNarrow: 4 },
  { header: 'FAILED', get: (r) => r.counts.failed },
  { header: 'LEFT', get: (r) => r.counts.planned, dropWhenNarrow: 1 },
  { header: 'REASON', get: (r) => r.reason, flexible: true },
];
