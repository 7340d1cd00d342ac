/**
 * Conformance fixtures for the SQS backend: fauxqs (started once per test
 * file, loopback only) as the broker, a fresh queue prefix and store file per
 * case. The store runs on the suite's manual clock while SQS visibility runs
 * on real time, so the fixture sets `maxVisibilitySeconds: 0` (see
 * SqsBackendOptions): messages come straight back and the store alone
 * decides what is due — the same decisions, without real waiting. The
 * real-visibility behaviour is proven in test/backend/sqs-*.test.ts.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { damageSqliteDlqEntry, type DlqDamage, type MakeFixture } from './fixture.js';

let seq = 0;

/** Dummy credentials for the emulator, through the SDK's default chain (env), as a user would set them. */
export function useEmulatorCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
}

export function sqsUrl(endpoint: string, prefix: string, storePath: string, extra = ''): string {
  return `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint)}&store=${encodeURIComponent(`sqlite:${storePath}`)}${extra}`;
}

/** `extraUrl` adds URL parameters to every case's backend (e.g. `&fifo=job` for the FIFO variant). */
export function sqsFixtureFactory(endpoint: () => string, extraUrl = ''): MakeFixture {
  useEmulatorCredentials();
  return async (opts) => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-sqs-conf-'));
    const path = join(dir, 'store.db');
    const clock = new ManualClock();
    const prefix = `c${process.pid}x${++seq}`;
    const url = sqsUrl(endpoint(), prefix, path, `&autocreate=1&wait=0&max_receive_count=1000${extraUrl}`);
    const backend = new SqsBackend({
      url: parseSqsUrl(url, url),
      shown: url,
      clock,
      random: seededRandom(seq),
      admission: opts?.admission,
      fairness: opts?.fairness,
      maxVisibilitySeconds: 0,
    });
    let n = 0;
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
      async injectMalformedDlqEntry(queue: string) {
        const id = `job_01JMALFORMED${String(n++).padStart(14, '0')}`;
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
  };
}
