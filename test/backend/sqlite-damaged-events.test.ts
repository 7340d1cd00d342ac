/**
 * A damaged row of a SQLite store's events table (data that is not JSON, a time out of range, the
 * type "gap": another program or a hand edit) is one event that cannot be shown, not the end of
 * `tail` or `inspect`: skipped with a warning naming it, the events around it shown. It ended the
 * command with "internal error … This is a bug in agentq".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { main } from '../../src/cli/main.js';
import { withDb } from '../support/sqlite-db.js';

const dir = mkdtempSync(join(tmpdir(), 'agentq-damaged-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: { isTTY: false, write: (s: string) => (out.push(s), true) }, stderr: { isTTY: false, write: (s: string) => (err.push(s), true) }, stdin: Object.assign(new PassThrough(), { isTTY: false }) };
  const code = await main(args, { io, env: {}, cwd: dir });
  return { code, out: out.join(''), err: err.join('') };
}

it('tail and inspect skip damaged event rows with a warning and show the others', async () => {
  const path = join(dir, 'store.db');
  const backend = new SqliteBackend({ path });
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'sq', tenant_id: 'a' })).job.job_id);
  await backend.close();
  const seqs = withDb(path, (db) => (db.prepare('SELECT seq FROM events ORDER BY seq').all() as Array<{ seq: number }>).map((r) => r.seq));
  withDb(path, (db) => {
    db.prepare("UPDATE events SET data = '{oops' WHERE seq = ?").run(seqs[1]);
    db.prepare('UPDATE events SET at = 99999999999999999 WHERE seq = ?').run(seqs[2]);
  });
  for (const extra of [[], ['--since', '2000-01-01'], ['--events', 'all']]) {
    const r = await cli(['--url', `sqlite:${path}`, 'tail', '--queue', 'sq', '-o', 'ndjson', ...extra]);
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n').map((l) => (JSON.parse(l) as { job_id: string }).job_id)).toEqual([ids[0], ids[3]]);
    expect(r.err).toBe(
      `warning: tail: event ${seqs[1]} of queue sq is damaged (its data is not JSON): skipped\n` + `warning: tail: event ${seqs[2]} of queue sq is damaged (its time "at" is not a time in epoch ms): skipped\n`,
    );
  }
  const r = await cli(['--url', `sqlite:${path}`, 'inspect', ids[1]!, '-o', 'plain']);
  expect(r.code).toBe(0);
  expect(r.err).toBe(`warning: inspect: event ${seqs[1]} of queue sq is damaged (its data is not JSON): skipped\n`);
});
