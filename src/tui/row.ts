/**
 * The triage row: what the list keeps of each entry of the DLQ, built from
 * the contract's light `DlqRow` (no job document is ever loaded for the
 * list; the detail view fetches the one entry it shows with `dlqGet`).
 *
 * Strings here are raw (untrusted) data: they are sanitised where they are
 * rendered, never stored sanitised, so filters match what is really stored.
 */
import { DLQ_ROW_MESSAGE_CHARS, type DlqRow } from '../backend/contract.js';

export interface TriageRow {
  jobId: string;
  queue: string;
  workflow: string;
  tenant: string;
  errorCode: string;
  attempts: number;
  maxAttempts: number;
  /** Epoch ms. */
  deadAtMs: number;
  /** Epoch ms, null when the job has no deadline. */
  deadlineMs: number | null;
  /** The effect ledger shows an external effect started. */
  isPartial: boolean;
  redriveCount: number;
  isMalformed: boolean;
  /**
   * Lower-cased job id, workflow, tenant, error code and the start of the
   * error message (the part a `DlqRow` carries, `DLQ_ROW_MESSAGE_CHARS`;
   * the detail view shows all of it): what the text filter searches live (the same fields as
   * `DlqFilter.grep`), computed once so a keystroke is a plain scan.
   */
  haystack: string;
  /**
   * The row carries only the start of the error message (it reached `DLQ_ROW_MESSAGE_CHARS`):
   * a text filter that misses the haystack may still match the rest, which only the backend's
   * `grep` (the one `--grep` uses) can tell (see `TriageSource.grepIds`).
   */
  isMessageCut: boolean;
}

/**
 * Repeated values (workflow, tenant, error code, queue) are shared through
 * this pool: a DLQ of 100,000 entries has a handful of distinct values, and
 * one string per distinct value instead of one per row keeps memory flat.
 */
export class StringPool {
  private readonly pool = new Map<string, string>();
  intern(s: string): string {
    const known = this.pool.get(s);
    if (known !== undefined) return known;
    this.pool.set(s, s);
    return s;
  }
}

export function toTriageRow(entry: DlqRow, pool: StringPool = new StringPool()): TriageRow {
  return {
    jobId: entry.job_id,
    queue: pool.intern(entry.queue),
    workflow: pool.intern(entry.workflow),
    tenant: pool.intern(entry.tenant_id),
    errorCode: pool.intern(entry.error_code),
    attempts: entry.attempts,
    maxAttempts: entry.max_attempts,
    deadAtMs: entry.dead_at_ms,
    deadlineMs: entry.deadline_at_ms,
    isPartial: entry.partial,
    redriveCount: entry.redrive_count,
    isMalformed: entry.malformed,
    isMessageCut: entry.error_message.length >= DLQ_ROW_MESSAGE_CHARS && [...entry.error_message].length >= DLQ_ROW_MESSAGE_CHARS,
    haystack: `${entry.job_id}\n${entry.workflow}\n${entry.tenant_id}\n${entry.error_code}\n${entry.error_message}`.toLowerCase(),
  };
}

/**
 * The rule of `core/verdict.isExpiredAt` with no minimum remaining time
 * (`deadline - now <= 0`), on the parsed deadline: this runs for every row on
 * every filter change, so it must not re-parse an ISO string.
 */
export function isRowExpired(row: TriageRow, now: number): boolean {
  return row.deadlineMs !== null && row.deadlineMs - now <= 0;
}
