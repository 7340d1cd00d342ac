/**
 * Fills a DLQ through the backend contract only (submit → claim → fail
 * permanently), as real jobs get there: the TUI tests and the tmux test read
 * what any backend would hold, not rows written behind its back.
 */
import type { Backend } from '../../../src/backend/contract.js';
import type { ManualClock } from '../../../src/core/clock.js';

export interface DeadJobSpec {
  tenant?: string;
  workflow?: string;
  errorCode?: string;
  errorMessage?: string;
  /** Deadline relative to the clock at submit time (ms); null = none. */
  deadlineInMs?: number | null;
  /** Start an external effect before failing: the entry is partial. */
  isPartial?: boolean;
  input?: string;
}

/** Seeds `specs` into `queue`'s DLQ and returns the job ids in spec order. */
export async function seedDlq(backend: Backend, clock: ManualClock, queue: string, specs: readonly DeadJobSpec[]): Promise<string[]> {
  const ids: string[] = [];
  const specById = new Map<string, DeadJobSpec>();
  for (const spec of specs) {
    const deadline = spec.deadlineInMs === undefined ? 86_400_000 : spec.deadlineInMs;
    const { job } = await backend.submit({
      workflow: spec.workflow ?? 'research_report:v3',
      queue,
      tenant_id: spec.tenant ?? 'acme',
      input: spec.input ?? '{"topic":"queues"}',
      max_attempts: 1,
      deadline_at: deadline === null ? null : new Date(clock.now() + deadline).toISOString(),
    });
    ids.push(job.job_id);
    specById.set(job.job_id, spec);
  }
  for (;;) {
    const leases = await backend.claim({ queue, workerId: 'seeder', max: 100, leaseMs: 60_000 });
    if (leases.length === 0) break;
    for (const lease of leases) {
      const spec = specById.get(lease.jobId) ?? {};
      if (spec.isPartial) await backend.beginEffect(lease, 'send-email');
      await backend.fail(lease, {
        code: spec.errorCode ?? 'PROVIDER_429',
        message: spec.errorMessage ?? 'rate limited by the model provider',
        retryable: false,
      });
    }
  }
  return ids;
}
