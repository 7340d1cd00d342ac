import type { Job, JobEnvelope } from './schemas.js';

/**
 * The envelope a worker receives (and SQS carries): the submit fields plus
 * identity and attempt, without the runtime state. Built field by field so
 * runtime fields (lease, effects, result) never leak into a message.
 */
export function toEnvelope(job: Job): JobEnvelope {
  return {
    job_id: job.job_id,
    tenant_id: job.tenant_id,
    queue: job.queue,
    workflow: job.workflow,
    operation: job.operation,
    class: job.class,
    input: job.input,
    input_ref: job.input_ref,
    input_sha256: job.input_sha256,
    deadline_at: job.deadline_at,
    idempotency_key: job.idempotency_key,
    attempt: job.attempt,
    max_attempts: job.max_attempts,
    trace_id: job.trace_id,
    budget: job.budget,
    allowed_tools: job.allowed_tools,
    estimated_seconds: job.estimated_seconds,
    created_at: job.created_at,
  };
}
