/**
 * `agentq job checkpoint|usage|effect|error`: what a handler process started by
 * `agentq worker` uses to talk to the store about its own job. They act on
 * the current lease named by the environment (`worker/job-env.ts`), so every
 * write is fenced: a handler whose lease was taken over gets exit 1
 * (LEASE_LOST) instead of overwriting the new holder.
 */
import { spawn } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { AgentqError, ValidationError } from '../../core/errors.js';
import { budgetBreach, checkUsage, jobUsage } from '../../core/usage.js';
import { CappedOutput, RESULT_MARKER_ROOM } from '../../worker/capped-output.js';
import { STORED_JSON_MAX_BYTES } from '../../core/stored-json.js';
import { launchProblem } from '../../worker/launch-check.js';
import { currentLease, ERROR_CODE_RE, ERROR_CODE_RULE, JOB_ENV, type ErrorReport } from '../../worker/job-env.js';
import type { CommandContext } from '../context.js';
import { resolveExecutable } from '../executable.js';
import { openFlagFile, readUpTo } from '../flag-file.js';
import { DECIMAL_RE } from '../parse.js';
import { sanitize } from '../output/sanitize.js';

/** Checkpoints are stored with the job and shown by `inspect`: keep them small. */
const MAX_CHECKPOINT_BYTES = STORED_JSON_MAX_BYTES;
/**
 * An effect's result is stored in the ledger, with the job (and read back by every later attempt
 * and by `inspect`): the command's stdout is passed through whole, but only this much is recorded,
 * cut as a job result is (`…[truncated N bytes]`).
 */
export const MAX_EFFECT_RESULT_BYTES = STORED_JSON_MAX_BYTES;
/** How much of the output is kept: the rest of the limit is room for the `…[truncated N bytes]` marker. */
const EFFECT_OUTPUT_KEPT_BYTES = MAX_EFFECT_RESULT_BYTES - RESULT_MARKER_ROOM;

async function backendFor(ctx: CommandContext) {
  const lease = currentLease(ctx.env);
  // A handler piping `agentq job effect … | head -1` must not leave its effect started but never finished.
  ctx.mustFinish();
  const { openBackend } = await import('../../backend/open.js');
  return { ...lease, backend: await openBackend(lease.url) };
}

/** DATA (or the file's content) is stored as JSON when it parses as JSON, else as a string. */
export async function checkpoint(o: { data?: string; file?: string }, ctx: CommandContext): Promise<void> {
  if ((o.data === undefined) === (o.file === undefined)) throw new ValidationError('give the checkpoint as DATA or --file PATH (one of them)');
  const tooLarge = (size: string) => new ValidationError(`checkpoint is ${size} bytes; the limit is ${MAX_CHECKPOINT_BYTES} (store large state elsewhere and checkpoint a reference)`);
  const text = o.file !== undefined ? await readCheckpointFile(o.file, () => tooLarge('more than ' + MAX_CHECKPOINT_BYTES)) : o.data!;
  if (Buffer.byteLength(text) > MAX_CHECKPOINT_BYTES) throw tooLarge(String(Buffer.byteLength(text)));
  let data: unknown = text;
  try {
    data = JSON.parse(text);
  } catch {
    // Not JSON: kept as a string.
  }
  const { lease, backend } = await backendFor(ctx);
  try {
    await backend.checkpoint(lease, data);
  } finally {
    await backend.close();
  }
}

/**
 * Adds what this attempt spent to its record and its queue's totals (cost per job). Call it as the
 * spending happens (after each model call): an attempt that dies keeps what it reported.
 */
export async function usage(o: { tokens?: string; costUsd?: string }, ctx: CommandContext): Promise<void> {
  if (o.tokens === undefined && o.costUsd === undefined) throw new ValidationError('give --tokens N, --cost-usd X or both');
  const figure = (text: string | undefined, flag: string, re: RegExp, what: string): number | undefined => {
    if (text === undefined) return undefined;
    if (!re.test(text.trim())) throw new ValidationError(`${flag} must be ${what}, got ${JSON.stringify(sanitize(text))}`);
    return Number(text.trim());
  };
  const report = {
    tokens: figure(o.tokens, '--tokens', /^\d+$/, 'a whole number of tokens'),
    cost_usd: figure(o.costUsd, '--cost-usd', DECIMAL_RE, 'a non-negative amount in US dollars (e.g. 0.042)'),
  };
  // Checked (finite, within bounds) before the store is opened: a bad figure never costs a connection.
  const checked = checkUsage(Object.fromEntries(Object.entries(report).filter(([, v]) => v !== undefined)));
  const { lease, backend, reportFile } = await backendFor(ctx);
  let breach: string | null = null;
  try {
    await backend.addUsage(lease, checked);
    // Recorded first (it was spent), then held against the job's budget over all its attempts.
    const job = await backend.get(lease.jobId);
    if (job) breach = budgetBreach(jobUsage(job.attempts), job.budget, true);
  } finally {
    await backend.close();
  }
  if (breach) {
    // The worker records this code when the handler exits non-zero (as `agentq job error` leaves it);
    // exit 1 stops a `set -e` handler at once.
    const message = `job ${lease.jobId} is over its budget: ${breach}`;
    if (reportFile) await writeReport(reportFile, { code: 'BUDGET_EXCEEDED', message });
    throw new AgentqError('BUDGET_EXCEEDED', message, 1, 'stop and exit non-zero: the attempt fails with BUDGET_EXCEEDED, which is not retried');
  }
}

/**
 * --file (`-`: standard input) read one byte past the checkpoint limit at most, never whole: it
 * may be a pipe, or /dev/zero. A path that cannot be read, or names a directory, is refused by name (exit 2).
 */
async function readCheckpointFile(path: string, tooLarge: () => Error): Promise<string> {
  if (path === '-') {
    // standard input, as for the other commands that take a file (a pipe or a socket: read as a stream)
    const chunks: Buffer[] = [];
    let n = 0;
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      n += chunk.length;
      if (n > MAX_CHECKPOINT_BYTES) {
        process.stdin.destroy();
        throw tooLarge();
      }
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  const f = await openFlagFile('--file', path);
  try {
    const { bytes, total } = await readUpTo(f, MAX_CHECKPOINT_BYTES);
    if (total > MAX_CHECKPOINT_BYTES) throw tooLarge();
    return bytes.toString('utf8');
  } finally {
    await f.handle.close();
  }
}

/**
 * Runs CMD as the effect KEY unless the ledger already has KEY done. CMD gets
 * `AGENTQ_IDEMPOTENCY_KEY` to pass to the external system; its stdout is
 * passed through and recorded as the effect's result when it exits 0. When
 * KEY is already done, CMD is not run and the recorded result is printed.
 * A non-zero exit of CMD leaves the effect `started` and is this command's exit code.
 * CMD is checked before anything is recorded: a command that cannot start did
 * nothing external, so it must not leave the effect `started` (which makes the
 * job count as partially completed).
 */
export async function effect(o: { key: string; command: string[] }, ctx: CommandContext): Promise<void> {
  const [cmd, ...args] = o.command;
  if (!cmd) throw new ValidationError('give the effect command after --, e.g. agentq job effect send-invoice -- ./send.sh');
  const executable = resolveExecutable(cmd, ctx.env, ctx.cwd, 'effect command');
  // As the worker checks its handler: a missing #! interpreter, or the script a shell or an
  // interpreter is told to run not there (`node send.js` misspelt), runs nothing external either.
  const cannotLaunch = launchProblem(executable, ctx.env, ctx.cwd, args);
  if (cannotLaunch !== null) throw new ValidationError(`effect command ${JSON.stringify(cmd)} cannot run: ${cannotLaunch}; nothing was recorded`);
  const { lease, backend } = await backendFor(ctx);
  try {
    const record = await backend.beginEffect(lease, o.key);
    if (record.status === 'done') {
      ctx.note(`effect ${sanitize(o.key)} is already done (attempt ${record.attempt}); not run again`);
      const r = record.result;
      if (r !== null && r !== undefined) ctx.io.stdout.write(typeof r === 'string' ? r : JSON.stringify(r));
      return;
    }
    const ended = await runEffectCommand(executable, args, { ...ctx.env, [JOB_ENV.idempotencyKey]: record.idempotency_key }, ctx);
    if (ended.kind === 'spawn_failed') {
      // Checked above, so this is rare (a file removed or made non-executable meanwhile), but the record is made.
      throw new AgentqError(
        'EFFECT_FAILED',
        `effect ${o.key}: cannot run ${cmd}: ${ended.error.message}; the effect is recorded as started (not done), so the job counts as partially completed`,
        ended.error.code === 'ENOENT' ? 127 : 126,
      );
    }
    if (ended.code !== 0) {
      const how = ended.signal ? `was killed by ${ended.signal}` : `exited with ${ended.code}`;
      throw new AgentqError('EFFECT_FAILED', `effect ${o.key}: ${cmd} ${how}; recorded as started, not done`, ended.code);
    }
    const { stdout } = ended;
    await backend.finishEffect(lease, o.key, stdout.text(MAX_EFFECT_RESULT_BYTES));
    if (stdout.truncatedBytes > 0) {
      ctx.note(`effect ${sanitize(o.key)}: its output was cut to the first ${EFFECT_OUTPUT_KEPT_BYTES} bytes in the recorded result (${stdout.truncatedBytes} more bytes were printed but not recorded)`);
    }
  } finally {
    await backend.close();
  }
}

type EffectRun =
  | { kind: 'exited'; code: number; signal: NodeJS.Signals | null; stdout: CappedOutput }
  | { kind: 'spawn_failed'; error: NodeJS.ErrnoException };

function runEffectCommand(cmd: string, args: string[], env: Record<string, string | undefined>, ctx: CommandContext): Promise<EffectRun> {
  return new Promise((resolveRun) => {
    const child = spawn(cmd, args, { env: env as NodeJS.ProcessEnv, stdio: ['inherit', 'pipe', 'inherit'] });
    const recorded = new CappedOutput(EFFECT_OUTPUT_KEPT_BYTES);
    // A chunk can end inside a multibyte character: the decoder holds its first bytes for the next chunk.
    const passthrough = new StringDecoder('utf8');
    child.stdout.on('data', (c: Buffer) => {
      recorded.push(c);
      const text = passthrough.write(c);
      if (text) ctx.io.stdout.write(text);
    });
    child.on('error', (error) => resolveRun({ kind: 'spawn_failed', error }));
    child.on('close', (code, signal) => {
      const rest = passthrough.end();
      if (rest) ctx.io.stdout.write(rest);
      resolveRun({ kind: 'exited', code: code ?? exitStatusForSignal(signal), signal, stdout: recorded });
    });
  });
}

/** A shell's status for a command killed by a signal: 128 + its number (SIGKILL → 137). */
export function exitStatusForSignal(signal: NodeJS.Signals | null): number {
  const n = signal ? osConstants.signals[signal] : undefined;
  return n === undefined ? 1 : 128 + n;
}

/** Reports the error code (and message) the worker records when this handler exits non-zero. */
export async function error(o: { code: string; message?: string[] }, ctx: CommandContext): Promise<void> {
  if (!ERROR_CODE_RE.test(o.code)) throw new ValidationError(`error code ${JSON.stringify(o.code)} ${ERROR_CODE_RULE}`);
  const { reportFile } = currentLease(ctx.env);
  if (!reportFile) throw new ValidationError(`${JOB_ENV.reportFile} is not set: agentq job error runs inside a handler started by agentq worker`);
  const message = o.message && o.message.length > 0 ? o.message.join(' ') : null;
  await writeReport(reportFile, { code: o.code, message });
}

/** Write then rename: the worker never reads a half-written report. */
async function writeReport(reportFile: string, report: ErrorReport): Promise<void> {
  const tmp = `${reportFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(report));
  await rename(tmp, reportFile);
}
