/**
 * A second connection to a SQLite store's file, as an operator, an older
 * version or a test's own check would open one, and the recount every
 * counter test compares the store's kept counters against.
 */
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { DEFAULT_ESTIMATED_SECONDS } from '../../src/core/admission.js';

/** Runs `fn` on its own connection to the file at `path`, closed afterwards. */
export function withDb<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    return fn(db);
  } finally {
    db.close();
  }
}

export type Rows = Array<Record<string, unknown>>;

/** Rows in an order-free form, for comparing a counter table with a recount. */
export const sorted = (rows: Rows): string[] => rows.map((r) => JSON.stringify(r)).sort();

/** The per-state, per-tenant and backlog counters against a recount of the jobs table. */
export function expectStateCountersMatchRecount(db: Database.Database): void {
  const all = (sql: string) => db.prepare(sql).all() as Rows;
  expect(sorted(all(`SELECT queue, state, n FROM queue_counts WHERE n <> 0`))).toEqual(sorted(all(`SELECT queue, state, count(*) AS n FROM jobs GROUP BY queue, state`)));
  expect(sorted(all(`SELECT queue, class, tenant, state, n FROM tenant_counts`))).toEqual(
    sorted(all(`SELECT queue, class, tenant, state, count(*) AS n FROM jobs GROUP BY queue, class, tenant, state`)),
  );
  const est = `coalesce(estimated_seconds, ${DEFAULT_ESTIMATED_SECONDS})`;
  expect(sorted(all(`SELECT queue, dim, name, seconds FROM backlog WHERE seconds <> 0`))).toEqual(
    sorted(
      all(`SELECT queue, 'class' AS dim, class AS name, sum(${est}) AS seconds FROM jobs WHERE state IN ('queued','scheduled') GROUP BY queue, class
           UNION ALL
           SELECT queue, 'tenant' AS dim, tenant AS name, sum(${est}) AS seconds FROM jobs WHERE state IN ('queued','scheduled') GROUP BY queue, tenant`),
    ),
  );
}
