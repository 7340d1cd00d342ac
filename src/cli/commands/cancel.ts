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
import { AgentqError, ExitCode, InterruptedError, NotFoundError, ValidationError } from '../../core/errors.js';
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

/** `job_` and 26 ULID characters. */
const JOB_ID_CHARS = 30;

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

/** The canonical job id, or why the argument is none (checkJobId's error). */
function checkedId(given: string): string | ValidationError {
  try {
    return checkJobId(given);
  } catch (e) {
    if (e instanceof ValidationError) return e;
    throw e;
  }
}

export async function run(o: CancelOptions, ctx: CommandContext): Promise<void> {
  // An id that is not a job id at all (a typo, a stray line piped through xargs) fails on its own
  // row, as kubectl delete and docker rm treat each name: refusing the whole command for it left
  // the jobs named right running. Only when no id is a job id is it a usage error: nothing to try.
  const checked = o.jobs.map(checkedId);
  const malformed = checked.filter((c): c is ValidationError => c instanceof ValidationError);
  if (malformed.length === checked.length) {
    if (malformed.length === 1) throw malformed[0]!;
    throw new ValidationError(`${o.jobs.map((j) => JSON.stringify(j)).join(', ')} are not job ids: job ids look like job_ followed by 26 ULID characters (job_01JD3K...)`);
  }
  const ids = o.jobs;
  checkReason(o.reason);
  ctx.assertMutable('cancel');
  const backend = await ctx.openBackend();
  const stream = new RecordStream<CancelRow>(ctx.out, {
    // (only when interrupted before the first id: the error after it names them all)
    empty: 'No job was tried.',
    columns: [
      // (a first row that is a short malformed id must not size the column below a job id's 30 characters)
      { header: 'job', get: (r) => r.job_id, keepWhole: true, minWidth: JOB_ID_CHARS },
      { header: 'result', get: (r) => (r.error ? `${MEANING[r.status]}: ${r.error.message}` : (r.meaning ?? MEANING[r.status])), flexible: true },
      { header: 'state', get: (r) => (r.state === null ? null : { text: r.state, style: 'state' }) },
    ],
    // (a script reading the output learns which jobs failed, not only that some did)
    toJson: (r) => (r.error ? { job_id: r.job_id, status: r.status, error: r.error } : { job_id: r.job_id, status: r.status, job: r.job }),
  });
  const failures: AgentqError[] = [];
  let done = 0;
  for (const [i, given] of ids.entries()) {
    if (ctx.signal.aborted) break;
    done++;
    const c = checked[i]!;
    const id = typeof c === 'string' ? c : given;
    try {
      if (typeof c !== 'string') throw c;
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
    const left = checked.slice(done).filter((c): c is string => typeof c === 'string');
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
