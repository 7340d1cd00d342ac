/**
 * Between rows and the wire model. The job document (JSON of `Job`) is the
 * source of truth; the indexed columns are derived from it on every write so
 * filters run in SQL.
 */
import { toIso } from '../../core/duration.js';
import { MalformedJobError } from '../../core/errors.js';
import { custodyMalformed, isDeadReason, loadedSchemas } from '../../core/model.js';
import type { DlqEntry, Job, JobClass, JobEvent } from '../../core/schemas.js';
import { isPartial } from '../../core/states.js';

export interface JobRow {
  id: string;
  queue: string;
  state: string;
  tenant: string;
  class: string;
  workflow: string;
  created_at: number;
  /** Bumped by every save (the job's updated_at): the DLQ re-check's version stamp. Absent when a query does not select it. */
  updated_at?: number;
  run_at: number;
  deadline_at: number | null;
  attempt: number;
  max_attempts: number;
  fence: number;
  dead_at: number | null;
  dead_reason: string | null;
  error_code: string | null;
  error_message: string | null;
  worker_version: string | null;
  partial: number;
  redrive_count: number;
  estimated_seconds: number | null;
  /** The claim sequence number and start time of the running (or last) attempt: the execution-time sample of its end. */
  attempt_seq: number | null;
  attempt_started_at: number | null;
  doc: string | Buffer;
}

export interface EventRow {
  seq: number;
  job_id: string;
  queue: string;
  tenant: string;
  type: string;
  at: number;
  from_state: string | null;
  to_state: string | null;
  attempt: number;
  data: string | null;
}

export function msOrNull(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso);
}

/** The column values derived from a job, in the order `UPDATE_JOB_SQL` binds them. */
export function jobColumns(job: Job, fence: number) {
  return {
    id: job.job_id,
    state: job.state,
    updated_at: Date.parse(job.updated_at),
    run_at: Date.parse(job.run_at),
    attempt: job.attempt,
    max_attempts: job.max_attempts,
    fence,
    lease_expires_at: job.lease ? Date.parse(job.lease.expires_at) : null,
    dead_at: job.dead ? Date.parse(job.dead.dead_at) : null,
    dead_reason: job.dead?.reason ?? null,
    error_code: job.dead?.error_code ?? null,
    error_message: job.dead?.error_message ?? null,
    worker_version: job.dead?.worker_version ?? null,
    partial: isPartial(job) ? 1 : 0,
    redrive_count: job.lineage.redrive_count,
    // Set by `SqliteStore.save`, which knows whether this save starts an attempt.
    attempt_seq: null as number | null,
    attempt_started_at: null as number | null,
    doc: JSON.stringify(job),
  };
}

export const UPDATE_JOB_SQL = `UPDATE jobs SET state = @state, updated_at = @updated_at, run_at = @run_at, attempt = @attempt,
  max_attempts = @max_attempts, fence = @fence, lease_expires_at = @lease_expires_at, dead_at = @dead_at,
  dead_reason = @dead_reason, error_code = @error_code, error_message = @error_message,
  worker_version = @worker_version, partial = @partial, redrive_count = @redrive_count,
  attempt_seq = @attempt_seq, attempt_started_at = @attempt_started_at, doc = @doc WHERE id = @id`;

export { MalformedJobError };

function docText(doc: string | Buffer): string {
  return typeof doc === 'string' ? doc : doc.toString('utf8');
}

/** The row each parsed job came from, so a save can tell which indexed columns really changed. */
const origins = new WeakMap<Job, Partial<JobRow>>();

/**
 * Parses a stored job; the document is trusted (we wrote it), so no schema check on the hot path.
 * Given `queue` (the row's column: `list` and `get`, which show the job as stored), a document
 * naming another queue is malformed too.
 */
export function rowToJob(row: Pick<JobRow, 'id' | 'doc'>, queue?: string): Job {
  let job: Job;
  try {
    job = JSON.parse(docText(row.doc)) as Job;
  } catch (e) {
    throw new MalformedJobError(row.id, (e as Error).message);
  }
  // One check that costs nothing: a document that is not this job's record. An entry SQS custody
  // kept holds the message body (any JSON, naming any job id and state): `list` showed it as that
  // job, and `inspect`, `cancel` died on it with an internal error.
  if (typeof job !== 'object' || job === null || (job as { job_id?: unknown }).job_id !== row.id) {
    throw new MalformedJobError(row.id, 'its document is not the record of this job (an entry taken into custody from SQS holds the message body)');
  }
  // A document copied by hand from another queue's record: listed under that queue, which no
  // --queue filter (the column's) would match.
  if (queue !== undefined && job.queue !== queue) {
    throw new MalformedJobError(row.id, `the stored job says queue ${JSON.stringify(job.queue)} but it is stored in queue ${queue}`);
  }
  origins.set(job, row);
  return job;
}

/** Columns whose change moves index entries or fires the counter triggers. */
const INDEXED = ['state', 'run_at', 'max_attempts', 'dead_at', 'dead_reason', 'error_code', 'error_message', 'worker_version', 'redrive_count'] as const;

/**
 * True when saving `cols` leaves every indexed or trigger-watched column as it
 * was read: a heartbeat, checkpoint or effect then writes only the document,
 * the fence and the lease expiry, and no index entry or counter is touched.
 */
export function isLightUpdate(job: Job, cols: ReturnType<typeof jobColumns>): boolean {
  const row = origins.get(job);
  if (!row || row.state === undefined) return false;
  return INDEXED.every((k) => row[k] === cols[k]);
}

/**
 * Records the row a job object was parsed from, for a caller about to save it (a bulk action's
 * move): the save then compares against it instead of reading the row again. Not done for every
 * DLQ entry read: a listing saves nothing, and a WeakMap entry per listed job kept each job and its
 * row alive past the young-generation collections (a 200,000-entry `dlq list --all` peaked at
 * 165 MB RSS with it, 115 MB without).
 */
export function trackRow(job: Job, row: Partial<JobRow>): void {
  origins.set(job, row);
}

/** The row a job object was read from (or last saved as), when known and complete enough to say its state. */
export function originOf(job: Job): Partial<JobRow> | undefined {
  const row = origins.get(job);
  return row && row.state !== undefined ? row : undefined;
}

/** After a save, the stored columns are these: later saves of the same object compare against them. */
export function rememberSaved(job: Job, cols: ReturnType<typeof jobColumns>): void {
  origins.set(job, cols as unknown as Partial<JobRow>);
}

export const LIGHT_UPDATE_JOB_SQL = `UPDATE jobs SET updated_at = @updated_at, attempt = @attempt, fence = @fence,
  lease_expires_at = @lease_expires_at, partial = @partial, doc = @doc WHERE id = @id`;

/**
 * A DLQ entry from a row. The document is validated here: a DLQ may hold
 * records from older versions or written by hand, and a bad one must be
 * listed as malformed (and never moved), not crash the listing.
 */
export function rowToDlqEntry(row: JobRow): DlqEntry {
  return checkDlqRow(row).entry;
}

/**
 * A DLQ entry's stored document, parsed and schema-checked: the check `dlq list` and `dlq show` make,
 * and every bulk apply makes again just before it moves a job (an entry may have been damaged since
 * the plan, by a write that agentq did not make). `job` is null exactly when `malformed` is set.
 */
export function checkDlqDoc(doc: string | Buffer, id: string, queue: string): { job: Job | null; raw: Job | null; malformed: string | null } {
  let raw: Job | null = null;
  try {
    raw = JSON.parse(docText(doc)) as Job;
  } catch (e) {
    return { job: null, raw: null, malformed: `the stored job is not valid JSON: ${(e as Error).message}` };
  }
  // zod is loaded by the backend's async DLQ methods (loadSchemas), not on every read path.
  const issues = loadedSchemas().jobIssues(raw);
  if (issues !== null) return { job: null, raw, malformed: `the stored job does not match the schema: ${issues}` };
  if (raw.state !== 'dead') return { job: null, raw, malformed: `the stored job says state ${raw.state} but it is indexed as dead` };
  // A document copied from another entry (or another store) is another job's record: shown as this
  // entry it listed that job's id (a page's cursor too), and a move saved it under that id, so the
  // ledger said moved while this row stayed in the DLQ; under its queue, it moved into another queue.
  if (raw.job_id !== id) return { job: null, raw, malformed: `the stored job is the record of ${JSON.stringify(raw.job_id)}, not of ${id}` };
  if (raw.queue !== queue) return { job: null, raw, malformed: `the stored job says queue ${JSON.stringify(raw.queue)} but it is stored in queue ${queue}` };
  return { job: raw, raw, malformed: null };
}

/**
 * The DLQ entry of a row, plus the stored document itself when it is valid:
 * the document as written (the entry's `job` is that same object; the schema
 * check builds no copy), so a bulk action that moves the job parses it once and
 * keeps every key, including keys a newer version wrote. `job` is null exactly
 * when `entry.malformed` is set.
 */
export function checkDlqRow(row: JobRow): { entry: DlqEntry; job: Job | null } {
  // An SQS custody entry's document is the message body: never a job, and why is custody's finding.
  const custody = custodyMalformed(row.dead_reason, row.error_code, row.error_message);
  const { job, malformed } = custody === null ? checkDlqDoc(row.doc, row.id, row.queue) : { job: null, malformed: custody };
  const dead = job?.dead ?? null;
  const entry: DlqEntry = {
    job_id: row.id,
    queue: row.queue,
    tenant_id: row.tenant,
    workflow: row.workflow,
    class: (['interactive', 'batch', 'maintenance'].includes(row.class) ? row.class : 'batch') as JobClass,
    // (no column and no readable document: no time of death at all, the epoch, as a Redis entry with
    // none: `dlq check --max-age` reports its age as unknown rather than use when it was created)
    dead_at: toIso(row.dead_at ?? (dead ? Date.parse(dead.dead_at) : 0)),
    // The column is all there is when the document is malformed: text that is not a known reason (a foreign writer's) is not shown.
    reason: dead?.reason ?? (isDeadReason(row.dead_reason) ? row.dead_reason : 'permanent'),
    error_code: dead?.error_code ?? row.error_code ?? 'UNKNOWN',
    error_message: dead?.error_message ?? row.error_message ?? '',
    worker_version: dead?.worker_version ?? row.worker_version ?? null,
    attempts: job?.attempt ?? row.attempt,
    max_attempts: job?.max_attempts ?? row.max_attempts,
    deadline_at: job ? job.deadline_at : row.deadline_at === null ? null : toIso(row.deadline_at),
    partial: job ? isPartial(job) : row.partial === 1,
    redrive_count: job?.lineage.redrive_count ?? row.redrive_count,
    malformed,
    job,
  };
  return { entry, job };
}

/** The latest time a Date can hold (8.64e15 ms): `at` past it has no ISO form. */
const MAX_DATE_MS = 8.64e15;

/**
 * An event row as `rowToEvent` reads it, or what is wrong with a row that is not one (written by
 * another program or a hand edit), so that one damaged row is skipped and told of rather than
 * ending every read of the log.
 */
export function decodeEventRow(r: EventRow): JobEvent | { problem: string } {
  if (!Number.isInteger(r.at) || Math.abs(r.at) > MAX_DATE_MS) return { problem: 'its time "at" is not a time in epoch ms' };
  // (`tail -o ndjson` promises its readers that a line of type "gap" is its gap record, never an event)
  if (r.type === 'gap') return { problem: '"gap" is not an event type' };
  try {
    return rowToEvent(r);
  } catch {
    return { problem: 'its data is not JSON' };
  }
}

export function rowToEvent(r: EventRow): JobEvent {
  return {
    type: r.type as JobEvent['type'],
    seq: String(r.seq),
    at: toIso(r.at),
    job_id: r.job_id,
    queue: r.queue,
    tenant_id: r.tenant,
    from_state: r.from_state as JobEvent['from_state'],
    to_state: r.to_state as JobEvent['to_state'],
    attempt: r.attempt,
    data: r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>),
  };
}

export function docBytes(doc: string | Buffer): Uint8Array {
  return typeof doc === 'string' ? new Uint8Array(Buffer.from(doc, 'utf8')) : new Uint8Array(doc);
}
