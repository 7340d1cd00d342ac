/**
 * The wire model: zod schemas for everything agentq prints as JSON or stores.
 * These shapes are the public contract (`-o json`, `tail -o ndjson`, the
 * library API). Field names are snake_case on the wire; times are ISO-8601
 * strings in UTC.
 */
import { z } from 'zod';
import { DEAD_REASONS, EFFECT_STATUSES, EVENT_TYPES, INLINE_INPUT_MAX_BYTES, JOB_CLASSES, JOB_STATES, MAX_ESTIMATED_SECONDS, NAME_RE, NAME_RULE, OUTCOMES, WORKFLOW_RE, WORKFLOW_RULE } from './model.js';

// The enumerations live in the zod-free `model.ts` (cheap to import on read paths); re-exported here unchanged.
export { DEAD_REASONS, EFFECT_STATUSES, INLINE_INPUT_MAX_BYTES, JOB_CLASSES, JOB_STATES, OUTCOMES };

export const JobClass = z.enum(JOB_CLASSES);
export type JobClass = z.infer<typeof JobClass>;

export const JobState = z.enum(JOB_STATES);
export type JobState = z.infer<typeof JobState>;

export const Outcome = z.enum(OUTCOMES);
export type Outcome = z.infer<typeof Outcome>;

export const DeadReason = z.enum(DEAD_REASONS);
export type DeadReason = z.infer<typeof DeadReason>;

const isoTime = z.iso.datetime({ offset: true });

export { NAME_RULE, WORKFLOW_RULE };
export const Name = z.string().regex(NAME_RE, `name ${NAME_RULE}`);
export const Workflow = z.string().regex(WORKFLOW_RE, `workflow ${WORKFLOW_RULE}`);

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits');

export const Budget = z.object({
  tokens: z.number().int().positive().nullable().default(null),
  cost_usd: z.number().positive().nullable().default(null),
});
export type Budget = z.infer<typeof Budget>;

/**
 * What a producer sends. Defaults are applied by `normalizeSubmit` in
 * `core/submit.ts`, not here, so the idempotency check compares like with like.
 */
export const SubmitRequest = z
  .object({
    workflow: Workflow,
    queue: Name.default('default'),
    tenant_id: Name.default('default'),
    operation: z.string().min(1).max(200).nullable().default(null),
    class: JobClass.default('batch'),
    input: z.string().nullable().default(null),
    input_ref: z.string().min(1).max(2048).nullable().default(null),
    input_sha256: Sha256.nullable().default(null),
    deadline_at: isoTime.nullable().default(null),
    idempotency_key: z.string().min(1).max(256).nullable().default(null),
    max_attempts: z.number().int().min(1).max(100).default(3),
    trace_id: z.string().min(1).max(128).nullable().default(null),
    budget: Budget.nullable().default(null),
    allowed_tools: z.array(z.string().min(1).max(128)).max(256).default([]),
    /** Estimated seconds of work, for admission control; defaults per workflow in config. */
    estimated_seconds: z.number().positive().max(MAX_ESTIMATED_SECONDS, `must be at most ${MAX_ESTIMATED_SECONDS} (100 years)`).nullable().default(null),
    /** Not before this time: the job starts `scheduled`. */
    run_at: isoTime.nullable().default(null),
  })
  .strict();
export type SubmitRequest = z.input<typeof SubmitRequest>;
export type NormalizedSubmit = z.output<typeof SubmitRequest>;

export const AttemptRecord = z.object({
  attempt: z.number().int().min(1),
  worker_id: z.string(),
  worker_version: z.string().nullable(),
  started_at: isoTime,
  ended_at: isoTime.nullable(),
  /** `succeeded`, `failed`, `lease_lost`, `cancelled`, `expired`, `released`, or null while running. */
  outcome: z.string().nullable(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  /** What the attempt spent, as its handler reported it (`ctx.reportUsage`, `agentq job usage`); absent or null: nothing reported (records written before usage existed have no field). */
  usage: z.object({ tokens: z.number().min(0), cost_usd: z.number().min(0) }).nullable().optional(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

export const Effect = z.object({
  key: z.string(),
  status: z.enum(EFFECT_STATUSES),
  /** Stable key to hand to the external system: `<job_id>:<effect key>`. */
  idempotency_key: z.string(),
  attempt: z.number().int(),
  started_at: isoTime,
  done_at: isoTime.nullable(),
  result: z.unknown().nullable(),
});
export type Effect = z.infer<typeof Effect>;

export const LeaseInfo = z.object({
  worker_id: z.string(),
  fence: z.number().int(),
  expires_at: isoTime,
});
export type LeaseInfo = z.infer<typeof LeaseInfo>;

export const JobError = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
});
export type JobError = z.infer<typeof JobError>;

export const DeadInfo = z.object({
  reason: DeadReason,
  dead_at: isoTime,
  error_code: z.string(),
  error_message: z.string(),
  worker_version: z.string().nullable(),
});
export type DeadInfo = z.infer<typeof DeadInfo>;

export const Lineage = z.object({
  redrive_count: z.number().int().min(0),
  redriven_at: isoTime.nullable(),
  redrive_run: z.string().nullable(),
});
export type Lineage = z.infer<typeof Lineage>;

/** The envelope a worker receives: the submit fields plus identity and attempt. */
export const JobEnvelope = z.object({
  job_id: z.string(),
  tenant_id: z.string(),
  queue: z.string(),
  workflow: z.string(),
  operation: z.string().nullable(),
  class: JobClass,
  input: z.string().nullable(),
  input_ref: z.string().nullable(),
  input_sha256: z.string().nullable(),
  deadline_at: isoTime.nullable(),
  idempotency_key: z.string().nullable(),
  attempt: z.number().int().min(0),
  max_attempts: z.number().int().min(1),
  trace_id: z.string().nullable(),
  budget: Budget.nullable(),
  allowed_tools: z.array(z.string()),
  estimated_seconds: z.number().nullable(),
  created_at: isoTime,
});
export type JobEnvelope = z.infer<typeof JobEnvelope>;

/** A job as stored and shown by `inspect -o json`. */
export const Job = JobEnvelope.extend({
  state: JobState,
  /** Set for terminal jobs. */
  outcome: Outcome.nullable(),
  updated_at: isoTime,
  /** When a `queued`/`scheduled` job becomes claimable. */
  run_at: isoTime,
  ended_at: isoTime.nullable(),
  lease: LeaseInfo.nullable(),
  cancel_requested_at: isoTime.nullable(),
  cancel_reason: z.string().nullable(),
  checkpoint: z.unknown().nullable(),
  effects: z.array(Effect),
  last_error: JobError.nullable(),
  attempts: z.array(AttemptRecord),
  result: z.string().nullable(),
  dead: DeadInfo.nullable(),
  lineage: Lineage,
});
export type Job = z.infer<typeof Job>;

/** `Job` and `JobEnvelope` compiled by zod into one generated function each, on first use (see `jobIssues`). */
let compiledJob: typeof Job | undefined;
let compiledEnvelope: typeof JobEnvelope | undefined;

/**
 * Why a stored document is not a `Job`, or null when it is one. Every DLQ read checks every
 * document it returns (a DLQ may hold records from older versions or edited by hand), so the
 * common case goes through the assert-only validator of `z.compile`: one generated function that
 * builds no copy of the document and needs no warm-up (about 2 µs per document from the first
 * one, where `safeParse` took 57 µs per document over the first 5,000 of a process and 4 µs
 * after). Only a rejected document is parsed again, by the regular parser, for its issues; the
 * regular parser has the last word.
 */
export function jobIssues(value: unknown): string | null {
  compiledJob ??= z.compile(Job);
  return issuesOf(compiledJob, Job, value, 'job');
}

/** The same for a message body: every message an SQS sweep or worker receives is checked (envelope.ts). */
export function envelopeIssues(value: unknown): string | null {
  compiledEnvelope ??= z.compile(JobEnvelope);
  return issuesOf(compiledEnvelope, JobEnvelope, value, 'body');
}

function issuesOf(compiled: z.ZodType, schema: z.ZodType, value: unknown, what: string): string | null {
  if (compiled.validate(value)) return null;
  const parsed = schema.safeParse(value);
  if (parsed.success) return null;
  return parsed.error.issues.map((i) => `${i.path.join('.') || what}: ${i.message}`).join('; ');
}

export { EVENT_TYPES };
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;

/** One line of `tail -o ndjson`. `seq` is a per-backend monotonically increasing cursor. */
export const JobEvent = z.object({
  type: EventType,
  seq: z.string(),
  at: isoTime,
  job_id: z.string(),
  queue: z.string(),
  tenant_id: z.string(),
  from_state: JobState.nullable(),
  to_state: JobState.nullable(),
  attempt: z.number().int(),
  data: z.record(z.string(), z.unknown()).nullable(),
});
export type JobEvent = z.infer<typeof JobEvent>;

/** A job in the DLQ, as `dlq list/show -o json` prints it. */
export const DlqEntry = z.object({
  job_id: z.string(),
  queue: z.string(),
  tenant_id: z.string(),
  workflow: z.string(),
  class: JobClass,
  dead_at: isoTime,
  reason: DeadReason,
  error_code: z.string(),
  error_message: z.string(),
  worker_version: z.string().nullable(),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  deadline_at: isoTime.nullable(),
  /** True when the effect ledger shows an external effect started. */
  partial: z.boolean(),
  redrive_count: z.number().int(),
  /** Set when the stored entry cannot be parsed into a job: never moved or deleted by bulk actions. */
  malformed: z.string().nullable(),
  /** The full job, when it parses. */
  job: Job.nullable(),
});
export type DlqEntry = z.infer<typeof DlqEntry>;
