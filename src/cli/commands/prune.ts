/**
 * `agentq prune --older-than D`: retention for finished jobs. Deletes succeeded, cancelled and
 * expired jobs that ended longer ago than D, with everything kept per job (attempts, effects,
 * history, idempotency key). The flow of the DLQ bulk actions, and their pieces: a plan (counts
 * per queue and state, oldest and newest end), a dry run that prints it, a confirmation on a
 * terminal (`--yes` in scripts, exit 3 without it), then per queue a run with its ledger and audit
 * record (`agentq dlq runs`), applied in batches by the bulk engine, each job re-checked when it
 * is deleted. `dead` jobs are never pruned: they are DLQ entries (`dlq purge`).
 */
import type { RunRecord } from '../../backend/contract.js';
import { applyRun, startRun, type ApplyResult } from '../../dlq/engine.js';
import { buildPrunePlan, type PrunePlan } from '../../dlq/prune-plan.js';
import { parseBatchSize, parseRate, effectiveBatchSize } from '../../dlq/rate.js';
import { DeclinedError, RetryLaterError, ValidationError } from '../../core/errors.js';
import { count } from '../../core/plural.js';
import { parsePruneCutoff, parsePruneStates, type PruneGroup } from '../../core/prune.js';
import type { CommandContext } from '../context.js';
import { printObject, printRecords } from '../output/format.js';
import type { Column } from '../output/columns.js';
import { sanitize } from '../output/sanitize.js';
import { checkReason } from '../parse.js';
import { dlqIoFrom } from './dlq-context.js';
import type { DlqIo } from './dlq-io.js';
import { dlqBulk, engineDeps, outcomeError, progressSink, resumable, TYPED_CONFIRM_THRESHOLD } from './dlq-bulk.js';
import { RUN_COLUMNS } from './dlq-columns.js';
import { noteUnknownQueue } from './dlq-list.js';

export interface PruneOptions {
  olderThan?: string;
  queue?: string;
  queueFromContext?: boolean;
  allQueues?: boolean;
  state?: string;
  max?: string;
  dryRun?: boolean;
  yes?: boolean;
  reason?: string;
  rate?: string;
  batchSize?: string;
  resume?: string;
  breakLock?: boolean;
  force?: boolean;
}

const GROUP_COLUMNS: readonly Column<PruneGroup>[] = [
  { header: 'QUEUE', get: (g) => g.queue },
  { header: 'STATE', get: (g) => g.state },
  { header: 'JOBS', get: (g) => g.count },
  { header: 'OLDEST END', get: (g) => ({ time: g.oldest_ended_at }), keepWhole: true },
  { header: 'NEWEST END', get: (g) => ({ time: g.newest_ended_at }), keepWhole: true },
];

export async function run(opts: PruneOptions, ctx: CommandContext): Promise<void> {
  await prune(opts, dlqIoFrom(ctx));
}

/**
 * The plan as `-o json` prints it (and, applied, with the runs). `queues` names what was covered:
 * with nothing to prune, `groups` and `runs` are empty and would not say which queues were looked at.
 */
function planDocument(p: PrunePlan, runs?: RunRecord[]) {
  return { created_at: p.created_at, cutoff: p.cutoff, states: p.states, queues: p.queues, total: p.total, max_reached: p.max_reached, groups: p.groups, ...(runs ? { runs } : {}) };
}

/** `3 more remain`, `1 more remains`. */
function moreRemain(n: number): string {
  return `${n} more ${n === 1 ? 'remains' : 'remain'}`;
}

function totalsLine(p: PrunePlan): string {
  const queues = new Set(p.groups.map((g) => g.queue)).size;
  const more = p.max_reached ? ` (--max ${p.total} reached: ${moreRemain(p.passed_over)})` : '';
  return `plan: ${count(p.total, 'finished job')} (${p.states.join(', ')}) ended before ${p.cutoff}${p.total > 0 ? `, in ${count(queues, 'queue')}` : ''}${more}`;
}

export async function prune(o: PruneOptions, io: DlqIo): Promise<unknown> {
  checkReason(o.reason);
  if (o.resume !== undefined) {
    // A killed or interrupted prune goes on from its ledger like any bulk run (dlq-bulk `resume`),
    // with what was recorded: a new rule typed here would be silently ignored, so it is refused.
    const given = [o.olderThan !== undefined && '--older-than', o.state !== undefined && '--state', o.max !== undefined && '--max', o.queue !== undefined && !o.queueFromContext && '--queue', o.dryRun && '--dry-run'].filter(Boolean);
    if (given.length > 0) throw new ValidationError(`--resume continues the recorded prune run: ${given.join(', ')} ${given.length === 1 ? 'does' : 'do'} not apply`);
    return dlqBulk('prune', { resume: o.resume, rate: o.rate, batchSize: o.batchSize, breakLock: o.breakLock, force: o.force, yes: o.yes }, io);
  }
  const now = io.clock.now();
  const rule = { before: parsePruneCutoff(o.olderThan, now), states: parsePruneStates(o.state) };
  const max = o.max !== undefined ? parseMax(o.max) : undefined;
  // Unlike a redrive, a prune adds no load to workers: no pacing unless asked, in bounded batches
  // (each its own transaction on SQLite, a few bounded script calls on Redis).
  const rate = o.rate !== undefined ? parseRate(o.rate) : null;
  const batchSize = effectiveBatchSize(o.batchSize !== undefined ? parseBatchSize(o.batchSize) : undefined, rate);
  if (!o.dryRun) io.assertMutable('prune');

  io.interruptNote?.('the prune plan was not finished; nothing was changed');
  const backend = await io.backend();
  const filters: Record<string, unknown> = { older_than: o.olderThan, states: rule.states, ...(o.queue !== undefined ? { queue: o.queue } : {}) };
  const plan = await buildPrunePlan({ backend, clock: io.clock }, { rule, queue: o.queue, filters, signal: io.signal, max });
  io.interruptNote?.('the prune was not started; nothing was changed');
  for (const u of plan.unreadable) io.err.write(`warning: ${sanitize(u.why)}: kept, not pruned\n`);
  if (plan.unreadable_count > plan.unreadable.length) io.err.write(`warning: ${count(plan.unreadable_count - plan.unreadable.length, 'more job')} whose stored record does not read: kept, not pruned\n`);
  for (const n of plan.no_end) {
    const more = n.count > n.job_ids.length ? `, … (${n.count - n.job_ids.length} more)` : '';
    io.err.write(`warning: ${count(n.count, 'job')} of queue ${sanitize(n.queue)} ${n.count === 1 ? 'has' : 'have'} no readable end time and ${n.count === 1 ? 'is' : 'are'} kept: ${n.job_ids.map((id) => sanitize(id)).join(', ')}${more}\n`);
  }
  if (plan.total === 0) await noteUnknownQueue(backend, o.queue, io);

  if (o.dryRun || plan.total === 0) {
    if (io.out.format === 'json' || io.out.format === 'ndjson') printObject(io.out, planDocument(plan, o.dryRun ? undefined : []));
    else {
      if (plan.total > 0) await printRecords(io.out, { columns: GROUP_COLUMNS, empty: 'No finished jobs to prune.' }, plan.groups);
      io.err.write(`${totalsLine(plan)}\n`);
    }
    if (plan.total === 0 && !o.dryRun) io.err.write('nothing to prune\n');
    return plan;
  }

  await confirm(plan, o, io);
  const deps = engineDeps(io, backend);
  const runs: RunRecord[] = [];
  let interruptedRun: ApplyResult | null = null;
  // One run per queue: the ledger and the bulk-action lock are per queue, as for the DLQ actions.
  // A queue whose bulk-action lock another run holds (a long redrive) is left for the next prune:
  // stopping there left every later queue unpruned, night after night from cron, and the runs
  // already done unprinted. The exit is still 75, naming it, once the rest is done.
  const locked: RetryLaterError[] = [];
  for (const queuePlan of plan.plans) {
    if (io.signal.aborted) break;
    const started = await startRun(deps, queuePlan, {
      reason: o.reason ?? null,
      rate,
      batchSize,
      lock: { breakLock: o.breakLock, force: o.force, warn: (m) => io.err.write(`warning: ${sanitize(m)}\n`) },
    }).catch((e: unknown) => {
      if (!(e instanceof RetryLaterError && e.code === 'LOCK_HELD') || plan.plans.length === 1) throw e;
      io.err.write(`warning: queue ${sanitize(queuePlan.queue)} skipped: ${sanitize(e.message)}\n`);
      locked.push(new RetryLaterError(`queue ${queuePlan.queue} was not pruned: ${e.message}`, e.code, e.hint));
      return null;
    });
    if (started === null) continue;
    io.err.write(`run ${started.run_id}: ${count(queuePlan.totals.acting, 'job')} of queue ${sanitize(started.queue)} to prune\n`);
    const result = await applyRun(deps, started.run_id, { signal: io.signal, onProgress: progressSink(io) }).catch((e: unknown) => {
      throw resumable(e, started, io);
    });
    runs.push(result.run);
    if (result.interrupted) {
      interruptedRun = result;
      break;
    }
  }
  if (io.out.format === 'json' || io.out.format === 'ndjson') printObject(io.out, planDocument(plan, runs));
  else await printRecords(io.out, { columns: RUN_COLUMNS, empty: 'No prune run was started.' }, runs);
  if (plan.max_reached) {
    const which = plan.passed_over === 1 ? '(the one that ended last); run it again for it' : '(those that ended last); run it again for them';
    io.err.write(`--max ${plan.total} reached: ${moreRemain(plan.passed_over)} ${which}\n`);
  }
  const left = plan.plans.length - runs.length - locked.length;
  if (left > 0) io.err.write(`${count(left, 'queue')} of the plan not started (interrupted); run the prune again to take them\n`);
  for (const r of runs) {
    const err = outcomeError(r, interruptedRun?.run.run_id === r.run_id);
    if (err) throw err;
  }
  if (locked.length > 0) {
    const first = locked[0]!;
    throw locked.length === 1 ? first : new RetryLaterError(`${locked.map((e) => e.message).join('; ')}`, first.code, first.hint);
  }
  return runs;
}

/** `--max N`: a whole number from 1 to 10,000,000 (the plan and its ledger are held whole). */
function parseMax(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 1 && n <= MAX_PRUNE_JOBS)) throw new ValidationError(`--max ${JSON.stringify(text)} must be a whole number from 1 to ${MAX_PRUNE_JOBS}`);
  return n;
}

const MAX_PRUNE_JOBS = 10_000_000;

async function confirm(plan: PrunePlan, o: PruneOptions, io: DlqIo): Promise<void> {
  if (o.yes) return;
  if (!io.interactive) {
    throw new DeclinedError(
      `prune deletes ${count(plan.total, 'job')} and cannot ask for confirmation here (stdin and stdout are not both a terminal, or --no-input or CI is set): add --yes`,
      'Review it first with --dry-run.',
    );
  }
  for (const g of plan.groups) io.err.write(`  ${sanitize(g.queue)}\t${g.state}\t${g.count}\t${g.oldest_ended_at} … ${g.newest_ended_at}\n`);
  io.err.write(`${totalsLine(plan)}\n`);
  const backend = await io.backend();
  io.err.write(`context ${sanitize(io.contextName ?? '(none)')}, store ${sanitize(backend.description)}: ${count(plan.total, 'job')} will be deleted for good.\n`);
  if (plan.total > TYPED_CONFIRM_THRESHOLD) {
    const answer = (await io.prompt(`Type the number of jobs (${plan.total}) to prune them: `)).trim();
    if (answer !== String(plan.total)) throw new DeclinedError(`confirmation did not match ${plan.total}: nothing was changed`);
  } else {
    const answer = (await io.prompt(`prune ${count(plan.total, 'job')}? [y/N] `)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw new DeclinedError('declined: nothing was changed');
  }
}
