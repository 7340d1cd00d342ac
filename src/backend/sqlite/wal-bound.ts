/**
 * Keeps the store's `-wal` file bounded when many processes share it.
 *
 * SQLite's automatic checkpoint (PASSIVE, every `wal_autocheckpoint` pages) never waits for
 * readers, and the WAL starts over from its beginning only when a writer finds no reader using
 * it. A small team's store always has a reader somewhere (workers' claims, `tail --follow`,
 * `stats --watch`, `metrics serve` scrapes, producers' idempotency look-ups), each short but
 * overlapping the next, so under a storm of submits the WAL never started over: it grew to 360 MB
 * for a 90 MB database in 40 seconds, and, with no size limit, the file kept that size for good
 * (SQLite reuses a WAL file from its start but never shrinks it).
 *
 * So every CHECK_EVERY_COMMITS-th write transaction of a process looks at the -wal file's size
 * (a stat) and, over the limit, runs a TRUNCATE checkpoint: it copies the WAL into the database,
 * waits a moment (CHECKPOINT_WAIT_MS, not the whole busy timeout, since writers are held meanwhile)
 * for the readers of older snapshots to finish, and cuts the file to zero bytes. Readers of this
 * store are single statements, so the wait is short; a checkpoint that still finds one (a reader
 * that holds a snapshot open) gives up and the next check tries again. Counted by commits, not by
 * time: only writes grow the WAL. `journal_size_limit` (schema.ts) also cuts the file back to the
 * limit whenever SQLite starts the WAL over by itself.
 */
import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';

/** The -wal size past which a writer checkpoints and truncates it (about 16,000 pages of 4 KiB). */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** How many write transactions of a process pass between looks at the -wal size. */
export const CHECK_EVERY_COMMITS = 100;
/** How long the checkpoint waits for readers of older snapshots before giving up until the next check. */
const CHECKPOINT_WAIT_MS = 250;

export class WalBound {
  private commits = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly walPath: string,
    private readonly limitBytes: number,
    private readonly busyTimeoutMs: number,
  ) {}

  /** After a committed write transaction: now and then, the WAL checkpointed and cut when it is over the limit. */
  afterCommit(): void {
    if (++this.commits % CHECK_EVERY_COMMITS !== 1) return;
    const size = statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0;
    if (size <= this.limitBytes) return;
    try {
      this.db.pragma(`busy_timeout = ${Math.min(CHECKPOINT_WAIT_MS, this.busyTimeoutMs)}`);
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // The write committed already: a checkpoint that could not run now (busy, I/O) is tried at
      // the next check, and never turns that write into an error.
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }
}
