/**
 * The -wal file stays bounded when other connections (other processes: workers, tail --follow,
 * stats --watch, metrics serve) keep reading: SQLite's own checkpoints never start the WAL over
 * while a reader uses it, and never shrink the file (wal-bound.ts).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { CHECK_EVERY_COMMITS, WAL_LIMIT_BYTES } from '../../src/backend/sqlite/wal-bound.js';

const LIMIT = 1024 * 1024;
const INPUT = 'x'.repeat(2_000);

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-wal-'));
  path = join(dir, 'agentq.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const walSize = (): number => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

/** Submits one job per write transaction (each awaited: no group commit joins them). */
async function submitOneByOne(backend: SqliteBackend, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) await backend.submit({ workflow: 'w:v1', queue: 'wal', input: `${tag}-${i}-${INPUT}` });
}

describe('sqlite: the -wal file under readers of other connections', () => {
  it('is checkpointed and cut back below the limit once a reader that held it lets go, with every write kept', async () => {
    const backend = new SqliteBackend({ path, walLimitBytes: LIMIT });
    const reader = new Database(path);
    try {
      // Another process's reader holds a snapshot: no checkpoint may go past it, so the WAL grows.
      reader.exec('BEGIN');
      expect(reader.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 0 });
      let written = 0;
      while (walSize() <= 2 * LIMIT) {
        await submitOneByOne(backend, 50, `pinned${written}`);
        written += 50;
      }
      const pinned = walSize();
      // The reader lets go; writes go on (one look at the size per CHECK_EVERY_COMMITS write
      // transactions), each adding to the WAL again after it was cut.
      reader.exec('COMMIT');
      const sizes: number[] = [];
      for (let i = 0; i < CHECK_EVERY_COMMITS + 1; i++) {
        await submitOneByOne(backend, 1, `after${i}`);
        sizes.push(walSize());
      }
      written += CHECK_EVERY_COMMITS + 1;

      // Without the bound the file never shrinks: SQLite reuses it from the start, at its size.
      expect(Math.min(...sizes)).toBeLessThan(LIMIT);
      expect(sizes.at(-1)).toBeLessThan(pinned);
      expect(reader.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: written });
      expect((await backend.stats('wal')).counts.queued).toBe(written);
    } finally {
      reader.close();
      await backend.close();
    }
  });

  it('keeps accepting writes while a reader still holds its snapshot (the checkpoint gives up, no write fails)', async () => {
    const backend = new SqliteBackend({ path, walLimitBytes: LIMIT });
    const reader = new Database(path);
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM jobs').get();
      let written = 0;
      while (walSize() <= LIMIT) {
        await submitOneByOne(backend, 50, `a${written}`);
        written += 50;
      }
      await submitOneByOne(backend, 2 * CHECK_EVERY_COMMITS, 'b');
      written += 2 * CHECK_EVERY_COMMITS;
      reader.exec('COMMIT');
      expect(reader.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: written });
    } finally {
      reader.close();
      await backend.close();
    }
  });

  it('sets journal_size_limit, so a WAL SQLite starts over by itself is cut back too', async () => {
    const backend = new SqliteBackend({ path });
    try {
      // A pragma is per connection: read on the store's own.
      const db = (backend as unknown as { store: { db: Database.Database } }).store.db;
      expect(db.pragma('journal_size_limit', { simple: true })).toBe(WAL_LIMIT_BYTES);
    } finally {
      await backend.close();
    }
  });
});
