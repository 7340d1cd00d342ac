/**
 * DLQ entries for TUI tests: complete `DlqEntry` values (the shape the
 * contract returns), built deterministically from an index.
 */
import { DLQ_ROW_MESSAGE_CHARS, type DlqRow } from '../../../src/backend/contract.js';
import type { DlqEntry, Job } from '../../../src/core/schemas.js';
import type { TriageSource } from '../../../src/tui/source.js';

export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

export interface EntryOptions {
  queue?: string;
  tenant?: string;
  workflow?: string;
  errorCode?: string;
  errorMessage?: string;
  /** ms relative to T0; null = no deadline. */
  deadlineIn?: number | null;
  isPartial?: boolean;
  redriveCount?: number;
  input?: string | null;
}

export function jobId(i: number): string {
  // 26 Crockford base-32 characters, sortable by i.
  return `job_01J${String(i).padStart(23, '0')}`;
}

export function makeEntry(i: number, o: EntryOptions = {}): DlqEntry {
  const id = jobId(i);
  const deadline = o.deadlineIn === undefined ? T0 + 3_600_000 : o.deadlineIn === null ? null : T0 + o.deadlineIn;
  const deadAt = T0 - 60_000 * (i + 1);
  const base = {
    job_id: id,
    tenant_id: o.tenant ?? 'acme',
    queue: o.queue ?? 'research',
    workflow: o.workflow ?? 'research_report:v3',
    operation: null,
    class: 'batch' as const,
    input: o.input === undefined ? '{"topic":"queues"}' : o.input,
    input_ref: null,
    input_sha256: null,
    deadline_at: deadline === null ? null : iso(deadline),
    idempotency_key: null,
    attempt: 3,
    max_attempts: 3,
    trace_id: `trace-${i}`,
    budget: null,
    allowed_tools: [],
    estimated_seconds: null,
    created_at: iso(deadAt - 600_000),
  };
  const errorCode = o.errorCode ?? 'PROVIDER_429';
  const errorMessage = o.errorMessage ?? 'rate limited by the model provider';
  const job: Job = {
    ...base,
    state: 'dead',
    outcome: o.isPartial ? 'partially_completed' : 'failed',
    updated_at: iso(deadAt),
    run_at: base.created_at,
    ended_at: iso(deadAt),
    lease: null,
    cancel_requested_at: null,
    cancel_reason: null,
    checkpoint: { step: 2 },
    effects: o.isPartial
      ? [{ key: 'send-email', status: 'started', idempotency_key: `${id}:send-email`, attempt: 3, started_at: iso(deadAt - 1000), done_at: null, result: null }]
      : [],
    last_error: { code: errorCode, message: errorMessage, retryable: true },
    attempts: [1, 2, 3].map((n) => ({
      attempt: n,
      worker_id: 'w1',
      worker_version: '1.0.0',
      started_at: iso(deadAt - 400_000 + n * 100_000),
      ended_at: iso(deadAt - 350_000 + n * 100_000),
      outcome: 'failed',
      error_code: errorCode,
      error_message: errorMessage,
    })),
    result: null,
    dead: { reason: 'exhausted', dead_at: iso(deadAt), error_code: errorCode, error_message: errorMessage, worker_version: '1.0.0' },
    lineage: { redrive_count: o.redriveCount ?? 0, redriven_at: null, redrive_run: null },
  };
  return {
    job_id: id,
    queue: base.queue,
    tenant_id: base.tenant_id,
    workflow: base.workflow,
    class: 'batch',
    dead_at: iso(deadAt),
    reason: 'exhausted',
    error_code: errorCode,
    error_message: errorMessage,
    worker_version: '1.0.0',
    attempts: 3,
    max_attempts: 3,
    deadline_at: base.deadline_at,
    partial: o.isPartial ?? false,
    redrive_count: o.redriveCount ?? 0,
    malformed: null,
    job,
  };
}

/** The light row of an entry, as every backend's `dlqRows` returns it (the conformance suite checks they agree). */
export function toDlqRow(e: DlqEntry): DlqRow {
  return {
    job_id: e.job_id,
    queue: e.queue,
    tenant_id: e.tenant_id,
    workflow: e.workflow,
    reason: e.reason,
    error_code: e.error_code,
    error_message: [...e.error_message].slice(0, DLQ_ROW_MESSAGE_CHARS).join(''),
    attempts: e.attempts,
    max_attempts: e.max_attempts,
    dead_at_ms: Date.parse(e.dead_at),
    deadline_at_ms: e.deadline_at === null ? null : Date.parse(e.deadline_at),
    partial: e.partial,
    redrive_count: e.redrive_count,
    malformed: e.malformed !== null,
  };
}

/**
 * An in-memory source over plain entries: the data, paged like the
 * contract pages it (light rows for the list, the full entry for the detail). (The backend-backed source is exercised by the tmux
 * test against the real SQLite store.)
 */
export function arraySource(entries: DlqEntry[], pageSize = 1000): TriageSource {
  return {
    async *pages(signal) {
      for (let i = 0; i < entries.length; i += pageSize) {
        if (signal.aborted) return;
        yield entries.slice(i, i + pageSize).map(toDlqRow);
      }
    },
    get: async (id) => entries.find((e) => e.job_id === id) ?? null,
  };
}
