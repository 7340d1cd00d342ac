/**
 * The verdict of a bulk DLQ action on one entry. Used twice with the same
 * rules: when the plan is built, and again inside the backend's atomic apply
 * step (a job may have expired, or left the DLQ, since the plan was made).
 */
import type { DlqEntry } from './schemas.js';
import { formatDuration } from './duration.js';
import { budgetBreach, jobUsage } from './usage.js';

/** `prune` (finished jobs, not DLQ entries) shares the runs, ledger and lock of the DLQ actions: core/prune. */
export type Action = 'redrive' | 'purge' | 'expire' | 'prune';

export type Verdict =
  | 'redrive'
  | 'purge'
  | 'expire'
  | 'prune'
  | 'skip:expired'
  | 'skip:partial'
  | 'skip:quarantined'
  | 'skip:over_budget'
  | 'skip:malformed'
  | 'skip:not_in_dlq'
  | 'skip:not_expired'
  | 'skip:changed'
  | 'skip:not_prunable';

export interface VerdictOptions {
  action: Action;
  /** Epoch ms. */
  now: number;
  /** Less time than this left before the deadline counts as expired (a redrive could not finish). */
  minRemainingMs: number;
  /** Redrive jobs whose effect ledger shows an external effect started (needs --force). */
  includePartial: boolean;
  /** Jobs redriven this many times already are quarantined. */
  maxRedrives: number;
  /**
   * Epoch ms when the plan read the DLQ (its `created_at`), at apply time. An entry that died after
   * it is another death than the one the plan judged (the job was redriven and failed again, maybe
   * with another error): `skip:changed`, left in the DLQ. Absent while the plan is being built.
   */
  plannedAt?: number;
}

export const DEFAULT_MAX_REDRIVES = 3;

/** True when the deadline has passed or less than `minRemainingMs` is left. */
export function isExpiredAt(deadlineAt: string | null, now: number, minRemainingMs = 0): boolean {
  if (deadlineAt === null) return false;
  return Date.parse(deadlineAt) - now <= minRemainingMs;
}

export function verdictFor(entry: DlqEntry | null, o: VerdictOptions): { verdict: Verdict; detail: string | null } {
  if (entry === null) return { verdict: 'skip:not_in_dlq', detail: 'the job is no longer in the DLQ' };
  if (entry.malformed !== null) return { verdict: 'skip:malformed', detail: entry.malformed };
  if (o.plannedAt !== undefined && Date.parse(entry.dead_at) > o.plannedAt) {
    return { verdict: 'skip:changed', detail: `it died again at ${entry.dead_at}, after the plan was made (${new Date(o.plannedAt).toISOString()}): not the death the plan judged` };
  }
  const expired = isExpiredAt(entry.deadline_at, o.now, o.minRemainingMs);
  switch (o.action) {
    case 'purge':
      return { verdict: 'purge', detail: null };
    case 'prune':
      // A DLQ entry is never pruned (core/prune): it is `dlq purge`'s.
      return { verdict: 'skip:not_prunable', detail: 'the job is dead (a DLQ entry): prune never deletes those; dlq purge does' };
    case 'expire':
      return expired
        ? { verdict: 'expire', detail: null }
        : { verdict: 'skip:not_expired', detail: notExpiredDetail(entry.deadline_at, o) };
    case 'redrive':
      if (expired) {
        return {
          verdict: 'skip:expired',
          detail: expiredDetail(entry.deadline_at!, o),
        };
      }
      if (entry.partial && !o.includePartial) {
        return { verdict: 'skip:partial', detail: 'the effect ledger shows an external effect started; reconcile by hand or use --include-partial --force' };
      }
      // A redriven job keeps what it spent: with its budget used up, its next attempt would fail
      // BUDGET_EXCEEDED at once (the worker checks before it runs a job).
      const usedUp = entry.job === null ? null : budgetBreach(jobUsage(entry.job.attempts), entry.job.budget, false);
      if (usedUp) return { verdict: 'skip:over_budget', detail: `its budget is used up (${usedUp}): it would fail again at once` };
      if (entry.redrive_count >= o.maxRedrives) {
        return { verdict: 'skip:quarantined', detail: `redriven ${entry.redrive_count === 1 ? 'once' : `${entry.redrive_count} times`} already (limit ${o.maxRedrives})` };
      }
      return { verdict: 'redrive', detail: null };
  }
}

/** Why an entry counts as expired: its deadline passed, or less than `--min-remaining` is left before it. */
function expiredDetail(deadlineAt: string, o: VerdictOptions): string {
  const left = Date.parse(deadlineAt) - o.now;
  if (o.minRemainingMs > 0 && left > 0) {
    return `only ${formatDuration(left)} left before the deadline ${deadlineAt}, less than --min-remaining ${formatDuration(o.minRemainingMs)}`;
  }
  return `deadline ${deadlineAt} passed`;
}

/** Why `expire` leaves an entry: it has no deadline, or enough time is left before it. */
function notExpiredDetail(deadlineAt: string | null, o: VerdictOptions): string {
  if (deadlineAt === null) return 'no deadline: it never expires';
  if (o.minRemainingMs > 0) return `deadline ${deadlineAt} is more than --min-remaining ${formatDuration(o.minRemainingMs)} away`;
  return `deadline ${deadlineAt} has not passed`;
}

/** What a run recorded (`RunRecord`'s action and options): its apply step re-checks with these. */
export interface RunVerdictSource {
  action: Action;
  options: { minRemainingMs?: number; includePartial?: boolean; maxRedrives?: number; plannedAt?: string };
}

/** The verdict options of a run's apply step at `now`: the rules the plan was made with, and when it read the DLQ. */
export function runVerdictOptions(run: RunVerdictSource, now: number): VerdictOptions {
  const plannedAt = run.options.plannedAt === undefined ? NaN : Date.parse(run.options.plannedAt);
  return {
    action: run.action,
    now,
    minRemainingMs: run.options.minRemainingMs ?? 0,
    includePartial: run.options.includePartial ?? false,
    maxRedrives: run.options.maxRedrives ?? DEFAULT_MAX_REDRIVES,
    ...(Number.isFinite(plannedAt) ? { plannedAt } : {}),
  };
}
