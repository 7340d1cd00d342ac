/**
 * `agentq cancel JOB... [--reason]`: a queued or scheduled job ends at once;
 * a running job gets a cancel request its worker sees at the next heartbeat (one
 * whose lease expired is ended `cancelled` by the next claim on its queue);
 * a job that already ended is left alone (and said so).
 *
 * Each id is tried and gets a row, a failed one too; the exit code is 6
 * (partial) when some failed, or the failure's own code when all did.
 */
import type { CancelResult } from '../../backend/contract.js';
import { AgentqError, ExitCode, InterruptedError, NotFoundError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';
import { RecordStream } from '../output/format.js';
import { checkJobId, checkReason } from '../parse.js';
import { formatDuration } from '../../core/duration.js';
import type { Job } from '../../core/schemas.js';
import { leaseExpiredFor } from '../../core/states.js';
import { sanitize } from '../output/sanitize.js';

export interface CancelOptions {
  jobs: string[];
  reason?: string;
}

interface CancelRow {
  job_id: string;
  /** `error`: this job could not be cancelled (the others were tried): see `error`. */
  status: CancelResult['status'] | 'error';
  state: string | null;
  job: CancelResult['job'] | null;
  error?: { code: string; message: string };
  /** What the table says instead of the status's usual meaning. */
  meaning?: string;
}

const MEANING: Record<CancelRow['status'], string> = {
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested (the worker stops at its next heartbeat)',
  already_terminal: 'already ended, nothing changed',
  error: 'not cancelled',
};

/**
 * A running job whose lease ran out has no worker to see the request at a heartbeat: it stays
 * `running` until the next claim on its queue reaps the lease, and that reaping ends it `cancelled`
 * (a requested cancel wins over a retry). Ending it here at once would need a fenced,
 * atomic write on every backend, so the row says what will happen instead.
 */
export function orphanedMeaning(job: Job, now: number): string | undefined {
  const over = leaseExpiredFor(job, now);
  if (over === null) return undefined;
  return `cancel requested; no worker holds it (its lease expired ${formatDuration(over)} ago): the next claim on queue ${sanitize(job.queue)} ends it cancelled`;
}

export async function run(o: CancelOptions, ctx: CommandContext): Promise<void> {
  const ids = o.jobs.map(checkJobId);
  checkReason(o.reason);
  ctx.assertMutable('cancel');
  const backend = await ctx.openBackend();
  const stream = new RecordStream<CancelRow>(ctx.out, {
    columns: [
      { header: 'job', get: (r) => r.job_id, keepWhole: true },
      { header: 'result', get: (r) => (r.error ? `${MEANING[r.status]}: ${r.error.message}` : (r.meaning ?? MEANING[r.status])), flexible: true },
      { header: 'state', get: (r) => (r.state === null ? null : { text: r.state, style: 'state' }) },
    ],
    // (a script reading the output learns which jobs failed, not only that some did)
    toJson: (r) => (r.error ? { job_id: r.job_id, status: r.status, error: r.error } : { job_id: r.job_id, status: r.status, job: r.job }),
  });
  const failures: AgentqError[] = [];
  let done = 0;
  for (const id of ids) {
    if (ctx.signal.aborted) break;
    done++;
    try {
      const job = await backend.get(id);
      if (!job) throw new NotFoundError(`job ${id} not found`);
      const r = await backend.cancel(id, o.reason ?? null);
      const meaning = r.status === 'cancel_requested' ? orphanedMeaning(r.job, ctx.clock.now()) : undefined;
      await stream.page([{ job_id: id, status: r.status, state: r.job.state, job: r.job, ...(meaning ? { meaning } : {}) }]);
    } catch (e) {
      if (!(e instanceof AgentqError)) throw e;
      failures.push(e);
      // The row is printed for one id too: a script reading `-o json` learns which job failed either way.
      await stream.page([{ job_id: id, status: 'error', state: null, job: null, error: { code: e.code, message: e.message } }]);
    }
  }
  stream.end();
  if (done < ids.length) {
    // Stopped by Ctrl-C between two jobs: exit 0 said every job had been cancelled.
    const left = ids.slice(done);
    throw new InterruptedError(
      `interrupted: ${left.length} of ${ids.length} jobs were not cancelled: ${left.join(' ')}`,
      `Cancel them with: agentq cancel ${left.join(' ')}`,
    );
  }
  if (failures.length === 0) return;
  // One id: its own error (message, hint and exit code), after its row.
  if (ids.length === 1) throw failures[0]!;
  const allFailed = failures.length === ids.length;
  throw new AgentqError(
    'CANCEL_PARTIAL',
    `${failures.length} of ${ids.length} jobs could not be cancelled`,
    allFailed && failures.every((f) => f.exitCode === failures[0]!.exitCode) ? failures[0]!.exitCode : ExitCode.partial,
  );
}
