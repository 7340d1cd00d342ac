/**
 * A reading command never creates a store: pointed at a SQLite file that does not exist (a
 * mistyped --url) it fails naming the path (exit 78), where it used to create the directories
 * and an empty database and report it healthy (`dlq check` "ok", `metrics serve` answering 200).
 * Commands that add jobs create it (a dlq bulk action does not: a new store's DLQ is empty), and so
 * does any command for the embedded default store.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';

let home: CliHome;
beforeAll(() => {
  home = makeCliHome();
});
afterAll(() => home.cleanup());

const READING: string[][] = [
  ['list'],
  ['stats'],
  ['inspect', 'job_01JD3K5Z6Q8W9X0Y1Z2A3B4C5D'],
  ['tail', '--job', 'job_01JD3K5Z6Q8W9X0Y1Z2A3B4C5D'],
  ['metrics', 'serve', '--listen', '127.0.0.1:0'],
  ['dlq', 'check'],
  ['dlq', 'list'],
  ['dlq', 'show', 'job_01JD3K5Z6Q8W9X0Y1Z2A3B4C5D'],
  ['dlq', 'summary'],
  ['dlq', 'export'],
  ['dlq', 'runs'],
  ['dlq', 'runs', 'show', 'run_01JD3K5Z6Q8W9X0Y1Z2A3B4C5D'],
  ['dlq', 'redrive', '--all', '--dry-run'],
];

describe('a missing SQLite store', () => {
  it.each(READING.map((a) => [a.join(' '), a] as const))('%s: exit 78 naming the path; nothing is created', async (_name, args) => {
    const dir = join(home.dir, 'typo', args.join('-'));
    const path = join(dir, 'x.db');
    const r = await runCli(home, ['--url', `sqlite:${path}`, ...args]);
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: no agentq store at ${path}: a mistyped path? \`agentq submit\` creates it`);
    expect(existsSync(dir)).toBe(false);
  });

  it('an SQS URL whose store=sqlite: file is missing: the same', async () => {
    const path = join(home.dir, 'typo-sqs', 's.db');
    const r = await runCli(home, ['--url', `sqs://eu-west-1/agentq?endpoint=http://127.0.0.1:9&store=${encodeURIComponent(`sqlite:${path}`)}`, 'dlq', 'list']);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`no agentq store at ${path}`);
    expect(existsSync(join(home.dir, 'typo-sqs'))).toBe(false);
  });

  it('submit creates it, and reading commands then work', async () => {
    const path = join(home.dir, 'new', 'dir', 'x.db');
    await runCliOk(home, ['--url', `sqlite:${path}`, 'submit', 'w:v1', '--input', '{}']);
    expect(existsSync(path)).toBe(true);
    const r = await runCliOk(home, ['--url', `sqlite:${path}`, 'dlq', 'check']);
    expect(r.stdout + r.stderr).toMatch(/^ok/m);
  });

  it('regression: a bulk action that applies does not create it either (a typo answered "nothing to redrive", exit 0, from a new empty store)', async () => {
    for (const action of ['redrive', 'purge', 'expire']) {
      const dir = join(home.dir, 'bulk', action);
      const path = join(dir, 'x.db');
      const r = await runCli(home, ['--url', `sqlite:${path}`, 'dlq', action, '--all', '--yes']);
      expect(r.code, r.stderr).toBe(78);
      expect(r.stderr).toContain(`error: no agentq store at ${path}: a mistyped path?`);
      expect(existsSync(dir)).toBe(false);
    }
  });

  it('regression: a URL with a space or line break at an end (AGENTQ_URL="sqlite:./x.db ") is refused, exit 78: submit created a store named "x.db " that no worker reads', async () => {
    const dir = join(home.dir, 'spaces');
    const path = join(dir, 'x.db');
    for (const url of [`sqlite:${path} `, `sqlite:${path}\n`, ` sqlite:${path}`]) {
      const r = await runCli(home, ['submit', 'w:v1'], { env: { AGENTQ_URL: url } });
      expect(r.code, r.stderr).toBe(78);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('error: the backend URL ');
      expect(r.stderr).toContain('begins or ends with a space or line break');
      expect(existsSync(dir)).toBe(false);
    }
    const r = await runCli(home, ['--url', 'redis://u:s3cret@127.0.0.1:9\n', 'list']);
    expect(r.code, r.stderr).toBe(78);
    expect(r.stderr).toContain('"redis://u:***@127.0.0.1:9\\n"');
    expect(r.stderr).not.toContain('s3cret');
  });

  it('the embedded default store: a reading command on a fresh machine works (empty list, exit 0)', async () => {
    const fresh = makeCliHome();
    try {
      const r = await runCliOk(fresh, ['list']);
      expect(r.stdout).toBe('');
    } finally {
      fresh.cleanup();
    }
  });
});
