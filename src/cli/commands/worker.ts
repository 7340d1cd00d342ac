/**
 * `agentq worker --queue Q [...] -- CMD [ARGS...]`: runs CMD once per job
 * (see worker/exec-handler.ts for the handler protocol). The library worker
 * does the claiming, heartbeating and ending; this module turns flags into its
 * options, prints one line per job on stderr, and stops gracefully on the first
 * SIGTERM/SIGINT/SIGHUP (`ctx.signal`): no new claims, running jobs get `--grace`,
 * then their handlers are stopped and their leases released.
 */
import { isAbsolute, resolve } from 'node:path';
import { formatDuration, parseDuration } from '../../core/duration.js';
import { AgentqError, cameFromBroker, ExitCode, ValidationError } from '../../core/errors.js';
import { MAX_PAGE_LIMIT, type JobPage, type Unpublished } from '../../backend/contract.js';
import { isStoreReplaced } from '../../backend/sqlite/store-file.js';
import type { FairnessOptions } from '../../core/fairness.js';
import { NAME_RE, NAME_RULE } from '../../core/model.js';
import { JOB_CLASSES, type JobClass } from '../../core/schemas.js';
import { createExecHandler, signalHandlerGroups } from '../../worker/exec-handler.js';
import { shownCode, type ErrorReport } from '../../worker/job-env.js';
import { launchProblem } from '../../worker/launch-check.js';
import { pid1Warning } from '../../worker/process-group.js';
import { shownCommand } from '../../worker/redact-args.js';
import type { WorkerEvent } from '../../worker/types.js';
import { createWorker, MAX_TIMER_MS, MIN_LEASE_MS } from '../../worker/worker.js';
import type { CommandContext } from '../context.js';
import { resolveExecutable } from '../executable.js';
import { parseIntOption } from '../parse.js';
import { describeTenantCaps, mergeFairness } from '../../core/policy.js';
import { ndjsonLine } from '../output/ndjson.js';
import { sanitize } from '../output/sanitize.js';
import { STALL_MS } from '../../worker/store-watch.js';
import { WORKER_DASH_DASH_HINT } from '../worker-hint.js';

export interface WorkerCommandOptions {
  command?: string[];
  queue?: string;
  concurrency?: string;
  lease?: string;
  heartbeat?: string;
  classes?: string;
  tenantConcurrency?: string;
  tenantCap?: string[];
  workerVersion?: string;
  grace?: string;
  killGrace?: string;
  maxResultBytes?: string;
  drain?: boolean;
  quiet?: boolean;
  /** Whether the command line had `--` (set by the command's preAction hook). */
  dashDash?: boolean;
}

/** How long a worker waits for its start's look-up of the queues (workerPreflight) before it starts anyway. */
const PREFLIGHT_WAIT_MS = 5_000;

export async function run(o: WorkerCommandOptions, ctx: CommandContext): Promise<void> {
  try {
    return await runWorker(o, ctx);
  } catch (e) {
    // Given without `--`, the handler's options may have been taken for the worker's: a flag's
    // value it refuses ("--concurrency "echo hi"") is most likely that, and the hint says so.
    if (o.dashDash === false && e instanceof ValidationError && e.hint === undefined) throw new ValidationError(e.message, WORKER_DASH_DASH_HINT);
    throw e;
  }
}

/** What to do about a launch problem; only some of them are about a `#!` line. */
function launchHint(problem: string, cwd: string): string {
  if (problem.includes('\r')) return 'Its #! line ends in a CR: the file has Windows line ends; convert them (dos2unix).';
  if (problem.includes('the script it runs')) {
    return `Check the script's path (relative to the worker's working directory, ${cwd}, or on PATH for a shell) and that it exists.`;
  }
  if (problem.startsWith('it runs ')) return 'Install the program it runs, or fix the command.';
  return 'Install the interpreter its #! line names, or fix the line.';
}

async function runWorker(o: WorkerCommandOptions, ctx: CommandContext): Promise<void> {
  const [command, ...args] = o.command ?? [];
  if (!command) throw new ValidationError('give the handler command after --, e.g. agentq worker --queue research -- ./run-agent.sh');
  const executable = resolveExecutable(command, ctx.env, ctx.cwd);
  // A script whose `#!` interpreter is missing would fail every job it was given: refused now,
  // before anything is claimed (and it lets exit 127 later mean a command missing in the script).
  const cannotLaunch = launchProblem(executable, ctx.env, ctx.cwd, args);
  if (cannotLaunch !== null) {
    throw new ValidationError(`handler command ${JSON.stringify(command)} cannot run: ${cannotLaunch}`, launchHint(cannotLaunch, ctx.cwd));
  }
  const queue = o.queue ?? ctx.defaultQueue();
  const concurrency = parseIntOption(o.concurrency ?? '1', '--concurrency', 1, 1000)!;
  const leaseMs = parseDuration(o.lease ?? '60s', '--lease');
  // Named after the flags the operator gave: `--lease 0s` alone once said "--heartbeat 0ms must be less than --lease 0ms".
  if (leaseMs < MIN_LEASE_MS) throw new ValidationError(`--lease must be at least ${formatDuration(MIN_LEASE_MS)}, got ${formatDuration(leaseMs)}`);
  const heartbeatMs = o.heartbeat === undefined ? Math.floor(leaseMs / 4) : parseDuration(o.heartbeat, '--heartbeat');
  if (heartbeatMs <= 0) throw new ValidationError(`--heartbeat must be more than 0ms, got ${formatDuration(heartbeatMs)}`);
  if (heartbeatMs >= leaseMs) {
    throw new ValidationError(`--heartbeat ${formatDuration(heartbeatMs)} must be less than --lease ${formatDuration(leaseMs)}: the lease would expire between heartbeats`);
  }
  const gracefulMs = parseDuration(o.grace ?? '30s', '--grace');
  const killGraceMs = parseDuration(o.killGrace ?? '10s', '--kill-grace');
  for (const [flag, ms] of [['--lease', leaseMs], ['--heartbeat', heartbeatMs], ['--grace', gracefulMs], ['--kill-grace', killGraceMs + 1_000]] as const) {
    if (ms > MAX_TIMER_MS) throw new ValidationError(`${flag} must be at most 24d (Node's longest timer is about 24.8 days), got ${formatDuration(ms)}`);
  }
  const resultCapBytes = parseIntOption(o.maxResultBytes ?? String(64 * 1024), '--max-result-bytes', 0, 16 * 1024 * 1024)!;
  const classes = parseClasses(o.classes);
  const fairness = parseTenantCaps(o.tenantConcurrency, o.tenantCap);
  const workerVersion = parseWorkerVersion(o.workerVersion, ctx.env.AGENTQ_WORKER_VERSION);
  ctx.assertMutable('running a worker');

  /** A claim refused for a reason retrying cannot mend, or a handler that cannot run: the worker stops and exits with its code. */
  let fatal: AgentqError | null = null;
  const url = absoluteStoreUrl(await ctx.backendUrl(), ctx.cwd);
  const backend = await ctx.openBackend({ create: true, ...(fairness ? { fairness } : {}) });
  const exec = await createExecHandler({
    command: executable,
    args,
    url,
    env: ctx.env as NodeJS.ProcessEnv,
    resultCapBytes,
    killGraceMs,
    // Log lines, not columns agentq prints: a tab stays a tab (other control characters are made visible).
    onStderrLine: (jobId, line) => void ctx.io.stderr.write(`[${jobId}] ${sanitize(line, { allowTabs: true })}\n`),
    // Passed the start-up check, yet cannot start (a `#!` interpreter that is missing, the file
    // removed since): each claim would fail a job, and the queue would drain into the DLQ.
    // (also with --quiet: the job's outcome is not what its handler said it would be)
    onUnusedReport: (job, report) => ctx.warn(unusedReportLine(job.job_id, job.attempt, report)),
    onCannotRun: (message) => {
      if (fatal !== null) return;
      fatal = new AgentqError('HANDLER_CANNOT_RUN', message, ExitCode.usage, 'Check the command and the interpreter its #! line names; the jobs it was given are retried later.');
      ctx.note('worker: stopping — the handler command cannot run; no more jobs are claimed');
      void worker.stop();
    },
  });
  let drained = false;
  /** --drain: the check an idle claim started (one at a time). */
  let drainCheck: Promise<void> | null = null;
  /** --drain: the unpublished jobs the last check saw (what was said about them, to say it once). */
  let unpublishedSeen = 0;
  let unpublishedSaid = '';
  /**
   * --drain stops on an idle claim only when no job of the queue waits to be handed to its broker
   * (SQS: an outbox row backing off after a failed publish): such jobs are claimable once the relay
   * publishes them, and stopping would leave them queued with exit 0. After such jobs were seen,
   * one more idle claim is awaited, so the messages just published are received.
   */
  const untilDrained = async (): Promise<void> => {
    let u: Unpublished | null = { count: 0, nextTryAt: null, lastError: null };
    if (backend.unpublished) u = await backend.unpublished(queue).catch(() => null);
    if (drained) return;
    if (u === null) return; // the store did not answer: not known to be drained; the next idle asks again
    if (u.count > 0) {
      const said =
        `worker: --drain: queue ${sanitize(queue)} has ${u.count} job(s) not yet published to ${backend.kind === 'sqs' ? 'SQS' : 'its broker'}` +
        (u.nextTryAt === null ? '' : `; the next try is at ${new Date(u.nextTryAt).toISOString()}`) +
        (u.lastError === null ? '' : `; the last try failed: ${sanitize(u.lastError)}`) +
        '; waiting for them (`agentq outbox status` shows them)';
      if (said !== unpublishedSaid) ctx.note(said);
      unpublishedSaid = said;
      unpublishedSeen = u.count;
      return;
    }
    if (unpublishedSeen > 0) {
      unpublishedSeen = 0;
      return;
    }
    drained = true;
    // Jobs scheduled for later (a retry's backoff, --run-at) are not claimable yet, and not waited
    // for: said, so a CI run does not read exit 0 as "all of it is done".
    const later = await scheduledLater();
    const left = later > 0 ? ` (${later} job${later === 1 ? '' : 's'} of it ${later === 1 ? 'is' : 'are'} scheduled for later, a retry waiting out its backoff or a --run-at, and ${later === 1 ? 'is' : 'are'} not waited for: agentq list --queue ${sanitize(queue)} --state scheduled)` : '';
    ctx.note(`worker: queue ${sanitize(queue)} has nothing claimable; --drain: stopping${left}`);
    // On SQS a job the store holds queued is claimable only through its message: queued jobs that no
    // receive delivered are ones whose messages SQS lost (restarted empty, a queue purged or made
    // again), which nothing would ever publish again. Said, with the command that does.
    if (backend.kind === 'sqs') {
      const stuck = await queuedLeft();
      if (stuck > 0) {
        ctx.warn(
          `${stuck} job(s) of queue ${sanitize(queue)} are queued in the store but SQS delivered none of them: if SQS lost their messages ` +
            `(restarted empty, a queue purged or made again), \`agentq sqs republish --queue ${sanitize(queue)} --dry-run\` shows what a republish would send`,
        );
      }
      // A running job whose lease ran out is reaped only when its message comes back: with the
      // message lost too (its worker gone), it stays running for ever, and nothing else says so.
      const lapsed = await lapsedLeft();
      if (lapsed > 0) {
        ctx.warn(
          `${lapsed} job(s) of queue ${sanitize(queue)} are running in the store with expired leases, and SQS delivered none of their messages: ` +
            `their workers are gone, and if SQS lost the messages too they stay running; \`agentq sqs republish --queue ${sanitize(queue)} --dry-run\` shows what a republish would send`,
        );
      }
    }
    void worker.stop();
  };
  /** Jobs of the queue (of --classes) scheduled for later; 0 when the store does not say. */
  const scheduledLater = async (): Promise<number> => {
    const s = await backend.stats(queue).catch(() => null);
    if (!s) return 0;
    if (!classes || !s.by_class) return s.counts.scheduled;
    return s.by_class.filter((b) => (classes as readonly string[]).includes(b.key)).reduce((n, b) => n + b.scheduled, 0);
  };
  /** Jobs of the queue (of --classes) queued in the store; 0 when the store does not say. */
  const queuedLeft = async (): Promise<number> => {
    const s = await backend.stats(queue).catch(() => null);
    if (!s) return 0;
    if (!classes || !s.by_class) return s.counts.queued;
    return s.by_class.filter((b) => (classes as readonly string[]).includes(b.key)).reduce((n, b) => n + b.queued, 0);
  };
  /** Jobs of the queue (of --classes) running under a lease that has expired (their workers gone); 0 when the store does not say. */
  const lapsedLeft = async (): Promise<number> => {
    const now = ctx.clock.now();
    let n = 0;
    let cursor: string | null = null;
    try {
      do {
        const page: JobPage = await backend.list({ queue, states: ['running'] }, { limit: MAX_PAGE_LIMIT, cursor });
        for (const j of page.items) {
          if (classes && !(classes as readonly string[]).includes(j.class)) continue;
          if (j.lease === null || Date.parse(j.lease.expires_at) <= now) n++;
        }
        cursor = page.next_cursor;
      } while (cursor !== null);
    } catch {
      return n;
    }
    return n;
  };
  /** When claims began to be refused so (null while they are not). */
  let refusedSince: number | null = null;
  /** --drain: when claims began to fail for want of the store (null while they do not). */
  let unansweredSince: number | null = null;
  const tally = { succeeded: 0, retried: 0, dead: 0, expired: 0, cancelled: 0, released: 0, lost: 0 };
  /** --drain: the last claim failure for want of the store, and the timer that gives up on it. */
  let lastUnanswered: AgentqError | null = null;
  /** --drain: whether the store has answered a claim yet (before that, an outage counts from `startedAt`). */
  let claimAnswered = false;
  const startedAt = ctx.clock.now();
  let drainOutageTimer: NodeJS.Timeout | undefined;
  const giveUpDrain = (): void => {
    if (fatal !== null || unansweredSince === null || lastUnanswered === null) return;
    fatal = new AgentqError(
      'NOT_DRAINED',
      `--drain: queue ${sanitize(queue)} was not drained: its claims have failed for ${formatDuration(DRAIN_OUTAGE_MS)} (${lastUnanswered.message})`,
      ExitCode.retryLater,
      'Check that the store is up and that --url / the context points at it, then run again.',
    );
    ctx.note(`worker: stopping — --drain, and the store has not answered a claim for ${formatDuration(DRAIN_OUTAGE_MS)}; running jobs may finish first`);
    void worker.stop();
  };
  // -o json|ndjson: every worker event as one JSON line on stdout (`type` = the event kind), for log shippers.
  const machine = ctx.format === 'json' || ctx.format === 'ndjson';
  const worker = createWorker({
    backend,
    queue,
    handler: exec.handler,
    concurrency,
    leaseMs,
    heartbeatMs,
    gracefulMs,
    // Past --grace a stopped handler gets the kill grace to exit before its lease is let go.
    abortGraceMs: killGraceMs + 1_000,
    clock: ctx.clock,
    workerVersion,
    ...(classes ? { classes } : {}),
    logger: (e) => {
      count(tally, e);
      if (machine) ctx.out.write(ndjsonLine(eventRecord(e, ctx.clock.now())));
      if (!o.quiet) {
        const line = describe(e);
        if (line) ctx.note(`worker: ${line}`);
      }
      // (also with --quiet: it says the outcome line is not the whole truth)
      if (e.kind === 'failed' && e.warning !== undefined) ctx.warn(`${e.jobId}: ${sanitize(e.warning)}`);
      if (e.kind === 'claimed' || e.kind === 'idle') {
        refusedSince = unansweredSince = null;
        claimAnswered = true;
        clearTimeout(drainOutageTimer);
      }
      if (o.drain && e.kind === 'backend_error' && e.op === 'claim' && fatal === null && e.error instanceof AgentqError && e.error.exitCode === ExitCode.retryLater) {
        // A worker waits for a store that is not there yet, or gone for a while; a --drain run (a
        // CI job, a wrong URL) must end instead, and not with 0: nothing was drained. Timed from the
        // failed claim's start (the client's connection retries, 5 s for Redis, are inside the
        // 30 s), and ended when they are up, not at the next failed claim a backoff later.
        lastUnanswered = e.error;
        if (unansweredSince === null) {
          // (before any claim was answered, from the worker's start: its first calls wait out the retries too)
          unansweredSince = claimAnswered ? Math.min(e.startedAt ?? Infinity, ctx.clock.now()) : startedAt;
          clearTimeout(drainOutageTimer);
          drainOutageTimer = setTimeout(giveUpDrain, Math.max(0, unansweredSince + DRAIN_OUTAGE_MS - ctx.clock.now()));
        }
      }
      if (e.kind === 'backend_error' && fatal === null && isStoreReplaced(e.error)) {
        // The SQLite file was removed or replaced under this worker (store-file.ts): every later
        // call is refused the same way, and starting again is the only mend, so no grace.
        fatal = e.error;
        ctx.note('worker: stopping — the store file was removed or replaced since this worker opened it; running jobs may finish first');
        void worker.stop();
      }
      if (e.kind === 'backend_error' && e.op === 'claim' && fatal === null && isUnmendable(e.error)) {
        // Credentials or configuration the store refuses (exit 4 or 78): polling on would only
        // repeat the error while looking alive to a supervisor. Jobs in flight still finish. Only
        // once it has lasted REFUSAL_GRACE_MS: some refusals pass (an expired token that is being
        // refreshed, a credentials endpoint that blinked).
        refusedSince ??= ctx.clock.now();
        if (ctx.clock.now() - refusedSince >= REFUSAL_GRACE_MS) {
          fatal = e.error;
          // (SQS refusing, a missing queue of it, is not the job store's doing)
          const who = cameFromBroker(e.error) && backend.broker ? sanitize(backend.broker.name) : 'the store';
          ctx.note(`worker: stopping — ${who} has refused this worker for ${formatDuration(REFUSAL_GRACE_MS)}; running jobs may finish first`);
          void worker.stop();
        }
      }
      if (o.drain && e.kind === 'idle' && !drained && !drainCheck) {
        drainCheck = untilDrained().finally(() => (drainCheck = null));
      }
    },
  });

  const onInterrupt = (): void => {
    ctx.note(
      `worker: stopping — no new jobs; running jobs have ${formatDuration(gracefulMs)} to finish, then their leases are released ` +
        `(${againToExit(ctx.signal.reason)} to exit at once)`,
    );
    void worker.stop();
  };
  // Ctrl-Z (SIGTSTP) suspends the worker's process group, not its handlers' (groups of their own):
  // they ran on with no heartbeat to keep their leases, and another worker took their jobs while
  // they still ran. So the handlers are stopped first, then the worker itself, as the default
  // action would; SIGCONT (fg, bg) resumes them.
  const onSuspend = (): void => {
    signalHandlerGroups('SIGSTOP');
    process.kill(process.pid, 'SIGSTOP');
  };
  const onResume = (): void => signalHandlerGroups('SIGCONT');
  if (ctx.signal.aborted) return;
  // The worker stops cleanly on the first signal (running jobs get --grace) and says so itself.
  const releaseStops = ctx.handleStops();
  ctx.signal.addEventListener('abort', onInterrupt, { once: true });
  process.on('SIGTSTP', onSuspend);
  process.on('SIGCONT', onResume);
  try {
    ctx.note(
      `worker ${sanitize(worker.workerId)}: queue ${sanitize(queue)}, concurrency ${concurrency}, lease ${formatDuration(leaseMs)}, ` +
        `heartbeat ${formatDuration(heartbeatMs)}${capsNote(mergeFairness(ctx.config().context?.fairness, fairness))}: ${sanitize(shownCommand(command, args))}`,
    );
    const asPid1 = pid1Warning();
    if (asPid1 !== null) ctx.warn(asPid1);
    // Server settings that put jobs at risk, said once (a server that cannot be asked, e.g. an ACL
    // user without INFO, says nothing).
    for (const w of (await backend.serverWarnings?.().catch(() => [])) ?? []) ctx.warn(w);
    // What the backend cannot deliver at all (SQS: its queues missing, credentials refused) stops the
    // worker now (exit 78 / 4) rather than leaving it idle; anything else the claim loop rides out.
    if (backend.workerPreflight) {
      try {
        // Waited for only so long: an SQS endpoint that accepts and never answers held the worker
        // silent for 90 s per look-up. Started without it, the claims' watch names SQS as unavailable.
        const check = backend.workerPreflight(queue, classes);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), PREFLIGHT_WAIT_MS)));
        const warnings = await Promise.race([check, late]).finally(() => clearTimeout(timer));
        if (warnings === null) {
          check.catch(() => undefined);
          const who = backend.broker ? sanitize(backend.broker.name) : 'the backend';
          ctx.warn(`could not check that queue ${sanitize(queue)} can be delivered (${who} did not answer within ${formatDuration(PREFLIGHT_WAIT_MS)}); starting anyway`);
        } else for (const w of warnings) ctx.warn(w);
      } catch (e) {
        if (isUnmendable(e)) throw e;
        ctx.warn(`could not check that queue ${sanitize(queue)} can be delivered (${sanitize(e instanceof Error ? e.message : String(e))}); starting anyway`);
      }
    }
    await worker.start();
    await worker.done;
    ctx.note(
      `worker: ${tally.succeeded} succeeded, ${tally.retried} failed and scheduled for a retry, ${tally.dead} moved to the DLQ, ` +
        `${tally.expired} expired, ${tally.cancelled} cancelled, ${tally.released} released, ${tally.lost} lost their lease`,
    );
    if (fatal) throw fatal;
  } finally {
    clearTimeout(drainOutageTimer);
    releaseStops();
    ctx.signal.removeEventListener('abort', onInterrupt);
    process.off('SIGTSTP', onSuspend);
    process.off('SIGCONT', onResume);
    await exec.close();
  }
}

/** How to ask again, after the signal that stopped the worker (`runCli` aborts with the signal's name). */
function againToExit(reason: unknown): string {
  const sig = reason instanceof Error ? reason.message : '';
  if (sig === 'SIGINT') return 'Ctrl-C again';
  return /^SIG[A-Z]+$/.test(sig) ? `send ${sig} again` : 'send the signal again';
}

/** How long claims may be refused for credentials or configuration before the worker gives up. */
const REFUSAL_GRACE_MS = 10_000;

/** How long a --drain worker waits for a store that does not answer its claims (a slow start, a blip) before it gives up, exit 75. */
const DRAIN_OUTAGE_MS = 30_000;

/** Refused credentials or permissions (exit 4) and bad configuration (exit 78): no retry mends them. */
function isUnmendable(error: unknown): error is AgentqError {
  return error instanceof AgentqError && (error.exitCode === ExitCode.auth || error.exitCode === ExitCode.config);
}

/**
 * Counted by how the job ended, not by how the worker learnt it: a job stopped at its deadline and
 * one whose failure left no time for a retry both ended `expired` (the tally once said "0 expired,
 * 1 stopped (cancel/deadline)" for the first); a cancel seen at a heartbeat or at the failure's write
 * both ended `cancelled`.
 */
function count(t: Record<'succeeded' | 'retried' | 'dead' | 'expired' | 'cancelled' | 'released' | 'lost', number>, e: WorkerEvent): void {
  if (e.kind === 'succeeded') t.succeeded++;
  else if (e.kind === 'failed') t[e.outcome === 'retry' ? 'retried' : e.outcome]++;
  else if (e.kind === 'aborted') t[e.reason]++;
  else if (e.kind === 'released' || e.kind === 'orphan_released') t.released++;
  else if (e.kind === 'lease_lost') t.lost++;
}

/** A worker event as a JSON record: `type` first, errors as their message. */
export function eventRecord(e: WorkerEvent, now: number): Record<string, unknown> {
  const { kind, ...rest } = e;
  const record: Record<string, unknown> = { type: kind, at: new Date(now).toISOString(), ...rest };
  if ('error' in rest) record.error = rest.error instanceof Error ? rest.error.message : String(rest.error);
  return record;
}

/** What the worker says of an error report its handler followed with exit 0 (the job succeeded). */
export function unusedReportLine(jobId: string, attempt: number, report: ErrorReport): string {
  const message = report.message === null ? '' : ` ("${sanitize(report.message.length > 200 ? `${report.message.slice(0, 200)}…` : report.message)}")`;
  return `${jobId} attempt ${attempt}: the handler reported ${shownCode(report.code)}${message} with agentq job error, then exited 0: the job succeeded and the report was not used (exit non-zero after the report to fail the job, 75 to retry it)`;
}

/** One stderr line per worker event worth telling an operator about. */
function describe(e: WorkerEvent): string | null {
  switch (e.kind) {
    case 'claimed':
      return `${e.jobId} attempt ${e.attempt}: started`;
    case 'succeeded':
      return `${e.jobId} attempt ${e.attempt}: succeeded in ${formatDuration(e.durationMs)}`;
    case 'failed': {
      const next = { retry: 'retry scheduled', dead: 'moved to the DLQ', expired: 'expired', cancelled: 'cancelled (its cancel was requested)' }[e.outcome];
      return `${e.jobId} attempt ${e.attempt}: failed ${sanitize(e.code)}: ${sanitize(e.message)} → ${next}`;
    }
    case 'aborted':
      return `${e.jobId} attempt ${e.attempt}: stopped, ${e.reason}`;
    case 'lease_lost':
      return e.unsure
        ? `${e.jobId} attempt ${e.attempt}: lease lost; an earlier try of this attempt's ending write went unanswered and may have been recorded (agentq inspect ${e.jobId})`
        : `${e.jobId} attempt ${e.attempt}: lease lost (another worker may have it); nothing written`;
    case 'orphan_released':
      return `${e.jobId} attempt ${e.attempt}: leased to this worker by a call whose answer was lost; lease released (the attempt does not count)`;
    case 'released':
      return `${e.jobId} attempt ${e.attempt}: lease released (the attempt does not count)`;
    case 'handler_detached':
      return `${e.jobId}: handler did not exit after ${e.reason}; job ended without it`;
    case 'backend_error':
      // An outage of SQS (the broker) is not the store's: "store error … SQS is unreachable" sent on-call to the wrong system.
      return `${cameFromBroker(e.error) ? 'broker' : 'store'} error during ${e.op}${e.jobId ? ` of ${e.jobId}` : ''}: ${sanitize(e.error instanceof Error ? e.error.message : String(e.error))}`;
    case 'store_unavailable':
      return e.error === null
        ? `the store is not answering (${e.waiting} ${e.waiting === 1 ? 'call' : 'calls'} waiting for ${formatDuration(STALL_MS)}); waiting for it, running jobs go on`
        : `the store is unavailable (${sanitize(e.error instanceof Error ? e.error.message : String(e.error))}); waiting for it, running jobs go on`;
    case 'store_available':
      return `the store answers again (after ${formatDuration(e.downMs)})`;
    case 'broker_unavailable':
      return `${sanitize(e.broker)} is unavailable (${sanitize(e.error instanceof Error ? e.error.message : String(e.error))}); waiting for it (jobs are claimed through it), running jobs go on`;
    case 'broker_available':
      return `${sanitize(e.broker)} answers again (after ${formatDuration(e.downMs)})`;
    case 'leases_left':
      return `${e.count} ${e.count === 1 ? 'lease' : 'leases'} not released within --grace (the store did not answer): ${e.count === 1 ? 'it expires' : 'they expire'} by ${new Date(e.expiresAt).toISOString()}, then ${e.count === 1 ? 'its job is' : 'their jobs are'} claimed again`;
    case 'orphan_sweep_abandoned':
      return `the last orphan sweep did not finish within --grace (the store did not answer): jobs a lost claim answer may have leased to this worker are claimed again once their leases expire, by ${new Date(e.expiresBy).toISOString()}`;
    case 'broker_work_left':
      return `${sanitize(e.broker)} did not finish within --grace what the ends of ${e.jobs} ${e.jobs === 1 ? 'job' : 'jobs'} left it to do (deleting ${e.jobs === 1 ? 'its message' : 'their messages'}, sending DLQ copies); left undone: nothing is lost, the job store holds ${e.jobs === 1 ? 'its end' : 'their ends'}, and a message that comes back is deleted (a dead job's after its DLQ copy is sent) when it is next received`;
    case 'stopped':
      return 'stopped';
    default:
      return null;
  }
}

/**
 * The URL handed to handlers as AGENTQ_URL: a relative `sqlite:` path made
 * absolute, so `agentq job …` finds the same file after the handler `cd`s.
 */
export function absoluteStoreUrl(url: string, cwd: string): string {
  const m = /^sqlite:(?!\/\/)(.+)$/.exec(url);
  if (!m || m[1] === ':memory:' || isAbsolute(m[1]!) || m[1]!.startsWith('~/')) return url;
  return `sqlite:${resolve(cwd, m[1]!)}`;
}

/** The longest `--worker-version`: a git sha, a semver, a build tag; it is stored on every attempt. */
const WORKER_VERSION_MAX_CHARS = 128;

/**
 * `--worker-version`, else AGENTQ_WORKER_VERSION (empty there counts as unset, as for AGENTQ_URL).
 * An empty flag is refused: `--worker-version "$GIT_SHA"` with the variable unset recorded "" on
 * every attempt, and a DLQ sorted by worker version could not tell which build failed.
 */
function parseWorkerVersion(flag: string | undefined, env: string | undefined): string | null {
  if (flag === '') throw new ValidationError('--worker-version is empty (an unset variable?): give a version, or leave the flag out');
  const version = flag ?? (env === '' ? undefined : env) ?? null;
  if (version !== null && version.length > WORKER_VERSION_MAX_CHARS) {
    throw new ValidationError(`${flag !== undefined ? '--worker-version' : 'AGENTQ_WORKER_VERSION'} must be at most ${WORKER_VERSION_MAX_CHARS} characters (got ${version.length})`);
  }
  return version;
}

function parseClasses(value: string | undefined): JobClass[] | undefined {
  if (value === undefined) return undefined;
  const parts = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // (`--classes "$CLASSES"` with the variable unset: said here, naming the flag, not by the worker's own check)
  if (parts.length === 0) throw new ValidationError(`--classes ${JSON.stringify(value)} names no class: use ${JOB_CLASSES.join(', ')} (comma-separated), or leave it out for all`);
  for (const p of parts) {
    if (!(JOB_CLASSES as readonly string[]).includes(p)) {
      throw new ValidationError(`--classes ${JSON.stringify(p)} is not a class: use ${JOB_CLASSES.join(', ')} (comma-separated)`);
    }
  }
  return parts as JobClass[];
}

/**
 * `--tenant-concurrency N` and `--tenant-cap TENANT=N`: the caps the claims honour. They are kept
 * in the store's running counts per tenant, so they hold across every worker on the queue only if
 * every worker is given the same caps (a context's `fairness` is the way to give them all the same).
 */
function parseTenantCaps(all: string | undefined, caps: string[] | undefined): FairnessOptions | undefined {
  const tenantConcurrency = parseIntOption(all, '--tenant-concurrency', 1, 100_000);
  let overrides: Record<string, number> | undefined;
  for (const cap of caps ?? []) {
    const m = /^([^=]*)=(.*)$/.exec(cap);
    if (!m) throw new ValidationError(`--tenant-cap ${JSON.stringify(cap)} must be TENANT=N, e.g. --tenant-cap acme=4`);
    const tenant = m[1]!.trim();
    if (!NAME_RE.test(tenant)) throw new ValidationError(`--tenant-cap: tenant ${JSON.stringify(tenant)} ${NAME_RULE}`);
    overrides ??= Object.create(null) as Record<string, number>;
    const n = parseIntOption(m[2], `--tenant-cap ${tenant}`, 1, 100_000)!;
    // Two caps for one tenant are a mistake (a pasted line, a variable set twice): which was meant?
    const earlier = overrides[tenant];
    if (earlier !== undefined) throw new ValidationError(`--tenant-cap ${tenant} is given twice (${earlier} and ${n}): give one cap per tenant`);
    overrides[tenant] = n;
  }
  if (tenantConcurrency === undefined && overrides === undefined) return undefined;
  return { ...(tenantConcurrency !== undefined ? { tenantConcurrency } : {}), ...(overrides ? { tenantConcurrencyOverrides: overrides } : {}) };
}

/** ", tenant cap 2 (acme 4)" for the start line: the caps this worker's claims honour, if any. */
function capsNote(f: FairnessOptions | undefined): string {
  const caps = describeTenantCaps(f);
  return caps === null ? '' : `, tenant cap ${sanitize(caps)}`;
}
