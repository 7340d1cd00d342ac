/**
 * The light DLQ listing (`dlqRows`) on Redis: the same entries, filters and
 * paging as `dlqList`, without reading a job's effects hash, attempts list or
 * envelope onto the client. Per page: one ZRANGEBYLEX per shard (the dead
 * set, in job-id order), then the `DLQ_ROWS` script on at most
 * `ROWS_PER_CALL` job hashes per call, so no call holds Redis for long however
 * large the DLQ (the script is called here by its SHA, apart from the
 * transition scripts: it only reads).
 *
 * Every field is derived as `dlqEntryFrom` derives it from the full record,
 * including the fallbacks for a record that cannot be read (the stored
 * reason when it is a known one, else `permanent`; no deadline), so a row and its entry agree; the conformance
 * suite checks it.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { DeadReason } from '../../core/schemas.js';
import { isDeadReason } from '../../core/model.js';
import { ValidationError } from '../../core/errors.js';
import { DLQ_ROW_MESSAGE_CHARS, MAX_PAGE_LIMIT, type DlqFilter, type DlqRow, type Page, type PageRequest } from '../contract.js';
import { damagedField, missingRecordEntry, storedTime } from './codec.js';
import { DLQ_ROWS } from './lua/dlq-rows.js';

type Client = Redis | Cluster;

/** One shard's dead set and where its job hashes live. */
export interface DeadSetSource {
  queue: string;
  /** The shard's key prefix, `{aq:<queue>:<shard>}:`. */
  prefix: string;
}

/** Job hashes per script call: each is one HMGET and, for the readable ones, one small JSON decode. */
const ROWS_PER_CALL = 100;
/** As `dlqList`: how many ids a filtered page looks at before it returns a short page with a cursor. */
const SCAN_FACTOR = 10;
/** A code point is at most 4 bytes of UTF-8: this many bytes always hold the first `DLQ_ROW_MESSAGE_CHARS` whole. */
const MESSAGE_BYTES = DLQ_ROW_MESSAGE_CHARS * 4;

type Tuple = [
  state: string | null,
  readable: '1' | '0',
  jobId: string | null,
  queue: string | null,
  tenant: string | null,
  workflow: string | null,
  deadline: string | null,
  envMax: string | null,
  att: string | null,
  max: string | null,
  dr: string | null,
  dat: string | null,
  upd: string | null,
  dec: string | null,
  dem: string | null,
  err: string | null,
  nef: string | null,
  rc: string | null,
  ten: string | null,
  wf: string | null,
];

const DLQ_ROWS_SHA = createHash('sha1').update(DLQ_ROWS).digest('hex');

/**
 * EVALSHA, and EVAL (which also caches the script) when Redis answers NOSCRIPT (a fresh or
 * restarted server). Plain commands, not `defineCommand`: ioredis builds each auto-pipeline
 * with the commands defined when the pipeline was created, and a command defined later in the
 * same tick (the first dlqRows after another script call) broke the whole batch
 * ("results[i] is not iterable", thrown out of ioredis: the TUI died on a fresh server).
 */
async function dlqRowsScript(client: Client, keys: string[], messageBytes: number): Promise<Tuple[]> {
  try {
    return (await client.evalsha(DLQ_ROWS_SHA, keys.length, ...keys, messageBytes)) as Tuple[];
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
    return (await client.eval(DLQ_ROWS, keys.length, ...keys, messageBytes)) as Tuple[];
  }
}

/** The first `DLQ_ROW_MESSAGE_CHARS` code points (not UTF-16 units: a row never ends in half a surrogate pair). */
export function messageStart(text: string): string {
  if (text.length <= DLQ_ROW_MESSAGE_CHARS) return text;
  let out = '';
  let n = 0;
  for (const ch of text) {
    if (n++ === DLQ_ROW_MESSAGE_CHARS) break;
    out += ch;
  }
  return out;
}

/** The row of one tuple, or null when the job left meanwhile. The message is returned whole (the filter's grep reads it). */
function rowOf(id: string, queue: string, t: Tuple): { row: DlqRow; message: string } | null {
  if (t[0] === null) return null;
  const hasDead = t[10] !== null;
  const num = (v: string | null, d: number) => (v === null ? d : Number(v));
  const ms = (v: string | null) => (v === null || v === '' ? null : Number(v));
  // A record whose dead reason is not one of the known words is unreadable to `jobFrom` too (a malformed row).
  // (readable as dlqEntryFrom reads it: an envelope naming another job or queue is not this entry's)
  const damaged = damagedField({ att: t[8], max: t[9], dat: t[11], upd: t[12], nef: t[16], rc: t[17] }) !== null;
  if (t[1] === '1' && t[2] === id && t[3] === queue && !damaged && (!hasDead || isDeadReason(t[10]))) {
    // As jobFrom + dlqEntryFrom: envelope fields, then the hash; `dead` exists when the hash has `dr`.
    const lastError = !hasDead && t[15] !== null ? (JSON.parse(t[15]) as { code?: string; message?: string }) : null;
    const message = hasDead ? (t[14] ?? '') : (lastError?.message ?? '');
    return {
      message,
      row: {
        job_id: t[2]!,
        queue: t[3]!,
        tenant_id: t[4]!,
        workflow: t[5]!,
        reason: (hasDead ? t[10] : 'permanent') as DeadReason,
        error_code: hasDead ? (t[13] ?? '') : (lastError?.code ?? ''),
        error_message: message,
        attempts: num(t[8], 0),
        max_attempts: t[9] !== null ? Number(t[9]) : num(t[7], 1),
        dead_at_ms: (hasDead ? (ms(t[11]) ?? ms(t[12])) : ms(t[12])) ?? 0,
        deadline_at_ms: t[6] === null ? null : Date.parse(t[6]),
        partial: num(t[16], 0) > 0,
        redrive_count: num(t[17], 0),
        malformed: false,
      },
    };
  }
  const message = t[14] ?? '';
  // (a damaged time is no time, as in dlqEntryFrom's fallback: storedTime; fetchRows then takes
  // the time from the DLQ index, as dlqList does)
  return {
    message,
    row: {
      job_id: id,
      queue,
      tenant_id: t[18] ?? '',
      workflow: t[19] ?? '',
      // (as dlqEntryFrom's fallback: the stored reason when known, else permanent)
      reason: isDeadReason(t[10]) ? t[10] : 'permanent',
      error_code: t[13] ?? '',
      error_message: message,
      attempts: num(t[8], 0) || 0,
      max_attempts: num(t[9], 1) || 1,
      dead_at_ms: storedTime(t[11]) ?? storedTime(t[12]) ?? 0,
      deadline_at_ms: null,
      partial: num(t[16], 0) > 0,
      redrive_count: num(t[17], 0) || 0,
      malformed: true,
    },
  };
}

/** `DlqFilter` on a row, as `dlqPredicate` on an entry (the grep reads the whole message). */
function rowPredicate(f: DlqFilter, now: number): (r: DlqRow, message: string) => boolean {
  const grep = f.grep?.toLowerCase();
  const codes = f.errorCodes && f.errorCodes.length > 0 ? new Set(f.errorCodes) : null;
  return (r, message) => {
    if (f.tenant && r.tenant_id !== f.tenant) return false;
    if (f.workflow && r.workflow !== f.workflow) return false;
    if (codes && !codes.has(r.error_code)) return false;
    if (f.reason && r.reason !== f.reason) return false;
    if (f.since !== undefined && r.dead_at_ms < f.since) return false;
    if (f.until !== undefined && r.dead_at_ms >= f.until) return false;
    if (f.minAttempts !== undefined && r.attempts < f.minAttempts) return false;
    if (f.maxAttempts !== undefined && r.attempts > f.maxAttempts) return false;
    // core/verdict isExpiredAt, on epoch ms.
    if (f.expired !== undefined && (r.deadline_at_ms !== null && r.deadline_at_ms - now <= (f.minRemainingMs ?? 0)) !== f.expired) return false;
    if (f.partial !== undefined && r.partial !== f.partial) return false;
    if (grep) {
      const hay = [r.error_code, message, r.workflow, r.tenant_id, r.job_id].join('\n').toLowerCase();
      if (!hay.includes(grep)) return false;
    }
    return true;
  };
}

/** Rows of some dead ids of one shard, filtered, in id order. */
async function fetchRows(client: Client, src: DeadSetSource, ids: string[], keep: (r: DlqRow, m: string) => boolean, messageBytes: number): Promise<DlqRow[]> {
  const calls: Array<Promise<Tuple[]>> = [];
  for (let i = 0; i < ids.length; i += ROWS_PER_CALL) {
    calls.push(dlqRowsScript(client, ids.slice(i, i + ROWS_PER_CALL).map((id) => `${src.prefix}j:${id}`), messageBytes));
  }
  const tuples = (await Promise.all(calls)).flat();
  const read = tuples.map((t, i) => rowOf(ids[i]!, src.queue, t));
  // A malformed row whose record gives no time of death (a key of another type, damaged times)
  // died when the DLQ index says, as dlqList's entry does: the TUI listed it as dead in 1970.
  // Read before the filter, so since/until judge the same time.
  const timeless = read.filter((g): g is NonNullable<typeof g> => g !== null && g.row.malformed && g.row.dead_at_ms <= 0);
  if (timeless.length > 0) {
    const at = await stillDead(client, src.prefix, timeless.map((g) => g.row.job_id));
    for (const g of timeless) g.row.dead_at_ms = at.get(g.row.job_id) ?? 0;
  }
  const out: DlqRow[] = [];
  for (const got of read) {
    if (got === null || !keep(got.row, got.message)) continue;
    got.row.error_message = messageStart(got.message);
    out.push(got.row);
  }
  // A member whose job hash is gone is a malformed row, as it is a malformed entry (missingRecordEntry).
  const gone = await stillDead(client, src.prefix, ids.filter((_, i) => tuples[i]![0] === null));
  for (const [id, deadAt] of gone) {
    const e = missingRecordEntry(id, src.queue, deadAt);
    const row: DlqRow = {
      job_id: id,
      queue: src.queue,
      tenant_id: e.tenant_id,
      workflow: e.workflow,
      reason: e.reason,
      error_code: e.error_code,
      error_message: e.error_message,
      attempts: e.attempts,
      max_attempts: e.max_attempts,
      dead_at_ms: Date.parse(e.dead_at),
      deadline_at_ms: null,
      partial: false,
      redrive_count: 0,
      malformed: true,
    };
    if (keep(row, e.error_message)) out.push(row);
  }
  if (gone.size > 0) out.sort((a, b) => (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
  return out;
}

/**
 * One page of rows over the dead sets of `sources` (every shard of the
 * queues in view), merged in job-id order; the cursor is the last id looked
 * at, as for `dlqList`.
 */
export async function redisDlqRows(client: Client, sources: readonly DeadSetSource[], filter: DlqFilter, now: number, page: PageRequest): Promise<Page<DlqRow>> {
  const limit = page.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) throw new ValidationError(`page limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${limit}`);
  const keep = rowPredicate(filter, filter.now ?? now);
  // The grep must see the whole message; otherwise a row needs only its start.
  const messageBytes = filter.grep ? 0 : MESSAGE_BYTES;
  const items: DlqRow[] = [];
  let after = page.cursor ?? null;
  let scanned = 0;
  const budget = limit * SCAN_FACTOR;
  for (;;) {
    const want = limit - items.length;
    const min = after !== null ? `(${after}` : '-';
    // One more than wanted from each source: if the merge has more than `want`, there is another page.
    const batches = await Promise.all(sources.map((s) => client.zrangebylex(`${s.prefix}s:dead`, min, '+', 'LIMIT', 0, want + 1)));
    const merged: Array<{ id: string; src: number }> = [];
    batches.forEach((b, i) => {
      for (const id of b) merged.push({ id, src: i });
    });
    merged.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const taken = merged.slice(0, want);
    const more = merged.length > want;
    if (taken.length === 0) return { items, next_cursor: null };
    const bySrc = new Map<number, string[]>();
    for (const t of taken) {
      const ids = bySrc.get(t.src);
      if (ids === undefined) bySrc.set(t.src, [t.id]);
      else ids.push(t.id);
    }
    const fetched = (await Promise.all([...bySrc].map(([src, ids]) => fetchRows(client, sources[src]!, ids, keep, messageBytes)))).flat();
    if (bySrc.size > 1) fetched.sort((a, b) => (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
    for (const r of fetched) items.push(r);
    after = taken[taken.length - 1]!.id;
    scanned += taken.length;
    if (!more) return { items, next_cursor: null };
    if (items.length >= limit || scanned >= budget) return { items, next_cursor: after };
  }
}

/**
 * Those of `ids` still in the shard's dead set, each with when it died as the DLQ index keeps it
 * (0 when it does not): read after their job hashes were found gone, so an id a purge removed
 * (hash and membership at once) between the two reads is not reported.
 */
export async function stillDead(client: Client, prefix: string, ids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  const [dead, at] = await Promise.all([
    Promise.all(ids.map((id) => client.zscore(`${prefix}s:dead`, id))),
    Promise.all(ids.map((id) => client.zscore(`${prefix}dlq`, id))),
  ]);
  ids.forEach((id, i) => {
    if (dead[i] !== null) out.set(id, Number(at[i] ?? 0) || 0);
  });
  return out;
}
