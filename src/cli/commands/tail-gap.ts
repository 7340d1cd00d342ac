/**
 * How `tail` tells of events the store dropped before they were read (a capped Redis stream trimmed
 * past a follower that fell behind, a job's history kept to its last 200): a warning on stderr for
 * the person watching, and in `-o json`/`-o ndjson` a gap record in line with the events, so a
 * program reading the stream sees the hole where it is, not only a human.
 */
import type { DamagedEvent, EventGap } from '../../backend/contract.js';

/**
 * The gap record: `{"type": "gap", "gap": {...}}`. `type` is what every line of `tail -o ndjson`
 * is told apart by, and `gap` is no event type (a unit test keeps it so); everything else is inside `gap`, so a consumer that
 * reads an event's fields (`.seq`, `.job_id`, `.at`, `.queue`) reads null from it, never a job's.
 */
export interface GapRecord {
  type: 'gap';
  gap: {
    /** The queue and shard whose events they were (of a job's history: the job's). */
    queue: string;
    shard: number;
    /** The job whose earliest events were trimmed from its history; null for a queue's stream. */
    job_id: string | null;
    /** The last seq read before the hole; null: the hole is at the start of the job's history. */
    after_seq: string | null;
    /** The seq of the first event after the hole: the record comes just before that event. */
    resumed_seq: string;
    /** How many events; null when the store cannot tell (resumed after an outage): some may be missing. */
    lost: number | null;
  };
}

export function gapRecord(g: EventGap): GapRecord {
  return { type: 'gap', gap: { queue: g.queue, shard: g.shard, job_id: g.jobId, after_seq: g.afterSeq, resumed_seq: g.resumedSeq, lost: g.lost } };
}

/** The warning for events lost to the store's cap: how many (or that some may be), where, between which seqs. */
export function gapWarning(g: EventGap): string {
  if (g.afterSeq === null) return `tail: the earliest events of ${g.where} were trimmed from the store (Redis keeps a job's last 200 events); its history here starts at seq ${g.resumedSeq}`;
  const what = g.lost === null ? `events of ${g.where} after seq ${g.afterSeq} were trimmed from the store before they were read; some may be missing` : `${g.lost} event${g.lost === 1 ? '' : 's'} of ${g.where} after seq ${g.afterSeq} were trimmed from the store before they were read`;
  return `tail: ${what} (the stream keeps the last events_maxlen per shard); going on from seq ${g.resumedSeq}`;
}

/** The warning for a stored event that cannot be read (`tail`, `inspect`): skipped, where it is said. */
export function damagedWarning(command: string, d: DamagedEvent): string {
  return `${command}: event ${d.seq} of ${d.where} is damaged (${d.problem}): skipped`;
}
