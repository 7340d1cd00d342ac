/**
 * The SQS DLQ sweep that `agentq dlq redrive` runs with its moves (on by
 * default on sqs://, `--no-sweep` to skip). A redrive moves entries in
 * the job store and sends new messages to the source queue; the old copies in
 * the SQS DLQ stay until something receives and deletes them, and until then
 * the DLQ depth (and any CloudWatch alarm on it) still counts the redriven jobs.
 *
 * It runs beside the moves (from the start of the apply), yet receives each
 * message once: SQS cannot pick messages out of a queue, so the sweep receives
 * the DLQ through, deletes at once the copies of jobs already moved, and holds
 * (hidden) the copies of jobs still dead until the apply is over, then judges
 * those again: moved by then → deleted, still dead → visible again at once.
 * Putting them back early would mean receiving them again (each receive raises
 * a message's receive count). A resumed run sweeps after its moves.
 *
 * Safety is the sweep's (custody.ts, `copiesOnly`): a copy is deleted only
 * when the store has its job and no longer holds it dead; every other message
 * is put back visible at once, unchanged, and nothing is taken into custody.
 * Ctrl-C stops it between received batches (what was received is still put
 * back); an interrupted or failed sweep leaves copies that a later sweep
 * removes — `agentq dlq redrive --resume RUN` of the completed run sweeps
 * again, as does `agentq sqs sweep`.
 *
 * Loaded only by a redrive on the SQS backend (a dynamic import in
 * cli/commands/dlq-bulk.ts).
 */
import type { Backend, RunRecord } from '../contract.js';
import { AgentqError, InterruptedError } from '../../core/errors.js';
import type { SweepReport } from './custody.js';
import type { SqsBackend } from './index.js';

/** Said in the plan, the dry run and before the apply: the sweep receives from SQS, which changes messages. */
export function redriveSweepNotice(dlqName: string): string {
  return (
    `Along with the moves, this redrive RECEIVES from the SQS DLQ ${dlqName} (--no-sweep skips it): every message there is ` +
    `received once, which raises its receive count by one and hides it until the redrive ends (at most 30 s plus 5 s per ` +
    `1,000 messages in the DLQ). agentq's copies of jobs no longer dead in the store (this redrive's, or an earlier one's) are ` +
    `deleted; copies of entries still dead and every other message (foreign, malformed, moved there by SQS) are made ` +
    `visible again at the end, unchanged (\`agentq sqs sweep\` is what takes those into custody).`
  );
}

/** What a redrive of `queue` on the SQS backend will do to the SQS DLQ (with `--no-sweep`: that it leaves it alone). */
export function noticeFor(backend: Backend, queue: string | null, sweep: boolean): string {
  const name = queue === null ? "the queue's SQS DLQ" : (backend as SqsBackend).sqsQueues.dlqName(queue);
  if (!sweep) return `--no-sweep: this redrive does not receive from the SQS DLQ ${name}; the copies of the jobs it moves stay there until \`agentq sqs sweep\` (or a redrive without --no-sweep) removes them.`;
  return redriveSweepNotice(name);
}

type Io = { err: { write(s: string): void }; signal: AbortSignal };
export type SweepOutcome = { report: SweepReport & { dlq: string; in_flight: number } } | { error: unknown };

/**
 * Starts the sweep of the SQS DLQ of `queue`; never rejects. With `holdUntil` it runs beside
 * the moves: copies of jobs still dead when received are held and judged again once the
 * moves are over (settle it then, also when they fail), so each message is still received once.
 */
export function startSweep(backend: Backend, queue: string, io: Io, holdUntil?: Promise<unknown>): Promise<SweepOutcome> {
  const sqs = backend as SqsBackend;
  io.err.write(`sweeping the SQS DLQ ${sqs.sqsQueues.dlqName(queue)}${holdUntil ? ' beside the moves' : ''} for the copies of moved jobs…\n`);
  return sqs.sweepRedrivenCopies(queue, io.signal, holdUntil).then(
    (report) => ({ report }),
    (error: unknown) => ({ error }),
  );
}

/** Says what the sweep did; the error the command should end with after it printed the run (interrupted, failed), or null. */
export function sweepResult(run: RunRecord, outcome: SweepOutcome, io: Io): AgentqError | null {
  const again = `agentq dlq redrive --resume ${run.run_id}`;
  if ('error' in outcome) {
    const e = outcome.error;
    const why = e instanceof Error ? e.message : String(e);
    return new AgentqError(
      e instanceof AgentqError ? e.code : 'SWEEP_FAILED',
      `run ${run.run_id}: the sweep of the SQS DLQ failed: ${why}; copies of moved jobs may still be in it`,
      e instanceof AgentqError ? e.exitCode : 1,
      `Remove them with: ${again}`,
    );
  }
  const r = outcome.report;
  io.err.write(
    `swept ${r.dlq}: received ${r.received}, deleted ${r.deleted - r.duplicate_copies} copies of jobs no longer dead` +
      `${r.duplicate_copies > 0 ? ` and ${r.duplicate_copies} second copies of still-dead entries` : ''}, ` +
      `made ${r.mirror_kept} copies of still-dead entries and ${r.kept_in_sqs} other messages visible again\n`,
  );
  if (r.in_flight > 0) {
    io.err.write(
      `warning: ${r.in_flight} message(s) of ${r.dlq} are held hidden by another receiver (a consumer, another sweep, or a redrive killed while sweeping), ` +
        `so this sweep could not look at them; copies of moved jobs may be among them. They become visible again when their visibility timeout ends; ` +
        `then remove those copies with: agentq sqs sweep --queue ${run.queue}\n`,
    );
  }
  if (r.interrupted) {
    return new InterruptedError(`run ${run.run_id}: the sweep of the SQS DLQ ${r.dlq} was interrupted and copies of moved jobs may remain`, `Remove them with: ${again}`);
  }
  return null;
}

/**
 * After a purge or expire on SQS: the store no longer holds those entries dead, but their copies
 * are still in the SQS DLQ (and counted by alarms on it). They are left there: the store is the
 * source of truth, purge needs no SQS permission, and removing them means receiving the DLQ
 * (receive counts go up), which `agentq sqs sweep` does and says it does. Null when nothing left it.
 */
export function copiesLeftNotice(backend: Backend, run: RunRecord): string | null {
  if (backend.kind !== 'sqs' || run.action === 'redrive' || run.counts.moved === 0) return null;
  const dlq = (backend as SqsBackend).sqsQueues.dlqName(run.queue);
  const done = run.action === 'purge' ? 'purged' : 'expired';
  return (
    `the SQS DLQ ${dlq} still holds agentq's copies of the ${run.counts.moved} job(s) this run ${done} (SQS alarms on its depth still count them): ` +
    `\`agentq sqs sweep --queue ${run.queue} --yes\` deletes them (it receives the DLQ: receive counts go up)`
  );
}

/**
 * The sweep of a resumed run, after its moves (also of a run that had completed: what a killed or
 * interrupted sweep left goes now). Nothing to do when the run moved nothing or did not finish.
 */
export async function sweepAfterRedrive(backend: Backend, run: RunRecord, io: Io): Promise<AgentqError | null> {
  if (backend.kind !== 'sqs' || run.action !== 'redrive' || run.counts.moved === 0 || run.counts.planned > 0 || io.signal.aborted) return null;
  return sweepResult(run, await startSweep(backend, run.queue, io), io);
}
