/**
 * A large bulk run's ledger (a prune of 200,000 finished jobs: one item per job) is written without
 * holding SQLite's write lock for the whole of it: a worker in another process, whose claims and
 * completions are writes, must get its turn while the ledger goes in, not wait the seconds the
 * whole ledger takes (nor, on a bigger one, past its busy timeout: "database is locked").
 * The other process takes the write lock again and again and reports its longest wait.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import type { RunRecord } from '../../src/backend/contract.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-ledger-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A process that takes the write lock (BEGIN IMMEDIATE; COMMIT) in a loop until its stdin ends; prints its longest wait. */
const WRITER = String.raw`
import Database from 'better-sqlite3';
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 60000');
let max = 0, n = 0, stop = false;
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();
const loop = () => {
  const t = performance.now();
  db.exec('BEGIN IMMEDIATE');
  db.exec('COMMIT');
  max = Math.max(max, performance.now() - t);
  if (++n === 1) process.stdout.write('ready\n');
  if (stop) { process.stdout.write(JSON.stringify({ max, n }) + '\n'); process.exit(0); }
  setTimeout(loop, 1);
};
loop();
`;

it('a worker waits for the write lock far less than the whole ledger of 200,000 items takes to write', async () => {
  const path = join(dir, 'store.db');
  const backend = new SqliteBackend({ path });
  await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a' });
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, path], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => ((out += d.toString()), out.includes('ready') && resolve())));
  const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await ready;
    const items = Array.from({ length: 200_000 }, (_, i) => ({ job_id: `job_${String(i).padStart(26, '0')}`, verdict: 'prune' as const, detail: null }));
    const now = new Date().toISOString();
    const run: RunRecord = {
      run_id: 'run_01M8QNVZDBJPE6SMQZ5SB7PX00',
      action: 'prune',
      queue: 'q',
      status: 'planned',
      created_at: now,
      updated_at: now,
      user: 'u@h',
      context: null,
      reason: null,
      filters: {},
      options: {},
      counts: { planned: 0, moved: 0, skipped: 0, failed: 0 },
    };
    const t = performance.now();
    await backend.createRun(run, items);
    const took = performance.now() - t;
    child.stdin.end();
    await done;
    const { max } = JSON.parse(out.slice(out.indexOf('{'))) as { max: number; n: number };
    expect(await backend.getRun(run.run_id)).toMatchObject({ status: 'planned', counts: { planned: 200_000 } });
    expect((await backend.ledger(run.run_id, { limit: 10, cursor: null })).items).toHaveLength(10);
    // the whole ledger took `took`; the other writer never waited more than a small part of it
    expect(max, `longest wait ${max.toFixed(0)} ms while the ledger took ${took.toFixed(0)} ms`).toBeLessThan(Math.min(400, took / 2));
  } finally {
    child.kill();
    await backend.close();
  }
}, 60_000);
