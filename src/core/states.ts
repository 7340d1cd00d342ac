import { IllegalTransitionError } from './errors.js';
import type { Job, JobState, Outcome } from './schemas.js';

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['succeeded', 'dead', 'cancelled', 'expired']);

/**
 * The allowed transitions. Every backend enforces this table; the conformance
 * suite checks that anything else is refused.
 *
 * - `dead → queued` is a redrive; `dead → expired` is `dlq expire`.
 * - `running → queued` is a released lease (graceful worker shutdown) or a
 *   reclaimed expired lease that still has attempts left and time before its deadline.
 */
export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  // `queued/scheduled → dead`: only custody on SQS — the broker's native backstop
  // (maxReceiveCount) dead-lettered the job's message before any attempt held a lease.
  queued: ['running', 'cancelled', 'expired', 'scheduled', 'dead'],
  scheduled: ['queued', 'running', 'cancelled', 'expired', 'dead'],
  running: ['succeeded', 'scheduled', 'queued', 'dead', 'cancelled', 'expired'],
  succeeded: [],
  dead: ['queued', 'expired'],
  cancelled: [],
  expired: [],
};

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}

export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(jobId: string, from: JobState, to: JobState): void {
  if (!canTransition(from, to)) {
    throw new IllegalTransitionError(`${jobId} cannot go from ${from} to ${to}`);
  }
}

/** True when the effect ledger shows an external effect started (done or not). */
export function isPartial(job: Pick<Job, 'effects'>): boolean {
  return job.effects.length > 0;
}

/** The outcome reported for a job entering a terminal state. */
export function outcomeFor(state: JobState, partial: boolean): Outcome | null {
  switch (state) {
    case 'succeeded':
      return 'succeeded';
    case 'dead':
      return partial ? 'partially_completed' : 'failed';
    case 'cancelled':
      return partial ? 'partially_completed' : 'cancelled';
    case 'expired':
      return partial ? 'partially_completed' : 'expired';
    default:
      return null;
  }
}

/**
 * How long ago a running job's lease ran out (ms), or null when it has not (or the job is not
 * running). Expired leases are reaped lazily: the job stays `running` until the next claim on its
 * queue takes it back, so a job whose worker died looks running until then; this tells them apart.
 */
export function leaseExpiredFor(job: Pick<Job, 'state' | 'lease'>, now: number): number | null {
  if (job.state !== 'running' || !job.lease) return null;
  const over = now - Date.parse(job.lease.expires_at);
  return over >= 0 ? over : null;
}
