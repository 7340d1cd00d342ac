/**
 * `agentq tail`: job events in order. `-o ndjson` gives one JSON object per
 * line with a `type` field (the `JobEvent` schema). `--follow` keeps waiting
 * for new events until Ctrl-C, which ends it normally (exit 0): following
 * until interrupted is what the command is for.
 */
import { parsePastTime } from '../../core/duration.js';
import { EVENT_TYPES, JOB_STATES } from '../../core/model.js';
import type { JobEvent } from '../../core/schemas.js';
import type { Backend, EventQuery } from '../../backend/contract.js';
import { NotFoundError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';
import type { Column } from '../output/columns.js';
import { RecordStream } from '../output/format.js';
import { checkJobId, checkQueueName } from '../parse.js';

export interface TailOptions {
  queue?: string;
  job?: string;
  since?: string;
  follow?: boolean;
}

const TYPE_WIDTH = Math.max(...EVENT_TYPES.map((t) => t.length));
const STATE_WIDTH = Math.max(...JOB_STATES.map((s) => s.length));

export const EVENT_COLUMNS: readonly Column<JobEvent>[] = [
  { header: 'at', get: (e) => ({ time: e.at }) },
  // (streamed: the longest event type and state fit whatever the first rows were)
  { header: 'type', get: (e) => e.type, minWidth: TYPE_WIDTH },
  { header: 'job', get: (e) => e.job_id, keepWhole: true },
  { header: 'queue', get: (e) => e.queue, minWidth: 12 },
  { header: 'tenant', get: (e) => e.tenant_id, wide: true, minWidth: 12 },
  { header: 'from', get: (e) => e.from_state, minWidth: STATE_WIDTH },
  { header: 'to', get: (e) => (e.to_state ? { text: e.to_state, style: 'state' } : null), minWidth: STATE_WIDTH },
  { header: 'attempt', get: (e) => e.attempt },
  { header: 'seq', get: (e) => e.seq, wide: true },
];

export async function run(o: TailOptions, ctx: CommandContext): Promise<void> {
  const query: EventQuery = { follow: o.follow === true, signal: ctx.signal };
  if (o.queue !== undefined) query.queue = checkQueueName(o.queue);
  if (o.job !== undefined) query.jobId = checkJobId(o.job);
  if (o.since !== undefined) query.since = parsePastTime(o.since, ctx.clock.now(), '--since');
  const backend = await ctx.openBackend();
  // An unknown job is exit 5, as in `inspect`: an empty stream (or a --follow waiting forever) would
  // look like a job with nothing happening.
  if (query.jobId !== undefined && !(await jobKnown(backend, query.jobId))) {
    throw new NotFoundError(`job ${query.jobId} not found in ${backend.description}`);
  }
  const stream = new RecordStream(ctx.out, { columns: EVENT_COLUMNS });
  try {
    for await (const event of backend.events(query)) {
      await stream.page([event]);
      if (ctx.signal.aborted) break;
    }
  } catch (e) {
    // Ctrl-C while following: the backend may end the iteration with an AbortError; that is the normal end.
    if (!ctx.signal.aborted) throw e;
  }
  stream.end();
}

/**
 * The job exists, or did: a record that cannot be read still has events to show, and the events of
 * a job purged from the DLQ may outlive its record.
 */
async function jobKnown(backend: Backend, id: string): Promise<boolean> {
  try {
    if ((await backend.get(id)) !== null) return true;
  } catch {
    return true; // a malformed record: the job is there (inspect says what is wrong with it)
  }
  for await (const _ of backend.events({ jobId: id, follow: false })) return true;
  return false;
}
