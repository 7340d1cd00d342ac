/**
 * Confirmation prompts on a real terminal (tmux), through the installed entry
 * (bin/agentq.js → the bundle, compiled with its V8 code cache as a person's
 * `agentq` is). On Node 20 an `import()` inside cached code fails; the prompt
 * once loaded node:readline that way, so every confirmation on a terminal
 * ended in "internal error: A dynamic import callback was not specified",
 * which tests with `--yes` or without a terminal never saw. Run
 * `npm run build` first (`npm test` does).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { AGENTQ_BIN, makeCliHome, REPO_ROOT, type CliHome } from '../support/cli.js';
import { seedDlq } from '../tui/support/seed.js';
import { TmuxPane } from '../tui/support/tmux.js';

const CACHED_MAIN_CHUNK = join(REPO_ROOT, 'dist', 'bundle', 'agentq.cjs.v8cache');

describe('confirmation prompts on a terminal', () => {
  let home: CliHome;
  let path: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    // Without the cache this test would pass on the broken code too: the build must have made it.
    if (!existsSync(CACHED_MAIN_CHUNK)) throw new Error('dist/bundle has no code cache: run `npm run build` first (npm test does)');
    home = makeCliHome('agentq-prompt-e2e-');
    path = join(home.dir, 'agentq.db');
    const clock = new ManualClock(Date.now());
    const backend = new SqliteBackend({ path, clock });
    await seedDlq(backend, clock, 'research', [
      { errorCode: 'PROVIDER_429' },
      { errorCode: 'PROVIDER_429' },
      { errorCode: 'PROVIDER_429' },
      { errorCode: 'SCHEMA_INVALID' },
    ]);
    await backend.close();
    env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
  }, 60_000);

  afterAll(() => home?.cleanup());

  const inPane = (args: string[]) => TmuxPane.start(['node', AGENTQ_BIN, '--url', `sqlite:${path}`, ...args], env, { columns: 160, rows: 30 }, { stderrOnScreen: true });

  async function dlqCount(errorCode: string): Promise<number> {
    const backend = new SqliteBackend({ path });
    try {
      return (await backend.dlqList({ queue: 'research', errorCodes: [errorCode] }, { limit: 100 })).items.length;
    } finally {
      await backend.close();
    }
  }

  it('dlq purge asks [y/N]; "n" declines with exit 3 and changes nothing', async () => {
    const pane = inPane(['dlq', 'purge', '--queue', 'research', '--error-code', 'SCHEMA_INVALID']);
    try {
      await pane.waitFor('purge 1 job? [y/N]');
      pane.type('n');
      pane.keys('Enter');
      expect(await pane.exitStatus()).toBe(3);
      const screen = pane.capture();
      expect(screen).toContain('declined: nothing was changed');
      expect(screen).not.toContain('internal error');
    } finally {
      pane.kill();
    }
    expect(await dlqCount('SCHEMA_INVALID')).toBe(1);
  });

  it('Ctrl-C at the prompt exits 130 and changes nothing', async () => {
    const pane = inPane(['dlq', 'purge', '--queue', 'research', '--error-code', 'SCHEMA_INVALID']);
    try {
      await pane.waitFor('purge 1 job? [y/N]');
      pane.keys('C-c');
      expect(await pane.exitStatus()).toBe(130);
      expect(pane.capture()).toContain('interrupted at the prompt: nothing was changed');
    } finally {
      pane.kill();
    }
    expect(await dlqCount('SCHEMA_INVALID')).toBe(1);
  });

  it('regression: SIGTERM at the prompt (a supervisor, a closed session) ends it at once: exit 143, nothing changed', async () => {
    // The first SIGTERM only asked the command to stop at a safe point, which a prompt never
    // reaches: it waited on for an answer until a second signal.
    const pane = inPane(['dlq', 'purge', '--queue', 'research', '--error-code', 'SCHEMA_INVALID']);
    try {
      await pane.waitFor('purge 1 job? [y/N]');
      pane.signal('SIGTERM');
      expect(await pane.exitStatus(20_000)).toBe(143);
      expect(pane.capture()).toContain('interrupted at the prompt: nothing was changed');
      expect(pane.capture()).not.toContain('waiting for the store');
    } finally {
      pane.kill();
    }
    expect(await dlqCount('SCHEMA_INVALID')).toBe(1);
  });

  it('dlq redrive asks [y/N]; "y" runs the redrive to the end', async () => {
    const pane = inPane(['dlq', 'redrive', '--queue', 'research', '--error-code', 'PROVIDER_429', '--reason', 'provider fixed']);
    try {
      await pane.waitFor('redrive 3 jobs? [y/N]');
      pane.type('y');
      pane.keys('Enter');
      expect(await pane.exitStatus()).toBe(0);
      const screen = pane.capture();
      expect(screen).toContain('finished: moved=3 skipped=0 failed=0');
      expect(screen).not.toContain('internal error');
    } finally {
      pane.kill();
    }
    expect(await dlqCount('PROVIDER_429')).toBe(0);
  });
});
