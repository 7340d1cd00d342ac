/**
 * The exec handler behind `agentq worker -- CMD ARGS...`: one child process
 * per job, started from an argv (never a shell string, so nothing in a job can
 * inject a command).
 *
 * Protocol (documented in the README, "Workers"):
 * - stdin: the job envelope as one JSON line; environment: `JOB_ENV`, with the
 *   last checkpoint and the effect ledger in files it names (for resuming).
 * - stdout: the job result, capped (`CappedOutput`).
 * - stderr: passed through line by line, prefixed with the job id.
 * - exit 0 = success; 75 (EX_TEMPFAIL) = retryable failure; killed by a signal
 *   the worker did not send (or exit 128 + it) = retryable HANDLER_KILLED;
 *   anything else = permanent failure. A code reported with `agentq job error CODE` names the
 *   failure; when that code is in the error-code table, the table decides
 *   whether it is retried (so `PROVIDER_429` is retried even after exit 1).
 * - cancel, deadline, lost lease or shutdown: SIGTERM to the child's process
 *   group, SIGKILL after `killGraceMs`.
 * - when the child exits, whatever is left in its group (background children)
 *   gets the same; the attempt ends once the group is empty.
 */
import { spawn } from 'node:child_process';
import { constants, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, PermissionError } from '../core/errors.js';
import { ERROR_CODE_TABLE } from '../core/retry.js';
import type { JobEnvelope } from '../core/schemas.js';
import { RESULT_MAX_BYTES } from '../core/model.js';
import { CappedOutput, DEFAULT_RESULT_CAP_BYTES, LineSplitter, RESULT_MARKER_ROOM, utf8BoundaryAfter } from './capped-output.js';
import { HANDLER_KILLED, HandlerError } from './handler-error.js';
import { launchProblem, namesScript } from './launch-check.js';
import { ProcessGroup, signalAttempts } from './process-group.js';
import { ERROR_CODE_RE, ERROR_CODE_RULE, JOB_ENV, jobEnv, shownCode, type ErrorReport } from './job-env.js';
import type { Handler, JobContext } from './types.js';

export const EXIT_RETRYABLE = 75;
export const DEFAULT_KILL_GRACE_MS = 10_000;
/** How much of a failed child's stderr goes into the error message when it reported no message. */
const STDERR_TAIL_BYTES = 2048;
/**
 * The largest report file read back. `agentq job error` writes one from its arguments, which the
 * kernel caps at about 2 MiB all together (ARG_MAX), so a report it wrote always fits.
 */
export const REPORT_MAX_BYTES = 4 * 1024 * 1024;
/** Spawn errors that say the command itself cannot run here (not a passing shortage such as EAGAIN). */
const CANNOT_RUN = new Set(['ENOENT', 'EACCES', 'ENOEXEC']);
/**
 * Exit statuses with which a shell (or `env`, on a `#!/usr/bin/env …` line) says a command could
 * not be run. They say the handler's set-up is broken only when its launch chain is (the command,
 * the interpreter its `#!` line names, the program `env` looks up: see `launchProblem`); a command
 * missing in the middle of a script exits 127 as well, and is that job's ordinary failure.
 */
const SHELL_CANNOT_RUN = new Set([126, 127]);
/** Signals that end a process from outside (a crash's own signal, SIGSEGV or SIGABRT, is the handler's failure). */
const KILLED_FROM_OUTSIDE = new Set<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGKILL', 'SIGQUIT']);
const KILLED_FROM_OUTSIDE_STATUS = new Map([...KILLED_FROM_OUTSIDE].map((sig) => [128 + osConstants.signals[sig], sig] as const));

export interface ExecHandlerOptions {
  command: string;
  args: readonly string[];
  /** The store URL handed to the child as `AGENTQ_URL` (for `agentq job ...`). */
  url: string;
  /** The child's base environment. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default 64 KiB */
  resultCapBytes?: number;
  /** SIGTERM → SIGKILL. @default 10_000 */
  killGraceMs?: number;
  /** Receives each stderr line of a child; the caller prefixes and sanitises. */
  onStderrLine?: (jobId: string, line: string) => void;
  /**
   * Called when the command cannot be started at all (it, or the interpreter its `#!` line names,
   * is missing or not executable: ENOENT, EACCES, ENOEXEC), or it exited 127 or 126 without a
   * report while its launch chain is broken (`#!/usr/bin/env python3` without python3 on PATH),
   * or it failed with nothing on stdout while the script a shell or a well-known interpreter runs
   * is not there (`node handler.js`, the file gone since start-up): every job would fail alike,
   * so the caller can stop claiming. The job still fails as a retryable SPAWN_FAILED.
   */
  onCannotRun?: (message: string) => void;
  /**
   * The handler reported an error (`agentq job error`, or its report file) and then exited 0. Exit
   * 0 is success, as the protocol says (a handler may report, then recover by itself), so the job
   * succeeds; this tells the caller the report was not used, so it is not dropped without a word.
   */
  onUnusedReport?: (job: JobEnvelope, report: ErrorReport) => void;
}

export interface ExecHandler {
  handler: Handler;
  /** Removes the report directory. */
  close(): Promise<void>;
}

export async function createExecHandler(o: ExecHandlerOptions): Promise<ExecHandler> {
  const reportDir = await makeReportDir();
  removeOnExit(reportDir);
  const handler: Handler = (job, ctx) => runChild(o, reportDir, job, ctx);
  return {
    handler,
    close: async () => {
      await rm(reportDir, { recursive: true, force: true });
      reportDirs.delete(reportDir);
    },
  };
}

/**
 * The worker's report directory in TMPDIR. One it cannot make (TMPDIR not writable by this user,
 * not there, not a directory) stops the worker before it claims anything, naming TMPDIR: it was an
 * internal error.
 */
async function makeReportDir(): Promise<string> {
  const base = tmpdir();
  try {
    return await mkdtemp(join(base, 'agentq-worker-'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    const why = `the worker could not make its report directory in ${JSON.stringify(base)} (TMPDIR): ${code || (e as Error).message}`;
    const hint = 'Point TMPDIR at a directory this user can write, or unset it (then /tmp is used).';
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new PermissionError(why, hint);
    throw new ConfigError(why, hint);
  }
}

/**
 * Report directories not yet closed. A worker leaving at once (a second signal) exits without
 * `close()`, which left one `agentq-worker-*` directory in TMPDIR per forced stop; they are
 * removed as the process exits (synchronously: an exit handler cannot wait).
 */
const reportDirs = new Set<string>();
let removingOnExit = false;

function removeOnExit(dir: string): void {
  if (!removingOnExit) {
    removingOnExit = true;
    process.once('exit', () => {
      for (const d of reportDirs) {
        try {
          rmSync(d, { recursive: true, force: true });
        } catch {
          // best effort: the process is leaving
        }
      }
    });
  }
  reportDirs.add(dir);
}

/**
 * The handlers still running, or still being ended (their process groups, see `ProcessGroup`).
 * Each handler has a group of its own (so a stop reaches what a shell script started), which also
 * means it outlives the worker: a worker leaving at once (a second SIGTERM or Ctrl-C) left its
 * handlers running, and their jobs ran a second time, at the same moment, once their leases
 * expired. So when the process exits, what is still here is killed.
 */
const liveGroups = new Set<ProcessGroup>();
let killOnExit = false;

function trackGroup(group: ProcessGroup | null): void {
  if (group === null) return;
  liveGroups.add(group);
  if (killOnExit) return;
  killOnExit = true;
  process.once('exit', () => {
    signalAttempts(liveGroups, 'SIGKILL');
  });
}

/**
 * Sends a signal to the process group of every handler running (or being ended). The worker CLI
 * suspends them with itself on SIGTSTP (SIGSTOP) and resumes them on SIGCONT: in groups of their
 * own, a Ctrl-Z on the worker does not reach them.
 */
export function signalHandlerGroups(sig: NodeJS.Signals): void {
  signalAttempts(liveGroups, sig);
}

/**
 * What an earlier attempt left, for the handler to resume from (the library handler's
 * `ctx.lastCheckpoint` and `ctx.effects`): files next to the report file, named in the
 * environment, removed when the handler has exited.
 */
async function writeResumeFiles(dir: string, job: JobEnvelope, ctx: JobContext): Promise<{ checkpointFile: string; effectsFile: string }> {
  const base = join(dir, `${job.job_id}.${ctx.fence}`);
  const checkpointFile = `${base}.checkpoint`;
  const effectsFile = `${base}.effects.json`;
  const cp = ctx.lastCheckpoint;
  // Text as is, so a shell reads it plainly; but text that would parse as JSON ("42", "null") is
  // written as a JSON string, so `agentq job checkpoint --file` takes back exactly what was saved.
  // The directory is the handlers' to write in too: what a handler left at these names (a FIFO,
  // whose open would block for good, or a symbolic link) is removed, and 'wx' creates a new file.
  await Promise.all([rm(checkpointFile, { force: true }), rm(effectsFile, { force: true })]);
  if (cp !== null && cp !== undefined) await writeFile(checkpointFile, typeof cp === 'string' && !parsesAsJson(cp) ? cp : JSON.stringify(cp), { mode: 0o600, flag: 'wx' });
  await writeFile(effectsFile, JSON.stringify(ctx.effects), { mode: 0o600, flag: 'wx' });
  return { checkpointFile, effectsFile };
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

async function runChild(o: ExecHandlerOptions, reportDir: string, job: JobEnvelope, ctx: JobContext): Promise<string | null> {
  if (ctx.signal.aborted) throw ctx.signal.reason;
  let resume: { checkpointFile: string; effectsFile: string };
  try {
    // Made again if it went (a tmp cleaner removes the directory of a long-idle worker).
    await mkdir(reportDir, { recursive: true, mode: 0o700 });
    resume = await writeResumeFiles(reportDir, job, ctx);
  } catch (e) {
    // The worker's own trouble (a full disk, a removed directory), not the job's: retried, as a
    // handler that cannot be spawned is, instead of an unknown error code that counts as permanent.
    throw new HandlerError('WORKER_FILES_FAILED', `the worker could not write the handler's files in ${reportDir}: ${(e as Error).message}`, { retryable: true });
  }
  try {
    return await runChildProcess(o, reportDir, job, ctx, resume);
  } finally {
    // Best effort: what went with the directory is gone already, and a failed clean-up is not the job's failure.
    await Promise.all([rm(resume.checkpointFile, { force: true }), rm(resume.effectsFile, { force: true })]).catch(() => undefined);
  }
}

function runChildProcess(
  o: ExecHandlerOptions,
  reportDir: string,
  job: JobEnvelope,
  ctx: JobContext,
  resume: { checkpointFile: string; effectsFile: string },
): Promise<string | null> {
  const reportFile = join(reportDir, `${job.job_id}.${ctx.fence}.json`);
  // (at the largest cap, room is left for the `…[truncated N bytes]` marker: the text with it must
  // still fit the store's limit on a result, RESULT_MAX_BYTES)
  const stdout = new CappedOutput(Math.min(o.resultCapBytes ?? DEFAULT_RESULT_CAP_BYTES, RESULT_MAX_BYTES - RESULT_MARKER_ROOM));
  const stderrTail = new CappedTail(STDERR_TAIL_BYTES);
  const lines = new LineSplitter((line) => o.onStderrLine?.(job.job_id, line));

  return new Promise((resolve, reject) => {
    if (ctx.signal.aborted) {
      reject(ctx.signal.reason);
      return;
    }
    const childEnv = { ...(o.env ?? process.env), ...jobEnv({ envelope: job, fence: ctx.fence, url: o.url, reportFile, ...resume }) };
    const child = spawn(o.command, [...o.args], {
      env: childEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so a SIGTERM reaches what a shell script started too.
      detached: true,
    });
    // Marked by its report file's path, unique to this worker and attempt: what the handler
    // starts inherits it, also a process that leaves its session (see `ProcessGroup`).
    const group = child.pid === undefined ? null : new ProcessGroup(child.pid, o.killGraceMs ?? DEFAULT_KILL_GRACE_MS, `${JOB_ENV.reportFile}=${reportFile}`);
    trackGroup(group);
    /** Resolves when nothing of the handler's group is left running (see `ProcessGroup.end`). */
    let groupEnded: Promise<void> = Promise.resolve();
    let spawnError: Error | null = null;

    const onAbort = (): void => group?.terminate();
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => {
      lines.push(c);
      stderrTail.push(c);
    });
    // A handler that never reads stdin closes the pipe: that is its business, not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(`${JSON.stringify(job)}\n`);

    child.on('exit', () => {
      // The attempt ends with the handler: what it left running in its group is ended too
      // (SIGTERM, then SIGKILL after the kill grace), before the job's ending is written.
      if (group) groupEnded = group.end().finally(() => liveGroups.delete(group));
      // A grandchild that inherited stdout can hold the pipe open after the handler exited; do not wait for it forever.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 2000).unref();
    });
    child.on('error', (e) => {
      spawnError = e;
    });
    child.on('close', (code, signal) => {
      ctx.signal.removeEventListener('abort', onAbort);
      lines.flush();
      void settle(code, signal);
    });

    const settle = async (code: number | null, signal: NodeJS.Signals | null): Promise<void> => {
      await groupEnded;
      const { report, problem } = await readReport(reportFile);
      if (spawnError) {
        // The worker's own set-up is broken (missing binary, permissions): not the job's fault, so retryable.
        const message = `cannot run ${o.command}: ${spawnError.message}`;
        if (CANNOT_RUN.has((spawnError as NodeJS.ErrnoException).code ?? '')) o.onCannotRun?.(message);
        reject(new HandlerError('SPAWN_FAILED', message, { retryable: true }));
        return;
      }
      if (code === 0) {
        if (report !== null) o.onUnusedReport?.(job, report);
        resolve(stdout.truncatedBytes === 0 && stdout.text() === '' ? null : stdout.text(RESULT_MAX_BYTES));
        return;
      }
      if (ctx.signal.aborted) {
        // Stopped on purpose; the worker ends the job as cancelled/expired/released.
        reject(ctx.signal.reason);
        return;
      }
      // An interpreter that could not open its script (node exits 1 "Cannot find module", python
      // 2 "can't open file") wrote nothing to stdout; whether that was it is told by the file
      // system, not by the words on stderr: the launch chain is checked again.
      const scriptGone = code !== 0 && stdout.empty && namesScript(o.command, o.args);
      const broken = signal === null && code !== null && (SHELL_CANNOT_RUN.has(code) || scriptGone) && report === null && problem === null ? launchProblem(o.command, childEnv, process.cwd(), o.args) : null;
      if (broken !== null) {
        // `env` could not find the interpreter a `#!` line names, or the script a shell or an
        // interpreter runs went since start-up: every job would fail alike, as when the spawn
        // itself fails, so the same is done — not a permanent HANDLER_FAILED. Exit 127 with the
        // chain intact is a command missing inside the handler: that job's own failure, below.
        const tail = stderrTail.text().trim();
        const message = `cannot run ${o.command}: it exited with ${code} (${broken})${tail ? `; stderr: ${tail}` : ''}`;
        o.onCannotRun?.(message);
        reject(new HandlerError('SPAWN_FAILED', message, { retryable: true }));
        return;
      }
      reject(failureFor(o.command, code, signal, report, stderrTail.text(), problem));
    };
  });
}

/** The error for a child that did not exit 0. */
export function failureFor(
  command: string,
  code: number | null,
  signal: NodeJS.Signals | null,
  report: ErrorReport | null,
  stderrTail: string,
  reportProblem: string | null = null,
): HandlerError {
  const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
  if (reportProblem !== null) {
    // Unread, it counts as no report; the message says why, so a handler author can tell.
    const failure = failureFor(command, code, signal, null, stderrTail);
    return new HandlerError(failure.code, `${failure.message} (${reportProblem})`, { retryable: failure.retryable });
  }
  const unreported = code === EXIT_RETRYABLE ? 'TRANSIENT' : 'HANDLER_FAILED';
  const tail = stderrTail.trim();
  // 128 + N is how a shell (and many programs that clean up first) says "ended by signal N".
  const viaStatus = signal === null && code !== null ? KILLED_FROM_OUTSIDE_STATUS.get(code) : undefined;
  if (((signal !== null && KILLED_FROM_OUTSIDE.has(signal)) || viaStatus !== undefined) && report === null) {
    // The worker's own signals come with an aborted ctx.signal and never get here: something else
    // killed it (the OOM killer, an operator, a supervisor stopping the whole service). The job
    // did not fail by itself, so it is retried (and released when the worker is stopping too).
    const said = `${command} ${viaStatus ? `${how} (128 + ${viaStatus}: ended by that signal)` : how}, not by the worker (the OOM killer, a supervisor or an operator?)`;
    return new HandlerError(HANDLER_KILLED, tail ? `${said}: ${tail}` : said, { retryable: true });
  }
  if (report && !ERROR_CODE_RE.test(report.code)) {
    // The report file is the handler's to write, with or without `agentq job error`: a code that
    // breaks the rule would become a DLQ error code (escape sequences in `dlq summary`, a group
    // no --error-code filter can name). It is replaced, and the message keeps what was reported.
    const said = `${command} ${how} and reported the error code "${shownCode(report.code)}", which is not one (error codes ${ERROR_CODE_RULE})`;
    const message = report.message ? `${said}: ${report.message}` : tail ? `${said}; stderr: ${tail}` : said;
    return new HandlerError(unreported, message, { retryable: code === EXIT_RETRYABLE });
  }
  const errorCode = report?.code ?? unreported;
  const known = ERROR_CODE_TABLE[errorCode];
  const retryable = known ? known.retryable : code === EXIT_RETRYABLE;
  const message = report?.message ?? (tail ? `${command} ${how}: ${tail}` : `${command} ${how}`);
  return new HandlerError(errorCode, message, { retryable });
}

/**
 * The report the handler left, read only when it is a regular file of at most
 * `REPORT_MAX_BYTES`: the handler can put anything at that name, and opening a FIFO blocks a
 * thread of the pool for good (the worker then never exits on SIGTERM), while a link to
 * /dev/zero never ends. So: no link followed (O_NOFOLLOW), an open that cannot block
 * (O_NONBLOCK), then the type and size checked on the open file. `problem` says why a file that
 * is there was not read; no file is no report and no problem.
 */
export async function readReport(file: string): Promise<{ report: ErrorReport | null; problem: string | null }> {
  const none = (problem: string | null) => ({ report: null, problem });
  let text: string;
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = await handle.stat();
      if (!st.isFile()) return none(`the report file ${file} is not a regular file; not read`);
      if (st.size > REPORT_MAX_BYTES) return none(`the report file ${file} is ${st.size} bytes, over the ${REPORT_MAX_BYTES} read; not read`);
      const buf = Buffer.alloc(st.size);
      const { bytesRead } = await handle.read(buf, 0, st.size, 0);
      text = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return none(null);
    return none(code === 'ELOOP' ? `the report file ${file} is a symbolic link; not followed` : `the report file ${file} could not be read: ${(e as Error).message}`);
  } finally {
    await rm(file, { force: true }).catch(() => undefined);
  }
  // A handler that writes the file itself (not through `agentq job error`) is told when it got the
  // format wrong: its code would otherwise vanish into HANDLER_FAILED without a word.
  const malformed = `the report file ${file} is not a JSON object with a string "code" (as \`agentq job error\` writes it); not read`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return none(text.trim() === '' ? null : malformed);
  }
  const code = (parsed as Partial<ErrorReport> | null)?.code;
  if (typeof code !== 'string') return none(malformed);
  const message = (parsed as Partial<ErrorReport>).message;
  return { report: { code, message: typeof message === 'string' ? message : null }, problem: null };
}

/** Keeps the last N bytes of a stream (the end of stderr is where the error is). */
class CappedTail {
  private buf = Buffer.alloc(0);
  private cut = false;
  constructor(private readonly cap: number) {}
  push(c: Buffer): void {
    this.buf = Buffer.concat([this.buf, c]);
    if (this.buf.length > this.cap) {
      this.buf = this.buf.subarray(this.buf.length - this.cap);
      this.cut = true;
    }
  }
  text(): string {
    // A cut tail starts at the next whole line when it holds one (not "e\nerror line…", the end
    // of a line cut off), else at the next whole character.
    const newline = this.cut ? this.buf.indexOf(0x0a) : -1;
    const start = newline >= 0 && newline < this.buf.length - 1 ? newline + 1 : utf8BoundaryAfter(this.buf, 0);
    return this.buf.subarray(start).toString('utf8');
  }
}
