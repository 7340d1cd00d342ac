/**
 * The plan of `agentq prune`: finished jobs whose end is older than a cut-off, one frozen plan per
 * queue (a run locks one queue, as the DLQ actions' runs do), read in bounded pages of `list`.
 * The plans go through the bulk engine like a `dlq purge` (startRun → ledger → applyRun), whose
 * apply step deletes a job only while it still falls under the rule (core/prune `pruneCheck`).
 */
import { MAX_PAGE_LIMIT, type Backend } from '../backend/contract.js';
import { eachQueue } from '../backend/queue-walk.js';
import { planStoreId } from '../backend/store-id.js';
import type { Clock } from '../core/clock.js';
import { toIso } from '../core/duration.js';
import { InterruptedError } from '../core/errors.js';
import { PLAN_FILE_KIND, PLAN_FILE_VERSION, planTotals, type Plan, type PlanItem } from '../core/plan.js';
import { OldestFirst, pruneCheck, PruneSummary, type PrunableState, type PruneGroup, type PruneRule } from '../core/prune.js';

export const PRUNE_PAGE = 250;

export interface PrunePlan {
  /** When the plan read the store. */
  created_at: string;
  /** Jobs that ended before this are deleted. */
  cutoff: string;
  states: PrunableState[];
  /** The queues the plan walked, in name order: `--queue`'s, or every queue (all of them, `--max` or not: it reads every finished job to find those that ended longest ago). */
  queues: string[];
  /** One plan per queue that has something to prune, in queue order. */
  plans: Plan[];
  groups: PruneGroup[];
  total: number;
  /** True when more jobs fell under the rule than `max`: those that ended last were left for a later prune. */
  max_reached: boolean;
  /** How many more jobs fell under the rule than `max` (0 without it): left for the next prune. */
  passed_over: number;
  /** Jobs of a prunable state whose end time is missing or unreadable (edited by hand): kept, and named (up to NO_END_SAMPLE per queue). */
  no_end: Array<{ queue: string; count: number; job_ids: string[] }>;
  /** Jobs whose stored record does not read (list's `unreadable`): kept, and named, up to UNREADABLE_SAMPLE; `unreadable_count` is all of them. */
  unreadable: Array<{ job_id: string; why: string }>;
  unreadable_count: number;
}

/** How many jobs whose record does not read the plan names. */
export const UNREADABLE_SAMPLE = 20;

/** How many of a queue's jobs without a readable end time the plan names. */
export const NO_END_SAMPLE = 5;

/** Walks the finished jobs of `queue` (or of every queue) and freezes those under the rule. */
export async function buildPrunePlan(
  deps: { backend: Backend; clock: Clock },
  req: {
    rule: PruneRule;
    queue?: string | undefined;
    filters: Record<string, unknown>;
    signal?: AbortSignal;
    pageSize?: number;
    /** At most this many jobs (the plan and its ledger are held whole, as a DLQ plan's are): those that ended longest ago, across every queue covered (core/prune `OldestFirst`). */
    max?: number | undefined;
  },
): Promise<PrunePlan> {
  const { backend } = deps;
  const createdAt = toIso(deps.clock.now());
  const store = await planStoreId(backend);
  const summary = new PruneSummary();
  const plans: Plan[] = [];
  const limit = Math.min(req.pageSize ?? PRUNE_PAGE, MAX_PAGE_LIMIT);
  const queues = req.queue !== undefined ? [req.queue] : eachQueue(backend);
  const max = req.max ?? Infinity;
  // Every finished job of the covered queues is read (in bounded pages), with or without `max`:
  // which jobs ended longest ago is known only once all are seen, as no store indexes jobs by end.
  // `max` bounds what is held (the plan and its ledger) and deleted, not what is read.
  const selection = new OldestFirst(max);
  const queueOrder: string[] = [];
  const noEnd: PrunePlan['no_end'] = [];
  const unreadable: PrunePlan['unreadable'] = [];
  let unreadableCount = 0;
  for await (const queue of queues) {
    queueOrder.push(queue);
    const queueNoEnd = { queue, count: 0, job_ids: [] as string[] };
    let cursor: string | null = null;
    do {
      if (req.signal?.aborted) throw new InterruptedError('interrupted while reading the finished jobs: nothing was changed');
      const page = await backend.list({ queue, states: [...req.rule.states] }, { limit, cursor });
      // (a record that does not decode cannot be judged: the store keeps it, and the plan says so)
      for (const u of page.unreadable ?? []) if (unreadableCount++ < UNREADABLE_SAMPLE) unreadable.push(u);
      for (const job of page.items) {
        const parsed = job.ended_at === null ? NaN : Date.parse(job.ended_at);
        const ended = Number.isFinite(parsed) ? parsed : null;
        if (ended === null) {
          // A finished job without a readable end cannot be judged by age: kept, and said (not a silent skip).
          if (queueNoEnd.count++ < NO_END_SAMPLE) queueNoEnd.job_ids.push(job.job_id);
          continue;
        }
        if (pruneCheck(job.state, ended, req.rule) !== null) continue;
        selection.offer({ queue, job_id: job.job_id, state: job.state as PrunableState, endedAtMs: ended });
      }
      cursor = page.next_cursor;
    } while (cursor !== null);
    if (queueNoEnd.count > 0) noEnd.push(queueNoEnd);
  }
  const taken = selection.taken();
  const byQueue = new Map<string, PlanItem[]>();
  for (const c of taken) {
    summary.add(c.queue, c.state, c.endedAtMs);
    const items = byQueue.get(c.queue) ?? [];
    items.push({ job_id: c.job_id, queue: c.queue, verdict: 'prune', detail: null });
    byQueue.set(c.queue, items);
  }
  for (const queue of queueOrder) {
    const items = byQueue.get(queue);
    if (items === undefined) continue;
    // (a run's ledger is kept in job-id order: the plan's items are too)
    items.sort((a, b) => (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
    plans.push({
      kind: PLAN_FILE_KIND,
      version: PLAN_FILE_VERSION,
      action: 'prune',
      queue,
      store,
      created_at: createdAt,
      filters: req.filters,
      options: { prune: { states: [...req.rule.states], before: toIso(req.rule.before) } },
      totals: planTotals(items),
      items,
    });
  }
  return {
    created_at: createdAt,
    cutoff: toIso(req.rule.before),
    states: [...req.rule.states],
    queues: queueOrder,
    plans,
    groups: summary.rows(),
    total: taken.length,
    max_reached: selection.passedOver > 0,
    passed_over: selection.passedOver,
    no_end: noEnd,
    unreadable,
    unreadable_count: unreadableCount,
  };
}
