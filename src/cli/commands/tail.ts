/**
 * `agentq tail`: job events in order. `-o ndjson` gives one JSON object per
 * line with a `type` field (the `JobEvent` schema). `--follow` keeps waiting
 * for new events until Ctrl-C, which ends it normally (exit 0): following
 * until interrupted is what the command is for.
 *
 * Like tail(1) and `kubectl logs --tail`, a tail of a queue (or of the store)
 * without `--since` starts with the last DEFAULT_EVENTS events, not the whole
 * history; `--job` shows the job's whole history, and `--events N|all` says
 * how many either way. `--job J --follow` ends (exit 0) once J reaches a
 * terminal state, as `gh run watch` does.
 */
import { unknownQueueNote } from '../unknown-queue.js';
import { formatDuration, parsePastTime } from '../../core/duration.js';
import { EVENT_TYPES, JOB_STATES } from '../../core/model.js';
import { JOB_ID_PREFIX } from '../../core/ids.js';
import type { JobEvent } from '../../core/schemas.js';
import type { Backend, EventGap, EventPosition, EventQuery } from '../../backend/contract.js';
import { damagedWarning, gapRecord, gapWarning, type GapRecord } from './tail-gap.js';
import { AgentqError, ExitCode, NotFoundError, ValidationError } from '../../core/errors.js';
import { abortableSleep, unlessAborted } from '../../util/sleep.js';
import { isTerminal } from '../../core/states.js';
import type { CommandContext } from '../context.js';
import { TABLE_TIME_WIDTH, type Column } from '../output/columns.js';
import { RecordStream } from '../output/format.js';
import { checkJobId, checkQueueName } from '../parse.js';

export interface TailOptions {
  queue?: string;
  job?: string;
  since?: string;
  follow?: boolean;
  events?: string;
}

/** Events shown from the history of a queue (or the store) when no `--since` says where to start. */
export const DEFAULT_EVENTS = 20;

/** While following, how long to wait before reading again from a store that failed with a transient error. */
export const FOLLOW_RETRY_MS = 1000;

/** How many of the past events to show: a number, everything (null), by `--events` or the defaults above. */
export function historyLimit(o: Pick<TailOptions, 'events' | 'since' | 'job'>): number | null {
  if (o.events !== undefined) {
    if (o.events.trim().toLowerCase() === 'all') return null;
    const n = Number(o.events);
    if (!/^\s*\d+\s*$/.test(o.events) || !Number.isSafeInteger(n)) throw new ValidationError(`--events must be a whole number of events or "all", got ${JSON.stringify(o.events)}`);
    return n;
  }
  // --since says where to start, and a job's history is bounded by the job: both show everything.
  return o.since !== undefined || o.job !== undefined ? null : DEFAULT_EVENTS;
}

const TYPE_WIDTH = Math.max(...EVENT_TYPES.map((t) => t.length));
const STATE_WIDTH = Math.max(...JOB_STATES.map((s) => s.length));

// On a narrow terminal (`-o table`) the time stays whole, event types and states are cut last
// (`cancel…` would be cancelled or cancel_requested), and the `dropWhenNarrow` columns go first.
/** A job id: `job_` and a ULID. */
const JOB_ID_WIDTH = JOB_ID_PREFIX.length + 26;

export const EVENT_COLUMNS: readonly Column<JobEvent>[] = [
  // (streamed: the longest event type and state fit whatever the first rows were, and the time and
  // the job id stay whole also when the first page was empty — a `--follow` of a quiet queue — and
  // only the header set the widths: they were cut to `2…` and `jo…`)
  { header: 'at', get: (e) => ({ time: e.at }), keepWhole: true, minWidth: TABLE_TIME_WIDTH },
  { header: 'type', get: (e) => e.type, minWidth: TYPE_WIDTH, shrinkLast: true },
  { header: 'job', get: (e) => e.job_id, keepWhole: true, minWidth: JOB_ID_WIDTH },
  { header: 'queue', get: (e) => e.queue, minWidth: 12, dropWhenNarrow: 1 },
  { header: 'tenant', get: (e) => e.tenant_id, wide: true, minWidth: 12 },
  { header: 'from', get: (e) => e.from_state, minWidth: STATE_WIDTH, shrinkLast: true, dropWhenNarrow: 3 },
  { header: 'to', get: (e) => (e.to_state ? { text: e.to_state, style: 'state' } : null), minWidth: STATE_WIDTH, shrinkLast: true },
  { header: 'attempt', get: (e) => e.attempt, dropWhenNarrow: 2 },
  // (a Redis stream id, `1796076348705-0`, whole also when the first page set no width for it)
  { header: 'seq', get: (e) => e.seq, wide: true, minWidth: '1796076348705-0'.length },
];

/**
 * What a tail writes: events, and gap records where the store dropped some before they were read.
 * (wrapped, not told apart by `type`: a stored event of another program may say "gap")
 */
type Shown = { event: JobEvent } | { gap: GapRecord };

export async function run(o: TailOptions, ctx: CommandContext): Promise<void> {
  const limit = historyLimit(o);
  // Events the store dropped before they were read (a capped Redis stream trimmed past a follower
  // that fell behind, or past where following resumed after an outage): said on stderr, and in
  // json/ndjson by a gap record just before the first event after them (tail-gap.ts).
  // Every reading of this tail shares one position, so the next (following after the history,
  // again after an outage) goes on from where each of the store's streams was, not from one seq.
  const position: EventPosition = { streams: new Map() };
  // (told before the event after the hole is yielded: taken with that event)
  const gaps: EventGap[] = [];
  const onGap = (g: EventGap) => {
    ctx.warn(gapWarning(g));
    gaps.push(g);
  };
  const withGaps = (event: JobEvent): Shown[] => [...gaps.splice(0).map((g) => ({ gap: gapRecord(g) })), { event }];
  const query: EventQuery = { follow: o.follow === true, signal: ctx.signal, onGap, onDamaged: (d) => ctx.warn(damagedWarning('tail', d)), position };
  if (o.queue !== undefined) query.queue = checkQueueName(o.queue);
  if (o.job !== undefined) query.jobId = checkJobId(o.job);
  if (o.since !== undefined) query.since = parsePastTime(o.since, ctx.clock.now(), '--since');
  const backend = await ctx.openBackend();
  // An unknown job is exit 5, as in `inspect`: an empty stream (or a --follow waiting forever) would
  // look like a job with nothing happening.
  if (query.jobId !== undefined) {
    const state = await jobState(backend, query.jobId);
    if (state === 'unknown') throw new NotFoundError(`job ${query.jobId} not found in ${backend.description}`);
    // Already ended: its history is all there is to follow.
    if (state !== null && isTerminal(state)) query.follow = false;
  }
  const stream = new RecordStream(ctx.out, { columns: EVENT_COLUMNS, empty: 'No events match this selection.' });
  // Events a page at a time, each gap record in its place among them.
  const show = async (items: readonly Shown[]) => {
    let run: JobEvent[] = [];
    for (const item of items) {
      if ('event' in item) run.push(item.event);
      else {
        if (run.length > 0) await stream.page(run);
        run = [];
        await stream.extra(item.gap);
      }
    }
    if (run.length > 0) await stream.page(run);
  };
  const jobEnded = (e: JobEvent) => query.jobId !== undefined && e.job_id === query.jobId && e.to_state !== null && isTerminal(e.to_state);
  // Nothing shown of a queue the store never saw (a typo): said once, before following it.
  const noteIfUnknown = async (following: boolean) => {
    if (query.jobId !== undefined) return;
    const note = await unknownQueueNote(backend, query.queue);
    if (note) ctx.note(following ? `${note}; waiting for its events (Ctrl-C to stop)` : note);
  };
  let releaseStops = (): void => undefined;
  try {
    let from = query;
    if (limit !== null) {
      // The last `limit` events of the history (the backend reads them from its newest end), then
      // new ones after the newest there is: with `--events 0 --follow` that one is read only to
      // mark where following starts (not shown), so a reconnect after an outage reads on from it
      // rather than from the end as it is then. Nothing matched yet: from the start.
      const marker = limit === 0 && query.follow;
      const last: JobEvent[] = [];
      const shown: Shown[] = [];
      for await (const e of backend.events({ ...query, follow: false, last: marker ? 1 : limit })) {
        last.push(e);
        shown.push(...withGaps(e));
      }
      if (!marker) await show(shown);
      const newest = last.at(-1);
      if (newest === undefined) await noteIfUnknown(query.follow === true);
      if (!query.follow || (!marker && newest !== undefined && jobEnded(newest))) return stream.end();
      from = newest !== undefined ? { ...query, since: undefined, afterSeq: newest.seq } : query;
    }
    if (!query.follow) {
      let shown = 0;
      for await (const event of backend.events(from)) {
        await show(withGaps(event));
        shown++;
      }
      if (shown === 0) await noteIfUnknown(false);
      return stream.end();
    }
    // Following rides out a transient outage (exit 75: Redis restarting or failing over, a held
    // SQLite lock), as `stats --watch` does: one warning, then the events are read again from
    // after the last one shown, every FOLLOW_RETRY_MS, until the store answers or Ctrl-C.
    let lost = false;
    // A table that waits for events shows its header at once: the command is running, not stuck.
    await stream.header();
    // Following ends on the first Ctrl-C, normally (exit 0); the reads before it end at once.
    releaseStops = ctx.handleStops();
    for (;;) {
      try {
        for await (const event of untilStopped(backend.events(from), ctx.signal)) {
          if (lost) {
            ctx.note('tail: the store answers again; following on from the last event shown');
            lost = false;
          }
          await show(withGaps(event));
          from = { ...query, since: undefined, last: undefined, afterSeq: event.seq };
          if (ctx.signal.aborted || jobEnded(event)) return stream.end();
        }
        break;
      } catch (e) {
        if (ctx.signal.aborted || !(e instanceof AgentqError) || e.exitCode !== ExitCode.retryLater) throw e;
        if (!lost) {
          lost = true;
          ctx.warn(`tail: lost the store, retrying every ${formatDuration(FOLLOW_RETRY_MS)} until it answers (Ctrl-C to stop): ${e.message}`);
        }
        await abortableSleep(FOLLOW_RETRY_MS, ctx.signal);
        if (ctx.signal.aborted) break;
      }
    }
  } catch (e) {
    // Ctrl-C while following: the backend may end the iteration with an AbortError; that is the normal end.
    if (!ctx.signal.aborted) throw e;
  } finally {
    releaseStops();
  }
  stream.end();
}

/**
 * `events` until `signal` aborts, also while a read is unanswered: Ctrl-C during the retry's read
 * of a store that had gone away (a Redis refusing connections: ioredis retries a call about 10 s;
 * a frozen one: 15 s) was seen only once that read failed. The read left behind is not waited for.
 */
async function* untilStopped<T>(events: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = events[Symbol.asyncIterator]();
  let unanswered = false;
  try {
    for (;;) {
      const r = await unlessAborted(it.next(), signal, null);
      if (r === null) {
        unanswered = true;
        return;
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    // (an async generator's return() waits for its pending next(): not waited for then)
    if (unanswered) void it.return?.()?.catch(() => undefined);
    else await it.return?.();
  }
}

/**
 * The job's state; null when it exists, or did, but its state cannot be read: a record that cannot
 * be read still has events to show, and the events of a job purged from the DLQ may outlive its
 * record. 'unknown' when there is no trace of it.
 */
async function jobState(backend: Backend, id: string): Promise<JobEvent['to_state'] | 'unknown'> {
  try {
    const job = await backend.get(id);
    if (job !== null) return job.state;
  } catch {
    return null; // a malformed record: the job is there (inspect says what is wrong with it)
  }
  for await (const _ of backend.events({ jobId: id, follow: false })) return null;
  return 'unknown';
}
