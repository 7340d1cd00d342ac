/**
 * `agentq dlq redrive | purge | expire`: the bulk actions. One flow for all
 * three — select → frozen plan → show (dry run) → confirm → lock → ledger →
 * paced apply → audit — so each safety rule is written once.
 */
import { noteUnknownQueue } from './dlq-list.js';
import { AgentqError, DeclinedError, ExitCode, InterruptedError, ValidationError } from '../../core/errors.js';
import { count } from '../../core/plural.js';
import { parsePlan, serializePlan, type AttemptsPolicy, type PartialNotice, type Plan } from '../../core/plan.js';
import type { BulkAction, RunRecord } from '../../backend/contract.js';
import { applyRun, buildPlan, recheckPlan, resumeCommand, resumeRun, startRun, type ApplyResult, type EngineDeps } from '../../dlq/engine.js';
import { parseSelector, requireSelector, type SelectorInput } from '../../dlq/filter.js';
import { streamProgress } from '../../dlq/progress.js';
import { DEFAULT_RATE_PER_SEC, effectiveBatchSize, parseBatchSize, parseRate } from '../../dlq/rate.js';
import { printObject, printRecords } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { checkReason, checkRunId } from '../parse.js';
import { NO_DLQ_ENTRIES, PLAN_ITEM_COLUMNS } from './dlq-columns.js';
import type { DlqIo } from './dlq-io.js';
import { isSameStore, planStoreId } from '../../backend/store-id.js';

export interface BulkOptions extends SelectorInput {
  /** Set when `queue` came from the context (queue-scope.ts): it scopes the action but is not a selector. */
  queueFromContext?: boolean;
  all?: boolean;
  dryRun?: boolean;
  planOut?: string;
  plan?: string;
  resume?: string;
  yes?: boolean;
  force?: boolean;
  rate?: string;
  batchSize?: string;
  breakLock?: boolean;
  reason?: string;
  // redrive only
  includePartial?: boolean;
  maxRedrives?: string;
  resetAttempts?: boolean;
  extraAttempts?: string;
  /** The dead-reason filter: `--dead-reason` here, because `--reason` is the operator's audit text on bulk commands. */
  deadReason?: string;
  /** Redrive on SQS: sweep the SQS DLQ along with the moves (default; `--no-sweep` sets false). Other backends: ignored. */
  sweep?: boolean;
}

/** Above this many jobs a terminal confirmation asks for the count to be typed, not just "y". */
export const TYPED_CONFIRM_THRESHOLD = 20;

const VERB: Record<BulkAction, { verb: string; done: string }> = {
  redrive: { verb: 'redrive', done: 'moved back to the queue' },
  purge: { verb: 'purge', done: 'deleted from the DLQ' },
  expire: { verb: 'expire', done: 'moved to expired' },
  prune: { verb: 'prune', done: 'deleted' },
};

export function engineDeps(io: DlqIo, backend: EngineDeps['backend']): EngineDeps {
  return { backend, clock: io.clock, sleep: io.sleep, newRunId: io.newRunId, identity: io.identity, probe: io.probe };
}

function parsePositiveInt(text: string, flag: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= min && n <= max)) throw new ValidationError(`${flag} ${JSON.stringify(text)} must be a whole number from ${min} to ${max}`);
  return n;
}

function attemptsPolicy(o: BulkOptions): AttemptsPolicy | undefined {
  if (o.resetAttempts && o.extraAttempts !== undefined) throw new ValidationError('--reset-attempts and --extra-attempts exclude each other: give one');
  if (o.resetAttempts) return { kind: 'reset' };
  if (o.extraAttempts !== undefined) return { kind: 'extra', n: parsePositiveInt(o.extraAttempts, '--extra-attempts', 1, 100) };
  return undefined;
}

/** A bulk command's selector flags, as the operator typed them (the dead-reason filter is `--dead-reason` here). */
const SELECTOR_FLAGS: ReadonlyArray<readonly [keyof BulkOptions, string]> = [
  ['queue', '--queue'],
  ['tenant', '--tenant'],
  ['workflow', '--workflow'],
  ['errorCode', '--error-code'],
  ['deadReason', '--dead-reason'],
  ['since', '--since'],
  ['until', '--until'],
  ['minAttempts', '--min-attempts'],
  ['maxAttempts', '--max-attempts'],
  ['expired', '--expired'],
  ['notExpired', '--not-expired'],
  ['minRemaining', '--min-remaining'],
  ['partial', '--partial'],
  ['grep', '--grep'],
];

/** The options that shape a new plan: a saved plan or a recorded run already fixed them. */
const PLAN_OPTION_FLAGS: ReadonlyArray<readonly [keyof BulkOptions, string]> = [
  ['all', '--all'],
  ['includePartial', '--include-partial'],
  ['maxRedrives', '--max-redrives'],
  ['resetAttempts', '--reset-attempts'],
  ['extraAttempts', '--extra-attempts'],
];

/** The flags among `table` that were given, spelled as typed (`--no-partial` for partial: false). */
function givenFlags(o: BulkOptions, table: ReadonlyArray<readonly [keyof BulkOptions, string]>): string[] {
  const given: string[] = [];
  for (const [key, flag] of table) {
    const v = o[key];
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    if (key === 'partial') given.push(...(o.partialFlags ?? [v === false ? '--no-partial' : flag]));
    else given.push(flag);
  }
  return given;
}

function selectorInput(o: BulkOptions): SelectorInput {
  // On bulk commands `--reason` is the operator's audit text, so the dead-reason filter is `--dead-reason`.
  const { reason: _auditReason, deadReason, queueFromContext: _scope, ...rest } = o;
  return { ...rest, reason: deadReason };
}

export async function dlqBulk(action: BulkAction, o: BulkOptions, io: DlqIo): Promise<RunRecord | Plan> {
  const rate = o.rate !== undefined ? parseRate(o.rate) : DEFAULT_RATE_PER_SEC;
  const requestedBatch = o.batchSize !== undefined ? parseBatchSize(o.batchSize) : undefined;
  if (requestedBatch !== undefined && effectiveBatchSize(requestedBatch, rate) < requestedBatch) {
    // On --resume without --rate the recorded rate caps it the same way (in the engine).
    io.err.write(`--batch-size ${requestedBatch} is more than one second of --rate ${o.rate ?? `${DEFAULT_RATE_PER_SEC}/s (the default)`}: batches of ${effectiveBatchSize(requestedBatch, rate)}, so the rate stays a cap\n`);
  }
  checkReason(o.reason);

  if (o.resume !== undefined) return resume(action, o, io, rate, requestedBatch);

  // `--plan-out -` writes the plan to stdout, so stdout carries the plan and nothing else: only with --dry-run.
  const planToStdout = o.planOut === '-';
  if (planToStdout && !o.dryRun) {
    throw new ValidationError('--plan-out - writes the plan to stdout: use it with --dry-run', `Save the plan to a file to apply it in the same command, or review it first: agentq dlq ${action} … --dry-run --plan-out - > plan.json`);
  }
  // Planning reads the whole selection, which on a slow or frozen store takes a while: a Ctrl-C
  // meanwhile ends the command at once, and says what that left (it ended without a word).
  io.interruptNote?.(`the ${action} plan was not finished; nothing was changed`);
  const built = await planFor(action, o, io);
  const { plan } = built;
  io.interruptNote?.(`the ${action} was not started; nothing was changed`);
  // (a plan file names its jobs, not a queue: only a selection typed here can name a wrong one)
  if (plan.totals.total === 0 && o.plan === undefined) await noteUnknownQueue(await io.backend(), o.queue, io);
  if (planToStdout) {
    io.out.write(serializePlan(plan));
    io.err.write(`${totalsLine(plan)}\nthe plan is on stdout: save it and apply exactly it with: agentq dlq ${action} --plan FILE\n`);
  } else if (o.planOut !== undefined) {
    await io.writeFile(o.planOut, serializePlan(plan));
    io.err.write(`plan saved to ${o.planOut}: apply exactly this plan with: agentq dlq ${action} --plan ${o.planOut}\n`);
  }
  if (built.partialNotices.length > 0) printPartialNotices(built.partialNotices, io);
  if (planToStdout) {
    await sqsSweepNotice(action, o, io, plan.queue);
    return plan;
  }
  if (o.dryRun) {
    await printPlan(plan, io);
    await sqsSweepNotice(action, o, io, plan.queue);
    return plan;
  }
  // Before "nothing to do": a read-only context refuses the mutation whatever the selection holds
  // today (a cron job must not pass there by luck and fail on the day there is something to act on).
  io.assertMutable(`dlq ${action}`);
  if (plan.totals.acting === 0) {
    printTotals(plan, io.err);
    io.err.write(`nothing to ${action}: no job in this selection passes the checks\n`);
    // -o json|ndjson: one document of the shape a run prints, so a script always has one to read.
    if (io.out.format === 'json' || io.out.format === 'ndjson') printObject(io.out, noRun(action, plan, o, io));
    return plan;
  }
  await sqsSweepNotice(action, o, io, plan.queue);
  await confirm(action, plan, o, io);
  const backend = await io.backend();
  const deps = engineDeps(io, backend);
  const run = await startRun(deps, plan, {
    reason: o.reason ?? null,
    rate,
    batchSize: effectiveBatchSize(requestedBatch, rate),
    lock: { breakLock: o.breakLock, force: o.force, warn: (m) => io.err.write(`warning: ${sanitize(m)}\n`) },
  });
  io.err.write(`run ${run.run_id}: ${plan.totals.acting} to ${action}, ${plan.totals.total - plan.totals.acting} skipped by the plan\n`);
  // SQS: the DLQ sweep runs beside the moves; copies of jobs not moved yet are held until they are over.
  let movesOver!: () => void;
  const sweeping = await sqsSweepStart(action, o, io, backend, run.queue, new Promise<void>((r) => (movesOver = r)));
  let result: ApplyResult;
  try {
    result = await applyRun(deps, run.run_id, { signal: io.signal, onProgress: progressSink(io) });
  } catch (e) {
    // The sweep judges what it holds and puts it back before the error ends the process.
    movesOver();
    await sweeping?.outcome;
    throw resumable(e, run, io);
  }
  movesOver();
  await sqsCopiesLeft(backend, result.run, io);
  return report(result, io, sweeping ? await sweeping.end(result.run) : null);
}

/**
 * What `-o json` prints when the selection leaves nothing to act on: a run record with no run
 * (`run_id` null: nothing was locked, recorded or changed), `completed`, every count zero, and
 * the queue `--queue` named (null without one).
 */
function noRun(action: BulkAction, plan: Plan, o: BulkOptions, io: DlqIo): Omit<RunRecord, 'run_id' | 'queue'> & { run_id: null; queue: string | null } {
  return {
    run_id: null,
    // (a plan that found nothing names the queue its selection was limited to; a plan file written
    // before it did carries that queue in its filters only)
    queue: plan.queue ?? (typeof plan.filters.queue === 'string' ? plan.filters.queue : null),
    action,
    user: `${io.identity.user}@${io.identity.host}`,
    context: io.identity.context,
    reason: o.reason ?? null,
    filters: plan.filters,
    options: plan.options,
    created_at: plan.created_at,
    updated_at: plan.created_at,
    status: 'completed',
    counts: { planned: 0, moved: 0, skipped: 0, failed: 0 },
  };
}

async function resume(action: BulkAction, o: BulkOptions, io: DlqIo, rate: number | null, batch: number | undefined): Promise<RunRecord> {
  // A run is resumed with the plan, verdicts, attempts policy and audit reason recorded when it was
  // created; only the pace (--rate, --batch-size) and the lock handling are the resumer's to choose.
  // Anything else typed here would be silently ignored, so it is refused.
  o = { ...o, resume: checkRunId(o.resume!) };
  const ignored = [
    ...givenFlags(o, SELECTOR_FLAGS),
    ...givenFlags(o, PLAN_OPTION_FLAGS),
    ...(o.plan !== undefined ? ['--plan'] : []),
    ...(o.planOut !== undefined ? ['--plan-out'] : []),
    ...(o.dryRun ? ['--dry-run'] : []),
    ...(o.reason !== undefined ? ['--reason'] : []),
  ];
  if (ignored.length > 0) {
    throw new ValidationError(
      `--resume continues run ${sanitize(o.resume!)} with what was recorded when it was created: ${ignored.join(', ')} ${ignored.length === 1 ? 'does' : 'do'} not apply`,
      `See the recorded filters, options and reason with: agentq dlq runs show ${sanitize(o.resume!)} (--rate and --batch-size may be given)`,
    );
  }
  io.assertMutable(`${action === 'prune' ? 'prune' : `dlq ${action}`} --resume`);
  const backend = await io.backend();
  const run = await backend.getRun(o.resume!);
  if (run && run.action !== action) throw new ValidationError(`run ${run.run_id} is a ${run.action} run; resume it with: ${resumeCommand(run)}`);
  if (run) await sqsSweepNotice(action, o, io, run.queue);
  const deps = engineDeps(io, backend);
  const result = await resumeRun(deps, o.resume!, {
    signal: io.signal,
    onProgress: progressSink(io),
    ...(o.rate !== undefined ? { rate } : {}),
    ...(batch !== undefined ? { batchSize: batch } : {}),
    lock: { breakLock: o.breakLock, force: o.force, warn: (m) => io.err.write(`warning: ${sanitize(m)}\n`) },
  }).catch((e: unknown) => {
    throw run ? resumable(e, run, io) : e;
  });
  // A resumed run sweeps too, also one that had completed: what a killed or interrupted sweep left goes now.
  const swept = await sqsSweep(action, o, io, backend, result);
  if (backend.kind === 'sqs' && action === 'redrive' && o.sweep !== false && result.run.counts.planned > 0 && result.run.counts.moved > 0) {
    // (a resumed run sweeps only once its moves are over: until then the SQS DLQ overstates the backlog)
    io.err.write(`the SQS DLQ still holds copies of jobs this run moved: they are deleted when the run finishes (--resume) or by: agentq sqs sweep --queue ${sanitize(result.run.queue)}\n`);
  }
  await sqsCopiesLeft(backend, result.run, io);
  return report(result, io, swept);
}

/**
 * A purge or expire on SQS leaves the SQS DLQ copies of what it removed: said, with the sweep that
 * removes them. A redrive whose moved jobs could not be published (SQS unreachable, a missing queue)
 * leaves them in the outbox: said as submit says it, or "moved" reads as "on its way".
 */
async function sqsCopiesLeft(backend: EngineDeps['backend'], run: RunRecord, io: DlqIo): Promise<void> {
  if (backend.kind === 'sqs' && run.action === 'redrive' && run.counts.moved > 0 && backend.unpublished) {
    const u = await backend.unpublished(run.queue).catch(() => null);
    if (u !== null && u.count > 0) {
      io.err.write(
        `warning: ${u.count} job(s) of queue ${sanitize(run.queue)} are not yet published to SQS${u.lastError ? ` (the last try failed: ${sanitize(u.lastError)})` : ''}; ` +
          'they are stored and queued: workers or `agentq outbox relay` publish them once that is mended\n',
      );
    }
  }
  // (a prune deletes finished jobs, which have no SQS DLQ copies)
  if (backend.kind !== 'sqs' || run.action === 'redrive' || run.action === 'prune') return;
  const { copiesLeftNotice } = await import('../../backend/sqs/redrive-sweep.js');
  const notice = copiesLeftNotice(backend, run);
  if (notice !== null) io.err.write(`${sanitize(notice)}\n`);
}

/**
 * A run stopped by a passing backend failure (exit 75: SQLite busy, a Redis timeout) is recorded
 * and resumable, as after Ctrl-C: say how to resume it, with the command, beside the retry hint.
 */
export function resumable(e: unknown, run: Pick<RunRecord, 'run_id' | 'action'>, io: DlqIo): unknown {
  if (e instanceof AgentqError && e.exitCode === ExitCode.retryLater) {
    io.err.write(`run ${run.run_id} stopped; every finished job is in its ledger. Resume it with: ${resumeCommand(run)}\n`);
  }
  return e;
}

/**
 * A redrive on SQS also removes the SQS DLQ copies of the jobs it moved (src/backend/sqs/redrive-sweep.ts,
 * loaded only for sqs://). Said before anything changes: the sweep receives from SQS, which changes messages.
 */
async function sqsSweepNotice(action: BulkAction, o: BulkOptions, io: DlqIo, queue: string | null): Promise<void> {
  if (action !== 'redrive') return;
  const backend = await io.backend();
  if (backend.kind !== 'sqs') return;
  const { noticeFor } = await import('../../backend/sqs/redrive-sweep.js');
  io.err.write(`${sanitize(noticeFor(backend, queue, o.sweep !== false))}\n`);
}

/** Starts the redrive's SQS DLQ sweep beside the moves; returns what ends it (the error to end with after the run is printed, or null). */
async function sqsSweepStart(action: BulkAction, o: BulkOptions, io: DlqIo, backend: EngineDeps['backend'], queue: string, movesOver: Promise<void>) {
  if (action !== 'redrive' || o.sweep === false || backend.kind !== 'sqs') return null;
  const { startSweep, sweepResult } = await import('../../backend/sqs/redrive-sweep.js');
  const outcome = startSweep(backend, queue, io, movesOver);
  return { outcome, end: async (run: RunRecord) => sweepResult(run, await outcome, io) };
}

/** The SQS DLQ sweep of a resumed run, after its moves; the error to end with after the run is printed, or null. */
async function sqsSweep(action: BulkAction, o: BulkOptions, io: DlqIo, backend: EngineDeps['backend'], result: ApplyResult): Promise<AgentqError | null> {
  if (action !== 'redrive' || o.sweep === false || backend.kind !== 'sqs' || result.interrupted) return null;
  const { sweepAfterRedrive } = await import('../../backend/sqs/redrive-sweep.js');
  return sweepAfterRedrive(backend, result.run, io);
}

async function planFor(action: BulkAction, o: BulkOptions, io: DlqIo) {
  const attempts = attemptsPolicy(o);
  const includePartial = o.includePartial ?? false;
  // --force is what applying a partial redrive takes; a dry run (with or without --plan-out) changes
  // nothing and is how the operator sees the effects first, so it goes through without it.
  const applying = !o.dryRun;
  if (o.plan !== undefined) {
    // The plan file fixed the selection, the verdicts (--min-remaining included) and the attempts
    // policy when it was made: any of them typed here would be silently ignored, so it is refused.
    const ignored = [...givenFlags(o, SELECTOR_FLAGS), ...givenFlags(o, PLAN_OPTION_FLAGS)];
    if (ignored.length > 0) {
      throw new ValidationError(
        `--plan applies exactly the saved plan: ${ignored.join(', ')} ${ignored.length === 1 ? 'does' : 'do'} not apply (the selection and plan options were fixed when the plan was made)`,
        'To change them, make a new plan (--dry-run --plan-out FILE) and review it.',
      );
    }
    const plan = parsePlan(await io.readFile(o.plan), `plan file ${o.plan}`);
    // (prune plans are never saved to a file: `agentq prune` plans again each time)
    if (plan.action === 'prune') throw new ValidationError(`plan file ${o.plan} is a prune plan: prune plans are not applied from files; run agentq prune --older-than D again`);
    if (plan.action !== action) throw new ValidationError(`plan file ${o.plan} is a ${plan.action} plan; apply it with: agentq dlq ${plan.action} --plan ${o.plan}`);
    // First, and not waived by --force (which partial jobs need): a plan applied to another store
    // (a restored copy, another environment) finds none of its jobs, or the wrong ones.
    const backend = await io.backend();
    if (plan.store !== undefined && !(await isSameStore(backend, plan.store))) {
      throw new ValidationError(
        `plan file ${o.plan} was made against ${sanitize(plan.store)}, but this command points at ${sanitize(await planStoreId(backend))}`,
        'Point at the store the plan was made on (--context / --url), or make a plan against this one: --dry-run --plan-out FILE.',
      );
    }
    if (plan.options.includePartial && !o.force && applying) throw new ValidationError(`plan file ${o.plan} includes partial jobs: applying it also needs --force`);
    // The dry run and the confirmation show what the apply would do now, not what the file says.
    const now = await recheckPlan({ backend: await io.backend(), clock: io.clock }, plan, io.signal);
    const changed = now.items.filter((item, i) => item.verdict !== plan.items[i]!.verdict).length;
    if (changed > 0) {
      io.err.write(`plan file ${sanitize(o.plan)}: ${count(changed, 'verdict')} changed since it was made (${sanitize(plan.created_at)}); re-checked against the store now\n`);
    }
    return { plan: now, partialNotices: now.options.includePartial ? await partialNoticesOf(now, io) : [] };
  }
  if (includePartial && !o.force && applying) {
    throw new ValidationError('--include-partial redrives jobs that already started an external effect: applying it also needs --force', 'Check the effects listed by a --dry-run first (it needs no --force).');
  }
  const selector = parseSelector(selectorInput(o), io.clock.now(), { reason: '--dead-reason' });
  requireSelector(selector, o.all ?? false, `dlq ${action}`, o.queueFromContext ? 'context' : 'flag');
  const maxRedrives = o.maxRedrives !== undefined ? parsePositiveInt(o.maxRedrives, '--max-redrives', 1, 1000) : undefined;
  const backend = await io.backend();
  return buildPlan({ backend, clock: io.clock }, { action, selector, maxRedrives, includePartial, attempts, signal: io.signal });
}

/** A saved plan does not carry effects: look them up, so a partial redrive still shows them before it is confirmed. */
async function partialNoticesOf(plan: Plan, io: DlqIo): Promise<PartialNotice[]> {
  const backend = await io.backend();
  const notices: PartialNotice[] = [];
  for (const item of plan.items) {
    if (item.verdict !== 'redrive') continue;
    const entry = await backend.dlqGet(item.job_id);
    if (entry?.partial) notices.push({ job_id: entry.job_id, effects: entry.job?.effects ?? [] });
  }
  return notices;
}

function printPartialNotices(notices: Array<{ job_id: string; effects: Array<{ key: string; status: string; started_at: string; done_at: string | null; idempotency_key: string }> }>, io: DlqIo): void {
  io.err.write(`WARNING: ${count(notices.length, 'job')} in this plan already started an external effect; redriving ${notices.length === 1 ? 'it' : 'them'} may repeat it:\n`);
  for (const n of notices) {
    io.err.write(`  ${sanitize(n.job_id)}\n`);
    for (const e of n.effects) {
      const when = `started ${sanitize(e.started_at)}, ${e.done_at ? `done ${sanitize(e.done_at)}` : 'not recorded done'}`;
      io.err.write(`    effect ${sanitize(e.key)}: ${when} (idempotency key ${sanitize(e.idempotency_key)})\n`);
    }
  }
}

function totalsLine(plan: Plan): string {
  const parts = Object.entries(plan.totals)
    .filter(([k]) => k !== 'total' && k !== 'acting')
    .sort(([a], [b]) => (a.startsWith('skip:') ? 1 : 0) - (b.startsWith('skip:') ? 1 : 0) || a.localeCompare(b))
    .map(([k, v]) => `${v} ${k}`);
  return `plan: ${plan.totals.total} selected${parts.length ? `: ${parts.join(', ')}` : ''}${plan.queue ? ` (queue ${sanitize(plan.queue)})` : ''}`;
}

function printTotals(plan: Plan, w: { write(s: string): void }): void {
  w.write(`${totalsLine(plan)}\n`);
}

async function printPlan(plan: Plan, io: DlqIo): Promise<void> {
  if (io.out.format === 'json' || io.out.format === 'ndjson') {
    printObject(io.out, plan);
    return;
  }
  await printRecords(io.out, { columns: PLAN_ITEM_COLUMNS, empty: NO_DLQ_ENTRIES }, plan.items);
  // The totals belong with the table for a person; in plain output they would corrupt the rows.
  printTotals(plan, io.out.format === 'plain' ? io.err : io.out);
}

async function confirm(action: BulkAction, plan: Plan, o: BulkOptions, io: DlqIo): Promise<void> {
  if (o.yes) return;
  if (!io.interactive) {
    throw new DeclinedError(`dlq ${action} changes ${count(plan.totals.acting, 'job')} and cannot ask for confirmation here (stdin and stdout are not both a terminal, or --no-input or CI is set): add --yes`, 'Review it first with --dry-run.');
  }
  printTotals(plan, io.err);
  // The store itself, not only the context: AGENTQ_URL (or --url) beats a context's url, so the
  // context alone could name another system than the one about to change. ("(none)" is the word
  // `context show` uses when no context is in force; the description is redacted by the backend.)
  const backend = await io.backend();
  io.err.write(`context ${sanitize(io.contextName ?? '(none)')}, store ${sanitize(backend.description)}: ${count(plan.totals.acting, 'job')} will be ${VERB[action].done}.\n`);
  if (plan.totals.acting > TYPED_CONFIRM_THRESHOLD) {
    const answer = (await io.prompt(`Type the number of jobs (${plan.totals.acting}) to ${action} them: `)).trim();
    if (answer !== String(plan.totals.acting)) throw new DeclinedError(`confirmation did not match ${plan.totals.acting}: nothing was changed`);
  } else {
    const answer = (await io.prompt(`${VERB[action].verb} ${count(plan.totals.acting, 'job')}? [y/N] `)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw new DeclinedError('declined: nothing was changed');
  }
}

export function progressSink(io: DlqIo) {
  return streamProgress(io.err, { isTTY: io.err.isTTY, now: () => io.clock.now() });
}

/** Prints the run record, then maps the outcome to the exit code. */
export async function report(result: ApplyResult, io: DlqIo, after: AgentqError | null = null): Promise<RunRecord> {
  const run = result.run;
  if (io.out.format === 'json' || io.out.format === 'ndjson') printObject(io.out, run);
  else {
    const { RUN_COLUMNS } = await import('./dlq-columns.js');
    await printRecords(io.out, { columns: RUN_COLUMNS, empty: 'No run.' }, [run]);
  }
  const err = outcomeError(run, result.interrupted) ?? after;
  if (err) throw err;
  return run;
}

/**
 * The exit code of a finished bulk run, as an error to throw (null = exit 0):
 * 130 when jobs are still planned (interrupted), 6 when some failed. Skips
 * are decisions, not failures: a run that moved every job it still could exits 0.
 */
export function outcomeError(run: RunRecord, interrupted: boolean): AgentqError | null {
  if (interrupted || run.counts.planned > 0) {
    return new InterruptedError(`run ${run.run_id} stopped with ${count(run.counts.planned, 'job')} still planned; the ledger is recorded`, `Resume it with: ${resumeCommand(run)}`);
  }
  if (run.counts.failed > 0) {
    return new AgentqError('PARTIAL', `run ${run.run_id}: ${count(run.counts.failed, 'job')} failed to ${run.action}`, ExitCode.partial, `See them with: agentq dlq runs show ${run.run_id} --status failed`);
  }
  return null;
}
