/**
 * `agentq submit WORKFLOW`: validate, persist, print the job id at once.
 * With `--wait`, follow the job to its end for CI smoke jobs (exit codes in
 * `WaitExitCode`: 0 succeeded, 1 ended without success, 124 timed out; 75 when
 * the store became unreachable while waiting, with the job as last seen).
 */
import { createHash } from 'node:crypto';
import { AgentqError, InterruptedError, NotFoundError, ValidationError, WaitExitCode } from '../../core/errors.js';
import { openFlagFile, readChunks, readUpTo } from '../flag-file.js';
import { parseDeadline, parseDuration, parseIsoTime, toIso } from '../../core/duration.js';
import { INLINE_INPUT_MAX_BYTES, MAX_ESTIMATED_SECONDS } from '../../core/model.js';
import { SubmitRequest as SubmitRequestSchema, type Job, type SubmitRequest } from '../../core/schemas.js';
import { isTerminal } from '../../core/states.js';
import type { Backend } from '../../backend/contract.js';
import type { CommandContext } from '../context.js';
import { isMachineFormat, printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { parseIntOption, parsePositiveNumber } from '../parse.js';
import { abortableSleep, unlessAborted } from '../../util/sleep.js';

export interface SubmitOptions {
  /** Absent with --file (each line names its own). */
  workflow?: string;
  /** NDJSON jobs, `-` for stdin (commands/submit-file.ts). */
  file?: string;
  queue?: string;
  tenant?: string;
  class?: string;
  operation?: string;
  deadline?: string;
  idempotencyKey?: string;
  input?: string;
  inputFile?: string;
  inputRef?: string;
  inputSha256?: string;
  maxAttempts?: string;
  traceId?: string;
  budgetTokens?: string;
  budgetUsd?: string;
  allowedTool?: string[];
  estimatedSeconds?: string;
  runAt?: string;
  wait?: boolean;
  timeout?: string;
}

/** Turns flags into a submit request (the backend validates it again with the zod schema). `signal` stops reading --input-file. */
export async function buildSubmitRequest(o: SubmitOptions & { workflow: string }, now: number, defaultQueue: string, signal?: AbortSignal): Promise<SubmitRequest> {
  if (o.input !== undefined && o.inputFile !== undefined) throw new ValidationError('give --input or --input-file, not both');
  if (o.input !== undefined && o.inputRef !== undefined) throw new ValidationError('give either inline input (--input) or a reference (--input-ref), not both');
  if (o.inputFile !== undefined && o.inputSha256 !== undefined) throw new ValidationError('--input-sha256 is computed from --input-file; give only one of them');
  if (o.timeout !== undefined && !o.wait) throw new ValidationError('--timeout only applies with --wait');

  let input: string | null = o.input ?? null;
  let inputRef: string | null = o.inputRef ?? null;
  let inputSha256: string | null = o.inputSha256 ?? null;
  if (o.inputFile !== undefined) {
    // --input-ref s3://... --input-file local-copy: the file is only used for its checksum.
    if (inputRef !== null) inputSha256 = await checksumOfInputFile(o.inputFile, signal);
    else input = await inlineInputFile(o.inputFile, signal);
  }
  if (inputSha256 !== null) inputSha256 = inputSha256.toLowerCase();

  const tokens = parseIntOption(o.budgetTokens, '--budget-tokens', 1, Number.MAX_SAFE_INTEGER);
  const usd = parsePositiveNumber(o.budgetUsd, '--budget-usd');
  const estimatedSeconds = parsePositiveNumber(o.estimatedSeconds, '--estimated-seconds');
  if (estimatedSeconds !== undefined && estimatedSeconds > MAX_ESTIMATED_SECONDS) {
    throw new ValidationError(`--estimated-seconds ${JSON.stringify(o.estimatedSeconds)} must be at most ${MAX_ESTIMATED_SECONDS} (100 years)`);
  }
  const deadlineAt = o.deadline !== undefined ? parseDeadline(o.deadline, now) : null;
  const runAt = o.runAt !== undefined ? parseRunAt(o.runAt, now) : null;
  // (the backend refuses it too, but in the wire's words: "run_at … is not before deadline_at …")
  if (deadlineAt !== null && runAt !== null && runAt >= deadlineAt) {
    throw new ValidationError(`--run-at ${o.runAt} (${toIso(runAt)}) is not before --deadline ${o.deadline} (${toIso(deadlineAt)}): the job could never run`);
  }
  return checkedAsFlags({
    workflow: o.workflow,
    queue: o.queue ?? defaultQueue,
    tenant_id: o.tenant ?? 'default',
    class: (o.class ?? 'batch') as SubmitRequest['class'],
    operation: o.operation ?? null,
    input,
    input_ref: inputRef,
    input_sha256: inputSha256,
    deadline_at: deadlineAt !== null ? toIso(deadlineAt) : null,
    idempotency_key: o.idempotencyKey ?? null,
    max_attempts: parseIntOption(o.maxAttempts ?? '3', '--max-attempts', 1, 100),
    trace_id: o.traceId ?? null,
    budget: tokens !== undefined || usd !== undefined ? { tokens: tokens ?? null, cost_usd: usd ?? null } : null,
    allowed_tools: o.allowedTool ?? [],
    estimated_seconds: estimatedSeconds ?? null,
    run_at: runAt !== null ? toIso(runAt) : null,
  });
}

/** The flag (or argument) each request field comes from, for messages. */
const FLAG_OF: Record<string, string> = {
  workflow: 'WORKFLOW', queue: '--queue', tenant_id: '--tenant', operation: '--operation', class: '--class',
  input: '--input', input_ref: '--input-ref', input_sha256: '--input-sha256', deadline_at: '--deadline',
  idempotency_key: '--idempotency-key', max_attempts: '--max-attempts', trace_id: '--trace-id',
  budget: '--budget-tokens/--budget-usd', allowed_tools: '--allowed-tool', estimated_seconds: '--estimated-seconds', run_at: '--run-at',
};

/**
 * The request checked against the wire schema here, so a bad value is said in the flag's words
 * (`--operation must be at most 200 characters (got 201)`) rather than the wire's (`invalid submit
 * request: operation: Too big: expected string to have <=200 characters`). The backend checks again.
 */
function checkedAsFlags(req: SubmitRequest): SubmitRequest {
  const parsed = SubmitRequestSchema.safeParse(req);
  if (parsed.success) return req;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  const flag = FLAG_OF[field] ?? field;
  const value = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | null)?.[k as PropertyKey], req);
  if (issue.code === 'too_big' && issue.origin === 'string' && typeof value === 'string') {
    throw new ValidationError(`${flag} must be at most ${String(issue.maximum)} characters (got ${value.length})`);
  }
  if (issue.code === 'too_small' && issue.origin === 'string' && Number(issue.minimum) === 1) throw new ValidationError(`${flag} must not be empty`);
  if (issue.code === 'too_big' && issue.origin === 'array') throw new ValidationError(`${flag} may be given at most ${String(issue.maximum)} times`);
  // A rule of our own (a name, a workflow, a checksum): its message says it; the value is shown.
  throw new ValidationError(`${flag}${typeof value === 'string' ? ` ${JSON.stringify(sanitize(value.length > 80 ? `${value.slice(0, 79)}…` : value))}` : ''}: ${issue.message}`);
}

function parseRunAt(text: string, now: number): number {
  return /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? parseIsoTime(text, '--run-at') : now + parseDuration(text, '--run-at', 'from now');
}

/**
 * --input-file is read a chunk at a time and never held whole: it may be a 3 GB file (its checksum
 * is wanted, not its bytes), a pipe, or /dev/zero. Inline input stops reading one byte past the
 * limit; a checksum reads to the end, between chunks checking for Ctrl-C.
 */
const NOTHING_SUBMITTED = 'nothing was submitted';
/** A file too large to inline is hashed for the refusal's hint when it is at most this large (beyond, the refusal would be slow). */
const HINT_HASH_MAX_BYTES = 64 * 1024 * 1024;

async function checksumOfInputFile(path: string, signal: AbortSignal | undefined): Promise<string> {
  const f = await openFlagFile('--input-file', path);
  try {
    // /dev/zero, /dev/urandom: the checksum of something that never ends is never computed.
    if (f.isCharDevice) throw new ValidationError(`--input-file ${path} is a character device, which may never end: the checksum is computed from a file or a pipe`);
    const hash = createHash('sha256');
    await readChunks(f, (chunk) => (hash.update(chunk), true), { signal, stopped: NOTHING_SUBMITTED });
    return hash.digest('hex');
  } finally {
    await f.handle.close();
  }
}

async function inlineInputFile(path: string, signal: AbortSignal | undefined): Promise<string> {
  const f = await openFlagFile('--input-file', path);
  try {
    const stop = { signal, stopped: NOTHING_SUBMITTED };
    const { bytes, total } = await readUpTo(f, INLINE_INPUT_MAX_BYTES, stop);
    if (total > INLINE_INPUT_MAX_BYTES) {
      const how = f.isRegular ? `is ${f.size} bytes` : `is over ${INLINE_INPUT_MAX_BYTES} bytes`;
      let sha256: string | null = null;
      if (f.isRegular && f.size <= HINT_HASH_MAX_BYTES) {
        const hash = createHash('sha256').update(bytes);
        await readChunks(f, (chunk) => (hash.update(chunk), true), stop);
        sha256 = hash.digest('hex');
      }
      const byHash = sha256 === null ? '' : `--input-ref <url> --input-sha256 ${sha256} (or `;
      // A character device (/dev/zero) is refused as --input-ref's checksum source too: do not suggest it.
      const hint = f.isCharDevice
        ? `A character device may never end: save what you need to a file, upload it and pass --input-ref <url> --input-file FILE.`
        : `Upload it and pass a reference instead: ${byHash}--input-ref <url> --input-file ${path}${sha256 === null ? ', which computes its checksum' : ')'}.`;
      throw new ValidationError(`--input-file ${path} ${how}; inline input is limited to ${INLINE_INPUT_MAX_BYTES} bytes (64 KiB)`, hint, 'INPUT_TOO_LARGE');
    }
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) {
      throw new ValidationError(`--input-file ${path} is not UTF-8 text; inline input must be text`, `Store it elsewhere and pass --input-ref <url> --input-file ${path}.`);
    }
    return text;
  } finally {
    await f.handle.close();
  }
}

export async function run(o: SubmitOptions, ctx: CommandContext): Promise<void> {
  if (o.file !== undefined) {
    const { runFile } = await import('./submit-file.js');
    return runFile({ ...o, file: o.file }, ctx);
  }
  if (o.workflow === undefined) {
    throw new ValidationError('missing WORKFLOW: give the workflow of the job (name:vN, e.g. research_report:v3), or --file with one job a line', 'See: agentq submit --help');
  }
  const workflow = o.workflow;
  const waitTimeoutMs = o.timeout !== undefined ? parseDuration(o.timeout, '--timeout') : undefined;
  // Checked before the submit: `--timeout 0s` stored the job, then gave up on it at once (124).
  if (waitTimeoutMs !== undefined && waitTimeoutMs <= 0) throw new ValidationError(`--timeout must be more than 0 (got ${JSON.stringify(o.timeout)})`);
  // Reading --input-file stops on Ctrl-C and says that nothing was submitted (an endless pipe).
  const releaseStops = o.inputFile !== undefined ? ctx.handleStops() : () => undefined;
  let req: SubmitRequest;
  try {
    req = await buildSubmitRequest({ ...o, workflow }, ctx.clock.now(), ctx.defaultQueue(), ctx.signal);
  } finally {
    releaseStops();
  }
  ctx.assertMutable('submit');
  const backend = await ctx.openBackend({ create: true });
  const { job, created, unpublished } = await backend.submit(req);
  if (!created) ctx.note(`idempotency key matched an existing job: ${job.job_id} (${job.state}); nothing new was submitted`);
  if (unpublished !== undefined) {
    ctx.note(`${job.job_id} is stored but not yet published (${sanitize(unpublished)}); the outbox relay (workers, \`agentq outbox relay\`) publishes it once that is mended`);
  }

  if (!o.wait) {
    if (isMachineFormat(ctx.format)) printObject(ctx.out, job);
    else ctx.out.write(`${job.job_id}\n`);
    return;
  }
  // --wait: the id first (so a script that is killed still knows it), unless the output is one JSON document.
  if (!isMachineFormat(ctx.format)) ctx.out.write(`${job.job_id}\n`);
  // The wait stops on the first Ctrl-C, at once (the job is stored: nothing is half done).
  const releaseWaitStops = ctx.handleStops();
  let waited: WaitEnd;
  try {
    waited = await waitForEnd(backend, job, ctx, waitTimeoutMs);
  } finally {
    releaseWaitStops();
  }
  const { job: final, stopped } = waited;
  // (a poll Ctrl-C left unanswered would hold the backend's close too)
  if (ctx.signal.aborted) ctx.abandonBackend?.();
  // -o json: the job as it is now, also when the wait stopped (124, 130, 75): a script keeps its id and state.
  if (isMachineFormat(ctx.format)) printObject(ctx.out, final);
  if (stopped) throw stopped;
  const summary = `${final.job_id} ${final.state}${final.outcome && final.outcome !== final.state ? ` (${final.outcome})` : ''}`;
  if (final.state === 'succeeded') {
    ctx.note(summary);
    return;
  }
  const why = final.last_error ? `: ${final.last_error.code}: ${sanitize(final.last_error.message)}` : '';
  throw new AgentqError('ENDED_WITHOUT_SUCCESS', `${summary}${why}`, WaitExitCode.endedWithoutSuccess, `See: agentq inspect ${final.job_id}`);
}

/** Where waiting ended: the job as last read, and the error to exit with when the wait stopped before the job ended. */
export interface WaitEnd {
  job: Job;
  /** Timeout (exit 124), Ctrl-C (exit 130) or the store lost while polling (its own code, 75 when unreachable); null when the job ended. */
  stopped: AgentqError | null;
}

/** What the job does once nobody waits for it: a running one keeps running, a waiting one stays where it is. */
export function afterWaiting(state: Job['state']): string {
  return state === 'running' ? 'it keeps running' : `it stays ${state}`;
}

const STOPPED = Symbol('stopped');

/** Polls the job until it is terminal, the timeout passes (exit 124), Ctrl-C (exit 130) or the store fails (exit 75 when unreachable). Also the library's `waitForJob`. */
export async function waitForEnd(backend: Backend, job: Job, ctx: Pick<CommandContext, 'clock' | 'signal'>, timeoutMs: number | undefined, pollMs = 200): Promise<WaitEnd> {
  const until = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let current = job;
  const hint = `Check on it with: agentq inspect ${job.job_id}`;
  for (;;) {
    if (isTerminal(current.state)) return { job: current, stopped: null };
    const missed = missedDeadline(current, ctx.clock.now());
    if (missed) return { job: current, stopped: missed };
    if (ctx.signal.aborted) return { job: current, stopped: new InterruptedError(`stopped waiting for ${job.job_id} (${afterWaiting(current.state)})`, hint) };
    const left = until - Date.now();
    if (left <= 0) {
      const message = `${job.job_id} is still ${current.state} after ${o2s(timeoutMs!)}; ${afterWaiting(current.state)}`;
      return { job: current, stopped: new AgentqError('WAIT_TIMEOUT', message, WaitExitCode.timedOut, hint) };
    }
    await abortableSleep(Math.min(pollMs, left), ctx.signal);
    try {
      // Ctrl-C, or the timeout, ends the wait also while a poll is unanswered (a frozen store holds
      // it 15 s: --timeout 3s ended after 18 s, with 75 instead of 124).
      const read = await unlessAborted(backend.get(job.job_id), ctx.signal, STOPPED, Math.max(until - Date.now(), pollMs));
      // A job gone from the store (a store reset, a Redis FLUSHALL) never ends: each poll read null
      // and the wait kept reporting it "queued" for ever. Stop with not found (exit 5).
      if (read === null) return { job: current, stopped: vanishedWhileWaiting(current) };
      if (read !== STOPPED) current = read;
    } catch (e) {
      if (!(e instanceof AgentqError)) throw e;
      return { job: current, stopped: lostWhileWaiting(e, current) };
    }
  }
}

/** The job was read, then was no longer there: nothing can end it now, so the wait stops (NotFoundError, exit 5). */
function vanishedWhileWaiting(last: Job): NotFoundError {
  return new NotFoundError(
    `stopped waiting for ${last.job_id}: it is no longer in the store (it was ${last.state} when last seen); the store was reset or the job deleted, so submit it again if it is still wanted`,
    'JOB_NOT_FOUND',
  );
}

/**
 * The store failed (unreachable, permission lost) while we polled a job that WAS submitted. Exit
 * with the store's code (75 when it is unreachable), but never with its "retry" advice: a script
 * that retries `submit` here would submit the job a second time. The job itself is unaffected.
 */
function lostWhileWaiting(e: AgentqError, last: Job): AgentqError {
  // A SQLite file removed or replaced (exit 78) does not come back: the job went with the old file,
  // and no worker reading the path will ever see it, so "unaffected, do not submit it again" is wrong.
  if (e.code === 'STORE_REPLACED') {
    return new AgentqError(
      'WAIT_STORE_LOST',
      `stopped waiting for ${last.job_id}: ${e.message}. The job was stored in that file (it was ${last.state} when last seen) and is not in the store now at that path`,
      e.exitCode,
      'Submit it again against the store now at that path if it is still wanted.',
    );
  }
  return new AgentqError(
    'WAIT_STORE_LOST',
    `stopped waiting for ${last.job_id}: ${e.message}. The job WAS submitted and is unaffected (it was ${last.state} when last seen; ${afterWaiting(last.state)})`,
    e.exitCode,
    `Do not submit it again; check on it once the store is back with: agentq inspect ${last.job_id}`,
  );
}

/**
 * A job still waiting (queued or scheduled) past its deadline can never run: no claim hands it out,
 * and the next claim on its queue ends it `expired`. Until a worker claims there, its state does not
 * change, so a wait would run to its timeout (or for ever) on a job whose outcome is already sure.
 */
function missedDeadline(job: Job, now: number): AgentqError | null {
  if ((job.state !== 'queued' && job.state !== 'scheduled') || job.deadline_at === null || now < Date.parse(job.deadline_at)) return null;
  return new AgentqError(
    'DEADLINE_MISSED',
    `${job.job_id} missed its deadline ${job.deadline_at} while still ${job.state}: it can no longer run, and the next claim on queue ${job.queue} ends it expired`,
    WaitExitCode.endedWithoutSuccess,
    `See: agentq inspect ${job.job_id}`,
  );
}

function o2s(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

