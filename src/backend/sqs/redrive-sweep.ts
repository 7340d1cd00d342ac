/**
 * The SQS DLQ sweep that `agentq dlq redrive` runs once its moves are applied
 * (on by default on sqs://, `--no-sweep` to skip). A redrive moves entries in
 * the job store and sends new messages to the source queue; the old copies in
 * the SQS DLQ stay until something receives and deletes them, and until then
 * the DLQ depth (and any CloudWatch alarm on it) still counts the redriven jobs.
 *
 * It runs after the apply, not beside it: SQS cannot pick messages out of a
 * queue, so a sweep overlapping the sends would receive copies of jobs not
 * moved yet, put them back, and have to receive them again later (each receive
 * raises a message's receive count). One pass after the apply receives each
 * message once.
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
import type { SqsBackend } from './index.js';

/** Said in the plan, the dry run and before the apply: the sweep receives from SQS, which changes messages. */
export function redriveSweepNotice(dlqName: string): string {
  return (
    `After the moves, this redrive RECEIVES from the SQS DLQ ${dlqName} (--no-sweep skips it): every message there is ` +
    `received once, which raises its receive count by one and hides it while the sweep runs (30 s plus 5 s per 1,000 ` +
    `messages at most). agentq's copies of jobs no longer dead in the store (this redrive's, or an earlier one's) are ` +
    `deleted; copies of entries still dead and every other message (foreign, malformed, moved there by SQS) are made ` +
    `visible again at once, unchanged (\`agentq sqs sweep\` is what takes those into custody).`
  );
}

/** What a redrive of `queue` on the SQS backend will do to the SQS DLQ (with `--no-sweep`: that it leaves it alone). */
export function noticeFor(backend: Backend, queue: string | null, sweep: boolean): string {
  const name = queue === null ? "the queue's SQS DLQ" : (backend as SqsBackend).sqsQueues.dlqName(queue);
  if (!sweep) return `--no-sweep: this redrive does not receive from the SQS DLQ ${name}; the copies of the jobs it moves stay there until \`agentq sqs sweep\` (or a redrive without --no-sweep) removes them.`;
  return redriveSweepNotice(name);
}

/**
 * Sweeps the SQS DLQ of a finished redrive run. Returns the error the command
 * should end with (interrupted, or the sweep failed) after it has printed the
 * run, or null. Nothing to do when the run moved nothing or did not finish.
 */
export async function sweepAfterRedrive(
  backend: Backend,
  run: RunRecord,
  io: { err: { write(s: string): void }; signal: AbortSignal },
): Promise<AgentqError | null> {
  if (backend.kind !== 'sqs' || run.action !== 'redrive' || run.counts.moved === 0 || run.counts.planned > 0 || io.signal.aborted) return null;
  const sqs = backend as SqsBackend;
  const again = `agentq dlq redrive --resume ${run.run_id}`;
  io.err.write(`sweeping the SQS DLQ ${sqs.sqsQueues.dlqName(run.queue)} for the copies of moved jobs…\n`);
  let r: Awaited<ReturnType<SqsBackend['sweepRedrivenCopies']>>;
  try {
    r = await sqs.sweepRedrivenCopies(run.queue, io.signal);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const err = new AgentqError(
      e instanceof AgentqError ? e.code : 'SWEEP_FAILED',
      `run ${run.run_id} is complete, but the sweep of the SQS DLQ failed: ${why}; copies of moved jobs may still be in it`,
      e instanceof AgentqError ? e.exitCode : 1,
      `Remove them with: ${again}`,
    );
    return err;
  }
  io.err.write(
    `swept ${r.dlq}: received ${r.received}, deleted ${r.deleted} copies of jobs no longer dead, ` +
      `made ${r.mirror_kept} copies of still-dead entries and ${r.kept_in_sqs} other messages visible again\n`,
  );
  if (r.interrupted) {
    return new InterruptedError(`run ${run.run_id} is complete; the sweep of the SQS DLQ ${r.dlq} was interrupted and copies of moved jobs may remain`, `Remove them with: ${again}`);
  }
  return null;
}
