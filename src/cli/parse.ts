/**
 * Option parsing helpers shared by commands: each failure is a
 * ValidationError (exit 2) whose message names the flag and the rule.
 */
import { ValidationError } from '../core/errors.js';
import { JOB_STATES, NAME_RE, NAME_RULE, REASON_MAX_CHARS, type JobStateName as JobState } from '../core/model.js';

export { REASON_MAX_CHARS };
import { sanitize } from './output/sanitize.js';
import { canonicalJobId, hasJobIdShape, isJobId, isRunId, RUN_ID_PREFIX } from '../core/ids.js';

export function parseIntOption(value: unknown, flag: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const s = String(value).trim();
  if (!/^-?\d+$/.test(s)) throw new ValidationError(`${flag} ${JSON.stringify(value)} must be a whole number from ${min} to ${max}`);
  const n = Number(s);
  if (n < min || n > max) throw new ValidationError(`${flag} ${s} must be a whole number from ${min} to ${max}`);
  return n;
}

/** A decimal number as people write one: `2.5`, `.5`, `1e-4`. Not what else Number() reads (`0x10`, `0b11`, ''). */
export const DECIMAL_RE = /^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

export function parsePositiveNumber(value: unknown, flag: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const s = String(value).trim();
  const n = DECIMAL_RE.test(s) ? Number(s) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0) throw new ValidationError(`${flag} ${JSON.stringify(value)} must be a positive number`);
  return n;
}

export function parseStates(value: unknown): JobState[] | undefined {
  if (value === undefined || value === null) return undefined;
  const parts = String(value)
    .split(',')
    .map((s) => s.trim());
  for (const p of parts) {
    // `--state ''` or `queued,,running` (a variable that was not set) is a mistake, not "no filter".
    if (p === '') throw new ValidationError(`--state ${JSON.stringify(String(value))}: a state is empty; use ${JOB_STATES.join(', ')} (comma-separated)`);
    if (!(JOB_STATES as readonly string[]).includes(p)) {
      throw new ValidationError(`--state ${JSON.stringify(p)} is not a job state: use ${JOB_STATES.join(', ')} (comma-separated)`);
    }
  }
  return parts as JobState[];
}

/** A job id argument: `job_` + a ULID, in any case. Checked before any backend call so typos exit 2, not 5. */
export function checkJobId(given: string): string {
  const id = canonicalJobId(given);
  // A valid ULID is canonical; an id of the right shape that is none may be a record another tool wrote.
  if (!isJobId(id) && !hasJobIdShape(id)) throw new ValidationError(`${JSON.stringify(given)} is not a job id: job ids look like job_ followed by 26 ULID characters (job_01JD3K...)`);
  return id;
}


/** `--reason`, when given: 1-500 characters (an empty one is a mistake, a 5 MB one is not a reason). */
export function checkReason(reason: string | undefined): void {
  if (reason !== undefined && (reason.length === 0 || reason.length > REASON_MAX_CHARS)) {
    throw new ValidationError(`--reason must be 1-${REASON_MAX_CHARS} characters (got ${reason.length})`);
  }
}

/** A run id argument (`dlq runs show`, `--resume`): every run id was made by agentq, so anything else is a typo (exit 2, not 5). */
export function checkRunId(given: string): string {
  const id = given.length === RUN_ID_PREFIX.length + 26 && given.slice(0, RUN_ID_PREFIX.length).toLowerCase() === RUN_ID_PREFIX ? RUN_ID_PREFIX + given.slice(RUN_ID_PREFIX.length).toUpperCase() : given;
  if (!isRunId(id)) throw new ValidationError(`${JSON.stringify(given)} is not a run id: run ids look like run_ followed by 26 ULID characters (as agentq dlq runs lists them)`);
  return id;
}

/**
 * A `--queue` filter: the rule `submit` applies to queue names (core/model.ts NAME_RE). A name no
 * queue can have is a typo, refused (exit 2) rather than answered with an empty result.
 */
export function checkQueueName(queue: string, flag = '--queue'): string {
  if (!NAME_RE.test(queue)) throw new ValidationError(`${flag} ${JSON.stringify(sanitize(queue))}: a queue name ${NAME_RULE}`);
  return queue;
}

/**
 * ` (queues here: a, b, and 1,234 more)` for a message about a queue the store does not know;
 * empty when it knows none. A few names (`surveyQueues`), and how many more: never the whole list.
 */
export function queuesHere(survey: { shown: readonly string[]; more: number }): string {
  if (survey.shown.length === 0) return '';
  const more = survey.more > 0 ? `, and ${survey.more.toLocaleString('en-US')} more` : '';
  return ` (queues here: ${survey.shown.map((q) => sanitize(q)).join(', ')}${more})`;
}
