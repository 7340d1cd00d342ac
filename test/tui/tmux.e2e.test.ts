/**
 * The built CLI in a real terminal (tmux): filter → select → redrive →
 * confirm, then the store is checked. Run `npm run build` first (`npm test` does).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { AGENTQ_BIN, makeCliHome, REPO_ROOT, runCli, type CliHome } from '../support/cli.js';
import { hasEscapeByte } from '../support/hostile.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { openBackend } from '../../src/backend/open.js';
import { seedDlq, type DeadJobSpec } from './support/seed.js';
import { TmuxPane } from './support/tmux.js';
import { pollUntil } from '../support/poll.js';

const DIST_MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');

describe('agentq dlq browse in a real terminal', () => {
  let home: CliHome;
  let url: string;
  let ids: string[];

  beforeAll(async () => {
    if (!existsSync(DIST_MAIN)) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    home = makeCliHome('agentq-tui-e2e-');
    const path = join(home.dir, 'agentq.db');
    url = `sqlite:${path}`;
    // Seed ten minutes in the past, so deadlines of a few minutes have passed by now.
    const clock = new ManualClock(Date.now() - 10 * 60_000);
    const backend = new SqliteBackend({ path, clock });
    const specs: DeadJobSpec[] = [
      ...Array.from({ length: 26 }, (_, i) => ({ errorCode: 'PROVIDER_429', tenant: i % 2 ? 'acme' : 'globex' })),
      { errorCode: 'PROVIDER_429', deadlineInMs: 60_000 },
      { errorCode: 'PROVIDER_429', deadlineInMs: 60_000 },
      { errorCode: 'PROVIDER_429', isPartial: true },
      { errorCode: 'PROVIDER_429', isPartial: true },
      ...Array.from({ length: 6 }, () => ({ errorCode: 'SCHEMA_INVALID', errorMessage: 'output failed validation' })),
    ];
    ids = await seedDlq(backend, clock, 'research', specs);
    await backend.close();
  }, 60_000);

  afterAll(() => home?.cleanup());

  it('exits 2 with a clear message when not on a terminal (no raw-mode crash, no escape bytes)', async () => {
    const r = await runCli(home, ['--url', url, 'dlq', 'browse', '--queue', 'research']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agentq dlq browse is interactive and needs a terminal');
    expect(r.stderr).not.toContain('Raw mode');
    expect(hasEscapeByte(r.stdoutBytes)).toBe(false);
    const alias = await runCli(home, ['--url', url, 'tui']);
    expect(alias.code).toBe(2);
  });

  it('refuses TERM=dumb like a non-terminal: exit 2 with the reason, the screen never taken', async () => {
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'tui', '--queue', 'research'], { ...home.env, TERM: 'dumb', LANG: 'C.UTF-8' }, { columns: 120, rows: 30 });
    try {
      expect(await pane.exitStatus()).toBe(2);
      expect(pane.stderr()).toContain('agentq dlq browse is interactive and needs a terminal: TERM is "dumb"');
      expect(pane.info('#{alternate_on}')).toBe('0');
    } finally {
      pane.kill();
    }
  }, 120_000);

  // Regression: with DEV=true in the environment (set by many shells and CI set-ups for their own
  // tools) Ink went looking for React devtools and its own package.json next to the bundle: a
  // warning to install react-devtools-core, then "internal error: ENOENT … dist/package.json", exit 1.
  it('starts as usual with DEV=true in the environment (Ink\'s devtools switch), saying nothing about devtools', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8', DEV: 'true' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research'], env, { columns: 160, rows: 40 });
    try {
      await pane.waitFor(/total \d+ · shown \d+/);
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
      expect(pane.stderr()).not.toMatch(/devtools|internal error/);
    } finally {
      pane.kill();
    }
  }, 120_000);

  // Regression: a paste was read as typed keys. `q a e` and a job id pasted into the list quit the
  // app (or opened pickers, selected everything, hid expired jobs); a line pasted into / with its
  // line break submitted it. The app turns on bracketed paste, so tmux and terminals mark a paste.
  it('a paste (tmux paste-buffer -p) is never keys in the list and is text in /; bracketed paste is off again after q', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research'], env, { columns: 160, rows: 40 });
    try {
      const ptyLog = join(home.dir, 'pty-paste.log');
      pane.tmux('pipe-pane', '-t', 'tui:0.0', '-o', `cat >> '${ptyLog}'`);
      await pane.waitFor('total 36 · shown 36');
      pane.tmux('set-buffer', '-b', 'keys', `q a e ${ids[0]}\n`);
      pane.tmux('paste-buffer', '-p', '-b', 'keys', '-t', 'tui:0.0');
      const after = await pane.waitFor('a paste is not typed here');
      expect(after).toContain('total 36 · shown 36 · expired 2 · partial 2 · selected 0\n');
      // The terminal has marked a paste: Enter and a key sent in one write (a laggy ssh) are two
      // keys, not a pasted line break (the Enter was lost): the entry opens, j scrolls it.
      pane.tmux('send-keys', '-t', 'tui:0.0', '-l', '\rj');
      await pane.waitFor('Esc back · j/k PgUp/PgDn scroll');
      pane.keys('Escape');
      await pane.waitFor((sc) => !sc.includes('j/k PgUp/PgDn scroll'));
      pane.keys('/');
      pane.tmux('set-buffer', '-b', 'id', `${ids[0]}\n`);
      pane.tmux('paste-buffer', '-p', '-b', 'id', '-t', 'tui:0.0');
      const filtered = await pane.waitFor(`/${ids[0]}    Enter keep`);
      expect(filtered).toContain(' · shown 1 · ');
      pane.keys('Escape', 'q');
      expect(await pane.exitStatus()).toBe(0);
      await pollUntil(() => {
        const out = readFileSync(ptyLog, 'latin1');
        // (and the terminal asked whether it marks pastes, DECRQM: tmux 3.3 does not answer)
        return out.includes('\x1b[?2004h') && out.includes('\x1b[?2004$p') && out.lastIndexOf('\x1b[?2004l') > out.lastIndexOf('\x1b[?2004h');
      }, { what: 'bracketed paste turned on, then off again', timeoutMs: 10_000 });
    } finally {
      pane.kill();
    }
  }, 120_000);

  // Regression: the "too small" note filled its line to the last column; narrowed, the terminal
  // (tmux) re-wrapped it into two lines, Ink erased one, and the first half of the old note stayed
  // on screen above the new one ("this terminal (100×5) is too small…" over "…(60×4)…").
  it('narrowing a terminal that is too small shows the one-line note once, nothing left of the old one', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research'], env, { columns: 100, rows: 30 });
    try {
      await pane.waitFor('total 36 · shown 36');
      const nonEmpty = (s: string) => s.split('\n').filter((l) => l.trim() !== '');
      for (const [x, y] of [[100, 5], [60, 4], [40, 5], [25, 3]] as const) {
        pane.tmux('resize-window', '-t', 'tui', '-x', String(x), '-y', String(y));
        const screen = await pane.waitFor(`(${x}×${y})`);
        expect(nonEmpty(screen), `${x}×${y}`).toHaveLength(1);
      }
      pane.tmux('resize-window', '-t', 'tui', '-x', '100', '-y', '30');
      await pane.waitFor('total 36 · shown 36');
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
    } finally {
      pane.kill();
    }
  }, 120_000);

  it('with the backend unreachable it fails at start-up like other commands: exit 75 with the message, the screen never taken', async () => {
    const port = await freePort(); // nothing listens there
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', `redis://127.0.0.1:${port}`, 'tui', '--queue', 'research'], env, { columns: 120, rows: 30 });
    try {
      expect(await pane.exitStatus()).toBe(75);
      expect(pane.stderr()).toContain(`error: Redis at 127.0.0.1:${port} is unavailable`);
      expect(pane.capture()).not.toContain('the DLQ is empty');
      expect(pane.info('#{alternate_on}')).toBe('0');
    } finally {
      pane.kill();
    }
  }, 120_000);

  it('filter → select all → R → type the count → Redrive, then q restores the terminal', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research', '--rate', '0'], env, { columns: 160, rows: 40 });
    try {
      // Everything the app writes to the terminal, to check the bytes it ends with.
      const ptyLog = join(home.dir, 'pty.log');
      pane.tmux('pipe-pane', '-t', 'tui:0.0', '-o', `cat >> '${ptyLog}'`);
      await pane.waitFor(/total 36 · shown 36 · expired 2 · partial 2/);
      expect(pane.info('#{alternate_on}')).toBe('1');
      const first = pane.capture();
      expect(first.trimEnd().split('\n').length).toBeLessThanOrEqual(39);

      // Resizing: the list follows the new height, and the frame stays one line shorter than the terminal.
      pane.tmux('resize-window', '-t', 'tui', '-x', '100', '-y', '15');
      const small = await pane.waitFor((s: string) => s.split('\n').filter((l) => l.includes('job_')).length === 15 - 1 - 4);
      expect(small.trimEnd().split('\n').length).toBeLessThanOrEqual(14);
      pane.tmux('resize-window', '-t', 'tui', '-x', '160', '-y', '40');
      await pane.waitFor((s: string) => s.split('\n').filter((l) => l.includes('job_')).length === 40 - 1 - 4);

      pane.keys('/');
      pane.type('429');
      pane.keys('Enter');
      await pane.waitFor('shown 30');
      pane.keys('e');
      await pane.waitFor('shown 28');
      pane.keys('a');
      await pane.waitFor('selected 28 (all 28 matching text="429" no expired)');
      pane.keys('R');
      const dialog = await pane.waitFor('Type 26 to confirm');
      expect(dialog).toMatch(/redrive\s+26/);
      expect(dialog).toMatch(/skip: partial effects\s+2/);
      expect(dialog).toContain('> Cancel <');
      pane.type('26');
      pane.keys('Tab', 'Enter');
      const done = await pane.waitFor(/Redrive finished: run (run_[0-9A-Z]{26})/);
      expect(done).toMatch(/moved 26 · skipped 2 · failed 0 · status completed/);
      const runId = /run (run_[0-9A-Z]{26})/.exec(done)![1]!;

      pane.keys('Enter');
      await pane.waitFor('total 10 · shown 2');
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
      expect(pane.info('#{alternate_on}')).toBe('0');
      // The cursor is shown again: the alternate screen was left, and the last cursor escape the
      // terminal got shows it. (Read from the bytes: a dead pane's #{cursor_flag} is not reliable.
      // Polled: the pipe may deliver the last bytes after the exit status is in.)
      await pollUntil(() => {
        const out = readFileSync(ptyLog, 'latin1');
        return out.includes('\x1b[?1049l') && out.lastIndexOf('\x1b[?25h') > out.lastIndexOf('\x1b[?25l');
      }, { what: 'the cursor shown and the main screen back', timeoutMs: 10_000 });
      // nothing on the redirected stderr, not even the cursor's show escape (it goes to the terminal)
      expect(JSON.stringify(pane.stderr())).toBe('""');

      const backend = new SqliteBackend({ path: url.slice('sqlite:'.length) });
      try {
        const run = await backend.getRun(runId);
        expect(run).toMatchObject({ action: 'redrive', queue: 'research', status: 'completed', counts: { moved: 26, skipped: 2, planned: 0, failed: 0 } });
        const dlq = await backend.dlqList({ queue: 'research' }, { limit: 100 });
        expect(dlq.items.map((e) => e.job_id).sort()).toEqual([...ids.slice(26, 30), ...ids.slice(30)].sort());
        for (const id of ids.slice(0, 26)) {
          expect(await backend.get(id)).toMatchObject({ state: 'queued', lineage: { redrive_count: 1, redrive_run: runId } });
        }
      } finally {
        await backend.close();
      }
    } finally {
      pane.kill();
    }
  }, 120_000);

  it('in a read-only context: the header says so and R is refused with the reason', async () => {
    const configDir = join(home.env.XDG_CONFIG_HOME!, 'agentq');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ contexts: { 'prod-ro': { url, readOnly: true, queue: 'research' } } }));
    const countDlq = async () => {
      const backend = new SqliteBackend({ path: url.slice('sqlite:'.length) });
      try {
        return (await backend.dlqList({ queue: 'research' }, { limit: 1000 })).items.length;
      } finally {
        await backend.close();
      }
    };
    const before = await countDlq();
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--context', 'prod-ro', 'tui'], env, { columns: 160, rows: 30 });
    try {
      const screen = await pane.waitFor(`total ${before} · shown ${before}`);
      expect(screen).toContain('context prod-ro');
      expect(screen).toContain('[read-only]');
      pane.keys('Space', 'R');
      await pane.waitFor('redrive disabled: context "prod-ro" is read-only');
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
    } finally {
      pane.kill();
    }
    expect(await countDlq()).toBe(before);
  }, 120_000);
});

describe('agentq dlq browse when its SQLite store file goes away', () => {
  let home: CliHome;

  beforeAll(() => {
    if (!existsSync(DIST_MAIN)) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    home = makeCliHome('agentq-tui-gone-');
  });

  afterAll(() => home?.cleanup());

  /** A store of three dead jobs at `name` in the home directory. */
  const seeded = async (name: string): Promise<string> => {
    const path = join(home.dir, name);
    const clock = new ManualClock(Date.now());
    const backend = new SqliteBackend({ path, clock });
    await seedDlq(backend, clock, 'research', Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })));
    await backend.close();
    return path;
  };

  it('removed or replaced, a redrive and a reload say so instead of changing and reading the old file, which no other process sees', async () => {
    const path = await seeded('gone.db');
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', `sqlite:${path}`, 'dlq', 'browse', '--queue', 'research', '--rate', '0'], env, { columns: 120, rows: 30 });
    try {
      await pane.waitFor('total 3 · shown 3');
      // Restored from a backup with mv: another file now has the path.
      const other = await seeded('other.db');
      renameSync(other, path);
      pane.keys('Space', 'R');
      const refused = await pane.waitFor('Redrive not done');
      expect(refused.replace(/[│\s]+/g, ' ')).toContain(`the agentq store at ${path} was replaced by another file since agentq dlq browse opened it`);
      // Enter, then r once the list is back: sent at once, tmux may hand both over in one read
      // ("\rr"), which the app takes for a pasted line break (nothing outside a text field) and an r.
      pane.keys('Enter');
      await pane.waitFor((sc) => !sc.includes('Redrive not done') && sc.includes('selected 1'));
      pane.keys('r');
      const reload = await pane.waitFor('The DLQ is not loaded');
      expect(reload.replace(/\s+/g, ' ')).toContain(`the agentq store at ${path} was replaced by another file since agentq dlq browse opened it`);
      const now = new SqliteBackend({ path });
      try {
        expect((await now.dlqRows({ queue: 'research' }, { limit: 10 })).items.length).toBe(3);
        expect((await now.listRuns({}, { limit: 10 })).items).toEqual([]);
      } finally {
        await now.close();
      }
      // Removed: a redrive of what is on screen would change a file no other process can see.
      rmSync(path);
      pane.keys('r');
      await pane.waitFor((sc) => sc.replace(/\s+/g, ' ').includes(`the agentq store at ${path} was removed since agentq dlq browse opened it`));
      pane.keys('q');
      // The session's only redrive was refused (its plan was never built): not a success.
      expect(await pane.exitStatus(), pane.stderr()).toBe(78);
      expect(pane.info('#{alternate_on}')).toBe('0');
      expect(pane.stderr().replace(/\s+/g, ' ')).toContain(`a redrive failed before its run was recorded (the agentq store at ${path} was replaced by another file since agentq dlq browse opened it`);
    } finally {
      pane.kill();
    }
  }, 120_000);
});

describe('agentq dlq browse told to stop (SIGTERM, SIGHUP)', () => {
  let home: CliHome;
  let url: string;
  let path: string;

  beforeAll(async () => {
    home = makeCliHome('agentq-tui-signal-');
    path = join(home.dir, 'agentq.db');
    url = `sqlite:${path}`;
    const clock = new ManualClock(Date.now());
    const backend = new SqliteBackend({ path, clock });
    await seedDlq(backend, clock, 'research', Array.from({ length: 12 }, () => ({ errorCode: 'PROVIDER_429' })));
    await backend.close();
  }, 60_000);

  afterAll(() => home?.cleanup());

  const env = () => ({ ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' });

  it('SIGTERM during a redrive: the batch finishes, the run is recorded interrupted, the lock is released, exit 130 with the resume command', async () => {
    // One job per batch, two per second: the run is still going when the signal comes.
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research', '--rate', '2', '--batch-size', '1'], env(), { columns: 160, rows: 30 });
    try {
      await pane.waitFor('total 12 · shown 12');
      pane.keys('a', 'R');
      await pane.waitFor('> Cancel <');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/moved [1-9]/);
      pane.signal('SIGTERM');
      expect(await pane.exitStatus()).toBe(130);
      expect(pane.info('#{alternate_on}')).toBe('0');
      const stderr = pane.stderr();
      expect(stderr).toMatch(/SIGTERM: run run_[0-9A-Z]{26} stopped after its current batch/);
      const runId = /(run_[0-9A-Z]{26})/.exec(stderr)![1]!;
      // With the --url it was started with: without it the command would look in the default store.
      expect(stderr).toContain(`Resume it with: agentq --url ${url} dlq redrive --resume ${runId}`);
      // The CLI prints it the same way (dlq runs show of an interrupted run).
      const shown = await runCli(home, ['--url', url, 'dlq', 'runs', 'show', runId]);
      expect(shown.stderr).toContain(`continue it with: agentq --url ${url} dlq redrive --resume ${runId}`);
      const backend = new SqliteBackend({ path });
      try {
        const run = await backend.getRun(runId);
        expect(run?.status).toBe('interrupted');
        expect(run!.counts.planned).toBeGreaterThan(0);
        expect(await backend.readLock('research')).toBeNull();
      } finally {
        await backend.close();
      }
    } finally {
      pane.kill();
    }
  }, 120_000);

  it('q after stopping a redrive with Esc: exit 0, and the resume command is on the normal screen', async () => {
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research', '--rate', '2', '--batch-size', '1'], env(), { columns: 160, rows: 30 });
    try {
      await pane.waitFor(/total \d+ · shown/);
      await pane.waitFor((sc) => !sc.includes('loading…') && sc.includes('job_'));
      pane.keys('a', 'R');
      await pane.waitFor('> Cancel <');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/moved [1-9]/);
      pane.keys('Escape');
      await pane.waitFor('Redrive stopped: run run_');
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
      expect(pane.info('#{alternate_on}')).toBe('0');
      const stderr = pane.stderr();
      expect(stderr).toMatch(/run run_[0-9A-Z]{26} stopped after its current batch \(moved [1-9]\d*, skipped \d+, failed 0\)/);
      const runId = /(run_[0-9A-Z]{26})/.exec(stderr)![1]!;
      expect(stderr).toContain(`resume it with: agentq --url ${url} dlq redrive --resume ${runId}`);
    } finally {
      pane.kill();
    }
  }, 120_000);

  it('a redrive stopped with Esc, then the list (Enter), then q: the resume command is still on the normal screen', async () => {
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research', '--rate', '2', '--batch-size', '1'], env(), { columns: 160, rows: 30 });
    try {
      await pane.waitFor((sc) => /total \d+ · shown/.test(sc) && !sc.includes('loading…') && sc.includes('job_'));
      pane.keys('a', 'R');
      await pane.waitFor('> Cancel <');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/moved [1-9]/);
      pane.keys('Escape');
      const screen = await pane.waitFor('Redrive stopped: run run_');
      const runId = /(run_[0-9A-Z]{26})/.exec(screen)![1]!;
      // Back to the list (reloaded), as one does to look at what is left before quitting.
      pane.keys('Enter');
      await pane.waitFor((sc) => sc.includes('selected 0') && !sc.includes('loading…'));
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
      expect(pane.info('#{alternate_on}')).toBe('0');
      const stderr = pane.stderr();
      expect(stderr).toMatch(new RegExp(`run ${runId} stopped after its current batch \\(moved [1-9]\\d*, skipped \\d+, failed 0\\)`));
      expect(stderr).toContain(`resume it with: agentq --url ${url} dlq redrive --resume ${runId}`);
    } finally {
      pane.kill();
    }
  }, 120_000);

  it.each(['SIGTERM', 'SIGHUP'] as const)('%s while idle: the terminal is restored and the exit is 130, not 0', async (sig) => {
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'tui', '--queue', 'research'], env(), { columns: 160, rows: 30 });
    try {
      await pane.waitFor(/total \d+ · shown/);
      pane.signal(sig);
      expect(await pane.exitStatus()).toBe(130);
      expect(pane.info('#{alternate_on}')).toBe('0');
      expect(pane.stderr()).toContain(`${sig}: agentq dlq browse ended; no redrive was running`);
    } finally {
      pane.kill();
    }
  }, 120_000);
});

describe('agentq dlq browse with a hung Redis during a redrive', () => {
  let home: CliHome;
  let redis: RedisServer;
  let redisPid = 0;

  beforeAll(async () => {
    home = makeCliHome('agentq-tui-hung-');
    redis = await startRedisServer();
    redisPid = Number(/process_id:(\d+)/.exec(redis.cli('info', 'server'))![1]);
    const backend = await openBackend(redis.url);
    try {
      await seedDlq(backend, new ManualClock(Date.now()), 'research', Array.from({ length: 30 }, () => ({ errorCode: 'PROVIDER_429' })));
      // The first test leaves its queue locked by a process that is gone: the second uses its own.
      await seedDlq(backend, new ManualClock(Date.now()), 'second', Array.from({ length: 10 }, () => ({ errorCode: 'PROVIDER_429' })));
    } finally {
      await backend.close();
    }
  }, 60_000);

  afterAll(async () => {
    if (redisPid) process.kill(redisPid, 'SIGCONT');
    await redis?.stop();
    home?.cleanup();
  });

  it('the first Ctrl-C asks to stop after the batch; the second quits at once, restoring the terminal (exit 130, the run named)', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', redis.url, 'tui', '--queue', 'research', '--rate', '2', '--batch-size', '1'], env, { columns: 160, rows: 30 });
    try {
      await pane.waitFor('total 30 · shown 30');
      await pane.waitFor((sc) => !sc.includes('loading…'));
      pane.keys('a', 'R');
      await pane.waitFor('Type 30 to confirm');
      pane.type('30');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/moved [1-9]/);
      process.kill(redisPid, 'SIGSTOP'); // the node hangs: no batch ever ends
      pane.keys('C-c');
      await pane.waitFor('stopping after the current batch… (Ctrl-C or q again quits at once)');
      pane.keys('C-c');
      expect(await pane.exitStatus()).toBe(130);
      expect(pane.info('#{alternate_on}')).toBe('0');
      expect(pane.stderr()).toMatch(/quit while run run_[0-9A-Z]{26} was applying a batch/);
    } finally {
      process.kill(redisPid, 'SIGCONT');
      pane.kill();
    }
  }, 120_000);

  it('SIGTERM then SIGTERM again while the batch hangs: exit 143 at once, as the CLI, with the main screen back', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', redis.url, 'tui', '--queue', 'second', '--rate', '2', '--batch-size', '1'], env, { columns: 160, rows: 30 });
    try {
      await pane.waitFor('total 10 · shown 10');
      await pane.waitFor((sc) => !sc.includes('loading…'));
      pane.keys('a', 'R');
      await pane.waitFor('> Cancel <');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/moved [1-9]/);
      process.kill(redisPid, 'SIGSTOP');
      pane.signal('SIGTERM');
      await pane.waitFor('SIGTERM: stopping after the current batch, then quitting…');
      pane.signal('SIGTERM');
      expect(await pane.exitStatus()).toBe(143);
      expect(pane.info('#{alternate_on}')).toBe('0');
    } finally {
      process.kill(redisPid, 'SIGCONT');
      pane.kill();
    }
  }, 120_000);
});


// Regression: quitting after a redrive a backend error cut short exited 0, as if all went well;
// `dlq redrive` exits with the error's code (75 for a passing one) and says how to resume.
describe('agentq dlq browse after a redrive cut short by a backend error', () => {
  let home: CliHome;
  let redis: RedisServer;

  beforeAll(async () => {
    home = makeCliHome('agentq-tui-cut-');
    redis = await startRedisServer();
    const backend = await openBackend(redis.url);
    try {
      // A cut run may leave its queue locked by a process that is gone: each case has its own queue.
      for (const queue of ['research', 'second', 'third']) await seedDlq(backend, new ManualClock(Date.now()), queue, Array.from({ length: 10 }, () => ({ errorCode: 'PROVIDER_429' })));
    } finally {
      await backend.close();
    }
  }, 60_000);

  afterAll(async () => {
    await redis?.stop();
    home?.cleanup();
  });

  it('q on the error, or after going back to the list, exits with the error\'s code (75) and prints the resume command', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    for (const [queue, back] of [['research', false], ['second', true]] as const) {
      const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', redis.url, 'tui', '--queue', queue, '--rate', '2', '--batch-size', '1'], env, { columns: 160, rows: 30 });
      try {
        await pane.waitFor(/total \d+ · shown \d+/);
        await pane.waitFor((sc) => !sc.includes('loading…'));
        pane.keys('a', 'R');
        await pane.waitFor('> Cancel <');
        pane.keys('Tab', 'Enter');
        await pane.waitFor(/moved [1-9]/);
        // A full Redis (noeviction) refuses writes: the run's next batch fails.
        redis.cli('config', 'set', 'maxmemory', '1');
        await pane.waitFor('Redrive stopped by an error: run run_');
        if (back) {
          redis.cli('config', 'set', 'maxmemory', '0');
          pane.keys('Enter');
          await pane.waitFor((sc) => !sc.includes('Redrive stopped by an error') && !sc.includes('loading…'));
        }
        pane.keys('q');
        expect(await pane.exitStatus(), pane.stderr()).toBe(75);
        expect(pane.info('#{alternate_on}')).toBe('0');
        expect(pane.stderr()).toMatch(/run run_[0-9A-Z]{26} was stopped by an error \(.*\) after moving \d+/);
        expect(pane.stderr()).toMatch(/hint: Resume it with: agentq .*dlq redrive --resume run_[0-9A-Z]{26}/);
      } finally {
        pane.kill();
        redis.cli('config', 'set', 'maxmemory', '0');
      }
    }
  }, 180_000);

  // Regression: a redrive refused before its run was recorded (nothing moved) still made the session
  // exit 75 after the operator's retry went through: a script wrapping the TUI read a failure
  // where nothing was left to do.
  it('a redrive refused before its run was recorded, then retried in the same session and completed: q exits 0', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', redis.url, 'tui', '--queue', 'third'], env, { columns: 160, rows: 30 });
    try {
      await pane.waitFor(/total 10 · shown 10/);
      await pane.waitFor((sc) => !sc.includes('loading…'));
      pane.keys('a', 'R');
      await pane.waitFor('> Cancel <');
      // A full Redis (noeviction) refuses the run's first write: nothing is recorded, nothing moves.
      redis.cli('config', 'set', 'maxmemory', '1');
      pane.keys('Tab', 'Enter');
      await pane.waitFor('Redrive not done');
      redis.cli('config', 'set', 'maxmemory', '0');
      pane.keys('Enter');
      await pane.waitFor((sc) => !sc.includes('Redrive not done') && sc.includes('selected 10'));
      pane.keys('R');
      await pane.waitFor('> Cancel <');
      pane.keys('Tab', 'Enter');
      await pane.waitFor('Redrive finished: run run_');
      pane.keys('q');
      expect(await pane.exitStatus(), pane.stderr()).toBe(0);
      expect(pane.stderr()).not.toContain('failed before its run was recorded');
    } finally {
      pane.kill();
      redis.cli('config', 'set', 'maxmemory', '0');
    }
  }, 120_000);
});

describe('agentq dlq browse of every queue (no --queue) on Redis', () => {
  let home: CliHome;
  let redis: RedisServer;

  beforeAll(async () => {
    home = makeCliHome('agentq-tui-queues-');
    redis = await startRedisServer();
    const backend = await openBackend(redis.url);
    try {
      await seedDlq(backend, new ManualClock(Date.now()), 'research', Array.from({ length: 4 }, () => ({ errorCode: 'PROVIDER_429' })));
      await seedDlq(backend, new ManualClock(Date.now()), 'support', Array.from({ length: 3 }, () => ({ errorCode: 'TOOL_TIMEOUT' })));
    } finally {
      await backend.close();
    }
  }, 60_000);

  afterAll(async () => {
    await redis?.stop();
    home?.cleanup();
  });

  it('shows each row\'s queue; R on everything offers the queues, Enter narrows to one, and R redrives only that queue', async () => {
    const env = { ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', redis.url, 'dlq', 'browse'], env, { columns: 120, rows: 35 });
    try {
      const list = await pane.waitFor((sc) => sc.includes('total 7 · shown 7') && !sc.includes('loading…'));
      expect(list).toMatch(/JOB\s+QUEUE\s+WORKFLOW/);
      expect(list.split('\n').filter((l) => /job_\S+\s+support\s/.test(l)).length).toBe(3);
      pane.keys('a', 'R');
      await pane.waitFor('Redrive: pick the queue (the selection spans 2 queues');
      pane.keys('j', 'Enter');
      const narrowed = await pane.waitFor('3 selected in queue support kept; 4 in other queues unselected');
      expect(narrowed).toContain('queue support (Q; of all)');
      pane.keys('R');
      await pane.waitFor('Redrive plan for queue support: 3 selected');
      pane.keys('Tab', 'Enter');
      await pane.waitFor(/Redrive finished: run run_[0-9A-Z]{26}/);
      // Back to the list: support's DLQ is empty now, so the narrowing to it is dropped and said.
      pane.keys('Enter');
      const after = await pane.waitFor("queue support's DLQ is empty now: showing every queue");
      expect(after).toContain('total 4 · shown 4');
      expect(after.split('\n')[0]).toContain('queue (all)');
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
    } finally {
      pane.kill();
    }
    const backend = await openBackend(redis.url);
    try {
      expect((await backend.dlqRows({ queue: 'support' }, { limit: 10 })).items.length).toBe(0);
      expect((await backend.dlqRows({ queue: 'research' }, { limit: 10 })).items.length).toBe(4);
    } finally {
      await backend.close();
    }
  }, 120_000);
});
