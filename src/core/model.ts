/**
 * The model's enumerations and limits as plain constants, without zod.
 *
 * Why a separate module: importing zod costs more start-up time than the
 * rest of a read command together (it loads ~100 modules, every locale
 * included). `schemas.ts` builds its zod schemas from these and re-exports
 * them, so code that only needs a state name or a class list — the CLI's
 * option parsing, the backends' read paths — imports this file and keeps
 * zod off the start path of `agentq inspect` / `list` / `tail`.
 */
export const INLINE_INPUT_MAX_BYTES = 64 * 1024;
/** The largest job result a store keeps: what `agentq worker --max-result-bytes` allows at most (16 MiB). */
export const RESULT_MAX_BYTES = 16 * 1024 * 1024;

export const JOB_CLASSES = ['interactive', 'batch', 'maintenance'] as const;
export type JobClassName = (typeof JOB_CLASSES)[number];

export const JOB_STATES = ['queued', 'scheduled', 'running', 'succeeded', 'dead', 'cancelled', 'expired'] as const;
export type JobStateName = (typeof JOB_STATES)[number];

/** How a terminal job ended, as reported to users. `partially_completed` = a non-success with effects started. */
export const OUTCOMES = ['succeeded', 'failed', 'cancelled', 'expired', 'partially_completed'] as const;

export const DEAD_REASONS = ['exhausted', 'permanent', 'lease_lost', 'custody'] as const;

/**
 * A stored dead reason is one of `DEAD_REASONS`: a record written by hand or by a
 * foreign writer may hold any text there, and the reason is printed as a word.
 */
export function isDeadReason(value: unknown): value is (typeof DEAD_REASONS)[number] {
  return typeof value === 'string' && (DEAD_REASONS as readonly string[]).includes(value);
}

/** Error codes of the DLQ entries SQS custody keeps byte-exact (a message body, not a job record). */
export const CUSTODY_KEPT_CODES = ['SQS_FOREIGN', 'SQS_MALFORMED', 'SQS_ORPHAN'] as const;

/**
 * Why a DLQ entry kept by SQS custody is listed as malformed: the custody's own finding (which
 * rule the message broke, or that it is foreign), not the job-record schema check of a body that
 * was never a job record (which listed every job field it lacks). Null for any other entry.
 */
export function custodyMalformed(deadReason: unknown, errorCode: unknown, errorMessage: unknown): string | null {
  if (deadReason !== 'custody' || !(CUSTODY_KEPT_CODES as readonly unknown[]).includes(errorCode)) return null;
  return `a message taken into custody from SQS, kept byte-exact: ${typeof errorMessage === 'string' && errorMessage !== '' ? errorMessage : String(errorCode)}`;
}

export const EFFECT_STATUSES = ['started', 'done'] as const;

export const EVENT_TYPES = [
  'submitted',
  'claimed',
  'checkpoint',
  'effect_started',
  'effect_done',
  'retry_scheduled',
  'succeeded',
  'dead',
  'cancel_requested',
  'cancelled',
  'expired',
  'lease_expired',
  'released',
  'redriven',
  'purged',
] as const;

/**
 * The largest `estimated_seconds` a job may declare: 100 years, as the longest duration agentq takes.
 * The stores keep running sums of it per queue and tenant (the admission backlog): one job of
 * 1e308 s made such a sum Infinity, which no later subtraction undoes, so every later submit to
 * the queue was refused for good under an admission limit.
 */
export const MAX_ESTIMATED_SECONDS = 36_500 * 86_400;

/** Queue, tenant and key names: printable, bounded, no separators that break key layouts. */
/** The longest reason (`--reason`, a library `cancel`): it is stored with the job or run and shown by inspect and the audit (the rule `dlq` bulk actions apply). */
export const REASON_MAX_CHARS = 500;

export const NAME_RULE = 'must be 1-128 characters of letters, digits and . _ - (starting with a letter or digit)';
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const WORKFLOW_RULE = 'must look like name:vN, e.g. research_report:v3';
export const WORKFLOW_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}:v\d{1,6}$/;

/**
 * The zod schemas (`schemas.ts`), loaded when something first needs to validate.
 * A backend's read path must not pay for zod, yet a synchronous step deep inside
 * one (checking a stored DLQ document) may need a schema: the backend's async
 * method awaits `loadSchemas()` first, and the step reads `loadedSchemas()`.
 */
let schemas: typeof import('./schemas.js') | undefined;

export async function loadSchemas(): Promise<typeof import('./schemas.js')> {
  schemas ??= await import('./schemas.js');
  return schemas;
}

/** The schemas `loadSchemas()` loaded; calling it before then is a bug in the caller. */
export function loadedSchemas(): typeof import('./schemas.js') {
  if (schemas === undefined) throw new Error('core/schemas.js is used before loadSchemas() was awaited');
  return schemas;
}
