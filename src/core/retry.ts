/**
 * Retry policy: which errors are worth retrying, when, and when to give up.
 * Pure: the clock reading, the random source and the queue's recent traffic
 * are passed in.
 */
import type { DeadReason } from './schemas.js';

export interface RetryPolicy {
  /** Delay window per retry number: the first retry (attempt 2) waits 5–15 s, the second 30–90 s, … */
  backoff: ReadonlyArray<{ minMs: number; maxMs: number }>;
  /** Retries beyond the table: the last window times `growth` per extra step, capped at `maxDelayMs`. */
  growth: number;
  maxDelayMs: number;
  /** Retries may not exceed this fraction of the queue's recent traffic … */
  retryBudgetRatio: number;
  /** … unless there were fewer than this many retries in the window (so a quiet queue can still retry). */
  retryBudgetMinRetries: number;
  /** The window over which traffic is counted. */
  retryBudgetWindowMs: number;
  /** Over budget, the retry is pushed this much later instead of storming. */
  overBudgetDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  backoff: [
    { minMs: 5_000, maxMs: 15_000 },
    { minMs: 30_000, maxMs: 90_000 },
    { minMs: 180_000, maxMs: 540_000 },
  ],
  growth: 3,
  maxDelayMs: 3_600_000,
  retryBudgetRatio: 0.2,
  retryBudgetMinRetries: 10,
  retryBudgetWindowMs: 60_000,
  overBudgetDelayMs: 60_000,
};

/**
 * Handler-reported error codes and how they are treated. Anything not listed
 * is permanent unless the handler marks it retryable (exit 75).
 */
export const ERROR_CODE_TABLE: Readonly<Record<string, { retryable: boolean; meaning: string }>> = {
  PROVIDER_429: { retryable: true, meaning: 'model or API provider rate limit' },
  PROVIDER_5XX: { retryable: true, meaning: 'provider 500/502/503/504' },
  NETWORK: { retryable: true, meaning: 'connection reset, DNS failure, socket timeout' },
  TIMEOUT: { retryable: true, meaning: 'a tool or provider call timed out' },
  LEASE_EXPIRED: { retryable: true, meaning: 'the worker lost its lease (crash, stall)' },
  TRANSIENT: { retryable: true, meaning: 'handler exited 75 (EX_TEMPFAIL) without a code' },
  VALIDATION: { retryable: false, meaning: 'the input is invalid' },
  PERMISSION: { retryable: false, meaning: 'not allowed (401/403)' },
  BUDGET_EXCEEDED: { retryable: false, meaning: 'token or cost ceiling reached' },
  HANDLER_FAILED: { retryable: false, meaning: 'handler exited non-zero (not 75) without a code' },
  HANDLER_KILLED: { retryable: true, meaning: 'the handler process was killed by a signal the worker did not send (OOM killer, supervisor, operator)' },
};

const RETRYABLE_HTTP = new Set([408, 429, 500, 502, 503, 504]);

/** Classifies an error code (and optional HTTP status) as retryable or permanent. */
export function classifyError(code: string, opts: { status?: number; retryableHint?: boolean } = {}): boolean {
  const known = ERROR_CODE_TABLE[code];
  if (known) return known.retryable;
  if (opts.status !== undefined) return RETRYABLE_HTTP.has(opts.status);
  return opts.retryableHint ?? false;
}

/** The delay before retry number `retry` (1 = the first retry, i.e. attempt 2). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const table = policy.backoff;
  let window = table[Math.min(retry, table.length) - 1] ?? { minMs: 1000, maxMs: 1000 };
  if (retry > table.length) {
    const factor = policy.growth ** (retry - table.length);
    window = { minMs: window.minMs * factor, maxMs: window.maxMs * factor };
  }
  const delay = window.minMs + random() * (window.maxMs - window.minMs);
  return Math.min(Math.round(delay), policy.maxDelayMs);
}

export interface RecentTraffic {
  /** Attempts started in the window. */
  attempts: number;
  /** Retries scheduled in the window. */
  retries: number;
}

export type FailureDecision =
  | { kind: 'retry'; runAt: number; overBudget: boolean }
  | { kind: 'dead'; reason: DeadReason }
  | { kind: 'expired' };

export interface FailureInput {
  retryable: boolean;
  /** Attempts made so far, including the one that just failed. */
  attempt: number;
  maxAttempts: number;
  /** Epoch ms, or null for no deadline. */
  deadlineAt: number | null;
}

/**
 * Decides what happens to a job whose attempt failed:
 * permanent → dead; out of attempts → dead (exhausted); a retry that would
 * start past the deadline → expired; otherwise retry after a jittered
 * backoff, pushed later when the queue is over its retry budget.
 */
export function decideFailure(
  input: FailureInput,
  now: number,
  random: () => number,
  traffic: RecentTraffic,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): FailureDecision {
  if (input.deadlineAt !== null && now >= input.deadlineAt) return { kind: 'expired' };
  if (!input.retryable) return { kind: 'dead', reason: 'permanent' };
  if (input.attempt >= input.maxAttempts) return { kind: 'dead', reason: 'exhausted' };
  let delay = backoffDelay(input.attempt, policy, random);
  const overBudget =
    traffic.retries >= policy.retryBudgetMinRetries && traffic.retries + 1 > policy.retryBudgetRatio * Math.max(traffic.attempts, 1);
  if (overBudget) delay += policy.overBudgetDelayMs;
  const runAt = now + delay;
  if (input.deadlineAt !== null && runAt >= input.deadlineAt) return { kind: 'expired' };
  return { kind: 'retry', runAt, overBudget };
}
