/**
 * The redrive of DLQ entries that have not changed since their plan, done in
 * bulk inside SQLite: one UPDATE rewrites every such job's columns and its
 * document (`json_set`, in C), one INSERT ... SELECT writes their `redriven`
 * events. The JavaScript path (`SqliteRuns.applyOne`) parses each document,
 * edits it and serialises it again; for an unchanged entry that is pure
 * overhead — it was parsed and schema-checked by the plan a moment ago —
 * and it was most of a redrive's CPU.
 *
 * What makes an entry eligible (anything else takes the JavaScript path):
 * - it is still `dead` and its document is text;
 * - its row was last written before the plan read the DLQ (`updated_at` <
 *   the run's `plannedAt`): every save bumps it, so the document is the one
 *   the plan validated, and the indexed columns, derived from the document on
 *   every write, say what the document says;
 * - the verdict, recomputed from those columns now (expiry, partial,
 *   quarantine), is still `redrive`.
 *
 * The document edit is exactly `applyOne`'s (test/backend/sqlite-bulk-redrive
 * compares the two paths on the same entries), and unknown keys are kept
 * because `json_set` only touches the paths it names. If the UPDATE or the
 * INSERT fails, or touches a different number of rows than expected, `finish`
 * throws; the caller then rolls the batch back and applies it job by job.
 */
import type { LedgerStatus, RunRecord } from '../contract.js';
import type { DlqEntry } from '../../core/schemas.js';
import { DEFAULT_MAX_REDRIVES, verdictFor } from '../../core/verdict.js';
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
  /** 1 when the document is stored as text. */
  doc_ok: number;
}

/**
 * The columns of a batch's jobs. `doc_ok` looks at the document's type only: checking that it
 * parses (`json_valid`) would read every document a second time. A document that stopped parsing
 * without its row's `updated_at` moving (a hand edit) makes `json_set` fail, and the batch is
 * applied again job by job, where `applyOne` reports it as malformed. Read as arrays (better-sqlite3
 * builds row objects property by property, in C++) and made into objects in `readColumnsRows`.
 */
const SELECT_COLUMNS_ROWS = `SELECT id, queue, state, tenant, class, updated_at, run_at, deadline_at, attempt, partial,
  redrive_count, estimated_seconds, attempt_seq, attempt_started_at, typeof(doc) = 'text'
  FROM jobs WHERE id IN (SELECT value FROM json_each(?))`;

type RawColumnsRow = [string, string, string, string, string, number, number, number | null, number, number, number, number | null, number | null, number | null, number];

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
      doc_ok: r[14],
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
  WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'dead' AND updated_at < @plannedAt`;

/** The events, in the batch's order, read from the rows as they are after the UPDATE. */
const EVENTS_SQL = `INSERT INTO events (job_id, queue, tenant, type, at, from_state, to_state, attempt, data)
  SELECT j.id, j.queue, j.tenant, 'redriven', @now, 'dead', 'queued', j.attempt,
    json_object('run_id', @run, 'redrive_count', j.redrive_count)
  FROM json_each(@ids) AS e JOIN jobs AS j ON j.id = e.value ORDER BY e.key`;

type Result = { verdict: string; status: LedgerStatus; detail: string | null };

export class BulkRedrive {
  private readonly ids: string[] = [];
  private readonly plannedAt: number;
  private readonly reset: boolean;
  private readonly extra: number;

  constructor(
    private readonly store: SqliteStore,
    private readonly run: RunRecord,
    private readonly now: number,
  ) {
    this.plannedAt = run.options.plannedAt === undefined ? NaN : Date.parse(run.options.plannedAt);
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
    if (row.state !== 'dead' || row.doc_ok !== 1 || !(row.updated_at < this.plannedAt)) return null;
    const entry = {
      malformed: null,
      deadline_at: row.deadline_at === null ? null : isoAt(row.deadline_at),
      partial: row.partial === 1,
      redrive_count: row.redrive_count,
    } as DlqEntry;
    const { verdict, detail } = verdictFor(entry, {
      action: 'redrive',
      now: checkAt,
      minRemainingMs: this.run.options.minRemainingMs ?? 0,
      includePartial: this.run.options.includePartial ?? false,
      maxRedrives: this.run.options.maxRedrives ?? DEFAULT_MAX_REDRIVES,
    });
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
      plannedAt: this.plannedAt,
    }).changes;
    if (changed !== this.ids.length) throw new Error(`bulk redrive: ${changed} rows changed, ${this.ids.length} expected`);
    this.store.sql(EVENTS_SQL).run({ now: this.now, run: this.run.run_id, ids });
  }
}
