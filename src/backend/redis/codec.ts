/**
 * From what the scripts return (flat HGETALL arrays, JSON strings, epoch-ms
 * numbers) to the wire model of core/schemas (ISO times, nulls).
 */
import type { AttemptRecord, DlqEntry, Effect, Job, JobEvent } from '../../core/schemas.js';
import type { LedgerItem } from '../contract.js';
import { custodyMalformed, DEAD_REASONS, isDeadReason } from '../../core/model.js';

/**
 * A job's stored parts: its hash (flat, as HGETALL and `snapshot()` in the Lua prelude return it,
 * or as a field map of JOB_FIELDS), its effects (flat) and its attempts (those before the hash's
 * last one, `ar`).
 */
export type Snapshot = [hash: string[] | Record<string, string>, effects: string[], attempts: string[]];

/**
 * The job hash's fields a job is read from (jobFrom, dlqEntryFrom): all but the history kept in
 * the hash (h0 .. h3 and hn, a few hundred bytes each, which only the history script reads).
 * Reads of many jobs (list, DLQ pages, plans) ask for these with HMGET.
 */
export const JOB_FIELDS = [
  'env', 'st', 'att', 'max', 'out', 'upd', 'run', 'end', 'lw', 'fen', 'le', 'cra', 'crr', 'cp', 'err', 'res',
  'dr', 'dat', 'dec', 'dem', 'dwv', 'rat', 'rc', 'rrun', 'cls', 'ten', 'wf', 'nef', 'ar', 'na',
] as const;

/**
 * Whether a job hash's attempts list needs reading: `na` (written with every attempt record, `ar`)
 * is its length; a job never claimed has none; a job stored before `na` existed is read when it
 * has attempts.
 */
export function hasAttemptsList(h: Record<string, string>): boolean {
  if (h.na !== undefined) return h.na !== '0';
  return h.att !== undefined && h.att !== '0';
}

/**
 * The field map of JOB_FIELDS' values by position (an HMGET, or a claim's reply, whose own writes
 * may come as numbers); null when the job hash does not exist (no field at all).
 */
export function jobFieldsFrom(values: Array<string | number | null>): Record<string, string> | null {
  const h: Record<string, string> = {};
  let any = false;
  for (let i = 0; i < JOB_FIELDS.length; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) {
      h[JOB_FIELDS[i]!] = typeof v === 'string' ? v : String(v);
      any = true;
    }
  }
  return any ? h : null;
}

function hashOf(snap: Snapshot): Record<string, string> {
  return Array.isArray(snap[0]) ? flatToMap(snap[0]) : snap[0];
}

/**
 * Epoch ms (as stored) to ISO text. A DLQ page or a plan converts several times per job, most of
 * them in the same minute, so the minute's text ('2026-11-29T22:41:') is kept and only the seconds
 * and milliseconds are written; anything but a whole ms in years 1970-9999 goes through Date.
 */
export function iso(ms: string | number | undefined | null): string | null {
  if (ms === undefined || ms === null || ms === '') return null;
  const n = Number(ms);
  if (!Number.isInteger(n) || n < 0 || n >= MAX_ISO_MS) return new Date(n).toISOString();
  const minute = Math.floor(n / 60_000);
  if (minute !== isoMinute) {
    isoMinute = minute;
    isoPrefix = new Date(minute * 60_000).toISOString().slice(0, 17);
  }
  const rest = n - minute * 60_000;
  const sec = Math.floor(rest / 1000);
  const milli = rest - sec * 1000;
  return `${isoPrefix}${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
/** 10000-01-01T00:00:00Z: from there on, toISOString writes a six-digit year. */
const MAX_ISO_MS = 253_402_300_800_000;
let isoMinute = -1;
let isoPrefix = '';

export function flatToMap(flat: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) o[flat[i]!] = flat[i + 1]!;
  return o;
}

interface StoredAttempt {
  attempt: number;
  worker_id: string;
  worker_version: string | null;
  started_at: number;
  ended_at: number | null;
  outcome: string | null;
  error_code: string | null;
  error_message: string | null;
  usage?: { tokens: number; cost_usd: number } | null;
}

function attemptFrom(raw: string): AttemptRecord {
  const a = JSON.parse(raw) as StoredAttempt;
  return {
    attempt: a.attempt,
    worker_id: a.worker_id,
    worker_version: a.worker_version ?? null,
    started_at: iso(a.started_at)!,
    ended_at: iso(a.ended_at),
    outcome: a.outcome ?? null,
    error_code: a.error_code ?? null,
    error_message: a.error_message ?? null,
    // (records without usage leave the field out, as before it existed)
    ...(a.usage ? { usage: { tokens: Number(a.usage.tokens), cost_usd: Number(a.usage.cost_usd) } } : {}),
  };
}

export function effectFrom(raw: string): Effect {
  const e = JSON.parse(raw) as { key: string; status: 'started' | 'done'; idempotency_key: string; attempt: number; started_at: number; done_at: number | null; result?: unknown };
  return {
    key: e.key,
    status: e.status,
    idempotency_key: e.idempotency_key,
    attempt: e.attempt,
    started_at: iso(e.started_at)!,
    done_at: iso(e.done_at),
    result: e.result ?? null,
  };
}

/** The job hash's counts: whole numbers, as the scripts write them. */
const COUNT_FIELDS = ['att', 'max', 'rc', 'nef', 'na', 'fen'] as const;
/** The job hash's times: epoch ms, as the scripts write them (`iso` turns them into text). */
const TIME_FIELDS = ['upd', 'run', 'end', 'dat', 'rat', 'cra', 'le'] as const;
/** The last ms a Date can hold (+275760-09-13): a later "time" has no ISO text. */
const MAX_DATE_MS = 8.64e15;

/** A stored time (epoch ms, as the scripts write it), or null when the text is not one. */
export function storedTime(v: string | null | undefined): number | null {
  return v !== undefined && v !== null && /^\d{1,16}$/.test(v) && Number(v) <= MAX_DATE_MS ? Number(v) : null;
}

/**
 * The first count or time field of a job hash that is not what the scripts write (a whole number;
 * a time within what a Date holds), or null. A foreign writer's text there (`dat` = "yesterday")
 * made `iso` throw a bare RangeError out of every DLQ read (list, summary, export, show: an
 * internal error) and a count read as NaN (`attempts: null` in JSON), while the apply script
 * skipped the same job as damaged. Such a record is malformed, on every read path alike.
 */
export function damagedField(h: Readonly<Record<string, string | null | undefined>>): string | null {
  for (const f of COUNT_FIELDS) {
    const v = h[f];
    if (v !== undefined && v !== null && !/^\d{1,15}$/.test(v)) return f;
  }
  for (const f of TIME_FIELDS) {
    const v = h[f];
    if (v !== undefined && v !== null && storedTime(v) === null) return f;
  }
  // every write stamps it: without it the job has no updated_at (null where the schema needs a time)
  if (h.upd === undefined || h.upd === null) return 'upd';
  return null;
}

/**
 * The field map read for a job key that holds another type of value than a hash (a foreign write
 * to the key): HMGET on it is refused with WRONGTYPE, which ended every DLQ read of its queue with
 * an internal error. `jobFrom` reads it as a record that cannot be read.
 */
export const NOT_A_HASH: Readonly<Record<string, string>> = Object.freeze({ '\0type': 'not a hash' });

export function isNotAHash(h: Readonly<Record<string, string>>): boolean {
  return h['\0type'] !== undefined;
}

/** Whether a Redis error is WRONGTYPE (a command of one type on a key of another). */
export function isWrongType(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith('WRONGTYPE');
}

/** Throws when the stored record cannot be read as a job (the DLQ reports that as `malformed`). */
export function jobFrom(snap: Snapshot): Job {
  const [, effFlat, atts] = snap;
  const h = hashOf(snap);
  if (isNotAHash(h)) throw new Error('the job key holds another type of value, not a job hash');
  if (h.env === undefined) throw new Error('the job record has no envelope');
  const damaged = damagedField(h);
  if (damaged !== null) throw new Error(`the job record is damaged: its field ${damaged} is not a whole number (${JSON.stringify(h[damaged]!.slice(0, 40))})`);
  // An entry SQS custody kept holds the message body behind this mark: not a job, and not a parse error to show.
  if (h.env.startsWith('sqs-custody:')) throw new Error('it is a message taken into custody from SQS, not a job record (agentq dlq show shows it)');
  const env = JSON.parse(h.env) as Record<string, unknown>;
  if (typeof env.job_id !== 'string' || typeof env.workflow !== 'string') throw new Error('the job envelope lacks job_id or workflow');
  const effects: Effect[] = [];
  for (let i = 1; i < effFlat.length; i += 2) effects.push(effectFrom(effFlat[i]!));
  effects.sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : a.key < b.key ? -1 : 1));
  const state = h.st as Job['state'];
  // The reason is printed as a word (dlq show, the TUI): a foreign writer's text there makes the record unreadable.
  if (h.dr !== undefined && !isDeadReason(h.dr)) throw new Error(`the dead reason ${JSON.stringify(h.dr)} is not one of ${DEAD_REASONS.join(', ')}`);
  return {
    job_id: env.job_id,
    tenant_id: env.tenant_id as string,
    queue: env.queue as string,
    workflow: env.workflow,
    operation: (env.operation as string | null) ?? null,
    class: env.class as Job['class'],
    input: (env.input as string | null) ?? null,
    input_ref: (env.input_ref as string | null) ?? null,
    input_sha256: (env.input_sha256 as string | null) ?? null,
    deadline_at: (env.deadline_at as string | null) ?? null,
    idempotency_key: (env.idempotency_key as string | null) ?? null,
    attempt: Number(h.att ?? 0),
    max_attempts: Number(h.max ?? env.max_attempts ?? 1),
    trace_id: (env.trace_id as string | null) ?? null,
    budget: (env.budget as Job['budget']) ?? null,
    allowed_tools: (env.allowed_tools as string[]) ?? [],
    estimated_seconds: (env.estimated_seconds as number | null) ?? null,
    created_at: env.created_at as string,
    state,
    outcome: (h.out as Job['outcome']) ?? null,
    updated_at: iso(h.upd)!,
    run_at: iso(h.run) ?? (env.created_at as string),
    ended_at: iso(h.end),
    lease: state === 'running' && h.lw !== undefined ? { worker_id: h.lw, fence: Number(h.fen), expires_at: iso(h.le)! } : null,
    cancel_requested_at: iso(h.cra),
    cancel_reason: h.crr ?? null,
    checkpoint: h.cp !== undefined ? (JSON.parse(h.cp) as unknown) : null,
    effects,
    last_error: h.err !== undefined ? (JSON.parse(h.err) as Job['last_error']) : null,
    // the attempts list holds the records before the last one, which is the hash's field ar
    attempts: (h.ar !== undefined ? [...atts, h.ar] : atts).map(attemptFrom),
    result: h.res !== undefined ? (JSON.parse(h.res) as string | null) : null,
    dead:
      h.dr !== undefined
        ? { reason: h.dr as NonNullable<Job['dead']>['reason'], dead_at: iso(h.dat)!, error_code: h.dec ?? '', error_message: h.dem ?? '', worker_version: h.dwv ?? null }
        : null,
    lineage: { redrive_count: Number(h.rc ?? 0), redriven_at: iso(h.rat), redrive_run: h.rrun ?? null },
  };
}

/** A DLQ entry from a stored job; a record that does not parse becomes a `malformed` entry (never moved or deleted in bulk). */
/**
 * `jobFrom` for the record stored under `jobId` in `queue`. An envelope copied from another record
 * (or another store) is another job's: shown as this one it listed that job's id (and made it a
 * page's cursor, and a plan's item), and under its queue it would be redriven into another queue.
 * Throws as `jobFrom` does. (DLQ_ROWS judges rows the same way.)
 */
export function ownJobFrom(jobId: string, queue: string, snap: Snapshot): Job {
  const job = jobFrom(snap);
  if (job.job_id !== jobId) throw new Error(`the job envelope is the record of ${JSON.stringify(job.job_id)}, not of ${jobId}`);
  if (job.queue !== queue) throw new Error(`the job envelope says queue ${JSON.stringify(job.queue)} but it is stored in queue ${queue}`);
  return job;
}

export function dlqEntryFrom(jobId: string, queue: string, snap: Snapshot): DlqEntry {
  try {
    const job = ownJobFrom(jobId, queue, snap);
    return {
      job_id: job.job_id,
      queue: job.queue,
      tenant_id: job.tenant_id,
      workflow: job.workflow,
      class: job.class,
      dead_at: job.dead?.dead_at ?? job.updated_at,
      reason: job.dead?.reason ?? 'permanent',
      error_code: job.dead?.error_code ?? job.last_error?.code ?? '',
      error_message: job.dead?.error_message ?? job.last_error?.message ?? '',
      worker_version: job.dead?.worker_version ?? null,
      attempts: job.attempt,
      max_attempts: job.max_attempts,
      deadline_at: job.deadline_at,
      partial: job.effects.length > 0,
      redrive_count: job.lineage.redrive_count,
      malformed: null,
      job,
    };
  } catch (e) {
    const h = hashOf(snap);
    const cls = h.cls === 'interactive' || h.cls === 'maintenance' ? h.cls : 'batch';
    return {
      job_id: jobId,
      queue,
      tenant_id: h.ten ?? '',
      workflow: h.wf ?? '',
      class: cls,
      // (a damaged time is no time: the fallback of a malformed record must not throw in turn)
      dead_at: iso(storedTime(h.dat) ?? storedTime(h.upd) ?? 0)!,
      // the stored reason when it is a known one (a record the claim set aside: permanent; an SQS
      // backstop's: custody), else permanent, as SQLite shows a malformed entry: custody said an SQS
      // backstop took in an entry it never saw
      reason: isDeadReason(h.dr) ? h.dr : 'permanent',
      error_code: h.dec ?? '',
      error_message: h.dem ?? '',
      worker_version: h.dwv ?? null,
      attempts: Number(h.att ?? 0) || 0,
      max_attempts: Number(h.max ?? 1) || 1,
      deadline_at: null,
      partial: Number(h.nef ?? 0) > 0,
      redrive_count: Number(h.rc ?? 0) || 0,
      // An SQS custody entry (its envelope is the message body, marked): custody's finding, not the parse error of the mark.
      malformed: (h.env?.startsWith('sqs-custody:') ? custodyMalformed(h.dr, h.dec, h.dem) : null) ?? `unreadable job record: ${(e as Error).message}`,
      job: null,
    };
  }
}

/** Why a DLQ member whose job hash is gone is malformed (`missingRecordEntry`, and its light row). */
export const MISSING_RECORD = 'the job record is missing (evicted by Redis, or deleted by something other than agentq): only its place in the DLQ index is left';

/**
 * The DLQ entry of a member of a dead set whose job hash is gone (a Redis that evicts keys, a hand
 * delete). It was left out of every listing while `stats` (and the DLQ alerts) counted it, so the
 * DLQ never read empty and nothing said why; it is a malformed entry, with the fallbacks of a record
 * that cannot be read, and no bulk action touches it.
 */
export function missingRecordEntry(jobId: string, queue: string, deadAtMs: number): DlqEntry {
  return {
    job_id: jobId,
    queue,
    tenant_id: '',
    workflow: '',
    class: 'batch',
    // (when it died, as the DLQ index recorded it: `dlq check --max-age` must not call it 57 years old)
    dead_at: new Date(deadAtMs).toISOString(),
    // (no record, no stored reason: permanent, as SQLite shows a malformed entry without one)
    reason: 'permanent',
    error_code: '',
    error_message: '',
    worker_version: null,
    attempts: 0,
    max_attempts: 1,
    deadline_at: null,
    partial: false,
    redrive_count: 0,
    malformed: `unreadable job record: ${MISSING_RECORD}`,
    job: null,
  };
}

const TIME_KEYS = ['run_at', 'lease_expires_at'] as const;

interface StoredEvent {
  type: JobEvent['type'];
  at: number;
  job_id: string;
  queue: string;
  tenant_id: string;
  from_state: JobEvent['from_state'];
  to_state: JobEvent['to_state'];
  attempt: number;
  data: Record<string, unknown> | null;
}

function eventFrom(seq: string, raw: string): JobEvent {
  const e = JSON.parse(raw) as StoredEvent;
  // cjson encodes an empty Lua table as {} and Lua has no null inside tables: normalise.
  const data = e.data && typeof e.data === 'object' && Object.keys(e.data).length > 0 ? e.data : null;
  // Scripts store times as epoch ms; the wire model has ISO strings.
  if (data) for (const k of TIME_KEYS) if (typeof data[k] === 'number') data[k] = iso(data[k] as number);
  return {
    type: e.type,
    seq,
    at: iso(e.at)!,
    job_id: e.job_id,
    queue: e.queue,
    tenant_id: e.tenant_id,
    from_state: e.from_state ?? null,
    to_state: e.to_state ?? null,
    attempt: e.attempt,
    data,
  };
}

/**
 * An event as `eventFrom` reads it, or what is wrong with an entry that is not one (not JSON, no
 * time, no job: written by another program or edited by hand), so that one damaged entry is
 * skipped and told of instead of ending every read of the stream.
 */
export function decodeEvent(seq: string, raw: string | undefined): JobEvent | { problem: string } {
  let e: unknown;
  try {
    e = JSON.parse(raw ?? '');
  } catch {
    return { problem: 'not JSON' };
  }
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return { problem: 'not a JSON object' };
  const f = e as Record<string, unknown>;
  if (typeof f.at !== 'number' || !Number.isInteger(f.at) || f.at < 0 || f.at >= MAX_ISO_MS) return { problem: 'its time "at" is not a time in epoch ms' };
  if (typeof f.type !== 'string' || typeof f.job_id !== 'string') return { problem: 'no "type" or "job_id" string' };
  // (`tail -o ndjson` promises its readers that a line of type "gap" is its gap record, never an event)
  if (f.type === 'gap') return { problem: '"gap" is not an event type' };
  return eventFrom(seq, raw!);
}

/** Stream ids `ms-seq` in order. */
export function compareSeq(a: string, b: string): number {
  const [am, as] = a.split('-');
  const [bm, bs] = b.split('-');
  const d = Number(am) - Number(bm);
  if (d !== 0) return d < 0 ? -1 : 1;
  const e = Number(as ?? 0) - Number(bs ?? 0);
  return e < 0 ? -1 : e > 0 ? 1 : 0;
}

export function ledgerItemFrom(runId: string, jobId: string, raw: string): LedgerItem {
  const i = JSON.parse(raw) as { verdict: LedgerItem['verdict']; status: LedgerItem['status']; detail: string | null; updated_at: number };
  return { run_id: runId, job_id: jobId, verdict: i.verdict, status: i.status, detail: i.detail ?? null, updated_at: iso(i.updated_at)! };
}
