/**
 * Admission control on submit: refuse new work when the backlog, counted in
 * estimated seconds of work rather than in jobs, is already over the limit
 * for the job's class or tenant. Pure: the backend passes the maintained
 * backlog counters in.
 */
import type { JobClass } from './schemas.js';

/** Per-job estimate when the submit request does not say. */
export const DEFAULT_ESTIMATED_SECONDS = 60;

export interface AdmissionLimits {
  /** Backlog limit (seconds of queued work) of the batch class in a queue. Keep it below the interactive limit so batch is refused first. */
  batchMaxBacklogSeconds?: number;
  interactiveMaxBacklogSeconds?: number;
  /** Defaults to the batch limit. */
  maintenanceMaxBacklogSeconds?: number;
  /** Backlog limit of one tenant in a queue, all classes together. */
  tenantMaxBacklogSeconds?: number;
}

export interface AdmissionInput {
  queue: string;
  class: JobClass;
  tenant: string;
  /** This job's estimate. */
  estimatedSeconds: number;
  /** Queued + scheduled work of this class in the queue, before this job. */
  classBacklogSeconds: number;
  /** Queued + scheduled work of this tenant in the queue, before this job. */
  tenantBacklogSeconds: number;
}

export type AdmissionDecision = { admit: true } | { admit: false; code: 'BACKLOG_FULL'; message: string; retryAfterMs: number };

export function classLimit(c: JobClass, limits: AdmissionLimits): number | undefined {
  switch (c) {
    case 'interactive':
      return limits.interactiveMaxBacklogSeconds;
    case 'batch':
      return limits.batchMaxBacklogSeconds;
    case 'maintenance':
      return limits.maintenanceMaxBacklogSeconds ?? limits.batchMaxBacklogSeconds;
  }
}

/** Suggested wait: the excess must drain first; bounded so the hint stays useful. */
function retryAfterFor(excessSeconds: number): number {
  return Math.min(Math.max(Math.ceil(excessSeconds), 1), 300) * 1000;
}

export function admissionDecision(input: AdmissionInput, limits: AdmissionLimits): AdmissionDecision {
  const checks: Array<{ what: string; backlog: number; limit: number | undefined }> = [
    { what: `${input.class} backlog of queue ${input.queue}`, backlog: input.classBacklogSeconds, limit: classLimit(input.class, limits) },
    { what: `backlog of tenant ${input.tenant} in queue ${input.queue}`, backlog: input.tenantBacklogSeconds, limit: limits.tenantMaxBacklogSeconds },
  ];
  for (const c of checks) {
    if (c.limit === undefined) continue;
    const after = c.backlog + input.estimatedSeconds;
    if (after > c.limit) {
      const retryAfterMs = retryAfterFor(after - c.limit);
      return {
        admit: false,
        code: 'BACKLOG_FULL',
        retryAfterMs,
        message: `refused: the ${c.what} is ${Math.round(c.backlog)}s of work and this job adds ${Math.round(input.estimatedSeconds)}s (limit ${c.limit}s); retry in about ${retryAfterMs / 1000}s, when workers have drained it`,
      };
    }
  }
  return { admit: true };
}
