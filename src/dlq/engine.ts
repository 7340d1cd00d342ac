/**
 * The bulk-action engine behind `dlq redrive`, `dlq purge` and `dlq expire`
 * (and the TUI): select → plan → (confirm, done by the caller) → lock →
 * ledger → apply in paced batches → audit.
 *
 * Nothing here knows about commander or `process`: the backend, the clock,
 * sleeping, the operator's identity, progress and Ctrl-C (an AbortSignal) are
 * all passed in.
 *
 * Why it cannot lose or double a job: the plan is written to the durable
 * ledger before anything moves; each batch goes to `applyRunItems`, which
 * moves a job and marks its ledger item in one atomic step and ignores items
 * no longer `planned`. A run killed at any point leaves every item either
 * `planned` (not touched) or done (moved/skipped/failed) — `--resume` picks
 * up exactly the `planned` ones.
 */
import type { Backend, BulkAction, LedgerStatus, RunRecord } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import { toIso } from '../core/duration.js';
import { resumeTarget, type ResumeTarget } from '../core/resume-target.js';
import { InterruptedError, NotFoundError, ValidationError } from '../core/errors.js';
import { DEFAULT_ATTEMPTS_POLICY, isActing, PlanBuilder, planTotals, type AttemptsPolicy, type PartialNotice, type Plan, type PlanItem } from '../core/plan.js';
import { DEFAULT_MAX_REDRIVES, runVerdictOptions, verdictFor } from '../core/verdict.js';
import type { Selector } from './filter.js';
import { takeQueueLock, type Identity, type LockOptions, type ProcessProbe } from './lock.js';
import type { ProgressSink } from './progress.js';
import { DEFAULT_BATCH_SIZE, effectiveBatchSize, Pacer } from './rate.js';
import { walkDlq } from './select.js';
import { planStoreId } from '../backend/store-id.js';

export interface EngineDeps {
  backend: Backend;
  clock: Clock;
  /** Waits `ms`, resolving early when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  newRunId: () => string;
  identity: Identity;
  probe?: ProcessProbe;
}

export interface PlanRequest {
  action: BulkAction;
  selector: Selector;
  maxRedrives?: number;
  includePartial?: boolean;
  attempts?: AttemptsPolicy;
  signal?: AbortSignal;
}

export interface BuiltPlan {
  plan: Plan;
  /** Partial jobs this plan would redrive (only with includePartial): show their effects before confirming. */
  partialNotices: PartialNotice[];
}

/** Select and judge: a read-only walk; the result is the frozen plan. */
export async function buildPlan(deps: Pick<EngineDeps, 'backend' | 'clock'>, req: PlanRequest): Promise<BuiltPlan> {
  const now = deps.clock.now();
  const maxRedrives = req.maxRedrives ?? DEFAULT_MAX_REDRIVES;
  const includePartial = req.includePartial ?? false;
  const builder = new PlanBuilder({ action: req.action, now, minRemainingMs: req.selector.minRemainingMs, includePartial, maxRedrives });
  for await (const page of walkDlq(deps.backend, req.selector.filter, { signal: req.signal })) {
    for (const entry of page) builder.add(entry);
  }
  const options: Plan['options'] =
    req.action === 'redrive'
      ? { attempts: req.attempts ?? DEFAULT_ATTEMPTS_POLICY, maxRedrives, minRemainingMs: req.selector.minRemainingMs, includePartial }
      : { minRemainingMs: req.selector.minRemainingMs };
  const plan = builder.finish({ action: req.action, createdAt: toIso(now), filters: req.selector.given, options, store: await planStoreId(deps.backend), selectedQueue: req.selector.filter.queue });
  return { plan, partialNotices: builder.partialNotices };
}

/**
 * A saved plan as its apply would judge it now: each acting item read again (`dlqGet`, the full
 * check `dlq show` makes) and given the verdict the backend's apply step would compute
 * (`runVerdictOptions` with the plan's options and its `created_at` as `plannedAt`). The dry run
 * and the confirmation of `--plan FILE` show this, not the file's verdicts: an old plan whose jobs
 * all left the DLQ would otherwise say "95 redrive", and an edited `skip:expired` → `redrive`
 * would show as a redrive. Skip items stay skips (the apply never acts on them).
 */
export async function recheckPlan(deps: Pick<EngineDeps, 'backend' | 'clock'>, plan: Plan, signal?: AbortSignal): Promise<Plan> {
  const o = runVerdictOptions({ action: plan.action, options: { ...plan.options, plannedAt: plan.created_at } }, deps.clock.now());
  const items: PlanItem[] = [];
  for (const item of plan.items) {
    if (signal?.aborted) throw new InterruptedError('interrupted while re-checking the plan: nothing was changed');
    if (!isActing(item.verdict)) {
      items.push(item);
      continue;
    }
    const entry = await deps.backend.dlqGet(item.job_id);
    if (entry !== null && plan.queue !== null && entry.queue !== plan.queue) {
      // As the apply step: a run locks its own queue only.
      items.push({ ...item, verdict: 'skip:not_in_dlq', detail: `the job is in queue ${entry.queue}, not in this plan's queue ${plan.queue}` });
      continue;
    }
    const { verdict, detail } = verdictFor(entry, o);
    items.push({ ...item, verdict, detail });
  }
  return { ...plan, items, totals: planTotals(items) };
}

export interface RunSettings {
  reason: string | null;
  /** Jobs per second; null = unlimited. */
  rate: number | null;
  batchSize: number;
  lock?: LockOptions;
}

/**
 * Takes the queue lock and writes the audit record and the frozen plan to
 * the ledger. Returns the run, lock held; follow with `applyRun`.
 */
export async function startRun(deps: EngineDeps, plan: Plan, s: RunSettings): Promise<RunRecord> {
  // (an empty plan may name the queue its selection covered: it is empty all the same)
  if (plan.queue === null || plan.items.length === 0) throw new ValidationError('the plan is empty: nothing to do');
  const runId = deps.newRunId();
  const at = toIso(deps.clock.now());
  await takeQueueLock(deps.backend, plan.queue, deps.identity, runId, at, { probe: deps.probe, ...s.lock });
  const run: RunRecord = {
    run_id: runId,
    queue: plan.queue,
    action: plan.action,
    user: `${deps.identity.user}@${deps.identity.host}`,
    context: deps.identity.context,
    reason: s.reason,
    filters: plan.filters,
    // plannedAt: an entry that died after the plan read the DLQ is another death than the one it judged (skip:changed)
    options: { ...plan.options, rate: s.rate, batchSize: s.batchSize, plannedAt: plan.created_at },
    created_at: at,
    updated_at: at,
    status: 'planned',
    counts: { planned: 0, moved: 0, skipped: 0, failed: 0 },
  };
  try {
    await deps.backend.createRun(
      run,
      plan.items.map((i) => ({ job_id: i.job_id, verdict: i.verdict, detail: i.detail })),
    );
  } catch (e) {
    await deps.backend.releaseLock(plan.queue, runId).catch(() => undefined);
    throw e;
  }
  return (await deps.backend.getRun(runId)) ?? run;
}

export interface ApplyControl {
  signal?: AbortSignal;
  onProgress?: ProgressSink;
  /** Overrides of the run's recorded pacing (e.g. `--resume --rate 10`). */
  rate?: number | null;
  batchSize?: number;
  resumed?: boolean;
}

export interface ApplyResult {
  run: RunRecord;
  /** True when stopped by the signal: the rest of the items are still `planned`. */
  interrupted: boolean;
  /** What this session did (a resumed run did part of its work earlier). */
  session: Record<Exclude<LedgerStatus, 'planned'>, number>;
}

/** Applies the run's `planned` ledger items in paced batches; releases the lock at the end. Expects the lock held. */
export async function applyRun(deps: EngineDeps, runId: string, c: ApplyControl = {}): Promise<ApplyResult> {
  const { backend, clock } = deps;
  const start = await backend.getRun(runId);
  if (!start) throw new NotFoundError(`run ${runId} does not exist`, 'RUN_NOT_FOUND');
  const rate = c.rate !== undefined ? c.rate : (start.options.rate ?? null);
  // Capped at one second of the rate here too: a resume may bring a slower --rate than the run's batches were sized for.
  const batchSize = effectiveBatchSize(c.batchSize ?? start.options.batchSize ?? DEFAULT_BATCH_SIZE, rate);
  const remaining = start.counts.planned;
  const session = { moved: 0, skipped: 0, failed: 0 };
  const t0 = clock.now();
  const pacer = new Pacer(rate, () => clock.now());
  let interrupted = false;
  let failedHard = true;
  try {
    await backend.updateRun(runId, { status: 'running', updated_at: toIso(t0) });
    c.onProgress?.({ kind: 'started', run_id: runId, action: start.action, queue: start.queue, remaining, resumed: c.resumed ?? false });
    let cursor: string | null = null;
    let done = 0;
    // The shown rate is measured from the end of the first batch: a paced run's first batch goes at
    // once (the pacer's one batch of burst), so done / elapsed showed 2,000/s under --rate 20/s.
    let first: { at: number; done: number } | null = null;
    for (;;) {
      // Ctrl-C is honoured between batches only: a batch in flight always finishes and is recorded.
      if (c.signal?.aborted) {
        interrupted = true;
        break;
      }
      const page = await backend.ledger(runId, { limit: batchSize, cursor }, 'planned');
      const ids = page.items.filter((i) => i.status === 'planned').map((i) => i.job_id);
      if (ids.length > 0) {
        const wait = pacer.delayFor();
        if (wait > 0) await deps.sleep(wait, c.signal);
        if (c.signal?.aborted) {
          interrupted = true;
          break;
        }
        pacer.issue(ids.length);
        const results = await backend.applyRunItems({ runId, jobIds: ids, now: clock.now() });
        let skipped = 0;
        for (const r of results) {
          if (r.status === 'moved') session.moved++;
          else if (r.status === 'skipped') skipped++;
          else if (r.status === 'failed') session.failed++;
        }
        session.skipped += skipped;
        pacer.refund(skipped);
        done += ids.length;
        const at = clock.now();
        first ??= { at, done };
        c.onProgress?.({
          kind: 'batch',
          run_id: runId,
          action: start.action,
          done,
          remaining_at_start: remaining,
          ...session,
          elapsed_ms: at - t0,
          rate_per_s: at > first.at ? ((done - first.done) * 1000) / (at - first.at) : null,
        });
      }
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    const final = await finishRun(deps, start, interrupted);
    failedHard = false;
    if (interrupted) c.onProgress?.({ kind: 'interrupted', run_id: runId, done, remaining_at_start: remaining });
    else c.onProgress?.({ kind: 'finished', run_id: runId, action: start.action, counts: final.counts });
    return { run: final, interrupted, session };
  } finally {
    if (failedHard) {
      // A backend error mid-run: mark it resumable and let go of the lock; every finished item is already in the ledger.
      await backend.updateRun(runId, { status: 'interrupted', updated_at: toIso(clock.now()) }).catch(() => undefined);
    }
    await backend.releaseLock(start.queue, runId).catch(() => undefined);
  }
}

async function finishRun(deps: EngineDeps, start: RunRecord, interrupted: boolean): Promise<RunRecord> {
  const now = toIso(deps.clock.now());
  const current = (await deps.backend.getRun(start.run_id)) ?? start;
  const status: RunRecord['status'] = interrupted
    ? 'interrupted'
    : current.counts.planned > 0
      ? 'interrupted'
      : current.counts.failed > 0
        ? 'completed_with_failures'
        : 'completed';
  return deps.backend.updateRun(start.run_id, { status, updated_at: now });
}

/**
 * `--resume RUN_ID`: takes the lock again (a lock left behind by this same
 * run's killed process is taken over; anything else needs `--break-lock`)
 * and applies what is still `planned`.
 */
export async function resumeRun(deps: EngineDeps, runId: string, c: ApplyControl & { lock?: LockOptions } = {}): Promise<ApplyResult> {
  const run = await deps.backend.getRun(runId);
  if (!run) throw new NotFoundError(`run ${runId} does not exist`, 'RUN_NOT_FOUND');
  if (run.status === 'completed' || run.status === 'completed_with_failures') {
    return { run, interrupted: false, session: { moved: 0, skipped: 0, failed: 0 } };
  }
  if (run.status === 'creating') {
    // Still being written by its process, or left half written by one that was killed: its ledger
    // may lack items, so "resuming" it would complete a plan that was never recorded. It moved nothing.
    throw new ValidationError(
      `run ${runId} was never fully created (its process stopped, or is still running, while it wrote the run's ledger): it cannot be resumed, and it moved nothing`,
      `Make the plan again (a new ${run.action === 'prune' ? 'prune' : `dlq ${run.action}`}); if the ${run.queue} bulk-action lock is still held by that dead process, add --break-lock.`,
      'RUN_INCOMPLETE',
    );
  }
  await takeQueueLock(deps.backend, run.queue, deps.identity, runId, toIso(deps.clock.now()), {
    probe: deps.probe,
    ...c.lock,
    resumingRunId: runId,
  });
  return applyRun(deps, runId, { ...c, resumed: true });
}

/**
 * The shell command that resumes a run, printed on Ctrl-C: with the global flags the command was
 * run with, so it reaches the same store. No --yes: the plan was confirmed when the run was made.
 */
export function resumeCommand(run: Pick<RunRecord, 'run_id' | 'action'>, target: ResumeTarget = resumeTarget()): string {
  const flags = target.flags === '' ? '' : `${target.flags} `;
  const note = target.note === null ? '' : ` (${target.note})`;
  // (prune is a command of its own, not a dlq subcommand)
  const command = run.action === 'prune' ? 'prune' : `dlq ${run.action}`;
  return `agentq ${flags}${command} --resume ${run.run_id}${note}`;
}
