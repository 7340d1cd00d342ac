/**
 * Admission control on submit: refuse new work when the backlog, counted in
 * estimated seconds of work rather than in jobs, is already over the limit
 * for the job's class or tenant. Pure: the backend passes the maintained
 * backlog counters in.
 */
import { RetryLaterError, ValidationError, type AgentqError } from './errors.js';
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

export type AdmissionDecision =
  | { admit: true }
  | { admit: false; code: 'BACKLOG_FULL'; message: string; retryAfterMs: number }
  /** The job alone is over a limit: no draining makes room for it, so retrying is pointless. */
  | { admit: false; code: 'ESTIMATE_OVER_LIMIT'; message: string; hint: string };

/** The setting that holds a class's limit (maintenance falls back to batch's). */
function classLimitKey(c: JobClass, limits: AdmissionLimits): keyof AdmissionLimits {
  if (c === 'interactive') return 'interactiveMaxBacklogSeconds';
  if (c === 'maintenance' && limits.maintenanceMaxBacklogSeconds !== undefined) return 'maintenanceMaxBacklogSeconds';
  return 'batchMaxBacklogSeconds';
}

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
  const checks: Array<{ what: string; limitOf: string; backlog: number; limit: number | undefined; key: keyof AdmissionLimits }> = [
    {
      what: `${input.class} backlog of queue ${input.queue}`,
      limitOf: `${input.class} backlog limit of queue ${input.queue}`,
      backlog: input.classBacklogSeconds,
      limit: classLimit(input.class, limits),
      key: classLimitKey(input.class, limits),
    },
    {
      what: `backlog of tenant ${input.tenant} in queue ${input.queue}`,
      limitOf: `backlog limit of tenant ${input.tenant} in queue ${input.queue}`,
      backlog: input.tenantBacklogSeconds,
      limit: limits.tenantMaxBacklogSeconds,
      key: 'tenantMaxBacklogSeconds',
    },
  ];
  for (const c of checks) {
    if (c.limit === undefined) continue;
    if (input.estimatedSeconds > c.limit) {
      return {
        admit: false,
        code: 'ESTIMATE_OVER_LIMIT',
        message: `refused: this job alone is ${Math.round(input.estimatedSeconds)}s of estimated work, more than the ${c.limitOf} (${c.limit}s): it can never be admitted`,
        hint: `Give a smaller --estimated-seconds, or raise ${c.key} in the admission settings.`,
      };
    }
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

/**
 * The error a refused submit throws: a full backlog is retried later (exit 75, with when); a job
 * over a limit by itself is refused as input that can never be admitted (exit 2).
 */
export function refusalError(decision: Exclude<AdmissionDecision, { admit: true }>, now: number): AgentqError {
  if (decision.code === 'ESTIMATE_OVER_LIMIT') return new ValidationError(decision.message, decision.hint, decision.code);
  return new RetryLaterError(decision.message, decision.code, 'Submit again later, or raise the backlog limit if workers can keep up.', { afterMs: decision.retryAfterMs, at: now + decision.retryAfterMs });
}
