/**
 * Redrive plans: the frozen list of exact job ids a bulk DLQ action will touch,
 * each with its verdict. Pure: building, summarising, and the plan-file format.
 *
 * A plan is made once, shown (dry run), saved (`--plan-out`), reviewed, and
 * applied exactly (`--plan FILE`). The backend re-checks every item with the
 * same `verdictFor` rules inside its atomic apply step, so a plan that went
 * stale (a job expired, or left the DLQ) skips with a reason, never misfires.
 */
import { z } from 'zod';
import { ValidationError } from './errors.js';
import { canonicalJobId } from './ids.js';
import type { DlqEntry, Effect } from './schemas.js';
import { formatZodError } from './validate.js';
import { PRUNABLE_STATES } from './prune.js';
import { verdictFor, type Action, type Verdict, type VerdictOptions } from './verdict.js';

export const VERDICTS = [
  'redrive',
  'purge',
  'expire',
  'prune',
  'skip:expired',
  'skip:partial',
  'skip:quarantined',
  'skip:over_budget',
  'skip:malformed',
  'skip:not_in_dlq',
  'skip:not_expired',
  'skip:changed',
  'skip:not_prunable',
] as const satisfies readonly Verdict[];

export const ACTIONS = ['redrive', 'purge', 'expire', 'prune'] as const satisfies readonly Action[];

/** The verdicts that mean "act on this job"; everything else is a skip. */
export function isActing(verdict: Verdict): boolean {
  return !verdict.startsWith('skip:');
}

export const PlanItem = z.object({
  job_id: z.string().min(1),
  queue: z.string().min(1),
  verdict: z.enum(VERDICTS),
  detail: z.string().nullable(),
});
export type PlanItem = z.infer<typeof PlanItem>;

export const AttemptsPolicySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('reset') }),
  // At least 1, as `--extra-attempts` (0 would redrive a job with no attempt left: straight back to the DLQ).
  z.object({ kind: z.literal('extra'), n: z.number().int().min(1).max(100) }),
]);
export type AttemptsPolicy = z.infer<typeof AttemptsPolicySchema>;

/**
 * The attempts policy when neither `--reset-attempts` nor `--extra-attempts`
 * is given: one more attempt. A redrive is a retry after the cause was fixed,
 * not a fresh budget; one attempt is the cheapest that can still succeed, and
 * a job that fails again returns to the DLQ with its lineage counted.
 */
export const DEFAULT_ATTEMPTS_POLICY: AttemptsPolicy = { kind: 'extra', n: 1 };

export const PlanOptions = z.object({
  attempts: AttemptsPolicySchema.optional(),
  maxRedrives: z.number().int().min(1).optional(),
  minRemainingMs: z.number().int().min(0).optional(),
  includePartial: z.boolean().optional(),
  /** A prune's rule (core/prune): the states it deletes and the cut-off (ISO) their end must be before. */
  prune: z.object({ states: z.array(z.enum(PRUNABLE_STATES)).min(1), before: z.iso.datetime({ offset: true }) }).optional(),
});
export type PlanOptions = z.infer<typeof PlanOptions>;

export const PLAN_FILE_KIND = 'agentq.plan';
export const PLAN_FILE_VERSION = 1;

/** The plan file (`--plan-out` / `--plan`) and the `-o json` dry-run output. */
export const PlanSchema = z.object({
  kind: z.literal(PLAN_FILE_KIND),
  version: z.literal(PLAN_FILE_VERSION),
  action: z.enum(ACTIONS),
  /**
   * The queue the run locks: its items' queue, or for a selection that found nothing, the queue it
   * was limited to (`--queue`), so the report still says what was looked at. Null only for an
   * empty selection over every queue.
   */
  queue: z.string().nullable(),
  /**
   * The store the plan was made against (the backend's `storeId`). A plan file applied to another
   * store would find none of its jobs and "complete" with every item skipped: `--plan` refuses it.
   * Optional in the schema only so the refusal of a plan without it (written before this field, or
   * edited) can say what to do: `parsePlan` refuses such a plan, and `--force` does not waive it.
   */
  store: z.string().optional(),
  created_at: z.iso.datetime({ offset: true }),
  /** The selector as the operator gave it, for review and the audit. */
  filters: z.record(z.string(), z.unknown()),
  options: PlanOptions,
  totals: z.object({ total: z.number().int().min(0), acting: z.number().int().min(0) }).catchall(z.number().int().min(0)),
  items: z.array(PlanItem),
});
export type Plan = z.infer<typeof PlanSchema>;

/** Counts per verdict plus `total` and `acting` (the number of jobs the action will touch). */
export type PlanTotals = Record<string, number> & { total: number; acting: number };

export function planTotals(items: Iterable<Pick<PlanItem, 'verdict'>>): PlanTotals {
  const totals: PlanTotals = { total: 0, acting: 0 };
  for (const item of items) {
    totals.total++;
    if (isActing(item.verdict)) totals.acting++;
    totals[item.verdict] = (totals[item.verdict] ?? 0) + 1;
  }
  return totals;
}

/** One plan item from one DLQ entry: the verdict rules live in `core/verdict`. */
export function planItemFor(entry: DlqEntry, o: VerdictOptions): PlanItem {
  const { verdict, detail } = verdictFor(entry, o);
  return { job_id: entry.job_id, queue: entry.queue, verdict, detail };
}

/** A partial job the plan would redrive anyway (`--include-partial --force`): shown with its effects first. */
export interface PartialNotice {
  job_id: string;
  effects: Effect[];
}

/**
 * Incremental plan builder: entries arrive page by page from the backend;
 * the builder keeps only the small plan items, never the entries.
 */
export class PlanBuilder {
  readonly items: PlanItem[] = [];
  readonly partialNotices: PartialNotice[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly o: VerdictOptions) {}

  add(entry: DlqEntry): PlanItem | null {
    // Paging is by job id, but a defensive de-dup costs little and guarantees "exact job ids, once".
    if (this.seen.has(entry.job_id)) return null;
    this.seen.add(entry.job_id);
    const item = planItemFor(entry, this.o);
    this.items.push(item);
    if (item.verdict === 'redrive' && entry.partial) {
      this.partialNotices.push({ job_id: entry.job_id, effects: entry.job?.effects ?? [] });
    }
    return item;
  }

  /** The queues the selection spans (a run locks exactly one). */
  queues(): string[] {
    return [...new Set(this.items.map((i) => i.queue))].sort();
  }

  /** `selectedQueue`: the queue the selection was limited to, if any (the plan's queue when it found nothing). */
  finish(meta: { action: Action; createdAt: string; filters: Record<string, unknown>; options: PlanOptions; store?: string; selectedQueue?: string | undefined }): Plan {
    const queues = this.queues();
    if (queues.length > 1) {
      throw new ValidationError(
        `the selection spans ${queues.length} queues (${queues.slice(0, 5).join(', ')}${queues.length > 5 ? ', …' : ''}): a bulk action works on one queue at a time because the lock is per queue`,
        'Add --queue NAME.',
      );
    }
    return {
      kind: PLAN_FILE_KIND,
      version: PLAN_FILE_VERSION,
      action: meta.action,
      queue: queues[0] ?? meta.selectedQueue ?? null,
      ...(meta.store !== undefined ? { store: meta.store } : {}),
      created_at: meta.createdAt,
      filters: meta.filters,
      options: meta.options,
      totals: planTotals(this.items),
      items: this.items,
    };
  }
}

/** Parses a plan file's text. Names the broken rule (exit 2) instead of acting on a damaged plan. */
export function parsePlan(text: string, source = 'plan file'): Plan {
  let raw: unknown;
  try {
    // A byte-order mark (editors on Windows add one) is not part of the JSON.
    raw = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (e) {
    throw new ValidationError(`${source} is not JSON: ${(e as Error).message}`);
  }
  const parsed = PlanSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(formatZodError(parsed.error, source));
  const plan = parsed.data;
  if (plan.store === undefined) {
    // Without it the check that the plan is applied to the store it was made on cannot be made.
    throw new ValidationError(
      `${source} names no store (the "store" key): a plan that does not say which store it was made on is not applied, --force or not`,
      'Make the plan again against the store to change: --dry-run --plan-out FILE (a plan made before agentq recorded the store, or edited, lacks it).',
    );
  }
  // Job ids as the stores keep them (a ULID is case-insensitive): a lowercased id in an edited
  // file is the same job, not one that is "not in the DLQ" (the CLI takes ids the same way).
  for (const item of plan.items) item.job_id = canonicalJobId(item.job_id);
  const seen = new Set<string>();
  for (const item of plan.items) {
    if (seen.has(item.job_id)) throw new ValidationError(`${source}: job ${item.job_id} appears twice; a plan lists each job once`);
    seen.add(item.job_id);
    if (plan.queue !== null && item.queue !== plan.queue) {
      throw new ValidationError(`${source}: job ${item.job_id} is in queue ${item.queue}, but the plan is for queue ${plan.queue}`);
    }
    if (isActing(item.verdict) && item.verdict !== plan.action) {
      throw new ValidationError(`${source}: job ${item.job_id} has verdict ${item.verdict}, which does not belong to a ${plan.action} plan`);
    }
  }
  if (plan.queue === null && plan.items.length > 0) throw new ValidationError(`${source}: a plan with items must name its queue`);
  return { ...plan, totals: planTotals(plan.items) };
}

export function serializePlan(plan: Plan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}
