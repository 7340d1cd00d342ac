/**
 * The DLQ selector: flags as typed by the operator → a validated `DlqFilter`.
 * Every rule is checked here, before any read or write, and a broken rule is
 * named in the error (exit 2), so `--since 6` or `--min-attempts 3
 * --max-attempts 1` never silently selects nothing — or everything.
 */
import { ValidationError } from '../core/errors.js';
import { DLQ_GREP_MAX_CHARS, type DlqFilter } from '../backend/contract.js';
import { parseDuration, parsePastTime, toIso } from '../core/duration.js';
import { DEAD_REASONS, NAME_RULE, Name, WORKFLOW_RULE, Workflow, type DeadReason } from '../core/schemas.js';

/** The selector flags shared by list, summary, export, redrive, purge and expire. */
export interface SelectorInput {
  queue?: string;
  tenant?: string;
  workflow?: string;
  errorCode?: string[];
  reason?: string;
  since?: string;
  until?: string;
  minAttempts?: string;
  maxAttempts?: string;
  expired?: boolean;
  notExpired?: boolean;
  minRemaining?: string;
  /** `--partial` → true, `--no-partial` → false. */
  partial?: boolean;
  /** Which of `--partial` / `--no-partial` were typed (both is a contradiction, not "last one wins"). */
  partialFlags?: string[];
  grep?: string;
}

export interface Selector {
  filter: DlqFilter;
  /** The flags as given (only those present), for plans and the audit record. */
  given: Record<string, unknown>;
  /** From `--min-remaining`; 0 when absent. Also feeds the redrive verdicts. */
  minRemainingMs: number;
}

/**
 * What `--error-code` takes: any code a store can hold, as `fail()` takes it (1-128 characters;
 * older versions and SQS custody stored codes outside the worker's rule, `HTTP 429`,
 * `Provider.Quota`), without control characters (never a typed code).
 */
const ERROR_CODE_RE = /^[^\p{Cc}]{1,128}$/u;

function parseCount(text: string, flag: string): number {
  if (!/^\d{1,9}$/.test(text.trim())) throw new ValidationError(`${flag} ${JSON.stringify(text)} must be a whole number ≥ 0`);
  return Number(text.trim());
}

/**
 * How the operator spelled a flag where it differs by command: on the bulk actions the dead-reason
 * filter is `--dead-reason` (their `--reason` is the audit note), and an error must name the flag
 * that was typed.
 */
export interface SelectorSpelling {
  reason?: string;
}

export function parseSelector(input: SelectorInput, now: number, spelling: SelectorSpelling = {}): Selector {
  const filter: DlqFilter = {};
  const given: Record<string, unknown> = {};

  if (input.queue !== undefined) {
    if (!Name.safeParse(input.queue).success) throw new ValidationError(`--queue ${JSON.stringify(input.queue)}: a queue name ${NAME_RULE}`);
    filter.queue = given.queue = input.queue;
  }
  if (input.tenant !== undefined) {
    if (!Name.safeParse(input.tenant).success) throw new ValidationError(`--tenant ${JSON.stringify(input.tenant)}: a tenant id ${NAME_RULE}`);
    filter.tenant = given.tenant = input.tenant;
  }
  if (input.workflow !== undefined) {
    if (!Workflow.safeParse(input.workflow).success) throw new ValidationError(`--workflow ${JSON.stringify(input.workflow)}: a workflow ${WORKFLOW_RULE}`);
    filter.workflow = given.workflow = input.workflow;
  }
  if (input.errorCode !== undefined && input.errorCode.length > 0) {
    for (const code of input.errorCode) {
      if (!ERROR_CODE_RE.test(code)) {
        throw new ValidationError(`--error-code ${JSON.stringify(code)}: an error code is 1-128 characters, none of them a control character (e.g. PROVIDER_429)`);
      }
    }
    // The worker stores codes in upper case (A-Z, 0-9, _), so a code typed in lower case means
    // that one, not none: `--error-code permission` is PERMISSION. The code as typed is matched too:
    // a store holds codes of other writers as they wrote them (`Provider.Quota`), and `dlq summary`
    // shows them so; upper-casing alone selected none of them.
    filter.errorCodes = [...new Set(input.errorCode.flatMap((code) => [code, code.toUpperCase()]))];
    given.error_code = filter.errorCodes;
  }
  if (input.reason !== undefined) {
    if (!(DEAD_REASONS as readonly string[]).includes(input.reason)) {
      throw new ValidationError(`${spelling.reason ?? '--reason'} ${JSON.stringify(input.reason)}: the dead reason must be one of ${DEAD_REASONS.join(', ')}`);
    }
    filter.reason = input.reason as DeadReason;
    given.reason = input.reason;
  }
  if (input.since !== undefined) {
    filter.since = parsePastTime(input.since, now, '--since');
    given.since = toIso(filter.since);
  }
  if (input.until !== undefined) {
    filter.until = parsePastTime(input.until, now, '--until');
    given.until = toIso(filter.until);
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    throw new ValidationError(`--since (${toIso(filter.since)}) must be before --until (${toIso(filter.until)})`);
  }
  if (input.minAttempts !== undefined) filter.minAttempts = given.min_attempts = parseCount(input.minAttempts, '--min-attempts');
  if (input.maxAttempts !== undefined) filter.maxAttempts = given.max_attempts = parseCount(input.maxAttempts, '--max-attempts');
  if (filter.minAttempts !== undefined && filter.maxAttempts !== undefined && filter.minAttempts > filter.maxAttempts) {
    throw new ValidationError(`--min-attempts (${filter.minAttempts}) must not be greater than --max-attempts (${filter.maxAttempts})`);
  }
  if (input.expired && input.notExpired) throw new ValidationError('--expired and --not-expired exclude each other: give one');
  let minRemainingMs = 0;
  if (input.minRemaining !== undefined) {
    minRemainingMs = parseDuration(input.minRemaining, '--min-remaining');
    given.min_remaining = input.minRemaining;
    filter.minRemainingMs = minRemainingMs;
  }
  if (input.expired) filter.expired = given.expired = true;
  if (input.notExpired) {
    filter.expired = false;
    given.expired = false;
  }
  if (filter.expired !== undefined) filter.now = now;
  if (input.partialFlags?.includes('--partial') && input.partialFlags.includes('--no-partial')) {
    throw new ValidationError('--partial and --no-partial exclude each other: give one');
  }
  if (input.partial !== undefined) filter.partial = given.partial = input.partial;
  if (input.grep !== undefined) {
    if (input.grep.length === 0 || input.grep.length > DLQ_GREP_MAX_CHARS) throw new ValidationError(`--grep TEXT must be 1-${DLQ_GREP_MAX_CHARS} characters`);
    filter.grep = given.grep = input.grep;
  }
  return { filter, given, minRemainingMs };
}

/**
 * True when the operator narrowed the selection at all. `--min-remaining` alone does not select, and
 * neither does a queue that came from the context (`scopedBy: 'context'`): it scopes the action, as a
 * kubectl context's namespace does, but acting on all of it still takes `--all`.
 */
export function hasSelector(s: Selector, scopedBy: 'flag' | 'context' = 'flag'): boolean {
  return Object.keys(s.given).some((k) => k !== 'min_remaining' && !(k === 'queue' && scopedBy === 'context'));
}

/** A bulk action with no selector would touch the whole DLQ (or the context's queue's): refused unless `--all` says so. */
export function requireSelector(s: Selector, all: boolean, verb: string, scopedBy: 'flag' | 'context' = 'flag'): void {
  if (hasSelector(s, scopedBy) || all) return;
  if (scopedBy === 'context' && s.filter.queue !== undefined) {
    throw new ValidationError(
      `${verb} with no selector would act on the whole DLQ of queue ${s.filter.queue} (the context's queue): refused`,
      "The context's queue scopes the action but does not select: narrow it (--tenant, --workflow, --error-code, --since, …) or say --all explicitly.",
      'NO_SELECTOR',
    );
  }
  throw new ValidationError(
    `${verb} with no selector would act on the whole DLQ: refused`,
    'Narrow it (--queue, --tenant, --workflow, --error-code, --since, …) or say --all explicitly.',
    'NO_SELECTOR',
  );
}
