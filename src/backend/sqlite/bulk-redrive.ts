/**
 * The redrive of DLQ entries done in bulk inside SQLite: one UPDATE rewrites
 * every such job's columns and its document (`json_set`, in C), one INSERT ...
 * SELECT writes their `redriven` events. The JavaScript path
 * (`SqliteRuns.applyOne`) parses each document, edits it, serialises it again
 * and writes each row on its own; that was most of a redrive's CPU.
 *
 * What makes an entry eligible (anything else takes the JavaScript path):
 * - it is still `dead` and its document is text;
 * - its document passes the same check as `dlq list` and `dlq show` (parse and
 *   schema, in `take`, inside the apply's write transaction, so the document
 *   checked is the one moved): a document damaged since the plan, by any
 *   writer, is `skip:malformed` and left in place. (An update stamp cannot
 *   stand in for this check: a write that agentq did not make does not bump
 *   it.);
 * - its indexed columns say what its document says (queue, tenant, class,
 *   attempt, deadline, partial, redrive count): the UPDATE computes from both;
 * - the verdict, recomputed from the document now (died after the plan,
 *   expiry, partial, quarantine), is still `redrive`.
 *
 * The document edit is exactly `applyOne`'s (test/backend/sqlite-bulk-redrive
 * compares the two paths on the same entries), and unknown keys are kept
 * because `json_set` only touches the paths it names. If the UPDATE or the
 * INSERT fails, or touches a different number of rows than expected, `finish`
 * throws; the caller then rolls the batch back and applies it job by job.
 */
import type { LedgerStatus, RunRecord } from '../contract.js';
import type { DlqEntry, Job } from '../../core/schemas.js';
import { isPartial } from '../../core/states.js';
import { runVerdictOptions, verdictFor } from '../../core/verdict.js';
import { checkDlqDoc, msOrNull } from './codec.js';
import { isoAt, type SqliteStore } from './store.js';

/** A job row as `applyBatch` reads it: the columns, not the document. */
export interface ColumnsRow {
  id: string;
  queue: string;
  state: string;
  tenant: string;
  class: string;
  updated_at: number;
  run_at: number;
  deadline_at: number | null;
  attempt: number;
  partial: number;
  redrive_count: number;
  estimated_seconds: number | null;
  attempt_seq: number | null;
  attempt_started_at: number | null;
  dead_at: number | null;
  /** The document (text as written; a BLOB when something else stored it). */
  doc: string | Buffer;
}

/**
 * The columns and document of a batch's jobs. Read as arrays (better-sqlite3 builds row objects
 * property by property, in C++) and made into objects in `readColumnsRows`.
 */
const SELECT_COLUMNS_ROWS = `SELECT id, queue, state, tenant, class, updated_at, run_at, deadline_at, attempt, partial,
  redrive_count, estimated_seconds, attempt_seq, attempt_started_at, dead_at, doc
  FROM jobs WHERE id IN (SELECT value FROM json_each(?))`;

type RawColumnsRow = [string, string, string, string, string, number, number, number | null, number, number, number, number | null, number | null, number | null, number | null, string | Buffer];

/** The rows of the given jobs (a JSON array of ids) that exist, by id. */
export function readColumnsRows(store: SqliteStore, idsJson: string): Map<string, ColumnsRow> {
  const rows = new Map<string, ColumnsRow>();
  for (const r of store.sql(SELECT_COLUMNS_ROWS).raw(true).all(idsJson) as RawColumnsRow[]) {
    rows.set(r[0], {
      id: r[0],
      queue: r[1],
      state: r[2],
      tenant: r[3],
      class: r[4],
      updated_at: r[5],
      run_at: r[6],
      deadline_at: r[7],
      attempt: r[8],
      partial: r[9],
      redrive_count: r[10],
      estimated_seconds: r[11],
      attempt_seq: r[12],
      attempt_started_at: r[13],
      dead_at: r[14],
      doc: r[15],
    });
  }
  return rows;
}

/**
 * Every SET expression reads the row as it was before the UPDATE (SQL
 * semantics), so `attempt + @extra` and `redrive_count + 1` use the old values.
 * The attempts policy: `@reset` 1 sets attempt to 0 and keeps max_attempts;
 * otherwise max_attempts becomes attempt + `@extra` (as `applyOne`).
 */
const UPDATE_SQL = `UPDATE jobs SET state = 'queued', updated_at = @now, run_at = @now,
  attempt = CASE WHEN @reset THEN 0 ELSE attempt END,
  max_attempts = CASE WHEN @reset THEN max_attempts ELSE attempt + @extra END,
  lease_expires_at = NULL, dead_at = NULL, dead_reason = NULL, error_code = NULL, error_message = NULL,
  worker_version = NULL, redrive_count = redrive_count + 1,
  doc = json_set(doc, '$.state', 'queued', '$.updated_at', @iso, '$.run_at', @iso,
    '$.attempt', CASE WHEN @reset THEN 0 ELSE json_extract(doc, '$.attempt') END,
    '$.max_attempts', CASE WHEN @reset THEN json_extract(doc, '$.max_attempts') ELSE json_extract(doc, '$.attempt') + @extra END,
    '$.outcome', NULL, '$.ended_at', NULL, '$.dead', NULL, '$.lease', NULL,
    '$.cancel_requested_at', NULL, '$.cancel_reason', NULL,
    '$.lineage', json_object('redrive_count', json_extract(doc, '$.lineage.redrive_count') + 1, 'redriven_at', @iso, 'redrive_run', @run))
  WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'dead'`;

/** The events, in the batch's order, read from the rows as they are after the UPDATE. */
const EVENTS_SQL = `INSERT INTO events (job_id, queue, tenant, type, at, from_state, to_state, attempt, data)
  SELECT j.id, j.queue, j.tenant, 'redriven', @now, 'dead', 'queued', j.attempt,
    json_object('run_id', @run, 'redrive_count', j.redrive_count)
  FROM json_each(@ids) AS e JOIN jobs AS j ON j.id = e.value ORDER BY e.key`;

type Result = { verdict: string; status: LedgerStatus; detail: string | null };

export class BulkRedrive {
  private readonly ids: string[] = [];
  private readonly reset: boolean;
  private readonly extra: number;

  constructor(
    private readonly store: SqliteStore,
    private readonly run: RunRecord,
    private readonly now: number,
  ) {
    // Without an explicit policy: one more attempt, the CLI's documented default (as applyOne).
    const attempts = run.options.attempts ?? { kind: 'extra', n: 1 };
    this.reset = attempts.kind === 'reset';
    this.extra = attempts.kind === 'extra' ? attempts.n : 0;
  }

  /**
   * Takes the job into the bulk move when it is eligible and still to be redriven, or decides its
   * skip from the columns; null when it needs the JavaScript path (its document must be read).
   */
  take(row: ColumnsRow, checkAt: number): Result | null {
    if (row.state !== 'dead' || typeof row.doc !== 'string') return null;
    const { job, malformed } = checkDlqDoc(row.doc, row.id, row.queue);
    if (job === null) return { verdict: 'skip:malformed', status: 'skipped', detail: malformed };
    if (!columnsAgree(row, job)) return null; // applyOne saves it from its document, columns included
    const entry = {
      malformed: null,
      dead_at: isoAt(row.dead_at ?? Date.parse(job.dead?.dead_at ?? job.updated_at)),
      deadline_at: job.deadline_at,
      partial: isPartial(job),
      redrive_count: job.lineage.redrive_count,
      job, // its attempts and budget: a job whose budget is used up is not redriven
    } as DlqEntry;
    const { verdict, detail } = verdictFor(entry, runVerdictOptions(this.run, checkAt));
    if (verdict !== 'redrive') return { verdict, status: 'skipped', detail };
    this.ids.push(row.id);
    // The counters of the state change, as `SqliteStore.save` records them; a failed batch rolls them back with it.
    this.store.counters.record({
      queue: row.queue,
      cls: row.class,
      tenant: row.tenant,
      from: 'dead',
      to: 'queued',
      estimated: row.estimated_seconds,
      attempt: this.reset ? 0 : row.attempt,
      at: this.now,
      runAtBefore: row.run_at,
      seq: row.attempt_seq,
      startedAt: row.attempt_started_at,
    });
    return { verdict, status: 'moved', detail: null };
  }

  /** Writes the moves and their events; throws when the rows are not exactly the ones taken. */
  finish(): void {
    if (this.ids.length === 0) return;
    const ids = JSON.stringify(this.ids);
    const iso = isoAt(this.now);
    const changed = this.store.sql(UPDATE_SQL).run({
      now: this.now,
      iso,
      reset: this.reset ? 1 : 0,
      extra: this.extra,
      run: this.run.run_id,
      ids,
    }).changes;
    if (changed !== this.ids.length) throw new Error(`bulk redrive: ${changed} rows changed, ${this.ids.length} expected`);
    this.store.sql(EVENTS_SQL).run({ now: this.now, run: this.run.run_id, ids });
  }
}

/** The columns the bulk UPDATE computes from say what the document says (a write outside agentq may have changed one and not the other). */
function columnsAgree(row: ColumnsRow, job: Job): boolean {
  return (
    job.job_id === row.id &&
    job.queue === row.queue &&
    job.tenant_id === row.tenant &&
    job.class === row.class &&
    job.attempt === row.attempt &&
    job.lineage.redrive_count === row.redrive_count &&
    msOrNull(job.deadline_at) === row.deadline_at &&
    (isPartial(job) ? 1 : 0) === row.partial
  );
}
