/**
 * A write waiting for another process's write lock looks for it every millisecond
 * (src/backend/sqlite/write-lock.ts), not on SQLite's busy-handler steps, which after a third of a
 * second look only every 100 ms: against a bulk writer committing short transactions back to back
 * (a prune), those looks mostly found the lock taken again, and claims waited 0.5–1 s.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { LOOK_EVERY_MS, takeWriteLock, type LockWait } from '../../src/backend/sqlite/write-lock.js';
import { RetryLaterError } from '../../src/core/errors.js';

const busy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

/** A clock that only moves when the wait sleeps; records the sleeps. */
function fakeWait(): LockWait & { sleeps: number[] } {
  let t = 0;
  const sleeps: number[] = [];
  return { sleeps, now: () => t, sleep: (ms) => void (sleeps.push(ms), (t += ms)) };
}

describe('takeWriteLock', () => {
  it('takes the lock at once when it is free', () => {
    const wait = fakeWait();
    let looks = 0;
    takeWriteLock(() => void looks++, 10_000, wait);
    expect(looks).toBe(1);
    expect(wait.sleeps).toEqual([]);
  });

  it('looks every millisecond however long it has waited, not every 100 ms as the busy handler does', () => {
    const wait = fakeWait();
    let looks = 0;
    // taken for the first 2 seconds of the wait
    takeWriteLock(() => {
      looks++;
      if (wait.now() < 2_000) throw busy();
    }, 10_000, wait);
    expect(Math.max(...wait.sleeps)).toBe(LOOK_EVERY_MS);
    expect(LOOK_EVERY_MS).toBeLessThanOrEqual(1);
    expect(looks).toBe(2_000 / LOOK_EVERY_MS + 1);
  });

  it('gives up with the SQLITE_BUSY error after the busy timeout', () => {
    const wait = fakeWait();
    const err = (() => {
      try {
        takeWriteLock(() => {
          throw busy();
        }, 250, wait);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(wait.now()).toBe(250);
  });

  it('throws any other error at once', () => {
    const wait = fakeWait();
    const io = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    expect(() =>
      takeWriteLock(() => {
        throw io;
      }, 10_000, wait),
    ).toThrow(io);
    expect(wait.sleeps).toEqual([]);
  });
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-write-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A bulk writer: transactions that hold the write lock 10 ms each, back to back with about a
 * millisecond between them, until its stdin ends.
 */
const BULK_WRITER = String.raw`
import Database from 'better-sqlite3';
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 60000');
let stop = false, n = 0;
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();
const loop = () => {
  db.exec('BEGIN IMMEDIATE');
  const until = performance.now() + 10;
  while (performance.now() < until);
  db.exec('COMMIT');
  if (++n === 1) process.stdout.write('ready\n');
  if (stop) process.exit(0);
  setTimeout(loop, 1);
};
loop();
`;

describe('SqliteStore writes', () => {
  it('a worker writing while another process commits short transactions back to back gets every write in, in one of the gaps between them', async () => {
    // How long such writes wait (the reason for looking every millisecond) is measured, not
    // asserted here: bench/prune.mjs, BENCHMARKS.md "Prune". This is the part that must hold on
    // any machine: taking the lock by our own looks loses no write and leaves no transaction open.
    const path = join(dir, 'store.db');
    const backend = new SqliteBackend({ path });
    const child = spawn(process.execPath, ['--input-type=module', '-e', BULK_WRITER, path], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] });
    const ready = new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
    const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      await ready;
      for (let i = 0; i < 60; i++) {
        await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a' });
        const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
        expect(lease, `claim ${i}`).toBeDefined();
        await backend.complete(lease!, null);
      }
      const counts = (await backend.stats('q')).counts;
      expect([counts.succeeded, counts.queued, counts.running]).toEqual([60, 0, 0]);
      const store = (backend as unknown as { store: { db: Database.Database } }).store;
      expect(store.db.inTransaction).toBe(false);
    } finally {
      child.stdin.end();
      await done;
      await backend.close();
    }
  }, 60_000);

  it('a write that waits out the busy timeout fails with RetryLaterError, and the connection keeps its busy timeout for reads', async () => {
    const path = join(dir, 'busy.db');
    const backend = new SqliteBackend({ path, busyTimeoutMs: 50 });
    const other = new Database(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      const err = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryLaterError);
      other.exec('COMMIT');
      // The connection's own busy timeout (used by reads and checkpoints) is back after the wait.
      const store = (backend as unknown as { store: { sql(t: string): Database.Statement } }).store;
      expect(store.sql('PRAGMA busy_timeout').get()).toEqual({ timeout: 50 });
      await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a' });
      expect((await backend.list({ queue: 'q' }, { limit: 10, cursor: null })).items).toHaveLength(1);
    } finally {
      other.close();
      await backend.close();
    }
  });
});
