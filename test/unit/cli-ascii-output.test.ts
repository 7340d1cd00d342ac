/**
 * The CLI in a non-UTF-8 locale (LANG=C, LC_ALL=POSIX, unset): agentq's own glyphs in tables,
 * notes, errors and help come out in ASCII; data formats (json, ndjson, plain) keep their bytes.
 * Run in-process through `main` with a terminal-like stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { main } from '../../src/cli/main.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function terminal(columns = 80) {
  let out = '';
  let err = '';
  const stdout = { isTTY: true, columns, write: (s: string) => ((out += s), true) };
  const stderr = { isTTY: true, write: (s: string) => ((err += s), true) };
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  return { io: { stdout, stderr, stdin }, out: () => out, err: () => err };
}

const nonAscii = (s: string) => [...new Set([...s].filter((c) => c.codePointAt(0)! >= 0x80))];

async function store(): Promise<{ path: string; id: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentq-ascii-'));
  dirs.push(dir);
  const path = join(dir, 'q.db');
  const b = new SqliteBackend({ path });
  const { job } = await b.submit({ workflow: 'a_workflow_name_long_enough_to_be_cut_in_an_eighty_column_table:v1', queue: 'research', tenant_id: 'acme', input: '{"step":"fetch → summarise…"}' });
  await b.close();
  return { path, id: job.job_id };
}

function run(args: string[], env: Record<string, string>, path: string, columns = 80) {
  const t = terminal(columns);
  const code = main([...args, '--color', 'never'], { io: t.io, env: { TERM: 'xterm', ...env }, cwd: tmpdir(), openBackend: async () => new SqliteBackend({ path }) });
  return { code, out: t.out, err: t.err };
}

describe('the CLI in a non-UTF-8 locale', () => {
  it.each<Record<string, string>>([{ LANG: 'C' }, { LC_ALL: 'POSIX', LANG: 'en_US.UTF-8' }, {}])('a table cuts with ~ and shows no non-ASCII byte (%o)', async (env) => {
    const { path } = await store();
    const r = run(['list'], env, path);
    expect(await r.code).toBe(0);
    expect(nonAscii(r.out())).toEqual([]);
    expect(r.out()).toMatch(/a_workf\S*~/);
  });

  it('keeps its glyphs in a UTF-8 locale, and with AGENTQ_ASCII=0', async () => {
    const { path } = await store();
    for (const env of [{ LANG: 'en_US.UTF-8' }, { LANG: 'C', AGENTQ_ASCII: '0' }] as Record<string, string>[]) {
      const r = run(['list'], env, path);
      expect(await r.code).toBe(0);
      expect(r.out()).toMatch(/a_workf\S*…/);
    }
  });

  it('AGENTQ_ASCII=1 forces ASCII in a UTF-8 locale', async () => {
    const { path } = await store();
    const r = run(['list'], { LANG: 'en_US.UTF-8', AGENTQ_ASCII: '1' }, path);
    expect(await r.code).toBe(0);
    expect(nonAscii(r.out())).toEqual([]);
  });

  it('errors and hints are ASCII (≥ becomes >=)', async () => {
    const { path } = await store();
    const r = run(['dlq', 'list', '--min-attempts', 'x'], { LANG: 'C' }, path);
    expect(await r.code).toBe(2);
    expect(r.err()).toContain('must be a whole number >= 0');
    expect(nonAscii(r.err())).toEqual([]);
  });

  it('help is ASCII', async () => {
    const { path } = await store();
    const r = run(['inspect', '--help'], { LANG: 'C' }, path);
    expect(await r.code).toBe(0);
    expect(r.out()).toContain('agentq inspect job_01JD3K...');
    expect(nonAscii(r.out())).toEqual([]);
  });

  it('json and plain output keep the data byte for byte', async () => {
    const { path, id } = await store();
    const json = run(['inspect', id, '-o', 'json'], { LANG: 'C' }, path);
    expect(await json.code).toBe(0);
    expect(JSON.parse(json.out()).input).toBe('{"step":"fetch → summarise…"}');
    const plain = run(['list', '-o', 'plain'], { LANG: 'C' }, path);
    expect(await plain.code).toBe(0);
    expect(plain.out()).toContain('a_workflow_name_long_enough_to_be_cut_in_an_eighty_column_table:v1');
  });
});
