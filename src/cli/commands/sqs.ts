/**
 * `agentq sqs setup | sweep | custody`: what only the SQS backend has. Each
 * works through the SqsBackend's own methods after checking the URL is an
 * sqs:// one; the shared DLQ commands (list/show/redrive/…) work on SQS as on
 * every backend, against the store.
 */
import type { Backend } from '../../backend/contract.js';
import type { SqsBackend } from '../../backend/sqs/index.js';
import { ConfigError, InterruptedError, ValidationError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';
import { isMachineFormat, printObject, printRecords } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { checkQueueName, parseIntOption } from '../parse.js';
import { isJobId } from '../../core/ids.js';
import { MAX_PAGE_LIMIT } from '../../backend/contract.js';
import type { RelayResult } from '../../backend/sqs/relay.js';
import { parseDuration } from '../../core/duration.js';
import type { Job } from '../../core/schemas.js';
import { relayFailure } from './outbox.js';

export function requireSqs(backend: Backend, command: string): SqsBackend {
  if (backend.kind !== 'sqs') {
    throw new ConfigError(`\`agentq ${command}\` needs the SQS backend, but the URL points to ${backend.kind} (${backend.description})`, 'Use --url sqs://REGION/PREFIX?... or a context that points to SQS.');
  }
  return backend as SqsBackend;
}

/** The default of --max-attempts (the SubmitRequest schema's). */
const DEFAULT_MAX_ATTEMPTS = 3;

export interface SetupOptions {
  queue?: string[];
}

export async function setup(o: SetupOptions, ctx: CommandContext): Promise<void> {
  ctx.assertMutable('sqs setup');
  // A name no job can have (submit refuses it) would get SQS queues no job can ever use.
  const queues = (o.queue && o.queue.length > 0 ? o.queue : [ctx.defaultQueue()]).map((q) => checkQueueName(q));
  const backend = requireSqs(await ctx.openBackend({ create: true }), 'sqs setup');
  const actions = await backend.setup(queues);
  if (backend.maxReceiveCount <= DEFAULT_MAX_ATTEMPTS) {
    // every attempt is a receive: at or below the attempts, the backstop takes jobs that are still being retried
    ctx.warn(
      `max_receive_count ${backend.maxReceiveCount} is not above agentq's default max attempts (${DEFAULT_MAX_ATTEMPTS}): each attempt is a receive, so SQS moves a job to its DLQ before its retries are over. Set it above the largest --max-attempts you use.`,
    );
  }
  await printRecords(ctx.out, {
    empty: 'No SQS queues to set up.',
    columns: [
      { header: 'queue', get: (r) => r.name },
      { header: 'action', get: (r) => r.action },
      { header: 'what', get: (r) => r.detail, flexible: true },
      { header: 'url', get: (r) => r.url, wide: true },
    ],
  }, actions);
  const created = actions.filter((a) => a.action !== 'exists').length;
  if (!isMachineFormat(ctx.out.format)) ctx.note(created === 0 ? 'every queue already existed with the right settings; nothing changed' : `${created} queue(s) created or updated`);
}

export interface SweepOptions {
  queue?: string;
  max?: string;
  leaveForeign?: boolean;
  yes?: boolean;
}

/** Said before anything is received: browsing SQS changes it. */
export function sweepWarning(dlqName: string, leaveForeign: boolean): string {
  return (
    `This RECEIVES from the SQS DLQ ${dlqName}. Every message received gets its receive count raised by one and is hidden ` +
    `for up to 30 s while it is handled. agentq's own copies of entries that are still dead are put back at once (one per entry: a second copy of one is deleted). ` +
    `Other messages are written to the job store byte-exact with their attributes, then deleted from SQS` +
    (leaveForeign ? ' — except foreign and malformed ones, which are recorded and left in SQS.' : '.') +
    ' Foreign and malformed messages are listed as malformed DLQ entries and are never redriven or purged.'
  );
}

export async function sweep(o: SweepOptions, ctx: CommandContext): Promise<void> {
  ctx.assertMutable('sqs sweep');
  const max = o.max === undefined ? 1000 : parseIntOption(o.max, '--max', 1, Number.MAX_SAFE_INTEGER)!;
  const queue = checkQueueName(o.queue ?? ctx.defaultQueue());
  const backend = requireSqs(await ctx.openBackend({ create: true }), 'sqs sweep');
  // a DLQ that is not there is said before anything is asked
  const dlq = await backend.dlqToSweep(queue);
  ctx.note(sanitize(sweepWarning(dlq.name, o.leaveForeign === true)));
  await ctx.confirm(`Sweep the SQS DLQ of ${sanitize(queue)}?`, { yes: o.yes });
  // Ctrl-C stops it after the batch in hand (each message is kept before it is deleted); it swept on to the end.
  const report = await backend.sweepDlq(queue, { max, leaveForeign: o.leaveForeign === true, signal: ctx.signal });
  // Said on stderr in every format (-o json also has `max_reached: true`).
  const atMax = () => {
    if (report.max_reached) ctx.warn(`stopped at --max ${max}; more messages may remain in ${sanitize(backend.sqsQueues.dlqName(queue))}: run the sweep again or raise --max`);
    if (report.interrupted) {
      throw new InterruptedError(
        `interrupted: the sweep stopped before the SQS DLQ was drained (${report.received} received); what it received is handled, the rest stays in SQS`,
        `Sweep the rest with: agentq sqs sweep --queue ${queue}`,
      );
    }
  };
  if (isMachineFormat(ctx.out.format)) {
    printObject(ctx.out, { ...report, max_reached: report.max_reached === true });
    return atMax();
  }
  await printRecords(ctx.out, {
    // (the totals line below says how many messages were received)
    empty: 'No message was taken into custody.',
    columns: [
      { header: 'job', get: (r) => r.job_id, keepWhole: true },
      { header: 'kind', get: (r) => r.kind },
      { header: 'result', get: (r) => r.recorded },
      { header: 'message', get: (r) => r.message_id, wide: true },
      { header: 'why', get: (r) => r.why, flexible: true },
    ],
  }, report.custody);
  ctx.note(
    `received ${report.received}: ${report.custody.length - report.already_in_custody - report.requeued} taken into custody` +
      `${report.already_in_custody > 0 ? ` (${report.already_in_custody} already in custody)` : ''}` +
      `${report.requeued > 0 ? `, ${report.requeued} of running jobs under a live lease left running (messages back in their source queue)` : ''}, ${report.deleted} deleted from SQS, ` +
      `${report.mirror_kept} agentq copies of dead entries left in place` +
      `${report.duplicate_copies > 0 ? ` (${report.duplicate_copies} second copies of them deleted: one copy per entry)` : ''}, ${report.kept_in_sqs} foreign/malformed left in SQS`,
  );
  atMax();
}

export interface CustodyOptions {
  queue?: string;
  limit?: string;
  after?: string;
}

export async function custody(o: CustodyOptions, ctx: CommandContext): Promise<void> {
  const limit = o.limit === undefined ? 100 : parseIntOption(o.limit, '--limit', 1, 1000)!;
  if (o.queue !== undefined) checkQueueName(o.queue);
  // Custody pages by job id: anything else listed from wherever it sorted, as if it were a cursor.
  if (o.after !== undefined && !isJobId(o.after)) {
    throw new ValidationError(`--after must be the job id printed after the previous page (job_...), got ${JSON.stringify(sanitize(o.after))}`);
  }
  const backend = requireSqs(await ctx.openBackend(), 'sqs custody');
  // One more than asked for: whether another page follows (said on stderr, as `dlq list` does).
  const got = await backend.ext.listCustody(limit + 1, o.after ?? null, o.queue === undefined ? undefined : backend.sqsQueues.dlqName(o.queue));
  const rows = got.slice(0, limit);
  await printRecords(ctx.out, {
    empty: o.after === undefined ? 'No custody records found.' : 'No more custody records.',
    columns: [
      { header: 'job', get: (r) => r.job_id, keepWhole: true },
      { header: 'kind', get: (r) => r.kind },
      { header: 'from', get: (r) => r.source_queue },
      { header: 'receives', get: (r) => (r.receive_count === null ? '-' : String(r.receive_count)) },
      { header: 'taken', get: (r) => r.taken_at },
      { header: 'message', get: (r) => r.message_id, wide: true },
      { header: 'body', get: (r) => r.body.slice(0, 200), flexible: true },
    ],
  }, rows);
  if (got.length > limit) ctx.note(`More custody records: add --after ${rows[rows.length - 1]!.job_id}`);
}

export interface RepublishOptions {
  queue?: string;
  job?: string[];
  olderThan?: string;
  dryRun?: boolean;
  yes?: boolean;
}

interface RepublishRow {
  job_id: string;
  state: string;
  class: string;
  updated_at: string;
  result: string;
}

/**
 * `agentq sqs republish`: waiting jobs whose SQS message was lost (SQS restarted empty, a queue
 * purged or deleted and made again) are stuck: the store says they were published, so nothing
 * publishes them again. This gives each selected job a new message through the outbox; the store
 * forgets the old one first, so a stale message that does still exist is deleted as a duplicate
 * when received (the job runs once). Plan first (--dry-run prints it and changes nothing), then
 * confirm (--yes in scripts).
 */
export async function republish(o: RepublishOptions, ctx: CommandContext): Promise<void> {
  if (!o.dryRun) ctx.assertMutable('sqs republish');
  const queue = checkQueueName(o.queue ?? ctx.defaultQueue());
  const ids = o.job ?? [];
  for (const id of ids) if (!isJobId(id)) throw new ValidationError(`--job must be a job id (job_...), got ${JSON.stringify(sanitize(id))}`);
  const olderThanMs = o.olderThan === undefined ? undefined : parseDuration(o.olderThan, '--older-than');
  const backend = requireSqs(await ctx.openBackend(), 'sqs republish');
  const cutoff = olderThanMs === undefined ? undefined : backend.ext.now - olderThanMs;

  // The plan: the waiting jobs of the queue (or those named), last changed before the cutoff.
  const plan: RepublishRow[] = [];
  const skipped: RepublishRow[] = [];
  const consider = (j: Job) => {
    const row = { job_id: j.job_id, state: j.state, class: j.class, updated_at: j.updated_at, result: 'republish' };
    if (j.queue !== queue) skipped.push({ ...row, result: `skip: in queue ${j.queue}` });
    else if (j.state === 'running' && j.lease !== null && Date.parse(j.lease.expires_at) > backend.ext.now) skipped.push({ ...row, result: 'skip: running, its lease is live' });
    else if (j.state !== 'queued' && j.state !== 'scheduled' && j.state !== 'running') skipped.push({ ...row, result: `skip: ${j.state}, not waiting` });
    else if (cutoff !== undefined && Date.parse(j.updated_at) > cutoff) skipped.push({ ...row, result: 'skip: newer than --older-than' });
    else plan.push(row);
  };
  if (ids.length > 0) {
    for (const id of [...new Set(ids)]) {
      const j = await backend.get(id);
      if (j) consider(j);
      else skipped.push({ job_id: id, state: '-', class: '-', updated_at: '-', result: 'skip: no such job' });
    }
  } else {
    let cursor: string | null = null;
    do {
      // running too: a job whose lease ran out (its worker gone) waits for its message to come back
      const page = await backend.list({ queue, states: ['queued', 'scheduled', 'running'] }, { limit: MAX_PAGE_LIMIT, cursor });
      for (const j of page.items) if (j.state !== 'running' || j.lease === null || Date.parse(j.lease.expires_at) <= backend.ext.now) consider(j);
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  const show = async (rows: RepublishRow[]) =>
    printRecords(ctx.out, {
      empty: `No waiting job of ${sanitize(queue)} matched.`,
      columns: [
        { header: 'job', get: (r) => r.job_id, keepWhole: true },
        { header: 'state', get: (r) => r.state },
        { header: 'class', get: (r) => r.class },
        { header: 'updated', get: (r) => r.updated_at },
        { header: 'result', get: (r) => r.result, flexible: true },
      ],
    }, rows);
  const what = `${plan.length} waiting job(s) of ${sanitize(queue)}`;
  if (o.dryRun) {
    if (isMachineFormat(ctx.out.format)) printObject(ctx.out, { queue, dry_run: true, jobs: [...plan, ...skipped] });
    else await show([...plan, ...skipped]);
    ctx.note(`dry run: would give ${what} a new SQS message; nothing changed`);
    return;
  }
  if (plan.length === 0) {
    if (isMachineFormat(ctx.out.format)) printObject(ctx.out, { queue, dry_run: false, republished: 0, published: 0, jobs: skipped });
    else if (skipped.length > 0) await show(skipped);
    ctx.note(`nothing to republish: no waiting job of ${sanitize(queue)} matched`);
    return;
  }
  ctx.note(
    `This gives ${what} a new SQS message each. The store forgets each job's current message first: if that message still ` +
      'exists it is deleted as a duplicate when received, so each job runs once.',
  );
  await ctx.confirm(`Republish ${what}?`, { yes: o.yes });

  const rows: RepublishRow[] = [];
  const failed: RelayResult['failed'] = [];
  let published = 0;
  // In parts: a publish round is bounded, and what a part commits is the relay's if a later part fails.
  for (let i = 0; i < plan.length; i += 500) {
    const part = plan.slice(i, i + 500);
    const r = await backend.republish(part.map((p) => p.job_id));
    const fails = new Map(r.relay.failed.map((f) => [f.job_id, f]));
    published += r.relay.published;
    failed.push(...r.relay.failed);
    r.outcomes.forEach((out, k) => {
      const f = fails.get(out.job_id);
      const result =
        out.result === 'republished' ? (f ? 'in outbox: publish failed' : 'republished') :
        out.result === 'pending' ? 'skip: waiting in the outbox already' :
        out.result === 'unknown' ? 'skip: no such job' : `skip: ${out.state ?? '-'}, not waiting`;
      rows.push({ ...part[k]!, state: out.state ?? part[k]!.state, result });
    });
  }
  const republished = rows.filter((r) => r.result === 'republished' || r.result.startsWith('in outbox')).length;
  if (isMachineFormat(ctx.out.format)) printObject(ctx.out, { queue, dry_run: false, republished, published, failed: failed.length, jobs: [...rows, ...skipped] });
  else await show([...rows, ...skipped]);
  ctx.note(`republished ${republished} of ${plan.length}: ${published} published to SQS, ${failed.length} waiting in the outbox`);
  // why, as `outbox relay` says it
  for (const f of failed.slice(0, 10)) ctx.note(`failed: ${f.job_id}: ${sanitize(f.error)}`);
  if (failed.length > 0) throw relayFailure(failed);
}
