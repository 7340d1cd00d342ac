/**
 * The SQLite schema and its migrations. `PRAGMA user_version` records which
 * migrations ran; each runs in one immediate transaction, so two processes
 * opening a fresh file at once do not both create it.
 *
 * Counters (per-state counts, per-tenant counts, backlog seconds) are kept
 * as jobs move, so `stats`, fairness and admission control never scan the
 * jobs table: by triggers on INSERT and DELETE, and for state changes and
 * submitted rows by `SqliteStore.save` and `insertJob`, which sum them per
 * transaction (counters.ts; migrations 3 and 4).
 */
import type Database from 'better-sqlite3';
import { ConfigError } from '../../core/errors.js';
import { DEFAULT_ESTIMATED_SECONDS } from '../../core/admission.js';
import { STATS_MIGRATION } from './stats.js';
import { WAL_LIMIT_BYTES } from './wal-bound.js';

const PENDING = `('queued','scheduled')`;

const MIGRATIONS: string[] = [
  // 1: the initial schema.
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    state TEXT NOT NULL,
    tenant TEXT NOT NULL,
    class TEXT NOT NULL,
    workflow TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    deadline_at INTEGER,
    attempt INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    fence INTEGER NOT NULL DEFAULT 0,
    lease_expires_at INTEGER,
    estimated_seconds REAL,
    idem_key TEXT,
    fingerprint TEXT,
    dead_at INTEGER,
    dead_reason TEXT,
    error_code TEXT,
    error_message TEXT,
    worker_version TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    redrive_count INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX jobs_idem ON jobs(queue, idem_key) WHERE idem_key IS NOT NULL;
  CREATE INDEX jobs_queue ON jobs(queue, id);
  CREATE INDEX jobs_state ON jobs(state, id);
  -- No index on tenant, workflow or created_at: every index costs a page write per commit on
  -- the hot path, created_at ranges are id ranges (ids are ULIDs), and the rare tenant or
  -- workflow filter of \`list\` walks the id order. The DLQ has its own partial indexes.
  CREATE INDEX jobs_claimable ON jobs(queue, class, tenant, run_at, id) WHERE state IN ${PENDING};
  CREATE INDEX jobs_leases ON jobs(queue, lease_expires_at) WHERE state = 'running';
  CREATE INDEX jobs_dead ON jobs(queue, id) WHERE state = 'dead';
  CREATE INDEX jobs_dead_code ON jobs(error_code, id) WHERE state = 'dead';
  CREATE INDEX jobs_dead_at ON jobs(dead_at) WHERE state = 'dead';

  CREATE TABLE events (
    -- No AUTOINCREMENT: events are never deleted, so max(seq) + 1 is already monotonic, without a sqlite_sequence write per commit.
    seq INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL,
    queue TEXT NOT NULL,
    tenant TEXT NOT NULL,
    type TEXT NOT NULL,
    at INTEGER NOT NULL,
    from_state TEXT,
    to_state TEXT,
    attempt INTEGER NOT NULL,
    data TEXT
  ) STRICT;
  CREATE INDEX events_queue ON events(queue, seq);
  CREATE INDEX events_job ON events(job_id, seq);

  CREATE TABLE effects (
    job_id TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    done_at INTEGER,
    result TEXT,
    PRIMARY KEY (job_id, key)
  ) STRICT;

  CREATE TABLE queue_counts (
    queue TEXT NOT NULL,
    state TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
  ) STRICT, WITHOUT ROWID;

  -- Only non-zero rows are kept, so candidate tenants are read without a scan of idle ones.
  CREATE TABLE tenant_counts (
    queue TEXT NOT NULL,
    class TEXT NOT NULL,
    tenant TEXT NOT NULL,
    state TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (queue, state, class, tenant)
  ) STRICT, WITHOUT ROWID;

  -- Seconds of queued + scheduled work per (queue, class) and (queue, tenant), for admission control.
  CREATE TABLE backlog (
    queue TEXT NOT NULL,
    dim TEXT NOT NULL,
    name TEXT NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (queue, dim, name)
  ) STRICT, WITHOUT ROWID;

  -- Attempts and retries per queue in 10 s buckets: the retry budget's "recent traffic".
  CREATE TABLE traffic (
    queue TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, bucket)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE fairness (
    queue TEXT PRIMARY KEY,
    state TEXT NOT NULL
  ) STRICT;

  CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    doc TEXT NOT NULL
  ) STRICT;
  CREATE INDEX runs_queue ON runs(queue, run_id);

  CREATE TABLE ledger (
    run_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, job_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX ledger_status ON ledger(run_id, status, job_id);

  CREATE TABLE locks (
    queue TEXT PRIMARY KEY,
    run_id TEXT,
    holder TEXT NOT NULL
  ) STRICT;

  ${countTriggers()}
  `,
  // 2: counters, samples and an index for `agentq stats` (see stats.ts).
  STATS_MIGRATION,
  // 3: the counters a state change moves are summed in JS and written once per transaction
  // (counters.ts) instead of by ~10 trigger statements per changed row. Inserts and deletes keep
  // their triggers. The start of the running attempt moves from attempt_started into two columns
  // of the job row, which the claim's UPDATE writes anyway.
  `
  ALTER TABLE jobs ADD COLUMN attempt_seq INTEGER;
  ALTER TABLE jobs ADD COLUMN attempt_started_at INTEGER;
  UPDATE jobs SET attempt_seq = a.seq, attempt_started_at = a.at FROM attempt_started AS a WHERE a.job_id = jobs.id;
  DROP TRIGGER jobs_count_update;
  DROP TRIGGER jobs_backlog_leave;
  DROP TRIGGER jobs_backlog_enter;
  DROP TRIGGER jobs_stats_claim;
  DROP TRIGGER jobs_stats_attempt_end;
  DROP TRIGGER jobs_stats_release;
  DROP TRIGGER jobs_stats_end;
  DROP TRIGGER jobs_stats_prune;
  DROP TRIGGER jobs_stats_delete;
  DROP TABLE attempt_started;
  `,
  // 4: a submitted row (one with a request fingerprint) is counted by submit itself, summed per
  // transaction with the state changes (counters.ts, SqliteStore.insertJob); the insert triggers
  // keep counting every other row (SQS custody rows, rows written by other tools or by hand).
  // The six upserts per row were two thirds of a submit's CPU. The WHEN alone still costs (a
  // table with insert triggers makes every INSERT keep a statement journal), which submit pays
  // once per multi-row INSERT.
  guardedInsertTriggers(),
  // 5: failed attempts per error code (counters.ts writeFailures; at most STATS_MAX_FAILURE_CODES
  // codes per queue, later ones counted under OTHER). Counted from this migration on: attempts
  // that failed before it are not in it.
  `
  CREATE TABLE attempt_failures (
    queue TEXT NOT NULL,
    code TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (queue, code)
  ) STRICT, WITHOUT ROWID;
  `,
  // 6: what a queue's attempts reported spending (worker.ts addUsage; cost per job), cumulative.
  `
  CREATE TABLE queue_usage (
    queue TEXT PRIMARY KEY,
    tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 7: jobs that ended, and of them went to the DLQ, per queue and minute (counters.ts; kept for
  // STATS_ENDS_MAX_WINDOW_MS): the DLQ rate over a window (`dlq check --window`). Counted from this
  // migration on.
  `
  CREATE TABLE job_ends (
    queue TEXT NOT NULL,
    minute INTEGER NOT NULL,
    ended INTEGER NOT NULL,
    dead INTEGER NOT NULL,
    PRIMARY KEY (queue, minute)
  ) STRICT, WITHOUT ROWID;
  `,
  // 8: a row inserted already dead (an SQS message taken into custody: foreign, malformed, an
  // orphan) is a DLQ entry, not a submission: it counted as submitted (totals, recent activity),
  // which a Redis store never did. It still counts in the DLQ (the count triggers).
  `
  DROP TRIGGER jobs_stats_insert;
  CREATE TRIGGER jobs_stats_insert AFTER INSERT ON jobs WHEN NEW.fingerprint IS NULL AND NEW.state <> 'dead' BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, 'submitted', 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
    INSERT INTO activity(queue, minute, submitted, succeeded, failed) VALUES (NEW.queue, NEW.created_at / 60000, 1, 0, 0)
      ON CONFLICT(queue, minute) DO UPDATE SET submitted = submitted + 1;
  END;
  `,
];

/** Migration 4: the insert triggers of migrations 1 and 2, for rows without a fingerprint only. */
function guardedInsertTriggers(): string {
  const est = `coalesce(NEW.estimated_seconds, ${DEFAULT_ESTIMATED_SECONDS})`;
  const foreign = 'NEW.fingerprint IS NULL';
  return `
  DROP TRIGGER jobs_count_insert;
  DROP TRIGGER jobs_backlog_insert;
  DROP TRIGGER jobs_stats_insert;
  CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs WHEN ${foreign} BEGIN
    INSERT INTO queue_counts(queue, state, n) VALUES (NEW.queue, NEW.state, 1)
      ON CONFLICT(queue, state) DO UPDATE SET n = n + 1;
    INSERT INTO tenant_counts(queue, class, tenant, state, n) VALUES (NEW.queue, NEW.class, NEW.tenant, NEW.state, 1)
      ON CONFLICT(queue, state, class, tenant) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER jobs_backlog_insert AFTER INSERT ON jobs WHEN ${foreign} AND NEW.state IN ${PENDING} BEGIN
    INSERT INTO backlog(queue, dim, name, seconds) VALUES (NEW.queue, 'class', NEW.class, ${est})
      ON CONFLICT(queue, dim, name) DO UPDATE SET seconds = max(0, seconds + ${est});
    INSERT INTO backlog(queue, dim, name, seconds) VALUES (NEW.queue, 'tenant', NEW.tenant, ${est})
      ON CONFLICT(queue, dim, name) DO UPDATE SET seconds = max(0, seconds + ${est});
  END;
  CREATE TRIGGER jobs_stats_insert AFTER INSERT ON jobs WHEN ${foreign} BEGIN
    INSERT INTO queue_totals(queue, name, n) VALUES (NEW.queue, 'submitted', 1)
      ON CONFLICT(queue, name) DO UPDATE SET n = n + 1;
    INSERT INTO activity(queue, minute, submitted, succeeded, failed) VALUES (NEW.queue, NEW.created_at / 60000, 1, 0, 0)
      ON CONFLICT(queue, minute) DO UPDATE SET submitted = submitted + 1;
  END;`;
}

function countTriggers(): string {
  const est = (row: 'NEW' | 'OLD') => `coalesce(${row}.estimated_seconds, ${DEFAULT_ESTIMATED_SECONDS})`;
  const counts = (row: 'NEW' | 'OLD', sign: 1 | -1) => `
    INSERT INTO queue_counts(queue, state, n) VALUES (${row}.queue, ${row}.state, ${sign})
      ON CONFLICT(queue, state) DO UPDATE SET n = n + ${sign};
    INSERT INTO tenant_counts(queue, class, tenant, state, n) VALUES (${row}.queue, ${row}.class, ${row}.tenant, ${row}.state, ${sign})
      ON CONFLICT(queue, state, class, tenant) DO UPDATE SET n = n + ${sign};
    ${sign < 0 ? `DELETE FROM tenant_counts WHERE queue = ${row}.queue AND state = ${row}.state AND class = ${row}.class AND tenant = ${row}.tenant AND n = 0;` : ''}`;
  const backlog = (row: 'NEW' | 'OLD', sign: 1 | -1) => `
    INSERT INTO backlog(queue, dim, name, seconds) VALUES (${row}.queue, 'class', ${row}.class, ${sign} * ${est(row)})
      ON CONFLICT(queue, dim, name) DO UPDATE SET seconds = max(0, seconds + ${sign} * ${est(row)});
    INSERT INTO backlog(queue, dim, name, seconds) VALUES (${row}.queue, 'tenant', ${row}.tenant, ${sign} * ${est(row)})
      ON CONFLICT(queue, dim, name) DO UPDATE SET seconds = max(0, seconds + ${sign} * ${est(row)});`;
  const pending = (row: 'NEW' | 'OLD') => `${row}.state IN ${PENDING}`;
  // The backlog triggers fire only when a job enters or leaves queued/scheduled, so
  // the common running → succeeded step runs no backlog statement at all.
  return `
  CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN ${counts('NEW', 1)} END;
  CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN ${counts('OLD', -1)} END;
  CREATE TRIGGER jobs_count_update AFTER UPDATE OF state ON jobs WHEN OLD.state IS NOT NEW.state BEGIN
    ${counts('OLD', -1)}
    ${counts('NEW', 1)}
  END;
  CREATE TRIGGER jobs_backlog_insert AFTER INSERT ON jobs WHEN ${pending('NEW')} BEGIN ${backlog('NEW', 1)} END;
  CREATE TRIGGER jobs_backlog_delete AFTER DELETE ON jobs WHEN ${pending('OLD')} BEGIN ${backlog('OLD', -1)} END;
  CREATE TRIGGER jobs_backlog_leave AFTER UPDATE OF state ON jobs WHEN ${pending('OLD')} AND NOT ${pending('NEW')} BEGIN ${backlog('OLD', -1)} END;
  CREATE TRIGGER jobs_backlog_enter AFTER UPDATE OF state ON jobs WHEN NOT ${pending('OLD')} AND ${pending('NEW')} BEGIN ${backlog('NEW', 1)} END;`;
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/** How long a write waits for another process's write lock before failing with RetryLaterError. */
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

/** Sets the connection up and brings the schema to the current version. */
export function openSchema(db: Database.Database, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS, walLimitBytes = WAL_LIMIT_BYTES): void {
  // Wait for another process's write instead of failing with SQLITE_BUSY.
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  if (db.name !== ':memory:' && db.name !== '') db.pragma('journal_mode = WAL');
  // WAL + NORMAL: durable at checkpoints, never corrupt; the usual trade for a local queue.
  db.pragma('synchronous = NORMAL');
  // Checkpoint (the only fsync under NORMAL) every ~40 MB of WAL rather than every 4 MB.
  db.pragma('wal_autocheckpoint = 10000');
  // When SQLite starts the WAL over, the file is cut back to this size instead of keeping the
  // largest it ever reached (wal-bound.ts cuts it when many readers keep it from starting over).
  db.pragma(`journal_size_limit = ${Math.max(0, Math.floor(walLimitBytes))}`);
  db.pragma('cache_size = -16000');
  db.pragma('foreign_keys = OFF');
  const checkVersion = (): number => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new ConfigError(`database schema version ${version} is newer than this agentq understands (${SCHEMA_VERSION})`, 'Upgrade agentq, or point it at another database.');
    }
    return version;
  };
  // The common case, a current schema, is a read: no write transaction, so opening never waits for
  // (or takes) the write lock another process holds: `agentq list` and Tab completion stay instant.
  if (checkVersion() === SCHEMA_VERSION) return;
  const migrate = db.transaction(() => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const version = checkVersion();
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  migrate.immediate();
}
