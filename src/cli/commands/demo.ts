/**
 * `agentq demo`: the first thing a new user runs. Creates a local queue on
 * the embedded SQLite default (no configuration, no server), submits a few
 * sample jobs and shows them, then prints what to try next.
 *
 * It deliberately ignores AGENTQ_URL and contexts (only an explicit `--url`
 * is honoured): sample jobs must never land in a production queue because a
 * context happened to be current.
 */
import type { Backend } from '../../backend/contract.js';
import { InterruptedError } from '../../core/errors.js';
import { count } from '../../core/plural.js';
import type { Job, SubmitRequest } from '../../core/schemas.js';
import type { CommandContext } from '../context.js';
import { printRecords } from '../output/format.js';
import { redactCredentials } from '../output/redact.js';
import { parseIntOption } from '../parse.js';
import { shellWord } from '../resume-flags.js';
import { JOB_COLUMNS } from './list.js';

export interface DemoOptions {
  queue?: string;
  jobs?: string;
  /** `--no-worker` sets this to false: submit only (tests use the demo as a job generator). */
  worker?: boolean;
}

const WORKFLOWS = ['research_report:v3', 'summarize:v1', 'send_invoice:v2', 'triage_ticket:v1'] as const;
const TENANTS = ['acme', 'globex', 'initech'] as const;
const CLASSES = ['interactive', 'batch', 'maintenance'] as const;

/** The sample jobs: varied tenants, classes and deadlines so list filters have something to show. */
export function sampleRequests(queue: string, n: number, now: number): SubmitRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    workflow: WORKFLOWS[i % WORKFLOWS.length]!,
    queue,
    tenant_id: TENANTS[i % TENANTS.length]!,
    class: CLASSES[i % CLASSES.length]!,
    input: JSON.stringify({ sample: i + 1, prompt: `demo task ${i + 1}` }),
    deadline_at: new Date(now + (i + 1) * 30 * 60_000).toISOString(),
    trace_id: `demo-trace-${i + 1}`,
    estimated_seconds: 5,
    allowed_tools: i % 2 === 0 ? ['web_search'] : [],
  }));
}

/**
 * The worker runtime's part (issue 3): an in-process library worker with a
 * flaky handler processes the sample jobs (worker/demo.ts): some succeed, a
 * rate-limited one is scheduled for a retry, some go to the DLQ. The demo
 * re-reads and shows the jobs afterwards.
 */
export async function processSampleJobs(backend: Backend, jobs: Job[], ctx: CommandContext, urlFlag = ''): Promise<void> {
  if (jobs.length === 0) return;
  const { runDemoWorker } = await import('../../worker/demo.js');
  const queue = jobs[0]!.queue;
  // A first Ctrl-C stops the worker as `agentq worker` stops (it ended the demo on the spot, and
  // the jobs it was running stayed "running" until their 30 s leases ran out); a second exits at once.
  const releaseStops = ctx.handleStops();
  let r: Awaited<ReturnType<typeof runDemoWorker>>;
  try {
    ctx.note(`demo: a worker (concurrency 3, flaky on purpose) is processing them… (Ctrl-C stops it)`);
    r = await runDemoWorker(backend, queue, jobs, ctx.signal);
  } finally {
    releaseStops();
  }
  ctx.note(`demo: ${r.succeeded} succeeded, ${r.retrying} scheduled for a retry (rate limited), ${r.dead} moved to the DLQ`);
  if (ctx.signal.aborted) {
    throw new InterruptedError(
      `the demo was stopped by ${stopName(ctx.signal)}: its worker finished or released the jobs it was running; ${count(r.unprocessed, 'sample job')} ${r.unprocessed === 1 ? 'was' : 'were'} not processed (they stay queued)`,
      `See them with: agentq${urlFlag} list --queue ${queue}`,
    );
  }
  if (r.dead > 0) ctx.note(`demo: see them with  agentq${urlFlag} dlq list --queue ${queue}   (a partially completed one is never redriven blindly)`);
}

export async function run(o: DemoOptions, ctx: CommandContext): Promise<void> {
  const n = parseIntOption(o.jobs ?? '6', '--jobs', 1, 1000)!;
  const queue = o.queue ?? 'demo';
  const { openBackend, defaultDataUrl } = await import('../../backend/open.js');
  const url = ctx.globals.url ?? defaultDataUrl(ctx.env);
  // The embedded default is the demo's own; a store named with --url may be one a read-only
  // context guards (`--context prod --url …`), so that is checked as for any submit.
  if (ctx.globals.url !== undefined) ctx.assertMutable('demo');
  ctx.note(`demo: using ${redactCredentials(url)}${ctx.globals.url ? '' : ' (the embedded default; nothing to configure)'}`);
  const backend = await openBackend(url);
  const urlFlag = (await sameStoreAsPlainCommands(url, ctx)) ? '' : ` --url ${shellWord(redactCredentials(url))}`;
  try {
    const submitted: Job[] = [];
    for (const req of sampleRequests(queue, n, ctx.clock.now())) {
      // (with --url the submits are changes a first Ctrl-C lets finish one at a time: stop here)
      if (ctx.signal.aborted) throw new InterruptedError(`the demo was stopped by ${stopName(ctx.signal)} after submitting ${submitted.length} of ${count(n, 'sample job')} (they stay queued)`);
      submitted.push((await backend.submit(req)).job);
    }
    ctx.note(`demo: submitted ${count(submitted.length, 'sample job')} to queue "${queue}"`);

    if (o.worker !== false) await processSampleJobs(backend, submitted, ctx, urlFlag);

    const shown: Job[] = [];
    for (const j of submitted) shown.push((await backend.get(j.job_id)) ?? j);
    await printRecords(ctx.out, { columns: JOB_COLUMNS, empty: 'No sample jobs.' }, shown);

    const first = submitted[0]!.job_id;
    // One note per line: a note is one line (a line break in it is shown escaped).
    for (const line of [
        '',
        'Next:',
        `  agentq${urlFlag} inspect ${first}          # everything about one job`,
        `  agentq${urlFlag} list --queue ${queue} --tenant acme   # filter`,
        `  agentq${urlFlag} tail --queue ${queue} -o ndjson       # the events so far`,
        `  agentq${urlFlag} cancel ${first} --reason "demo"`,
        '  agentq help exit-codes',
      ])
      ctx.note(line);
  } finally {
    await backend.close();
  }
}

/** The signal that stopped the command (runCli aborts with its name). */
function stopName(signal: AbortSignal): string {
  const sig = String((signal.reason as Error | undefined)?.message ?? '');
  return /^SIG[A-Z]+$/.test(sig) ? sig : 'a stop signal';
}

/**
 * Whether `agentq inspect …` typed next, without `--url`, reaches the store the demo used. The demo
 * ignores AGENTQ_URL and contexts on purpose, but the commands it suggests do not: with either set,
 * the suggestions name the demo's store, or they would look for the sample jobs somewhere else.
 */
async function sameStoreAsPlainCommands(demoUrl: string, ctx: CommandContext): Promise<boolean> {
  if (ctx.globals.url !== undefined) return false;
  try {
    return (await ctx.backendUrl()) === demoUrl;
  } catch {
    return false; // a config the plain commands cannot read: name the store outright
  }
}
