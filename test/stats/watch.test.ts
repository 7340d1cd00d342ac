/**
 * `agentq stats --watch` on a terminal: redraws with sparklines of depth and
 * oldest age that follow the queue as it changes, and stops cleanly (exit 0)
 * on Ctrl-C. Run in-process through `main` with a terminal-like stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { main } from '../../src/cli/main.js';
import { renderSparklines, recordHistory } from '../../src/cli/commands/stats.js';
import { buildStatsReport, StatsHistory } from '../../src/core/stats.js';
import { pollUntil } from '../support/poll.js';
import { RetryLaterError } from '../../src/core/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function terminal() {
  const frames: string[] = [];
  const stdout = { isTTY: true, columns: 120, write: (s: string) => (frames.push(s), true) };
  const stderr = { isTTY: true, write: () => true };
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  return { io: { stdout, stderr, stdin }, frames };
}

describe('stats --watch', () => {
  it('redraws with sparklines that follow the depth, and Ctrl-C ends it with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-watch-'));
    dirs.push(dir);
    const path = join(dir, 'q.db');
    const seed = new SqliteBackend({ path });
    await seed.submit({ workflow: 'w:v1', queue: 'research' });
    const { io, frames } = terminal();
    const ctl = new AbortController();
    const run = main(['stats', '--watch', '--interval', '200ms', '--color', 'never'], {
      io,
      env: { TERM: 'xterm', LANG: 'C.UTF-8' },
      cwd: dir,
      signal: ctl.signal,
      openBackend: async () => new SqliteBackend({ path }),
    });
    await pollUntil(() => frames.length >= 1, { what: 'the first frame' });
    // The queue grows between frames: the depth sparkline must rise (1 job, then 8: low bars, then a full one).
    for (let i = 0; i < 7; i++) await seed.submit({ workflow: 'w:v1', queue: 'research' });
    const sparkOf = (frame: string) => frame.split('\n').find((l) => l.startsWith('research ') && /[▁-█]/.test(l)) ?? '';
    await pollUntil(() => frames.some((f) => /^research\s+[▁▂]+█/.test(sparkOf(f))), { what: 'a frame whose depth sparkline rises' });
    ctl.abort();
    expect(await run).toBe(0);
    await seed.close();

    // line wrapping off while watching (a wrapped table left pieces of the last frame), and on again at the end
    expect(frames[0]).toBe('\x1b[?7l');
    expect(frames[frames.length - 1]).toBe('\x1b[?7h');
    const last = frames[frames.length - 2]!;
    expect(last.startsWith('\x1b[H\x1b[2J')).toBe(true);
    expect(last).toContain('agentq stats');
    expect(last).toContain('OLDEST AGE');
  });
});

describe('stats --watch in a non-UTF-8 locale (LANG=C)', () => {
  // Regression: the sparkline blocks, the `—` of the title and `…` cuts came out as mojibake there.
  it('draws every frame in ASCII, with an ASCII sparkline that still rises with the depth', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-watch-'));
    dirs.push(dir);
    const path = join(dir, 'q.db');
    const seed = new SqliteBackend({ path });
    // (a long queue name is cut in the table: the cut mark is chrome too)
    const queue = 'research-with-a-queue-name-long-enough-to-be-cut-in-a-narrow-table';
    await seed.submit({ workflow: 'w:v1', queue });
    const { io, frames } = terminal();
    io.stdout.columns = 70;
    const ctl = new AbortController();
    const run = main(['stats', '--watch', '--interval', '200ms', '--color', 'never'], { io, env: { TERM: 'xterm', LANG: 'C' }, cwd: dir, signal: ctl.signal, openBackend: async () => new SqliteBackend({ path }) });
    await pollUntil(() => frames.some((f) => f.includes('agentq stats')), { what: 'the first frame' });
    for (let i = 0; i < 7; i++) await seed.submit({ workflow: 'w:v1', queue });
    const sparkOf = (frame: string) => frame.split('\n').find((l) => l.startsWith('research-') && /[_#]/.test(l)) ?? '';
    await pollUntil(() => frames.some((f) => /^research-\S*\s+[_.]+#/.test(sparkOf(f))), { what: 'a frame whose ASCII depth sparkline rises' });
    ctl.abort();
    expect(await run).toBe(0);
    await seed.close();
    const nonAscii = [...new Set([...frames.join('')].filter((c) => c.codePointAt(0)! >= 0x80))];
    expect(nonAscii).toEqual([]);
    const last = frames[frames.length - 2]!;
    expect(last).toContain('agentq stats - ');
    expect(last).toMatch(/research-with-a-qu\S*~/);
  });
});

describe('stats --watch on a store with no queue yet', () => {
  // Regression: each frame held the table's header alone and the sparklines' header alone; the
  // line a listing with no rows says went to stderr, where the next frame's clear did not reach it.
  it('each frame says there are no queues, in the frame, with no header alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-watch-'));
    dirs.push(dir);
    const path = join(dir, 'q.db');
    await new SqliteBackend({ path }).close();
    const { io, frames } = terminal();
    const ctl = new AbortController();
    const run = main(['stats', '--watch', '--interval', '200ms', '--color', 'never'], { io, env: { TERM: 'xterm' }, cwd: dir, signal: ctl.signal, openBackend: async () => new SqliteBackend({ path }) });
    await pollUntil(() => frames.some((f) => f.includes('agentq stats')), { what: 'the first frame' });
    ctl.abort();
    expect(await run).toBe(0);
    const frame = frames.find((f) => f.includes('agentq stats'))!;
    expect(frame).toContain('No queues yet: submit a job first');
    expect(frame).not.toMatch(/QUEUE\s+QUEUED/);
    expect(frame).not.toContain('OLDEST AGE');
  });
});

describe('stats --watch when the backend goes away', () => {
  it('keeps the last figures up, marked "backend unreachable since …", retries, and clears the mark when it is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-watch-'));
    dirs.push(dir);
    const path = join(dir, 'q.db');
    const real = new SqliteBackend({ path });
    await real.submit({ workflow: 'w:v1', queue: 'research' });
    let down = false;
    // The real store, with its stats failing as an unreachable Redis fails them (exit 75).
    const flaky = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'stats' && down) return async () => Promise.reject(new RetryLaterError('Redis at 127.0.0.1:1 is unavailable: connect ECONNREFUSED', 'BACKEND_UNAVAILABLE'));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const { io, frames } = terminal();
    const ctl = new AbortController();
    const run = main(['stats', '--watch', '--interval', '200ms', '--color', 'never'], { io, env: { TERM: 'xterm' }, cwd: dir, signal: ctl.signal, openBackend: async () => flaky });
    await pollUntil(() => frames.some((f) => f.includes('research')), { what: 'a first frame' });
    down = true;
    const staleAt = await pollUntil(() => frames.findIndex((f) => f.includes('backend unreachable since')) + 1 || undefined, { what: 'a frame marked stale' });
    const stale = frames[staleAt - 1]!;
    expect(stale).toMatch(/STALE: backend unreachable since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, retrying \(figures as last read\): Redis at 127\.0\.0\.1:1 is unavailable/);
    expect(stale).toMatch(/^resea\S*\s+1\s/m); // the last figures, still shown
    down = false;
    await pollUntil(() => frames.length > staleAt && !frames[frames.length - 1]!.includes('unreachable') && frames[frames.length - 1]!.includes('research'), { what: 'a fresh frame again' });
    ctl.abort();
    expect(await run).toBe(0);
    real.close();
  });

  it('refuses --watch with -o json or ndjson (exit 2): a table redrawn around a JSON document is neither', async () => {
    for (const format of ['json', 'ndjson']) {
      const { io } = terminal();
      const code = await main(['stats', '--watch', '-o', format], { io, env: { TERM: 'xterm' }, cwd: tmpdir(), openBackend: async () => new SqliteBackend({ path: ':memory:' }) });
      expect(code).toBe(2);
    }
  });
});

describe('renderSparklines', () => {
  it('shows depth and oldest age per queue, with the queue name sanitised', () => {
    const h = new StatsHistory(10);
    const snap = (queued: number, age: number | null) => ({ queue: 'evil\x1b]0;x\x07', counts: { queued, scheduled: 0, running: 0, succeeded: 0, dead: 0, cancelled: 0, expired: 0 }, dlq_size: 0, oldest_queued_age_ms: age, running: 0 });
    for (const [q, a] of [[0, null], [4, 1000], [8, 2000]] as const) recordHistory(h, [buildStatsReport(snap(q, a))]);
    const out = renderSparklines([buildStatsReport(snap(8, 2000))], h, 3);
    expect(out).not.toContain('\x1b');
    expect(out).not.toContain('\x07');
    expect(out.split('\n')[1]).toMatch(/^evil\\x1b\]0;x\\x07\s+▁▅█\s+ ▅█$/);
    // the same levels in ASCII, for a terminal whose locale is not UTF-8
    expect(renderSparklines([buildStatsReport(snap(8, 2000))], h, 3, 'ascii').split('\n')[1]).toMatch(/^evil\\x1b\]0;x\\x07\s+_=#\s+ =#$/);
  });
});
