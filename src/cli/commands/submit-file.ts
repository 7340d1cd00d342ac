/**
 * `agentq submit --file F` (`-`: stdin): many jobs, one JSON object a line (cli/job-lines.ts).
 * Every line is checked before the first submit; then the jobs are submitted in line order, up to
 * SUBMIT_WINDOW at a time, so the backend's own batching (SQLite group commit, Redis submit
 * scripts of 64) takes them in bulk. A failure half way stops the submits and says exactly which
 * lines were stored, which were not, and which may have been (an answer lost on the way back).
 */
import { AgentqError, InterruptedError, RetryLaterError, ValidationError } from '../../core/errors.js';
import type { Backend } from '../../backend/contract.js';
import type { Job } from '../../core/schemas.js';
import type { CommandContext } from '../context.js';
import { openFlagFile, readChunks } from '../flag-file.js';
import { JobLineChecker, LineSplitter, MAX_JOBS, type JobDefaults, type JobLine, type LineError } from '../job-lines.js';
import { RecordStream, type RecordSpec } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { buildSubmitRequest, type SubmitOptions } from './submit.js';

/** Submits in flight at once: enough for several of the backends' batches, few enough to stop soon after a failure. */
const SUBMIT_WINDOW = 256;
/** The whole input (checked jobs are held until every line has been read). */
export const MAX_FILE_BYTES = 128 * 1024 * 1024;
/** `line N: …` messages printed; the rest are counted. */
const MAX_REPORTED = 20;
/** Ranges of lines printed in a "submitted: lines …" report. */
const MAX_RANGES = 20;

/** The flags of one job only: with --file, each line gives its own. */
const PER_JOB_FLAGS: ReadonlyArray<[keyof SubmitOptions, string, string]> = [
  ['input', '--input', 'input'],
  ['inputFile', '--input-file', 'input'],
  ['inputRef', '--input-ref', 'input_ref'],
  ['inputSha256', '--input-sha256', 'input_sha256'],
  ['idempotencyKey', '--idempotency-key', 'idempotency_key'],
];

/** The flags are checked by the one-job path, for a stand-in job that is never submitted. */
const STAND_IN_WORKFLOW = 'file:v1';

export interface SubmittedLine {
  line: number;
  job_id: string;
  /** False: an idempotency key returned a job that was already there. */
  created: boolean;
  state: Job['state'];
  queue: string;
  tenant_id: string;
  workflow: string;
  idempotency_key: string | null;
}

const SPEC: RecordSpec<SubmittedLine> = {
  empty: 'No job was submitted.',
  columns: [
    { header: 'LINE', get: (r) => r.line },
    { header: 'JOB', get: (r) => r.job_id, keepWhole: true },
    { header: 'RESULT', get: (r) => (r.created ? 'created' : 'existing') },
    { header: 'QUEUE', get: (r) => r.queue, flexible: true },
    { header: 'WORKFLOW', get: (r) => r.workflow, flexible: true },
  ],
};

export async function runFile(o: SubmitOptions & { file: string }, ctx: CommandContext): Promise<void> {
  if (o.workflow !== undefined) {
    throw new ValidationError(`give WORKFLOW or --file, not both (got ${JSON.stringify(sanitize(o.workflow))}): with --file each line names its workflow`);
  }
  for (const [key, flag, field] of PER_JOB_FLAGS) {
    if (o[key] !== undefined) throw new ValidationError(`${flag} is one job's: with --file, give ${field} on each line that needs it`);
  }
  if (o.wait) throw new ValidationError('--wait follows one job: it does not combine with --file');
  const now = ctx.clock.now();
  const flags = await buildSubmitRequest({ ...o, workflow: STAND_IN_WORKFLOW }, now, ctx.defaultQueue());
  const defaults: JobDefaults = {
    queue: flags.queue,
    tenant_id: flags.tenant_id,
    class: flags.class,
    operation: flags.operation,
    deadline_at: flags.deadline_at,
    max_attempts: flags.max_attempts,
    trace_id: flags.trace_id,
    budget: flags.budget,
    allowed_tools: flags.allowed_tools,
    estimated_seconds: flags.estimated_seconds,
    run_at: flags.run_at,
  };
  const name = o.file === '-' ? 'stdin' : o.file;
  ctx.interruptNote(`stopped reading ${name}; nothing was submitted`);
  const { jobs, bytes } = await checkedJobs(o.file, defaults, now, ctx);
  ctx.assertMutable('submit');
  if (jobs.length === 0) {
    // (the listing's one line says it: json prints [] and nothing more, as every empty listing)
    const why = bytes === 0 ? 'is empty' : 'has no jobs (only blank lines)';
    new RecordStream(ctx.out, { ...SPEC, empty: `${name} ${why}; nothing was submitted` }).end();
    return;
  }
  const out = new RecordStream(ctx.out, SPEC);
  const backend = await ctx.openBackend({ create: true });
  refuseBackendRules(backend, jobs, name, ctx);
  const releaseStops = ctx.handleStops();
  let run: BatchRun;
  try {
    run = await submitInOrder(backend, jobs, (rows) => out.page(rows), ctx.signal);
  } finally {
    releaseStops();
  }
  out.end();
  reportRun(run, jobs, name, ctx);
}

/**
 * Reads and checks every line; throws (exit 2, nothing submitted) when any is bad or a cap is
 * passed. Returns the jobs and how many bytes the input had (0: an empty file, not blank lines).
 */
async function checkedJobs(path: string, defaults: JobDefaults, now: number, ctx: CommandContext): Promise<{ jobs: JobLine[]; bytes: number }> {
  const checker = new JobLineChecker(defaults, now, MAX_REPORTED);
  const split = new LineSplitter((line, bytes) => checker.add(line, bytes));
  let read = 0;
  let tooLarge = false;
  const feed = (chunk: Buffer): boolean => {
    read += chunk.length;
    // (also what ends /dev/zero or an endless pipe: a line with no end is never held, but it is read)
    if (read > MAX_FILE_BYTES) return !(tooLarge = true);
    return split.push(chunk);
  };
  if (path === '-') {
    const stdin = ctx.io.stdin;
    if (stdin.isTTY === true) {
      throw new ValidationError('--file - reads the jobs from stdin, which is a terminal', 'Pipe them in: agentq submit --file - < jobs.ndjson, or give the file name.');
    }
    let more = true;
    for await (const chunk of stdin as unknown as AsyncIterable<Buffer | string>) {
      if (!(more = feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))) break;
    }
    if (more) split.end();
  } else {
    const f = await openFlagFile('--file', path);
    try {
      let more = true;
      await readChunks(f, (chunk) => (more = feed(chunk)));
      if (more) split.end();
    } finally {
      await f.handle.close();
    }
  }
  const name = path === '-' ? 'stdin' : path;
  reportInvalidLines(checker.errors, checker.errorCount, ctx);
  const split1 = `Split it (split -l ${MAX_JOBS} ${path === '-' ? 'FILE' : path}) and submit each part.`;
  if (tooLarge) throw new ValidationError(`${name} is over ${MAX_FILE_BYTES / 1024 / 1024} MiB; nothing was submitted`, split1, 'INPUT_TOO_LARGE');
  if (checker.overCap !== null) throw new ValidationError(`${name} ${checker.overCap}; at most ${MAX_JOBS} a file; nothing was submitted`, split1, 'INPUT_TOO_LARGE');
  if (checker.errorCount > 0) throw invalidLines(checker.errors, checker.errorCount, name);
  return { jobs: checker.jobs, bytes: read };
}

/**
 * The backend's own rules (SQS: `run_at` within 13 days), asked for every line once the backend is
 * open and before any is submitted: a line only this backend refuses must not stop a file half way.
 */
function refuseBackendRules(backend: Backend, jobs: readonly JobLine[], name: string, ctx: CommandContext): void {
  if (backend.refusesSubmit === undefined) return;
  const errors: LineError[] = [];
  let count = 0;
  for (const { line, req } of jobs) {
    const refused = backend.refusesSubmit(req);
    if (refused === null) continue;
    count++;
    if (errors.length < MAX_REPORTED) errors.push({ line, message: sanitize(refused.message) });
  }
  if (count === 0) return;
  reportInvalidLines(errors, count, ctx);
  throw invalidLines(errors, count, name);
}

/** `line N: rule` on stderr for the lines kept, then a count of the rest. */
function reportInvalidLines(errors: readonly LineError[], count: number, ctx: CommandContext): void {
  for (const e of errors) ctx.note(`line ${e.line}: ${e.message}`);
  const unshown = count - errors.length;
  if (unshown > 0) ctx.note(`… and ${unshown} more invalid line${unshown === 1 ? '' : 's'}`);
}

function invalidLines(errors: readonly LineError[], count: number, name: string): ValidationError {
  return new ValidationError(
    `${count} line${count === 1 ? '' : 's'} of ${name} ${count === 1 ? 'is' : 'are'} invalid (the first: line ${errors[0]!.line}); nothing was submitted`,
    'Mend the lines named above and submit the file again.',
    'INVALID_JOB_LINES',
  );
}

/** How a run of submits ended, per job (by index into the jobs). */
export interface BatchRun {
  /** Per job: the stored job, the error its submit failed with, or undefined when it was never sent. */
  results: Array<SubmittedLine | { error: unknown } | undefined>;
  /** Job index → why its job, stored, is not published yet (SQS: its outbox row waits for the relay). */
  unpublished: Map<number, string>;
  interrupted: boolean;
}

/**
 * Submits the jobs in order, SUBMIT_WINDOW in flight at most; `emit` gets the stored jobs in line
 * order as soon as every earlier line has an answer. The first failure (or `signal`) stops new
 * submits; those in flight are waited for, so every line's fate is known when this returns.
 */
export async function submitInOrder(backend: Backend, jobs: readonly JobLine[], emit: (rows: SubmittedLine[]) => Promise<void>, signal: AbortSignal): Promise<BatchRun> {
  const results: BatchRun['results'] = new Array(jobs.length);
  const answered: boolean[] = new Array(jobs.length).fill(false);
  const unpublished = new Map<number, string>();
  let next = 0;
  let emitted = 0;
  let inFlight = 0;
  let failed = false;
  let wake: (() => void) | null = null;
  const woken = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  signal.addEventListener('abort', woken, { once: true });
  const launch = (i: number) => {
    inFlight++;
    const { line, req } = jobs[i]!;
    backend.submit(req).then(
      ({ job, created, unpublished: why }) => {
        if (why !== undefined) unpublished.set(i, why);
        results[i] = { line, job_id: job.job_id, created, state: job.state, queue: job.queue, tenant_id: job.tenant_id, workflow: job.workflow, idempotency_key: job.idempotency_key };
      },
      (error: unknown) => {
        results[i] = { error };
        failed = true;
      },
    ).finally(() => {
      answered[i] = true;
      inFlight--;
      woken();
    });
  };
  try {
    for (;;) {
      while (!failed && !signal.aborted && next < jobs.length && inFlight < SUBMIT_WINDOW) launch(next++);
      const rows: SubmittedLine[] = [];
      for (; emitted < next && answered[emitted]; emitted++) {
        const r = results[emitted]!;
        if (!('error' in r)) rows.push(r);
      }
      if (rows.length > 0) await emit(rows);
      if (inFlight === 0 && (failed || signal.aborted || next === jobs.length)) break;
      if (inFlight > 0) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', woken);
  }
  return { results, unpublished, interrupted: signal.aborted && !failed };
}

/** Stderr after the run: a summary, or which lines were stored and which not, then the error to exit with. */
function reportRun(run: BatchRun, jobs: readonly JobLine[], name: string, ctx: CommandContext): void {
  const stored: number[] = [];
  const notStored: number[] = [];
  const unknown: number[] = [];
  const failures: Array<{ line: number; error: unknown }> = [];
  let created = 0;
  // (a for loop: the results of jobs never sent are holes, which forEach skips)
  for (let i = 0; i < jobs.length; i++) {
    const r = run.results[i];
    if (r === undefined) notStored.push(i);
    else if ('error' in r) {
      failures.push({ line: jobs[i]!.line, error: r.error });
      (mayHaveRun(r.error) ? unknown : notStored).push(i);
    } else {
      stored.push(i);
      if (r.created) created++;
    }
  }
  reportUnpublished(run.unpublished, jobs, ctx);
  if (failures.length === 0 && !run.interrupted) {
    const existing = stored.length - created;
    ctx.note(`${stored.length} job${stored.length === 1 ? '' : 's'} from ${name}: ${created} created${existing > 0 ? `, ${existing} already there (idempotency key)` : ''}`);
    return;
  }
  // One note per distinct failure (a store that went away fails every line in flight alike).
  const byMessage = new Map<string, number[]>();
  run.results.forEach((r, i) => {
    if (r === undefined || !('error' in r)) return;
    const message = sanitize(r.error instanceof Error ? r.error.message : String(r.error));
    const same = byMessage.get(message);
    if (same) same.push(i);
    else byMessage.set(message, [i]);
  });
  for (const [message, indexes] of [...byMessage].slice(0, MAX_REPORTED)) ctx.note(`${lineRanges(indexes, jobs, false)}: ${message}`);
  if (byMessage.size > MAX_REPORTED) ctx.note(`… and ${byMessage.size - MAX_REPORTED} more failures`);
  ctx.note(`submitted: ${lineRanges(stored, jobs)}`);
  if (unknown.length > 0) ctx.note(`perhaps submitted (the store's answer was lost): ${lineRanges(unknown, jobs)}`);
  ctx.note(`not submitted: ${lineRanges(notStored, jobs)}`);
  const allKeyed = jobs.every((j) => j.req.idempotency_key !== null);
  const hint =
    stored.length === 0 && unknown.length === 0
      ? 'Nothing was stored: submit the file again once the cause is mended.'
      : allKeyed
        ? 'Every line has an idempotency_key, so submitting the same file again is the safe retry: the lines already submitted return their jobs (created: false), the rest are submitted.'
        : 'Lines without an idempotency_key would be submitted twice if the whole file ran again: submit only the lines not submitted, or give every line an idempotency_key (then re-running the file is the safe retry).';
  const tally = `${stored.length} of ${jobs.length} jobs were submitted${unknown.length > 0 ? `, ${unknown.length} perhaps` : ''}, ${notStored.length} not`;
  if (run.interrupted) throw new InterruptedError(`stopped submitting ${name}: ${tally}`, hint);
  const first = failures[0]!;
  if (!(first.error instanceof AgentqError)) throw first.error;
  throw new AgentqError(first.error.code, `submitting ${name} stopped at line ${first.line}: ${first.error.message.replace(/\.$/, '')}; ${tally}`, first.error.exitCode, hint);
}

/**
 * Jobs stored but not yet published (SQS with its broker unreachable): what `agentq submit` says of
 * one job, said once per cause with the lines it holds for, since the run itself succeeded.
 */
function reportUnpublished(unpublished: ReadonlyMap<number, string>, jobs: readonly JobLine[], ctx: CommandContext): void {
  if (unpublished.size === 0) return;
  const byReason = new Map<string, number[]>();
  for (const i of [...unpublished.keys()].sort((a, b) => a - b)) {
    const reason = sanitize(unpublished.get(i)!);
    const same = byReason.get(reason);
    if (same) same.push(i);
    else byReason.set(reason, [i]);
  }
  for (const [reason, indexes] of [...byReason].slice(0, MAX_REPORTED)) {
    const one = indexes.length === 1;
    ctx.note(
      `${indexes.length} of the jobs (${lineRanges(indexes, jobs, false)}) ${one ? 'is' : 'are'} stored but not yet published (${reason}); the outbox relay (workers, \`agentq outbox relay\`) publishes ${one ? 'it' : 'them'} once that is mended`,
    );
  }
  if (byReason.size > MAX_REPORTED) ctx.note(`… and ${byReason.size - MAX_REPORTED} more causes of jobs not yet published`);
}

/** A submit that failed with its answer lost (a timeout, a connection dropped under it) may have stored the job. */
function mayHaveRun(e: unknown): boolean {
  return e instanceof RetryLaterError && !e.notSent && !isRefusal(e);
}

/**
 * An answer that nothing was stored: admission control's refusal (it says when to retry), a
 * SQLite write lock held by another process (the transaction never committed), Redis over its
 * maxmemory (a script is refused before its first write).
 */
function isRefusal(e: RetryLaterError): boolean {
  return e.retryAfterMs !== undefined || e.code === 'BACKEND_BUSY' || e.code === 'BACKEND_FULL';
}

/** Job indexes → `lines 1-40, 42, 44-90 (88 jobs)`: runs of consecutive jobs (blank lines between them do not split a run). */
export function lineRanges(indexes: readonly number[], jobs: readonly JobLine[], count = true): string {
  if (indexes.length === 0) return 'none';
  const runs: string[] = [];
  let start = indexes[0]!;
  let prev = start;
  const close = () => runs.push(start === prev ? `${jobs[start]!.line}` : `${jobs[start]!.line}-${jobs[prev]!.line}`);
  for (const i of indexes.slice(1)) {
    if (i === prev + 1) prev = i;
    else {
      close();
      start = prev = i;
    }
  }
  close();
  const shown = runs.length > MAX_RANGES ? [...runs.slice(0, MAX_RANGES), `… (${runs.length - MAX_RANGES} more ranges)`] : runs;
  return `line${indexes.length === 1 ? '' : 's'} ${shown.join(', ')}${count ? ` (${indexes.length} job${indexes.length === 1 ? '' : 's'})` : ''}`;
}
