/**
 * Reading the DLQ: filters in SQL over the indexed columns, keyset paging by
 * job id, and entries that do not parse returned as malformed rather than
 * thrown (see `rowToDlqEntry`).
 */
import type { DlqEntry } from '../../core/schemas.js';
import type { DlqFilter, Page, PageRequest } from '../contract.js';
import { docBytes, rowToDlqEntry, type JobRow } from './codec.js';
import { checkPage, type SqliteStore } from './store.js';

/**
 * `withTimeless`: a dead row whose dead_at column is NULL (only another writer leaves one) is
 * matched by since/until too, for the caller to judge by the time its entry gives (dlqList):
 * the SQL range alone never found it, so `dlq check --max-age` passed over it for ever.
 */
export function dlqWhere(filter: DlqFilter, now: number, withTimeless = false): { sql: string; params: Record<string, unknown> } {
  const orTimeless = withTimeless ? ' OR dead_at IS NULL' : '';
  const where = [`state = 'dead'`];
  const params: Record<string, unknown> = {};
  if (filter.queue !== undefined) {
    where.push('queue = @queue');
    params.queue = filter.queue;
  }
  if (filter.tenant !== undefined) {
    where.push('tenant = @tenant');
    params.tenant = filter.tenant;
  }
  if (filter.workflow !== undefined) {
    where.push('workflow = @workflow');
    params.workflow = filter.workflow;
  }
  if (filter.errorCodes !== undefined && filter.errorCodes.length > 0) {
    const names = filter.errorCodes.map((c, i) => {
      params[`code${i}`] = c;
      return `@code${i}`;
    });
    where.push(`error_code IN (${names.join(', ')})`);
  }
  if (filter.reason !== undefined) {
    where.push('dead_reason = @reason');
    params.reason = filter.reason;
  }
  if (filter.since !== undefined) {
    where.push(`(dead_at >= @since${orTimeless})`);
    params.since = filter.since;
  }
  if (filter.until !== undefined) {
    where.push(`(dead_at < @until${orTimeless})`);
    params.until = filter.until;
  }
  if (filter.minAttempts !== undefined) {
    where.push('attempt >= @minAttempts');
    params.minAttempts = filter.minAttempts;
  }
  if (filter.maxAttempts !== undefined) {
    where.push('attempt <= @maxAttempts');
    params.maxAttempts = filter.maxAttempts;
  }
  if (filter.expired !== undefined) {
    // The same rule as core/verdict isExpiredAt: expired when at most minRemaining is left.
    params.now = filter.now ?? now;
    params.minRemaining = filter.minRemainingMs ?? 0;
    where.push(filter.expired ? 'deadline_at IS NOT NULL AND deadline_at - @now <= @minRemaining' : '(deadline_at IS NULL OR deadline_at - @now > @minRemaining)');
  }
  if (filter.partial !== undefined) {
    where.push('partial = @partial');
    params.partial = filter.partial ? 1 : 0;
  }
  if (filter.grep !== undefined && filter.grep !== '') {
    // instr on lower-cased text: a plain substring, no LIKE wildcards to escape.
    params.grep = filter.grep.toLowerCase();
    where.push(
      `(instr(lower(coalesce(error_code, '')), @grep) > 0 OR instr(lower(coalesce(error_message, '')), @grep) > 0
        OR instr(lower(workflow), @grep) > 0 OR instr(lower(tenant), @grep) > 0 OR instr(lower(id), @grep) > 0)`,
    );
  }
  return { sql: where.join(' AND '), params };
}

export function dlqList(store: SqliteStore, filter: DlqFilter, page: PageRequest): Page<DlqEntry> {
  checkPage(page.limit);
  const ranged = filter.since !== undefined || filter.until !== undefined;
  const { sql, params } = dlqWhere(filter, store.clock.now(), ranged);
  let where = sql;
  if (page.cursor) {
    where += ' AND id > @cursor';
    params.cursor = page.cursor;
  }
  const raw = store.sql(`SELECT ${ROW_COLUMNS} FROM jobs WHERE ${where} ORDER BY id LIMIT @pageLimit`).raw(true).all({ ...params, pageLimit: page.limit + 1 }) as RawJobRow[];
  const more = raw.length > page.limit;
  const n = more ? page.limit : raw.length;
  const items: DlqEntry[] = [];
  for (let i = 0; i < n; i++) {
    const row = toJobRow(raw[i]!);
    const entry = rowToDlqEntry(row);
    // A row with no dead_at column: in range by the time its entry gives (its document's, or none:
    // the epoch, before any since and any until), as a Redis entry is.
    if (row.dead_at === null && ranged && !inRange(Date.parse(entry.dead_at), filter)) continue;
    items.push(entry);
  }
  // (a page a timeless row was judged out of may be short: the cursor is the last row looked at)
  return { items, next_cursor: more ? raw[n - 1]![0] : null };
}

/** Whether a time of death (ms) is in the filter's since/until range. */
export function inRange(ms: number, f: DlqFilter): boolean {
  return (f.since === undefined || ms >= f.since) && (f.until === undefined || ms < f.until);
}

/**
 * The columns of a `JobRow`, read as arrays and made into objects here: better-sqlite3 builds a row
 * object property by property in C++, which cost about half of a DLQ page's read (a plan walks every
 * entry it judges); a JavaScript object literal of a fixed shape costs next to nothing.
 */
const ROW_COLUMNS = `id, queue, state, tenant, class, workflow, created_at, updated_at, run_at, deadline_at, attempt, max_attempts,
  fence, dead_at, dead_reason, error_code, error_message, worker_version, partial, redrive_count, estimated_seconds,
  attempt_seq, attempt_started_at, doc`;

type RawJobRow = [
  string, string, string, string, string, string, number, number, number, number | null, number, number,
  number, number | null, string | null, string | null, string | null, string | null, number, number, number | null,
  number | null, number | null, string | Buffer,
];

function toJobRow(r: RawJobRow): JobRow {
  return {
    id: r[0], queue: r[1], state: r[2], tenant: r[3], class: r[4], workflow: r[5], created_at: r[6], updated_at: r[7],
    run_at: r[8], deadline_at: r[9], attempt: r[10], max_attempts: r[11], fence: r[12], dead_at: r[13], dead_reason: r[14],
    error_code: r[15], error_message: r[16], worker_version: r[17], partial: r[18], redrive_count: r[19],
    estimated_seconds: r[20], attempt_seq: r[21], attempt_started_at: r[22], doc: r[23],
  };
}

export function dlqGet(store: SqliteStore, jobId: string): DlqEntry | null {
  const row = store.row(jobId);
  return row && row.state === 'dead' ? rowToDlqEntry(row) : null;
}

export function dlqRaw(store: SqliteStore, jobId: string): Uint8Array | null {
  const row = store.row(jobId);
  return row && row.state === 'dead' ? docBytes(row.doc) : null;
}
