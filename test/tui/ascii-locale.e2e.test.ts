/**
 * The TUI in a terminal whose locale is not UTF-8 (LANG=C, LC_ALL=POSIX: minimal containers, jump
 * hosts, serial consoles). Every byte the app writes to the pty is recorded (tmux pipe-pane) and
 * must be ASCII when the DLQ's data is: agentq's own chrome (hint separators, `…` cuts, the `›`
 * cursor, arrows, the redrive dialog's border) used to come out as mojibake there.
 * Run `npm run build` first (`npm test` does).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { AGENTQ_BIN, makeCliHome, REPO_ROOT, type CliHome } from '../support/cli.js';
import { seedDlq } from './support/seed.js';
import { TmuxPane } from './support/tmux.js';

const DIST_MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');

function nonAscii(bytes: Buffer): string[] {
  const text = bytes.toString('utf8');
  return [...new Set([...text].filter((c) => c.codePointAt(0)! >= 0x80))];
}

describe('agentq dlq browse in a non-UTF-8 locale', () => {
  let home: CliHome;
  let url: string;

  beforeAll(async () => {
    if (!existsSync(DIST_MAIN)) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    home = makeCliHome('agentq-tui-ascii-');
    const path = join(home.dir, 'agentq.db');
    url = `sqlite:${path}`;
    const clock = new ManualClock(Date.now() - 10 * 60_000);
    const backend = new SqliteBackend({ path, clock });
    // ASCII data only, long enough to be cut in its column (the cut mark is chrome).
    const long = 'the provider answered 429 too many requests and asked to retry after a long while '.repeat(3);
    await seedDlq(backend, clock, 'research', [
      ...Array.from({ length: 5 }, (_, i) => ({ errorCode: 'PROVIDER_RATE_LIMITED_BY_UPSTREAM_GATEWAY', errorMessage: long, tenant: `tenant-with-a-rather-long-name-${i}`, workflow: 'research_report_with_a_long_workflow_name:v3' })),
      { errorCode: 'SCHEMA_INVALID', errorMessage: 'output failed validation', isPartial: true },
    ]);
    await backend.close();
  }, 60_000);

  afterAll(() => home?.cleanup());

  /** Walks the list, detail, groups, help and the redrive dialog; returns the pty bytes and the screens. */
  async function tour(locale: Record<string, string>): Promise<{ bytes: Buffer; screens: string[] }> {
    const env = { ...home.env, TERM: 'xterm-256color', ...locale };
    const pane = TmuxPane.start(['node', AGENTQ_BIN, '--url', url, 'dlq', 'browse', '--queue', 'research'], env, { columns: 100, rows: 30 });
    const ptyLog = join(home.dir, `pty-${Object.values(locale).join('-')}.log`);
    const screens: string[] = [];
    try {
      pane.tmux('pipe-pane', '-t', 'tui:0.0', '-o', `cat >> '${ptyLog}'`);
      screens.push(await pane.waitFor((sc) => /total 6 . shown 6/.test(sc) && sc.includes('job_')));
      pane.keys('Enter');
      screens.push(await pane.waitFor('Attempts'));
      pane.keys('Escape');
      await pane.waitFor((sc) => /total 6 . shown 6/.test(sc) && !sc.includes('Attempts'));
      pane.keys('g');
      screens.push(await pane.waitFor('SCHEMA_INVALID'));
      pane.keys('Escape', '?');
      screens.push(await pane.waitFor(/lines \d+-\d+ of|Ctrl-C quits/));
      pane.keys('Escape');
      await pane.waitFor((sc) => /total 6 . shown 6/.test(sc));
      pane.keys('a', 'R');
      screens.push(await pane.waitFor('> Cancel <'));
      pane.keys('Escape');
      await pane.waitFor((sc) => !sc.includes('> Cancel <'));
      pane.keys('q');
      expect(await pane.exitStatus()).toBe(0);
      expect(pane.stderr()).toBe('');
    } finally {
      pane.kill();
    }
    return { bytes: readFileSync(ptyLog), screens };
  }

  it.each<Record<string, string>>([{ LANG: 'C' }, { LC_ALL: 'C', LANG: 'en_US.UTF-8' }, { LC_ALL: 'POSIX' }])('writes only ASCII with %o (cut marks, separators, cursor, border)', async (locale) => {
    const { bytes, screens } = await tour(locale);
    expect(bytes.length).toBeGreaterThan(1000);
    expect(nonAscii(bytes)).toEqual([]);
    const all = screens.join('\n');
    expect(all).toMatch(/total 6 \| shown 6/);
    expect(all).toContain('~'); // a cut cell is still marked as cut
    expect(all).toMatch(/\+-{10,}\+/); // the dialog keeps a border, in ASCII
  }, 180_000);

  it('keeps its UTF-8 glyphs in a UTF-8 locale (the check above can fail)', async () => {
    const { bytes } = await tour({ LANG: 'C.UTF-8' });
    expect(nonAscii(bytes)).toEqual(expect.arrayContaining(['·', '…', '╭']));
  }, 180_000);
});
