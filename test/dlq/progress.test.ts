import { describe, expect, it } from 'vitest';
import { formatProgressBar, formatProgressLine, streamProgress, type RunEvent } from '../../src/dlq/progress.js';

const batch = (done: number): RunEvent => ({ kind: 'batch', run_id: 'run_X', action: 'redrive', done, remaining_at_start: 200, moved: done, skipped: 0, failed: 0, elapsed_ms: 1000, rate_per_s: done });

describe('progress rendering', () => {
  it('plain lines say how far, what happened and how fast', () => {
    expect(formatProgressLine(batch(50))).toBe('run_X: 50/200 (25%) moved=50 skipped=0 failed=0 50/s');
    expect(formatProgressLine({ kind: 'interrupted', run_id: 'run_X', done: 50, remaining_at_start: 200 })).toMatch(/interrupted after 50\/200/);
  });
  it('a purge counts purged jobs and an expire expired ones, not moved', () => {
    expect(formatProgressLine({ ...batch(50), action: 'purge' } as RunEvent)).toBe('run_X: 50/200 (25%) purged=50 skipped=0 failed=0 50/s');
    expect(formatProgressBar({ ...batch(50), action: 'expire' } as Extract<RunEvent, { kind: 'batch' }>, 10)).toMatch(/ expired 50 skipped 0/);
    expect(formatProgressLine({ kind: 'finished', run_id: 'run_X', action: 'purge', counts: { planned: 0, moved: 3, skipped: 1, failed: 0 } })).toBe('run_X: finished: purged=3 skipped=1 failed=0');
  });
  it('the bar fills with progress', () => {
    const e = batch(100) as Extract<RunEvent, { kind: 'batch' }>;
    expect(formatProgressBar(e, 10)).toMatch(/^\[#####\.\.\.\.\.\] 50% 100\/200/);
  });
  it('off a terminal, batch lines are throttled but the last one always shows', () => {
    const out: string[] = [];
    let t = 0;
    const sink = streamProgress({ write: (s: string) => out.push(s) }, { isTTY: false, now: () => t, everyMs: 1000 });
    sink(batch(10));
    t = 100;
    sink(batch(20)); // throttled
    t = 1200;
    sink(batch(30));
    t = 1300;
    sink(batch(200)); // the end always shows
    expect(out.map((l) => l.split(':')[1]!.trim().split(' ')[0])).toEqual(['10/200', '30/200', '200/200']);
    expect(out.every((l) => l.endsWith('\n') && !l.includes('\r'))).toBe(true);
  });
  it('on a terminal, batches redraw one line in place', () => {
    const out: string[] = [];
    const sink = streamProgress({ write: (s: string) => out.push(s) }, { isTTY: true, now: () => 0 });
    sink(batch(10));
    sink(batch(20));
    sink({ kind: 'finished', run_id: 'run_X', action: 'redrive', counts: { planned: 0, moved: 200, skipped: 0, failed: 0 } });
    expect(out[0]!.startsWith('\r[')).toBe(true);
    // each redraw clears the rest of the line: a shorter line leaves nothing of the one before
    expect(out[1]!.endsWith('\x1b[K')).toBe(true);
    expect(out[2]).toBe('\n');
    expect(out[3]).toMatch(/finished: moved=200/);
  });
});
