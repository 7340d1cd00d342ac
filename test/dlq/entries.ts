/** Builds DLQ entries for pure unit tests (no backend involved). */
import type { DlqEntry } from '../../src/core/schemas.js';

let n = 0;
export function entry(over: Partial<DlqEntry> = {}): DlqEntry {
  n++;
  return {
    job_id: `job_01JTEST${String(n).padStart(19, '0')}`,
    queue: 'research',
    tenant_id: 'acme',
    workflow: 'research_report:v3',
    class: 'batch',
    dead_at: '2026-01-01T00:00:00.000Z',
    reason: 'exhausted',
    error_code: 'PROVIDER_429',
    error_message: 'rate limited',
    worker_version: '1.2.3',
    attempts: 3,
    max_attempts: 3,
    deadline_at: null,
    partial: false,
    redrive_count: 0,
    malformed: null,
    job: null,
    ...over,
  };
}
