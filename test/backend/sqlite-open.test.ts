/** Opening stores by URL, the default location, credential redaction, and the SQLite schema on open. */
import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultDataUrl, openBackend, redactUrl } from '../../src/backend/open.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { SCHEMA_VERSION } from '../../src/backend/sqlite/schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { ConfigError, PermissionError, RetryLaterError } from '../../src/core/errors.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-open-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('defaultDataUrl', () => {
  it('uses $XDG_DATA_HOME/agentq/agentq.db', () => {
    expect(defaultDataUrl({ XDG_DATA_HOME: '/data', HOME: '/home/u' })).toBe('sqlite:/data/agentq/agentq.db');
  });
  it('falls back to ~/.local/share, also when XDG_DATA_HOME is relative (invalid per the spec)', () => {
    expect(defaultDataUrl({ HOME: '/home/u' })).toBe('sqlite:/home/u/.local/share/agentq/agentq.db');
    expect(defaultDataUrl({ XDG_DATA_HOME: 'rel', HOME: '/home/u' })).toBe('sqlite:/home/u/.local/share/agentq/agentq.db');
  });
});

describe('redactUrl', () => {
  it.each([
    ['redis://:s3cret@host:6379/0', 'redis://:***@host:6379/0'],
    ['rediss://default:s3cret@host:6380', 'rediss://default:***@host:6380'],
    ['redis://TOKEN123@host', 'redis://***@host'],
    ['redis://admin:Xy@9f3kLmQ@127.0.0.1:7501', 'redis://admin:***@127.0.0.1:7501'],
    ['sqs://eu-west-1/prefix?endpoint=http://127.0.0.1:9324&secret_key=abc&region=x', 'sqs://eu-west-1/prefix?endpoint=http://127.0.0.1:9324&secret_key=***&region=x'],
    ['redis://host:6379?password=pw', 'redis://host:6379?password=***'],
    ['sqlite:/var/lib/agentq.db', 'sqlite:/var/lib/agentq.db'],
    ['not a url', 'not a url'],
  ])('%s → %s', (input, out) => {
    expect(redactUrl(input)).toBe(out);
  });
});

describe('openBackend', () => {
  it('opens sqlite:PATH, creating the directory on first use, and keeps data across opens', async () => {
    const path = join(dir, 'nested', 'deeper', 'agentq.db');
    const a = await openBackend(`sqlite:${path}`, { clock: new ManualClock() });
    expect(a.kind).toBe('sqlite');
    expect(a.description).toBe(`sqlite:${path}`);
    const { job } = await a.submit({ workflow: 'w:v1' });
    await a.close();
    expect(existsSync(path)).toBe(true);
    const b = await openBackend(`sqlite://${path}`);
    expect((await b.get(job.job_id))?.job_id).toBe(job.job_id);
    await b.close();
  });

  it('opens sqlite::memory:', async () => {
    const b = await openBackend('sqlite::memory:');
    await b.submit({ workflow: 'w:v1' });
    expect((await b.list({}, { limit: 10 })).items).toHaveLength(1);
    await b.close();
  });

  it('refuses an unknown scheme with a ConfigError (exit 78) that shows no credentials', async () => {
    const err = await openBackend('mongodb://admin:hunter2@db/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(78);
    expect((err as ConfigError).message).toContain('mongodb://admin:***@db/x');
    expect((err as ConfigError).message).not.toContain('hunter2');
    await expect(openBackend('sqlite:')).rejects.toBeInstanceOf(ConfigError);
    await expect(openBackend('/just/a/path')).rejects.toBeInstanceOf(ConfigError);
  });

  it('refuses a sqlite: URL with parameters instead of creating a file named "x.db?mode=ro"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-sqlite-q-'));
    try {
      const err = await openBackend(`sqlite:${join(dir, 'x.db')}?mode=ro`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toContain('sqlite: URLs take no parameters');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite schema on open', () => {
  it('records the schema version and runs WAL with a busy timeout', async () => {
    const path = join(dir, 'a.db');
    await new SqliteBackend({ path }).close();
    const db = new Database(path);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('refuses a database from a newer agentq with a ConfigError instead of touching it', async () => {
    const path = join(dir, 'future.db');
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => new SqliteBackend({ path })).toThrow(ConfigError);
  });
});

describe('sqlite write lock held by another process', () => {
  it('waits up to the busy timeout, then refuses with RetryLaterError (exit 75) and writes nothing; works again once free', async () => {
    const path = join(dir, 'busy.db');
    const backend = new SqliteBackend({ path, busyTimeoutMs: 50 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const err = await backend.submit({ workflow: 'w:v1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryLaterError);
      expect((err as RetryLaterError).exitCode).toBe(75);
      expect((err as RetryLaterError).code).toBe('BACKEND_BUSY');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await backend.list({}, { limit: 10 })).items).toEqual([]);
    await expect(backend.submit({ workflow: 'w:v1' })).resolves.toMatchObject({ created: true });
    await backend.close();
  });
});

describe('a database this process may not write', () => {
  it('a write is PermissionError (exit 4) naming the file, not an internal error; reads still work', async () => {
    const path = join(dir, 'ro.db');
    const backend = new SqliteBackend({ path });
    const { job } = await backend.submit({ workflow: 'w:v1' });
    // SQLITE_READONLY as a file mode gives it to a non-root user (root writes any file): query_only
    // makes SQLite answer every write of this connection with the same error code.
    backend.connection.db.pragma('query_only = 1');
    const err = await backend.submit({ workflow: 'w:v1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionError);
    expect((err as PermissionError).exitCode).toBe(4);
    expect((err as Error).message).toContain(`the SQLite database ${path} cannot be written by this process (SQLITE_READONLY`);
    expect((err as PermissionError).hint).toContain('-wal and -shm');
    await expect(backend.cancel(job.job_id, null)).rejects.toBeInstanceOf(PermissionError);
    expect((await backend.get(job.job_id))?.state).toBe('queued');
    await backend.close();
  });
});

describe('a database whose -wal or -shm cannot be opened', () => {
  it('is refused at open naming the file and its -wal/-shm (exit 78), not SQLite\'s bare "unable to open database file"', async () => {
    const path = join(dir, 'cantopen.db');
    const backend = new SqliteBackend({ path });
    await backend.submit({ workflow: 'w:v1' });
    await backend.close();
    // SQLite must open PATH-wal next to the file, even to read; a directory there makes it fail as a
    // read-only mount or a directory this user may not write does (SQLITE_CANTOPEN), even for root.
    mkdirSync(`${path}-wal`);
    const err = (() => {
      try {
        new SqliteBackend({ path });
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(78);
    expect((err as Error).message).toContain(`cannot open the SQLite database ${path} or its -wal and -shm files (SQLITE_CANTOPEN`);
    expect((err as ConfigError).hint).toContain(`${path}-wal`);
    // Through the CLI's opener: the same message, no "cannot open sqlite:PATH: unable to open database file".
    const viaUrl = await openBackend(`sqlite:${path}`).catch((e: unknown) => e);
    expect((viaUrl as Error).message).toBe((err as Error).message);
  });
});

describe('a database on a full disk', () => {
  it('a write is RetryLaterError (exit 75) naming the file, not an internal error; nothing is written; works again once there is room', async () => {
    const path = join(dir, 'full.db');
    const backend = new SqliteBackend({ path });
    await backend.submit({ workflow: 'w:v1' });
    // The file may not grow: SQLite answers SQLITE_FULL, as on a full disk.
    const db = backend.connection.db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const big = 'x'.repeat(60_000);
    const err = await backend.submit({ workflow: 'w:v1', input: big }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryLaterError);
    expect((err as RetryLaterError).exitCode).toBe(75);
    expect((err as Error).message).toContain(`the SQLite database ${path} cannot be written now (SQLITE_FULL`);
    expect((err as RetryLaterError).hint).toContain('df -h');
    expect((await backend.list({}, { limit: 10 })).items).toHaveLength(1);
    db.pragma('max_page_count = 1073741823');
    await expect(backend.submit({ workflow: 'w:v1', input: big })).resolves.toMatchObject({ created: true });
    await backend.close();
  });
});

describe('a damaged database', () => {
  it('a write that meets a damaged page is ConfigError (exit 78) naming the file, not an internal error', async () => {
    const path = join(dir, 'damaged.db');
    const backend = new SqliteBackend({ path });
    for (let i = 0; i < 20; i++) await backend.submit({ workflow: 'w:v1', input: 'x'.repeat(2000) });
    await backend.close();
    // Every page past the first few (schema, root pages) overwritten with garbage.
    const db = new Database(path);
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(size - 8 * pageSize, 0xa5), 0, size - 8 * pageSize, 8 * pageSize);
    closeSync(fd);
    const err = await (async () => {
      const b = new SqliteBackend({ path });
      try {
        await b.submit({ workflow: 'w:v1', input: 'y'.repeat(2000) });
        return null;
      } catch (e) {
        return e;
      } finally {
        await b.close();
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(78);
    expect((err as Error).message).toMatch(new RegExp(`the SQLite database ${path} is damaged \\(SQLITE_(CORRUPT|NOTADB)`));
    expect((err as ConfigError).hint).toContain('.recover');
  });
});

describe('opening a database another process is writing to', () => {
  it('a current schema is only read at open: no write lock is needed (opens even with busy_timeout 0)', async () => {
    const path = join(dir, 'current.db');
    const first = new SqliteBackend({ path });
    await first.submit({ workflow: 'w:v1', queue: 'q1' });
    await first.close();
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const b = new SqliteBackend({ path, busyTimeoutMs: 0 });
      expect((await b.queues({ limit: 10 })).items).toEqual(['q1']);
      await b.close();
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('a migration that cannot get the write lock is RetryLaterError (exit 75), not a ConfigError', async () => {
    const path = join(dir, 'fresh.db');
    const other = new Database(path);
    other.pragma('journal_mode = WAL');
    other.exec('BEGIN IMMEDIATE');
    try {
      const err = await openBackend(`sqlite:${path}`, { busyTimeoutMs: 0 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryLaterError);
      expect((err as RetryLaterError).exitCode).toBe(75);
      expect((err as Error).message).toContain('another process holds its write lock');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('SQLite store file removed or replaced under an open backend', () => {
  it('refuses writes and reads (exit 78, naming the rule) once another file is moved to its path, as a restored backup is', async () => {
    const path = join(dir, 'agentq.db');
    const backend = new SqliteBackend({ path });
    try {
      await backend.submit({ queue: 'q', workflow: 'w:v1' });
      const restored = new SqliteBackend({ path: join(dir, 'backup.db') });
      await restored.submit({ queue: 'q', workflow: 'w:v1' });
      await restored.close();
      renameSync(join(dir, 'backup.db'), path);
      const write = backend.submit({ queue: 'q', workflow: 'w:v1' });
      await expect(write).rejects.toMatchObject({ code: 'STORE_REPLACED', exitCode: 78 });
      await expect(write).rejects.toThrow(`the agentq store at ${path} was replaced by another file since this process opened it`);
      // (the write check just ran; a fresh connection's first read checks at once)
    } finally {
      await backend.close();
    }
    const reader = new SqliteBackend({ path });
    try {
      rmSync(path);
      await expect(reader.list({ queue: 'q' }, { limit: 10 })).rejects.toThrow(`the agentq store at ${path} was removed since this process opened it`);
    } finally {
      await reader.close();
    }
  });

  it('refuses a read of one job by id too, once the file is removed: a poll of a job (submit --wait, waitForJob) never ends in a file nobody else sees', async () => {
    const path = join(dir, 'agentq.db');
    const backend = new SqliteBackend({ path });
    try {
      const { job } = await backend.submit({ queue: 'q', workflow: 'w:v1' });
      rmSync(path);
      // The read check runs at most once a second: poll until it has looked (no fixed sleep).
      const deadline = Date.now() + 10_000;
      let refused: unknown = null;
      while (refused === null && Date.now() < deadline) {
        await backend.get(job.job_id).then(
          () => new Promise((r) => setTimeout(r, 50)),
          (e: unknown) => (refused = e),
        );
      }
      expect(refused).toMatchObject({ code: 'STORE_REPLACED', exitCode: 78 });
      expect(String(refused)).toContain(`the agentq store at ${path} was removed since this process opened it`);
    } finally {
      await backend.close();
    }
  });
});
