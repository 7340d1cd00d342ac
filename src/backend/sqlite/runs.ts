/**
 * Bulk DLQ runs: the audit record, the frozen plan as a ledger, the per-queue
 * lock, and `applyRunItems`, where safe redrive happens. Each job's move and
 * its ledger update commit together, and only an item still `planned` is
 * touched, so a run killed at any point resumes with nothing doubled.
 */
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { LEDGER_STATUSES, sameLockHolder } from '../contract.js';
import type { ApplyRequest, LedgerItem, LedgerStatus, LockHolder, LockResult, Page, PageRequest, PlanVerdict, RunRecord } from '../contract.js';
import { runVerdictOptions, verdictFor } from '../../core/verdict.js';
import { pruneCheck, runPruneRule } from '../../core/prune.js';
import { isPartial, outcomeFor, assertTransition } from '../../core/states.js';
import { BulkRedrive, readColumnsRows } from './bulk-redrive.js';
import { checkDlqRow, trackRow, type JobRow } from './codec.js';
import { checkPage, isoAt, moveTo, type SqliteStore } from './store.js';

interface LedgerRow {
  run_id: string;
  job_id: string;
  verdict: string;
  status: string;
  detail: string | null;
  updated_at: number;
}

/** A job's move threw during a batch applied without per-job savepoints: apply the batch again per job. */
export class ItemThrew extends Error {
  constructor(readonly inner: unknown) {
    super('a job of the batch threw');
  }
}

/** A job row's end time (epoch ms) from its document; null when it has none or it does not read. */
function endedAtOf(row: JobRow): number | null {
  try {
    const ended = (JSON.parse(typeof row.doc === 'string' ? row.doc : row.doc.toString('utf8')) as { ended_at?: unknown }).ended_at;
    const ms = typeof ended === 'string' ? Date.parse(ended) : NaN;
    return Number.isFinite(ms) ? ms : null;
  } catch {
    return null;
  }
}

function toItem(r: LedgerRow): LedgerItem {
  return {
    run_id: r.run_id,
    job_id: r.job_id,
    verdict: r.verdict as PlanVerdict,
    status: r.status as LedgerStatus,
    detail: r.detail,
    updated_at: isoAt(r.updated_at),
  };
}

const ACTION_VERDICTS = new Set(['redrive', 'purge', 'expire', 'prune']);

/** Plan items per ledger INSERT when a run is created. */
const LEDGER_CHUNK = 2000;
/** Plan items per write transaction when a run is created (createRun). */
const LEDGER_TXN_ITEMS = 2 * LEDGER_CHUNK;

function emptyCounts(): Record<LedgerStatus, number> {
  return Object.fromEntries(LEDGER_STATUSES.map((s) => [s, 0])) as Record<LedgerStatus, number>;
}

export class SqliteRuns {
  constructor(private readonly store: SqliteStore) {}

  private readRun(runId: string): RunRecord | null {
    const row = this.store.sql('SELECT doc FROM runs WHERE run_id = ?').get(runId) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as RunRecord) : null;
  }

  private writeRun(run: RunRecord): void {
    this.store.sql('UPDATE runs SET doc = ? WHERE run_id = ?').run(JSON.stringify(run), run.run_id);
  }

  /**
   * A run's record and its ledger. A ledger of up to LEDGER_TXN_ITEMS items goes in with its record
   * in one transaction. A larger one (a prune of 200,000 finished jobs: one item per job) took
   * seconds in one transaction, all that time holding the store's write lock: every worker's
   * claim and completion waited (past its busy timeout, "database is locked", on a ledger of
   * millions). It is written in transactions of LEDGER_TXN_ITEMS, the lock left free between them
   * for as long as each held it, under a record that says `creating` until the last item is in
   * (as on Redis: a run killed half way is `incomplete`, never resumed having moved nothing).
   */
  async createRun(run: RunRecord, items: Array<{ job_id: string; verdict: PlanVerdict; detail: string | null }>): Promise<void> {
    const counts = emptyCounts();
    const now = this.store.clock.now();
    // Items go in as JSON arrays, LEDGER_CHUNK per statement, unpacked by SQLite: one INSERT per
    // item was most of a large plan's ledger write.
    const insertItems = (slice: typeof items) => {
      const insert = this.store.sql(`INSERT INTO ledger (run_id, job_id, verdict, status, detail, updated_at)
        SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, ? FROM json_each(?)`);
      for (let i = 0; i < slice.length; i += LEDGER_CHUNK) {
        const rows: Array<[string, PlanVerdict, LedgerStatus, string | null]> = [];
        for (const item of slice.slice(i, i + LEDGER_CHUNK)) {
          // The plan decides: an action verdict is planned, anything else is skipped now with its reason.
          const status: LedgerStatus = ACTION_VERDICTS.has(item.verdict) ? 'planned' : 'skipped';
          rows.push([item.job_id, item.verdict, status, item.detail]);
          counts[status] += 1;
        }
        const inserted = insert.run(run.run_id, now, JSON.stringify(rows)).changes;
        if (inserted !== rows.length) throw new Error(`internal: ${inserted} ledger rows written for ${rows.length} plan items`);
      }
    };
    const insertRun = (record: RunRecord) => {
      if (this.readRun(run.run_id)) throw new ValidationError(`run ${run.run_id} already exists`);
      this.store.sql('INSERT INTO runs (run_id, queue, doc) VALUES (?, ?, ?)').run(run.run_id, run.queue, JSON.stringify(record));
    };
    if (items.length <= LEDGER_TXN_ITEMS) {
      this.store.write(() => {
        insertItems(items);
        insertRun({ ...run, counts });
      });
      return;
    }
    this.store.write(() => insertRun({ ...run, status: 'creating', counts: emptyCounts() }));
    for (let i = 0; i < items.length; i += LEDGER_TXN_ITEMS) {
      const started = performance.now();
      this.store.write(() => insertItems(items.slice(i, i + LEDGER_TXN_ITEMS)));
      // (a writer waiting on the lock polls it, at most 100 ms apart: free half the time, it gets in)
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, performance.now() - started)));
    }
    this.store.write(() => this.writeRun({ ...run, counts }));
  }

  getRun(runId: string): RunRecord | null {
    return this.readRun(runId);
  }

  listRuns(filter: { queue?: string }, page: PageRequest): Page<RunRecord> {
    checkPage(page.limit);
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.queue !== undefined) {
      where.push('queue = ?');
      params.push(filter.queue);
    }
    if (page.cursor) {
      where.push('run_id < ?');
      params.push(page.cursor);
    }
    // Newest first: run ids are ULIDs, so id order is creation order.
    const rows = this.store.sql(`SELECT run_id, doc FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY run_id DESC LIMIT ?`)
      .all(...params, page.limit + 1) as Array<{ run_id: string; doc: string }>;
    const more = rows.length > page.limit;
    const items = (more ? rows.slice(0, page.limit) : rows).map((r) => JSON.parse(r.doc) as RunRecord);
    return { items, next_cursor: more ? items[items.length - 1]!.run_id : null };
  }

  updateRun(runId: string, patch: Partial<Pick<RunRecord, 'status' | 'updated_at'>>): RunRecord {
    return this.store.write(() => {
      const run = this.readRun(runId);
      if (!run) throw new NotFoundError(`run ${runId} not found`, 'RUN_NOT_FOUND');
      if (patch.status !== undefined) run.status = patch.status;
      run.updated_at = patch.updated_at ?? isoAt(this.store.clock.now());
      this.writeRun(run);
      return run;
    });
  }

  ledger(runId: string, page: PageRequest, status?: LedgerStatus): Page<LedgerItem> {
    checkPage(page.limit);
    const where = ['run_id = ?'];
    const params: unknown[] = [runId];
    if (status !== undefined) {
      where.push('status = ?');
      params.push(status);
    }
    if (page.cursor) {
      where.push('job_id > ?');
      params.push(page.cursor);
    }
    const rows = this.store.sql(`SELECT * FROM ledger WHERE ${where.join(' AND ')} ORDER BY job_id LIMIT ?`).all(...params, page.limit + 1) as LedgerRow[];
    // An empty page is either an empty ledger or no run at all; only the second is RUN_NOT_FOUND (as on Redis).
    if (rows.length === 0 && !this.readRun(runId)) throw new NotFoundError(`run ${runId} not found`, 'RUN_NOT_FOUND');
    const more = rows.length > page.limit;
    const items = (more ? rows.slice(0, page.limit) : rows).map(toItem);
    return { items, next_cursor: more ? items[items.length - 1]!.job_id : null };
  }

  /**
   * Applies ledger items. With `perJob` false (the fast path) no job gets a
   * savepoint of its own (one per job was 13% of apply's CPU, and jobs almost
   * never throw here: the verdict has already ruled out anything not movable);
   * if one throws, this throws `ItemThrew`, the caller's transaction rolls the
   * whole batch back, and the caller runs it again with `perJob` true, where
   * only the job that throws rolls back and is marked failed. Either way each
   * job's move and its ledger row commit together.
   */
  applyRunItems(req: ApplyRequest, perJob: boolean): LedgerItem[] {
    // No savepoint of its own when a transaction is open: the caller's group commit
    // already rolls this operation back alone if it throws, and every savepoint level
    // copies each page it touches to the statement journal.
    return this.store.inWrite(() => {
      const run = this.readRun(req.runId);
      if (!run) throw new NotFoundError(`run ${req.runId} not found`, 'RUN_NOT_FOUND');
      const out = this.applyBatch(run, req, perJob);
      run.updated_at = isoAt(this.store.clock.now());
      this.writeRun(run);
      return out;
    });
  }

  private applyBatch(run: RunRecord, req: ApplyRequest, isolate: boolean): LedgerItem[] {
    // The batch's ledger items and job rows are read in one statement each (a query per job was a
    // fifth of apply's CPU), and the moved items' ledger rows are written by one statement at the
    // end, in the same transaction as the moves. The job rows are read without their documents:
    // most redriven jobs never need one in JavaScript (see `BulkRedrive`).
    const ids = JSON.stringify(req.jobIds);
    const items = new Map<string, LedgerRow>();
    for (const r of this.store.sql('SELECT * FROM ledger WHERE run_id = ? AND job_id IN (SELECT value FROM json_each(?))').all(req.runId, ids) as LedgerRow[]) {
      items.set(r.job_id, r);
    }
    const setItem = this.store.sql('UPDATE ledger SET verdict = ?, status = ?, detail = ?, updated_at = ? WHERE run_id = ? AND job_id = ?');
    const now = this.store.clock.now();
    // Without a savepoint per job (`isolate` false) a redrive of unchanged entries is done in bulk;
    // with one, every job goes through `applyOne` so a job that throws rolls back alone.
    const bulk = !isolate && run.action === 'redrive' ? new BulkRedrive(this.store, run, now) : null;
    // With the bulk path, the columns first and a job's document only when the bulk path leaves the
    // job to `applyOne`; without it, every job needs its document: one read for the batch.
    const columns = bulk ? readColumnsRows(this.store, ids) : null;
    const rows = bulk ? null : this.fullRows(ids);
    const moved: string[] = [];
    const out: LedgerItem[] = [];
    for (const jobId of req.jobIds) {
      const item = items.get(jobId);
      if (!item) continue; // not part of this run's plan: never touched
      if (item.status !== 'planned') {
        out.push(toItem(item)); // already handled (a resumed run, or listed twice in this batch): leave it alone
        continue;
      }
      const cols = columns?.get(jobId);
      // A run locks its own queue only: a job of another queue (a plan file edited to list one) is
      // never touched, whatever its ledger item says.
      const queue = cols ? cols.queue : rows?.get(jobId)?.queue;
      let result: { verdict: string; status: LedgerStatus; detail: string | null } | null =
        queue !== undefined && queue !== run.queue
          ? { verdict: 'skip:not_in_dlq', status: 'skipped', detail: `the job is in queue ${queue}, not in this run's queue ${run.queue}` }
          : bulk && cols
            ? bulk.take(cols, req.now)
            : null;
      if (result === null) {
        const row = rows ? rows.get(jobId) : cols ? this.fullRow(jobId) : undefined;
        if (isolate) {
          try {
            result = this.store.savepoint(() => this.applyOne(run, jobId, row, req.now, now));
          } catch (e) {
            result = { verdict: item.verdict, status: 'failed', detail: e instanceof Error ? e.message : String(e) };
          }
        } else {
          try {
            result = this.applyOne(run, jobId, row, req.now, now);
          } catch (e) {
            throw new ItemThrew(e);
          }
        }
      }
      if (result.status === 'moved' && result.verdict === run.action && result.detail === null) moved.push(jobId);
      else setItem.run(result.verdict, result.status, result.detail, now, req.runId, jobId);
      run.counts.planned -= 1;
      run.counts[result.status] += 1;
      const done = { ...item, ...result, updated_at: now };
      items.set(jobId, done);
      out.push(toItem(done));
    }
    if (bulk) {
      try {
        bulk.finish();
      } catch (e) {
        throw new ItemThrew(e); // the caller rolls the batch back and applies it again job by job
      }
    }
    if (moved.length > 0) {
      this.store
        .sql(`UPDATE ledger SET verdict = ?, status = 'moved', detail = NULL, updated_at = ? WHERE run_id = ? AND job_id IN (SELECT value FROM json_each(?))`)
        .run(run.action, now, req.runId, JSON.stringify(moved));
    }
    return out;
  }

  private fullRow(jobId: string): JobRow | undefined {
    return this.store.sql('SELECT * FROM jobs WHERE id = ?').get(jobId) as JobRow | undefined;
  }

  /** The rows of the given jobs (a JSON array of ids) that exist, by id. */
  private fullRows(idsJson: string): Map<string, JobRow> {
    const rows = new Map<string, JobRow>();
    for (const r of this.store.sql('SELECT * FROM jobs WHERE id IN (SELECT value FROM json_each(?))').all(idsJson) as JobRow[]) rows.set(r.id, r);
    return rows;
  }

  private applyOne(run: RunRecord, jobId: string, row: JobRow | undefined, checkAt: number, now: number): { verdict: string; status: LedgerStatus; detail: string | null } {
    if (run.action === 'prune') return this.pruneOne(run, jobId, row);
    // The same check as `dlq list` / `dlq show`, on the document as it is now (inside the apply's
    // write transaction): a record damaged since the plan, by any writer, is skip:malformed.
    const checked = row && row.state === 'dead' ? checkDlqRow(row) : null;
    const { verdict, detail } = verdictFor(checked?.entry ?? null, runVerdictOptions(run, checkAt));
    if (verdict !== run.action || !row || !checked?.job) return { verdict, status: 'skipped', detail };
    const job = checked.job;
    trackRow(job, row); // the save below compares against this row instead of reading it again
    switch (run.action) {
      case 'redrive': {
        assertTransition(jobId, 'dead', 'queued');
        moveTo(job, 'queued', now);
        job.run_at = isoAt(now);
        // Without an explicit policy: one more attempt, the CLI's documented default.
        const attempts = run.options.attempts ?? { kind: 'extra', n: 1 };
        if (attempts.kind === 'reset') job.attempt = 0;
        else job.max_attempts = job.attempt + attempts.n;
        job.outcome = null;
        job.ended_at = null;
        job.dead = null;
        job.lease = null;
        job.cancel_requested_at = null;
        job.cancel_reason = null;
        job.lineage = { redrive_count: job.lineage.redrive_count + 1, redriven_at: isoAt(now), redrive_run: run.run_id };
        this.store.save(job, row.fence);
        this.store.event(job, 'redriven', 'dead', 'queued', now, { run_id: run.run_id, redrive_count: job.lineage.redrive_count });
        break;
      }
      case 'purge':
        this.store.sql('DELETE FROM effects WHERE job_id = ?').run(jobId);
        this.store.sql('DELETE FROM jobs WHERE id = ?').run(jobId);
        this.store.event(job, 'purged', 'dead', null, now, { run_id: run.run_id });
        break;
      case 'expire':
        assertTransition(jobId, 'dead', 'expired');
        moveTo(job, 'expired', now);
        job.outcome = outcomeFor('expired', isPartial(job));
        job.ended_at = isoAt(now);
        this.store.save(job, row.fence);
        this.store.event(job, 'expired', 'dead', 'expired', now, { run_id: run.run_id });
        break;
    }
    return { verdict, status: 'moved', detail: null };
  }

  /**
   * A prune deletes a finished job with all it holds (effects, its events; its idempotency key goes
   * with the row), only while it still falls under the run's rule, checked here inside the apply's
   * write transaction. The counts drop through the schema's delete triggers; the outcome totals
   * stay (a job that ended is still one that ended). Its events go too, except the newest event of
   * the store, should it be one of them: `seq` is max(seq) + 1, so deleting that one would hand its
   * number out again and a tail resumed from it would miss the next event.
   */
  private pruneOne(run: RunRecord, jobId: string, row: JobRow | undefined): { verdict: string; status: LedgerStatus; detail: string | null } {
    const rule = runPruneRule(run.options);
    if (rule === null) return { verdict: 'skip:not_prunable', status: 'skipped', detail: 'the run records no prune rule it can read' };
    const why = pruneCheck(row?.state ?? null, row ? endedAtOf(row) : null, rule);
    if (why !== null) return { verdict: 'skip:not_prunable', status: 'skipped', detail: why };
    this.store.sql('DELETE FROM effects WHERE job_id = ?').run(jobId);
    this.store.sql('DELETE FROM events WHERE job_id = ? AND seq < (SELECT max(seq) FROM events)').run(jobId);
    this.store.sql('DELETE FROM jobs WHERE id = ?').run(jobId);
    return { verdict: 'prune', status: 'moved', detail: null };
  }

  acquireLock(queue: string, holder: LockHolder): LockResult {
    return this.store.write(() => {
      const held = this.readLock(queue);
      if (held) return { acquired: false, holder: held };
      this.store.sql('INSERT INTO locks (queue, run_id, holder) VALUES (?, ?, ?)').run(queue, holder.run_id, JSON.stringify(holder));
      return { acquired: true };
    });
  }

  releaseLock(queue: string, runId: string | null): void {
    // Only the holder's own run releases it: a finished run never drops a lock someone else took after a break.
    this.store.write(() => this.store.sql('DELETE FROM locks WHERE queue = ? AND run_id IS ?').run(queue, runId));
  }

  readLock(queue: string): LockHolder | null {
    const row = this.store.sql('SELECT holder FROM locks WHERE queue = ?').get(queue) as { holder: string } | undefined;
    return row ? (JSON.parse(row.holder) as LockHolder) : null;
  }

  breakLock(queue: string, expected?: LockHolder): LockHolder | null {
    return this.store.write(() => {
      const held = this.readLock(queue);
      if (held === null || (expected !== undefined && !sameLockHolder(held, expected))) return null;
      this.store.sql('DELETE FROM locks WHERE queue = ?').run(queue);
      return held;
    });
  }
}
