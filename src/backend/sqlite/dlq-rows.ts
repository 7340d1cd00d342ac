/**
 * The light DLQ listing (`dlqRows`): the same filters and keyset paging as
 * `dlqList`, read from the indexed columns only. The job document is never
 * handed to JavaScript: SQLite checks that it is JSON (`json_valid`, in C)
 * and that its job_id and queue are the row's (`json_extract`, in C), and
 * nothing else of it leaves the database, so a page costs no JSON parse in
 * JavaScript, no schema check and no garbage the size of a job.
 */
import { isDeadReason } from '../../core/model.js';
import { DLQ_ROW_MESSAGE_CHARS, type DlqFilter, type DlqRow, type Page, type PageRequest } from '../contract.js';
import { dlqWhere, inRange } from './dlq.js';
import { checkPage, type SqliteStore } from './store.js';

/**
 * The fallbacks are those of `rowToDlqEntry` for a record whose document
 * does not parse (the columns are then all there is), so a row and its full
 * entry always agree. `substr` counts characters (code points), as the
 * contract's message limit does. `json_valid` sees a BLOB as JSONB, so a
 * document stored as bytes is checked as text. A document that is JSON but
 * names another job id or queue (copied by hand from another record) is
 * malformed as its full entry is (`checkDlqDoc`); `json_extract` runs only on
 * valid JSON (it raises an error on anything else), and `IS` compares a
 * missing field as unequal rather than NULL.
 */
const SELECT_ROWS = `SELECT id, queue, tenant, workflow, coalesce(dead_reason, 'permanent'), coalesce(error_code, 'UNKNOWN'),
  substr(coalesce(error_message, ''), 1, ${DLQ_ROW_MESSAGE_CHARS}), attempt, max_attempts,
  coalesce(dead_at, CASE WHEN json_valid(CAST(doc AS TEXT))
    THEN CAST(round((julianday(json_extract(CAST(doc AS TEXT), '$.dead.dead_at')) - 2440587.5) * 86400000) AS INTEGER) END, 0),
  dead_at IS NULL,
  deadline_at, partial, redrive_count,
  CASE WHEN json_valid(CAST(doc AS TEXT))
    THEN json_extract(CAST(doc AS TEXT), '$.job_id') IS id AND json_extract(CAST(doc AS TEXT), '$.queue') IS queue
    ELSE 0 END
  FROM jobs WHERE`;

type RawRow = [
  id: string,
  queue: string,
  tenant: string,
  workflow: string,
  reason: string,
  code: string,
  message: string,
  attempt: number,
  maxAttempts: number,
  /** The column, else (another writer left it NULL) the document's time of death, else 0: as rowToDlqEntry. */
  deadAt: number,
  /** 1: the dead_at column is NULL. */
  timeless: number,
  deadlineAt: number | null,
  partial: number,
  redriveCount: number,
  /** 1: valid JSON naming this row's job id and queue. */
  isOwnJson: number,
];

export function dlqRows(store: SqliteStore, filter: DlqFilter, page: PageRequest): Page<DlqRow> {
  checkPage(page.limit);
  const ranged = filter.since !== undefined || filter.until !== undefined;
  const { sql, params } = dlqWhere(filter, store.clock.now(), ranged);
  let where = sql;
  if (page.cursor) {
    where += ' AND id > @cursor';
    params.cursor = page.cursor;
  }
  // Arrays, not objects: no property lookups by column name for every row.
  const raw = store.sql(`${SELECT_ROWS} ${where} ORDER BY id LIMIT @pageLimit`).raw(true).all({ ...params, pageLimit: page.limit + 1 }) as RawRow[];
  const more = raw.length > page.limit;
  const n = more ? page.limit : raw.length;
  const items: DlqRow[] = [];
  for (let i = 0; i < n; i++) {
    const r = raw[i]!;
    // (a row with no dead_at column is in a since/until range by the time above, as dlqList judges it)
    if (r[10] === 1 && ranged && !inRange(r[9], filter)) continue;
    items.push({
      job_id: r[0],
      queue: r[1],
      tenant_id: r[2],
      workflow: r[3],
      reason: isDeadReason(r[4]) ? r[4] : 'permanent', // as rowToDlqEntry: a column with unknown text is not shown
      error_code: r[5],
      error_message: r[6],
      attempts: r[7],
      max_attempts: r[8],
      dead_at_ms: r[9],
      deadline_at_ms: r[11],
      partial: r[12] === 1,
      redrive_count: r[13],
      malformed: r[14] !== 1,
    });
  }
  return { items, next_cursor: more ? raw[n - 1]![0] : null };
}
