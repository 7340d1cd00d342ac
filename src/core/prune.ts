/**
 * Retention for finished jobs (`agentq prune`): which jobs a prune may delete, and the summary of
 * a prune plan. Pure. The same rule (`pruneCheck`) judges each job twice: when the plan is built
 * and again inside the backend's atomic apply step, since a job may have changed since the plan
 * (a resubmit cannot revive a finished job, but a store shared by several tools may still move it).
 *
 * What is never pruned: jobs still waiting or running (they have no end), and `dead` jobs, which
 * are DLQ entries and belong to `dlq purge` (a prune must not empty the DLQ behind its triage).
 */
import { ValidationError } from './errors.js';
import { parseDuration } from './duration.js';
import type { JobState } from './schemas.js';

/** The states a prune may delete: the ends that are not DLQ entries. */
export const PRUNABLE_STATES = ['succeeded', 'cancelled', 'expired'] as const satisfies readonly JobState[];
export type PrunableState = (typeof PRUNABLE_STATES)[number];

/** What a prune deletes: jobs in one of `states` that ended strictly before `before` (epoch ms). */
export interface PruneRule {
  states: readonly PrunableState[];
  before: number;
}

/**
 * `--state a,b`: a subset of the prunable states (default all of them). `dead` is refused with the
 * command that does handle it, so an operator who meant "the DLQ too" learns where to go.
 */
export function parsePruneStates(text: string | undefined): PrunableState[] {
  if (text === undefined) return [...PRUNABLE_STATES];
  const out: PrunableState[] = [];
  for (const raw of text.split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    if (s === 'dead') {
      throw new ValidationError('--state dead: dead jobs are DLQ entries; prune deletes only succeeded, cancelled and expired jobs', 'Delete DLQ entries with: agentq dlq purge --queue NAME --dry-run');
    }
    if (!(PRUNABLE_STATES as readonly string[]).includes(s)) {
      throw new ValidationError(`--state ${JSON.stringify(s)} cannot be pruned: prune deletes only jobs that ended, in states ${PRUNABLE_STATES.join(', ')}`);
    }
    if (!out.includes(s as PrunableState)) out.push(s as PrunableState);
  }
  if (out.length === 0) throw new ValidationError(`--state is empty: name one or more of ${PRUNABLE_STATES.join(', ')}`);
  return out;
}

/** `--older-than D`: required (a prune without an age would delete what just finished), a duration of at least 1s. */
export function parsePruneCutoff(text: string | undefined, now: number): number {
  if (text === undefined || text.trim() === '') {
    throw new ValidationError('--older-than is required: prune deletes only jobs that ended longer ago than it (e.g. --older-than 7d)');
  }
  const ms = parseDuration(text, '--older-than');
  if (ms < 1000) throw new ValidationError(`--older-than ${JSON.stringify(text)} is too short: at least 1s (a prune must not race jobs that are just ending)`);
  return now - ms;
}

/** Whether a job falls under the rule now; null when it does, else why not (a ledger item's detail). */
export function pruneCheck(state: string | null, endedAtMs: number | null, rule: PruneRule): string | null {
  if (state === null) return 'the job no longer exists';
  if (!(rule.states as readonly string[]).includes(state)) return `the job is ${state} now, not one of ${rule.states.join(', ')}`;
  // (NaN: an end time edited by hand that does not read; it must not pass as "before the cut-off")
  if (endedAtMs === null || !Number.isFinite(endedAtMs)) return 'the job has no end time';
  if (endedAtMs >= rule.before) return `the job ended at ${new Date(endedAtMs).toISOString()}, not before the cut-off ${new Date(rule.before).toISOString()}`;
  return null;
}

/**
 * A prune run's rule as its apply step checks it (RunRecord.options.prune, `before` as ISO text);
 * null when the run has none, or one that does not read (the apply then deletes nothing).
 */
export function runPruneRule(options: { prune?: { states: readonly string[]; before: string } | undefined }): PruneRule | null {
  const p = options.prune;
  if (p === undefined) return null;
  const before = Date.parse(p.before);
  const states = p.states.filter((s): s is PrunableState => (PRUNABLE_STATES as readonly string[]).includes(s));
  return Number.isFinite(before) && states.length > 0 ? { states, before } : null;
}

/** One queue and state of a prune plan: how many, and the oldest and newest end among them. */
export interface PruneGroup {
  queue: string;
  state: PrunableState;
  count: number;
  oldest_ended_at: string;
  newest_ended_at: string;
}

/** Counts a plan's jobs per queue and state, in queue then state order. */
export class PruneSummary {
  private readonly groups = new Map<string, { queue: string; state: PrunableState; count: number; oldest: number; newest: number }>();

  add(queue: string, state: PrunableState, endedAtMs: number): void {
    const key = `${queue}\0${state}`;
    const g = this.groups.get(key);
    if (g === undefined) this.groups.set(key, { queue, state, count: 1, oldest: endedAtMs, newest: endedAtMs });
    else {
      g.count++;
      g.oldest = Math.min(g.oldest, endedAtMs);
      g.newest = Math.max(g.newest, endedAtMs);
    }
  }

  rows(): PruneGroup[] {
    return [...this.groups.values()]
      .sort((a, b) => a.queue.localeCompare(b.queue) || PRUNABLE_STATES.indexOf(a.state) - PRUNABLE_STATES.indexOf(b.state))
      .map((g) => ({ queue: g.queue, state: g.state, count: g.count, oldest_ended_at: new Date(g.oldest).toISOString(), newest_ended_at: new Date(g.newest).toISOString() }));
  }
}

/** A job a prune plan may take: what the oldest-first selection compares. */
export interface PruneCandidate {
  queue: string;
  job_id: string;
  state: PrunableState;
  endedAtMs: number;
}

/**
 * The `max` candidates that ended longest ago, over every queue a prune covers. `--max N` used to
 * take the first N found, queue by queue in name order: a capped prune of every queue from cron
 * pruned queue `a` night after night and never reached the oldest jobs of queue `z`. Retention
 * deletes what is oldest first, wherever it is. Ties (the same end) go by queue name, then job id,
 * so the same store gives the same plan. Holds at most `max` candidates, whatever the number
 * offered: a plain list until `max` is reached (a prune without `--max` never pays for a heap),
 * then a max-heap on the end, whose top (the newest held) is the one a candidate must beat.
 */
export class OldestFirst {
  private readonly held: PruneCandidate[] = [];
  private isHeap = false;
  /** Candidates offered beyond `max` (not held): more remain after this prune. */
  passedOver = 0;

  constructor(private readonly max: number) {}

  offer(c: PruneCandidate): void {
    const h = this.held;
    if (h.length < this.max) {
      h.push(c);
      return;
    }
    this.passedOver++;
    if (h.length === 0) return;
    if (!this.isHeap) {
      for (let i = (h.length >> 1) - 1; i >= 0; i--) this.down(i);
      this.isHeap = true;
    }
    if (newer(c, h[0]!)) return;
    h[0] = c;
    this.down(0);
  }

  /** The candidates held, in no particular order. */
  taken(): readonly PruneCandidate[] {
    return this.held;
  }

  private down(i: number): void {
    const h = this.held;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && newer(h[l]!, h[top]!)) top = l;
      if (r < h.length && newer(h[r]!, h[top]!)) top = r;
      if (top === i) return;
      [h[i], h[top]] = [h[top]!, h[i]!];
      i = top;
    }
  }
}

/** Whether `a` comes after `b` in oldest-first order (later end, then queue name, then job id). */
function newer(a: PruneCandidate, b: PruneCandidate): boolean {
  if (a.endedAtMs !== b.endedAtMs) return a.endedAtMs > b.endedAtMs;
  if (a.queue !== b.queue) return a.queue > b.queue;
  return a.job_id > b.job_id;
}
