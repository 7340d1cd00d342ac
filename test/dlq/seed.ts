/**
 * Puts jobs into the DLQ through the backend contract only (submit, claim,
 * optional effect, permanent failure), so every backend seeds the same way.
 * Claims in batches: seeding thousands of entries stays a matter of seconds.
 */
import type { Backend } from '../../src/backend/contract.js';

export interface DeadSpec {
  queue: string;
  tenant?: string;
  workflow?: string;
  code?: string;
  message?: string;
  /** Deadline relative to `now` (ms); null = no deadline. */
  deadlineInMs?: number | null;
  withEffect?: boolean;
  input?: string | null;
}

export async function seedDead(backend: Backend, now: () => number, specs: DeadSpec[], claimBatch = 200): Promise<string[]> {
  const byId = new Map<string, DeadSpec>();
  const ids: string[] = [];
  const queues = new Set<string>();
  for (const s of specs) {
    const { job } = await backend.submit({
      workflow: s.workflow ?? 'research_report:v3',
      queue: s.queue,
      tenant_id: s.tenant ?? 'acme',
      max_attempts: 1,
      input: s.input ?? null,
      deadline_at: s.deadlineInMs === undefined || s.deadlineInMs === null ? null : new Date(now() + s.deadlineInMs).toISOString(),
    });
    byId.set(job.job_id, s);
    ids.push(job.job_id);
    queues.add(s.queue);
  }
  for (const queue of queues) {
    for (;;) {
      const leases = await backend.claim({ queue, workerId: 'seeder', workerVersion: 'v1.0.0', max: claimBatch, leaseMs: 600_000 });
      if (leases.length === 0) break;
      for (const lease of leases) {
        const s = byId.get(lease.jobId)!;
        if (s.withEffect) await backend.beginEffect(lease, 'send-email');
        await backend.fail(lease, { code: s.code ?? 'PROVIDER_429', message: s.message ?? 'rate limited', retryable: false, workerVersion: 'v1.0.0' });
      }
    }
  }
  return ids;
}
