/**
 * The TUI's redrive, built only from the DLQ engine (`src/dlq`) and the
 * plan rules (`core/plan`, `core/verdict`): a frozen plan of the selected
 * job ids, the per-queue lock, the durable ledger, the audit record and the
 * paced apply are the engine's. The TUI adds nothing but the confirmation
 * dialog in front of it.
 */
import type { Backend, DlqFilter, RunRecord } from '../backend/contract.js';
import type { SqsBackend } from '../backend/sqs/index.js';
import { toIso } from '../core/duration.js';
import { DEFAULT_ATTEMPTS_POLICY, PlanBuilder, planTotals, type AttemptsPolicy, type Plan } from '../core/plan.js';
import type { DlqEntry } from '../core/schemas.js';
import { DEFAULT_MAX_REDRIVES } from '../core/verdict.js';
import { applyRun, resumeCommand, startRun, type EngineDeps } from '../dlq/engine.js';
import type { RunEvent } from '../dlq/progress.js';
import { effectiveBatchSize } from '../dlq/rate.js';
import { walkDlq } from '../dlq/select.js';
import type { PlanSplit, RedrivePort, RedriveProgress, RedriveResult, SelectionContext } from './redrive-port.js';
import { planStoreId } from '../backend/store-id.js';
import { ValidationError } from '../core/errors.js';

export interface GatewaySettings {
  /** The command's own selector (`--queue`, `--tenant`…): where a large selection is looked up. */
  baseFilter: DlqFilter;
  /** The command's flags as given, recorded in the audit with the selection size. */
  given: Record<string, unknown>;
  /** Jobs per second; null = unlimited. */
  rate: number | null;
  batchSize?: number;
  maxRedrives?: number;
  attempts?: AttemptsPolicy;
}

/**
 * Up to this many selected jobs are fetched one by one (`dlqGet`); above it,
 * one paged walk of the command's selection is cheaper than N lookups.
 */
const FETCH_ONE_BY_ONE_MAX = 2000;
const FETCH_CONCURRENCY = 32;

export function engineRedrive(deps: EngineDeps, s: GatewaySettings): RedrivePort {
  return {
    async plan(jobIds, signal, context) {
      const wanted = new Set(jobIds);
      const maxRedrives = s.maxRedrives ?? DEFAULT_MAX_REDRIVES;
      // Taken before the entries are read: the apply trusts the schema check of records not written
      // since `created_at` (SQLite), so a record rewritten during the read must count as changed.
      const readFrom = deps.clock.now();
      const builder = new PlanBuilder({ action: 'redrive', now: readFrom, minRemainingMs: 0, includePartial: false, maxRedrives });
      let found = 0;
      for await (const entries of selectedEntries(deps.backend, s.baseFilter, wanted, signal)) {
        for (const e of entries) {
          if (wanted.has(e.job_id) && builder.add(e) !== null) found++;
        }
        await giveWay(signal);
      }
      // The engine's refusal says "Add --queue NAME" (a restart, here); the app has a way in place.
      const queues = builder.queues();
      if (queues.length > 1) {
        throw new ValidationError(
          `the selection spans ${queues.length} queues (${queues.slice(0, 5).join(', ')}${queues.length > 5 ? ', …' : ''}): a redrive works on one queue at a time because the lock is per queue`,
          'Q narrows the list to one queue (c clears the selection); R on a selection of several loaded queues offers to narrow it.',
        );
      }
      const plan = builder.finish({
        action: 'redrive',
        createdAt: toIso(readFrom),
        store: await planStoreId(deps.backend),
        filters: { ...s.given, via: 'agentq dlq browse', selected: jobIds.length, ...selectionFilters(context) },
        options: { attempts: s.attempts ?? DEFAULT_ATTEMPTS_POLICY, maxRedrives, minRemainingMs: 0, includePartial: false },
      });
      return { split: { ...splitOf(plan, jobIds.length - found), queue: plan.queue ?? s.baseFilter.queue ?? context?.queue ?? null }, handle: plan };
    },

    async apply(planned, onProgress, signal, reason) {
      const plan = planned.handle as Plan;
      const batchSize = effectiveBatchSize(s.batchSize, s.rate);
      const why = reason?.trim() ? reason.trim() : DEFAULT_REASON;
      const run = await startRun(deps, plan, { reason: why, rate: s.rate, batchSize });
      const total = planned.split.total;
      const skippedAtPlan = total - run.counts.planned;
      const resume = resumeCommand(run);
      onProgress({ runId: run.run_id, resumeCommand: resume, done: skippedAtPlan, total, moved: 0, skipped: skippedAtPlan, failed: 0 });
      const toProgress = (e: RunEvent): RedriveProgress | null =>
        e.kind === 'batch'
          ? { runId: run.run_id, resumeCommand: resume, done: skippedAtPlan + e.done, total, moved: e.moved, skipped: skippedAtPlan + e.skipped, failed: e.failed }
          : null;
      const result = await applyRun(deps, run.run_id, {
        signal,
        onProgress: (e) => {
          const p = toProgress(e);
          if (p !== null) onProgress(p);
        },
      });
      const counts = result.run.counts;
      const out: RedriveResult = {
        runId: result.run.run_id,
        status: result.run.status,
        moved: counts.moved,
        skipped: counts.skipped,
        failed: counts.failed,
        resumeCommand: result.interrupted ? resumeCommand(result.run) : null,
        notes: await sqsNotes(deps.backend, result.run),
      };
      return out;
    },
  };
}

/**
 * On SQS, `agentq dlq redrive` sweeps the SQS DLQ beside its moves (deleting the copies of the jobs it
 * moved) and warns about moved jobs still waiting in the outbox. The app does neither by itself (the
 * sweep receives the whole DLQ, raising receive counts: the CLI says so before it asks), so the
 * result says both, with the command that sweeps: `--resume` of the run (also a completed one)
 * sweeps after its moves. Without this the SQS DLQ depth, and the alarm on it, kept counting the
 * redriven jobs with nothing on screen saying why.
 */
async function sqsNotes(backend: Backend, run: RunRecord): Promise<string[]> {
  if (backend.kind !== 'sqs' || run.counts.moved === 0) return [];
  const notes: string[] = [];
  const dlq = (backend as SqsBackend).sqsQueues.dlqName(run.queue);
  notes.push(
    `copies of the ${run.counts.moved} jobs it moved stay in the SQS DLQ ${dlq} (alarms on its depth still count them; the app does not sweep it): ` +
      `${resumeCommand(run)} deletes them${run.status === 'completed' ? '' : ' once its moves are over'}, as does agentq sqs sweep --queue ${run.queue}`,
  );
  const u = backend.unpublished ? await backend.unpublished(run.queue).catch(() => null) : null;
  if (u !== null && u.count > 0) {
    notes.push(
      `${u.count} job(s) of queue ${run.queue} are not yet published to SQS${u.lastError ? ` (the last try failed: ${u.lastError})` : ''}: ` +
        'they are stored and queued; workers or agentq outbox relay publish them once that is mended',
    );
  }
  return notes;
}

/** The audit reason of a TUI run when the operator gave none. */
export const DEFAULT_REASON = 'agentq dlq browse (TUI)';

/** What the run's `filters` say about the selection beyond the command's flags. */
function selectionFilters(context: SelectionContext | undefined): Record<string, unknown> {
  if (context === undefined) return {};
  const out: Record<string, unknown> = {};
  if (Object.keys(context.inAppFilter).length > 0) out.in_app_filter = context.inAppFilter;
  if (context.selection !== null) out.selection = context.selection;
  if (context.hiddenByFilter > 0) out.selected_hidden_by_filter = context.hiddenByFilter;
  return out;
}

/**
 * A turn of the event loop between reads, then stop if asked. SQLite answers synchronously, so a
 * walk of a large selection never let a key in: Esc and Ctrl-C ("Esc cancels", on screen) and
 * every frame waited for the whole plan, seconds for 30,000 jobs.
 */
async function giveWay(signal: AbortSignal): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}

async function* selectedEntries(backend: Backend, base: DlqFilter, wanted: ReadonlySet<string>, signal: AbortSignal): AsyncGenerator<DlqEntry[]> {
  if (wanted.size > FETCH_ONE_BY_ONE_MAX) {
    yield* walkDlq(backend, base, { pageSize: 1000, signal });
    return;
  }
  const ids = [...wanted].sort();
  for (let i = 0; i < ids.length; i += FETCH_CONCURRENCY) {
    signal.throwIfAborted();
    const got = await Promise.all(ids.slice(i, i + FETCH_CONCURRENCY).map((id) => backend.dlqGet(id)));
    yield got.filter((e): e is DlqEntry => e !== null);
  }
}

function splitOf(plan: Plan, missing: number): PlanSplit {
  const t = planTotals(plan.items);
  const redrive = t.redrive ?? 0;
  const skipExpired = t['skip:expired'] ?? 0;
  const skipPartial = t['skip:partial'] ?? 0;
  const quarantined = t['skip:quarantined'] ?? 0;
  const skipMalformed = t['skip:malformed'] ?? 0;
  // `missing`: selected ids the lookup no longer found in the DLQ (another shell redrove them…).
  const notInDlq = (t['skip:not_in_dlq'] ?? 0) + missing;
  return {
    total: t.total + missing,
    redrive,
    skipExpired,
    skipPartial,
    quarantined,
    notInDlq,
    skipMalformed,
    skipOther: t.total + missing - redrive - skipExpired - skipPartial - quarantined - notInDlq - skipMalformed,
    queue: plan.queue,
  };
}
