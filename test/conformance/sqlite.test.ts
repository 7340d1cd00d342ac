/** The conformance suite on the embedded SQLite backend (a temp file per test, as in production). */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { damageSqliteDlqEntry, type DlqDamage } from './fixture.js';
import { runConformanceSuite } from './suite.js';

runConformanceSuite('sqlite', async (opts = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-conf-'));
  const path = join(dir, 'agentq.db');
  const clock = new ManualClock();
  const backend = new SqliteBackend({ path, clock, random: seededRandom(42), ...opts });
  let seq = 0;
  return {
    backend,
    clock,
    async cleanup() {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
    async damageDlqEntry(jobId: string, damage?: DlqDamage) {
      const db = new Database(path);
      try {
        db.pragma('busy_timeout = 5000');
        damageSqliteDlqEntry(db, jobId, damage);
      } finally {
        db.close();
      }
    },
    // A row written by something other than agentq (an old version, a hand edit): the document is not JSON.
    async injectMalformedDlqEntry(queue: string) {
      const id = `job_01JMALFORMED${String(seq++).padStart(14, '0')}`;
      const db = new Database(path);
      try {
        db.pragma('busy_timeout = 5000');
        db.prepare(
          `INSERT INTO jobs (id, queue, state, tenant, class, workflow, created_at, updated_at, run_at, max_attempts, dead_at, dead_reason, error_code, error_message, doc)
           VALUES (?, ?, 'dead', 'acme', 'batch', 'research_report:v3', ?, ?, ?, 3, ?, 'permanent', 'VALIDATION', 'garbled', ?)`,
        ).run(id, queue, clock.now(), clock.now(), clock.now(), clock.now(), '{"job_id": "' + id + '", "state": "dead", truncated');
      } finally {
        db.close();
      }
      return id;
    },
  };
});
