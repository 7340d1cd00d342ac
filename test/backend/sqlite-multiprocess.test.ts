/**
 * Several OS processes on one SQLite file, as when a few `agentq worker`s and
 * producers share the embedded default: no SQLITE_BUSY errors, no lost
 * writes, every job claimed exactly once, and idempotency keys hold across
 * processes. Children run the built adapter (dist/), so `npm run build` first
 * (`npm test` does).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BUILT = join(ROOT, 'dist/backend/sqlite/index.js');

const CHILD = `
import { SqliteBackend } from ${JSON.stringify(pathToFileURL(BUILT).href)};
const [path, role, name, countText, expectedText] = process.argv.slice(2);
const backend = new SqliteBackend({ path });
const deadline = Date.now() + 90_000;
try {
  if (role === 'submit') {
    const n = Number(countText);
    for (let i = 0; i < n; i++) {
      await backend.submit({ workflow: 'mp:v1', queue: 'mp', tenant_id: 't' + (i % 3), idempotency_key: name + '-' + i, input: String(i) });
      // Every producer also sends the same shared keys: each must create exactly one job.
      if (i % 6 === 0) await backend.submit({ workflow: 'mp:v1', queue: 'mp', idempotency_key: 'shared-' + i, input: 'shared' });
    }
    // And a burst in one group commit, duplicates of the shared keys included.
    await Promise.all(Array.from({ length: n }, (_, i) => i).filter((i) => i % 6 === 0).map((i) =>
      backend.submit({ workflow: 'mp:v1', queue: 'mp', idempotency_key: 'shared-' + i, input: 'shared' })));
  } else {
    const expected = Number(expectedText);
    for (;;) {
      if (Date.now() > deadline) throw new Error('claimer gave up: not all jobs succeeded in time');
      const leases = await backend.claim({ queue: 'mp', workerId: name, max: 8, leaseMs: 600_000 });
      // Completed concurrently: they share one group commit, interleaved with the other processes' transactions.
      await Promise.all(leases.map((l) => backend.complete(l, name)));
      for (const l of leases) process.stdout.write(l.jobId + '\\n');
      if (leases.length === 0) {
        const s = await backend.stats('mp');
        if (s.counts.succeeded >= expected) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }
} finally {
  await backend.close();
}
`;

function run(args: string[], script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

describe('sqlite: several processes on one file', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
    const src = join(ROOT, 'src/backend/sqlite');
    const newest = Math.max(...readdirSync(src).map((f) => statSync(join(src, f)).mtimeMs));
    if (newest > statSync(BUILT).mtimeMs) throw new Error('dist/ is older than src/backend/sqlite: run npm run build first');
    dir = mkdtempSync(join(tmpdir(), 'agentq-mp-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('submits and claims concurrently without errors, losing or doubling nothing', async () => {
    const script = join(dir, 'child.mjs');
    writeFileSync(script, CHILD);
    const path = join(dir, 'shared.db');
    const producers = 3;
    const perProducer = 300;
    const sharedKeys = Math.ceil(perProducer / 6);
    const expected = producers * perProducer + sharedKeys;
    // Everyone starts at once on a file that does not exist yet: schema creation races too.
    const results = await Promise.all([
      ...Array.from({ length: producers }, (_, i) => run([path, 'submit', `p${i}`, String(perProducer)], script)),
      ...Array.from({ length: 3 }, (_, i) => run([path, 'claim', `w${i}`, '0', String(expected)], script)),
    ]);
    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    const claimed = results.flatMap((r) => r.stdout.split('\n').filter(Boolean));
    expect(claimed).toHaveLength(expected);
    expect(new Set(claimed).size).toBe(expected);

    const backend = new SqliteBackend({ path });
    try {
      const stats = await backend.stats('mp');
      expect(stats.counts).toMatchObject({ queued: 0, running: 0, succeeded: expected });
      let total = 0;
      let cursor: string | null = null;
      do {
        const page = await backend.list({ queue: 'mp' }, { limit: 1000, cursor });
        for (const j of page.items) {
          expect(j.state).toBe('succeeded');
          expect(j.attempt).toBe(1);
        }
        total += page.items.length;
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(total).toBe(expected);
      // One claimed and one succeeded event per job: no claim was lost or doubled.
      let claimedEvents = 0;
      for await (const e of backend.events({ queue: 'mp' })) if (e.type === 'claimed') claimedEvents++;
      expect(claimedEvents).toBe(expected);
    } finally {
      await backend.close();
    }
  }, 120_000);
});
