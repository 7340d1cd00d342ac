/**
 * Where to start reading a capped event stream for the events from a time T on, so that `tail
 * --since` reads from about T instead of walking the stream (up to events_maxlen entries, 100,000
 * by default) from its start.
 *
 * A stream id is Redis's clock (`XADD … *`, in ms, never going back: after a clock step back the
 * ids run ahead of it); an event's `at` is the writer's clock (the scripts never read TIME). An event
 * can only sit before id T when its writer's clock was ahead of Redis's when it was written, so the
 * read starts SINCE_MARGIN_MS before T, and then makes sure: it looks at the SINCE_CHECK entries
 * just before that point, and while one of them has `at` >= T (a writer further ahead), it starts
 * again that writer's lead (and the margin) further back. What it could still miss is an event of a
 * writer more than the margin ahead of Redis none of whose events lies among those looked at.
 */
import type { Client } from './connection.js';

/** How far a writer's clock may run ahead of Redis's without any event before the start being looked at. */
export const SINCE_MARGIN_MS = 5 * 60_000;
/** How many entries before the start are looked at for an event at or after T. */
export const SINCE_CHECK = 200;

/** The stream id to read from (inclusive) for the events at or after `since`; null: from the stream's start. */
export async function seekSince(client: Client, stream: string, since: number): Promise<string | null> {
  let start = Math.floor(since) - SINCE_MARGIN_MS;
  for (;;) {
    if (start <= 0) return null;
    const before = (await client.xrevrange(stream, `(${start}-0`, '-', 'COUNT', SINCE_CHECK)) as Array<[string, string[]]>;
    if (before.length === 0) return null; // nothing before it: from the start is the same read
    // the furthest lead on Redis's clock of a writer whose event at or after T lies before the start
    let lead = -Infinity;
    for (const [id, fields] of before) {
      const at = stampOf(fields);
      if (at !== null && at >= since) lead = Math.max(lead, at - Number(id.slice(0, id.indexOf('-'))));
    }
    if (lead === -Infinity) return `${start}-0`;
    // (that event's id < start <= T - margin and its at >= T: its lead is over the margin, so this moves back)
    start = Math.floor(since - lead) - SINCE_MARGIN_MS;
  }
}

/** The event's `at` as the scripts write it (epoch ms); null for an entry that does not say. */
function stampOf(fields: string[]): number | null {
  try {
    const at = (JSON.parse(fields[1] ?? '') as { at?: unknown }).at;
    return typeof at === 'number' && Number.isFinite(at) ? at : null;
  } catch {
    return null;
  }
}
