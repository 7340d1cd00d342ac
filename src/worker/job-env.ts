/**
 * The environment the exec worker gives each handler process, and the
 * reading side used by `agentq job ...` inside it. One module owns the names
 * so the two sides cannot drift apart.
 */
import { sanitize } from '../cli/output/sanitize.js';
import { ValidationError } from '../core/errors.js';
import type { LeaseRef } from '../backend/contract.js';
import type { JobEnvelope } from '../core/schemas.js';

export const JOB_ENV = {
  jobId: 'AGENTQ_JOB_ID',
  attempt: 'AGENTQ_ATTEMPT',
  deadlineAt: 'AGENTQ_DEADLINE_AT',
  traceId: 'AGENTQ_TRACE_ID',
  queue: 'AGENTQ_QUEUE',
  tenant: 'AGENTQ_TENANT',
  workflow: 'AGENTQ_WORKFLOW',
  /** The store, so `agentq job checkpoint|effect` can write to it. */
  url: 'AGENTQ_URL',
  /** The lease's fence token: writes from a stale handler process are refused. */
  fence: 'AGENTQ_LEASE_FENCE',
  /** Where `agentq job error` leaves the code for the worker to read after exit. */
  reportFile: 'AGENTQ_REPORT_FILE',
  /**
   * The checkpoint an earlier attempt saved (as `ctx.lastCheckpoint`), written by the worker
   * before the handler starts: a string as is, anything else as JSON, the way `agentq job
   * checkpoint --file` takes it back. No file when the job has no checkpoint.
   */
  checkpointFile: 'AGENTQ_CHECKPOINT_FILE',
  /** The effect ledger as it was at the claim (as `ctx.effects`): a JSON array, `[]` when empty. */
  effectsFile: 'AGENTQ_EFFECTS_FILE',
  /** Set for the command run by `agentq job effect`: the key to pass to the external system. */
  idempotencyKey: 'AGENTQ_IDEMPOTENCY_KEY',
} as const;

export interface JobEnvInput {
  envelope: JobEnvelope;
  fence: number;
  url: string;
  reportFile: string;
  checkpointFile: string;
  effectsFile: string;
}

/** The variables set for a handler process (on top of the worker's own environment). */
export function jobEnv(i: JobEnvInput): Record<string, string> {
  const e = i.envelope;
  return {
    [JOB_ENV.jobId]: e.job_id,
    [JOB_ENV.attempt]: String(e.attempt),
    [JOB_ENV.deadlineAt]: e.deadline_at ?? '',
    [JOB_ENV.traceId]: e.trace_id ?? '',
    [JOB_ENV.queue]: e.queue,
    [JOB_ENV.tenant]: e.tenant_id,
    [JOB_ENV.workflow]: e.workflow,
    [JOB_ENV.url]: i.url,
    [JOB_ENV.fence]: String(i.fence),
    [JOB_ENV.reportFile]: i.reportFile,
    [JOB_ENV.checkpointFile]: i.checkpointFile,
    [JOB_ENV.effectsFile]: i.effectsFile,
  };
}

export interface CurrentLease {
  lease: LeaseRef;
  url: string;
  reportFile: string | null;
}

/** The lease an `agentq job ...` command acts on; refuses to run outside a handler. */
export function currentLease(env: NodeJS.ProcessEnv): CurrentLease {
  const jobId = env[JOB_ENV.jobId];
  const fenceText = env[JOB_ENV.fence];
  const url = env[JOB_ENV.url];
  if (!jobId || !url || fenceText === undefined) {
    throw new ValidationError(
      `agentq job commands run inside a handler started by \`agentq worker\`: ${JOB_ENV.jobId}, ${JOB_ENV.fence} and ${JOB_ENV.url} must be set`,
    );
  }
  // Digits only, as the worker writes it: through Number(), an empty one was fence 0, which the
  // store refused as a lost lease (exit 1: "another worker took the job over"), and 1e3 was 1000.
  const fence = Number(fenceText);
  if (!/^\d{1,15}$/.test(fenceText) || !Number.isSafeInteger(fence)) {
    throw new ValidationError(`${JOB_ENV.fence} must be the whole number the worker set for this attempt, got ${JSON.stringify(sanitize(fenceText.slice(0, 40)))}`);
  }
  return { lease: { jobId, fence }, url, reportFile: env[JOB_ENV.reportFile] || null };
}

/** What `agentq job error` reports. */
export interface ErrorReport {
  code: string;
  message: string | null;
}

export const ERROR_CODE_RULE = 'must be 1-64 characters of A-Z, 0-9 and _ (e.g. PROVIDER_429)';
export const ERROR_CODE_RE = /^[A-Z0-9_]{1,64}$/;

/** A code that broke the rule, as a message quotes it: control characters visible, at most 80 characters. */
export function shownCode(code: string): string {
  const capped = code.length > 80 ? `${code.slice(0, 80)}…(${code.length} characters)` : code;
  return sanitize(capped);
}
