/**
 * Reading a capped event stream without losing track of what the cap took.
 *
 * Each shard's stream is `XADD MAXLEN ~ events_maxlen`: a reader that falls behind by more than the
 * cap (a slow `tail --follow`, one that lost its connection for a while, a cursor resumed late)
 * finds the events after its position trimmed. XRANGE/XREAD just start at the oldest entry left,
 * so without a check the loss is silent. Redis 7.0 does not record trims in `max-deleted-entry-id`
 * (only XDEL), but nothing deletes events except the head trim, so `entries-added` numbers them:
 * the stream's first entry is number `entries-added - length + 1`. Each read is one pipeline of
 * XINFO STREAM, XRANGE and XINFO STREAM again (a pipeline, not MULTI: a read-only ACL user of
 * `+@read` has no @transaction); when both XINFOs show the same first entry, nothing was trimmed in between and the
 * numbers hold for the entries read. A reader that knows the number of its last entry then counts
 * exactly how many were trimmed before it read them.
 */
import { compareSeq } from './codec.js';
import type { Client } from './connection.js';
import type { EventGap } from '../contract.js';

export type StreamEntry = [string, string[]];

/** Where a reader is in one stream: after `id` (null: before its start), the `n`-th entry ever added (null: unknown). */
export interface StreamPosition {
  id: string | null;
  n: number | null;
  /**
   * With no `id`: read from this id on (inclusive) rather than from the stream's start (`--since`,
   * see since-seek.ts). Where a reading starts, not a position read up to: what the cap trimmed
   * before it is history older than asked for, never a gap.
   */
  floor?: string | undefined;
}

/** Entries trimmed from a stream before they were read (lost: null when the reader's position is not numbered). */
export type StreamGap = Omit<EventGap, 'where' | 'afterSeq' | 'queue' | 'shard' | 'jobId'> & { stream: string; afterSeq: string };

export interface StreamRead {
  entries: StreamEntry[];
  position: StreamPosition;
  gap: StreamGap | null;
}

/** XINFO STREAM's flat reply as fields. */
function info(reply: unknown[]): { length: number; added: number | null; first: string | null; last: string | null } {
  const f = new Map<string, unknown>();
  for (let i = 0; i + 1 < reply.length; i += 2) f.set(String(reply[i]), reply[i + 1]);
  const id = (e: unknown) => (Array.isArray(e) && e.length > 0 ? String(e[0]) : null);
  const added = f.get('entries-added');
  return { length: Number(f.get('length') ?? 0), added: added === undefined ? null : Number(added), first: id(f.get('first-entry')), last: id(f.get('last-entry')) };
}

/** How many times a read is tried again when the stream's head moved during it (a trim meanwhile). */
const HEAD_MOVED_TRIES = 3;

/** Up to `count` entries after `pos`, with the trim gap before them if there is one. */
export async function readAfter(client: Client, stream: string, pos: StreamPosition, count: number): Promise<StreamRead> {
  const from = pos.id !== null ? `(${pos.id}` : (pos.floor ?? '-');
  for (let tries = 1; ; tries++) {
    const replies = (await client.pipeline().xinfo('STREAM', stream).xrange(stream, from, '+', 'COUNT', count).xinfo('STREAM', stream).exec()) ?? [];
    const [rangeErr, rangeReply] = replies[1] ?? [null, []];
    if (rangeErr) throw rangeErr;
    const entries = (rangeReply ?? []) as StreamEntry[];
    const before = infoOf(replies[0]);
    const after = infoOf(replies[2]);
    // (no such key: nothing was ever written there, so nothing was trimmed)
    if (before === null || after === null) return { entries, position: advance(pos, entries, null), gap: null };
    // The same head before and after the range: nothing was trimmed in between, so the numbers
    // of the first XINFO hold for the range (appends meanwhile only add after it).
    if (before.first === after.first) return numbered(stream, pos, entries, before);
    if (tries >= HEAD_MOVED_TRIES) {
      // Trimmed under a reader that many times: the numbers are not known, the loss is.
      const gap = pos.id !== null && after.first !== null && compareSeq(after.first, pos.id) > 0 && entries.length > 0 && compareSeq(entries[0]![0], after.first) >= 0;
      return { entries, position: advance(pos, entries, null), gap: gap ? { stream, afterSeq: pos.id!, resumedSeq: entries[0]![0], lost: null } : null };
    }
  }
}

/** The id after which XREAD waits for new entries at `pos`: the entry before its floor when it has one. */
export function waitAfter(pos: StreamPosition): string {
  if (pos.id !== null) return pos.id;
  if (pos.floor === undefined) return '0-0';
  // (the largest id below the floor `<ms>-<seq>`: XREAD takes only an exclusive id)
  const [ms, seq] = pos.floor.split('-').map(BigInt) as [bigint, bigint];
  if (seq > 0n) return `${ms}-${seq - 1n}`;
  return ms > 0n ? `${ms - 1n}-18446744073709551615` : '0-0';
}

/** XINFO STREAM's reply as fields; null when it failed (no such key). */
function infoOf(r: [Error | null, unknown] | undefined): StreamInfo | null {
  if (!r || r[0] || !Array.isArray(r[1])) return null;
  return info(r[1]);
}

type StreamInfo = ReturnType<typeof info>;

function numbered(stream: string, pos: StreamPosition, entries: StreamEntry[], s: StreamInfo): StreamRead {
  // the number of the stream's first entry (no XDEL: only the head is ever removed)
  const firstN = s.added !== null && s.first !== null ? s.added - s.length + 1 : null;
  let gap: StreamGap | null = null;
  let startN: number | null = null; // the number of entries[0]
  if (entries.length > 0 && s.first !== null && entries[0]![0] === s.first) {
    startN = firstN;
    // The reader's own entry is gone too: what lay between it and the first one left was trimmed.
    if (pos.id !== null && compareSeq(s.first, pos.id) > 0) {
      // (numbered below the reader's own: the stream was made anew since, a Redis restarted without
      // its data or flushed, so how many went with the old one is not known)
      const counted = pos.n !== null && firstN !== null ? firstN - pos.n - 1 : null;
      const lost = counted !== null && counted >= 0 ? counted : null;
      if (lost === null || lost > 0) gap = { stream, afterSeq: pos.id, resumedSeq: s.first, lost };
    }
  } else if (entries.length > 0 && pos.n !== null) {
    startN = pos.n + 1; // the head is at or before the reader's position: nothing after it was trimmed
  } else if (entries.length > 0 && s.added !== null && s.last === entries.at(-1)![0]) {
    startN = s.added - entries.length + 1; // read up to the end: the last is the newest ever added
  }
  const position = advance(pos, entries, startN);
  // Caught up at the end: the position is the newest entry, numbered.
  if (entries.length === 0 && pos.id !== null && s.last === pos.id && s.added !== null) position.n = s.added;
  return { entries, position, gap };
}

function advance(pos: StreamPosition, entries: StreamEntry[], startN: number | null): StreamPosition {
  if (entries.length === 0) return { ...pos };
  return { id: entries.at(-1)![0], n: startN !== null ? startN + entries.length - 1 : null };
}
