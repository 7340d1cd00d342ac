import { render, cleanup } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { RedriveDialog } from '../../src/tui/RedriveDialog.js';
import { displayWidth } from '../../src/cli/output/width.js';
import { confirmRows } from '../../src/tui/confirm-layout.js';
import type { PlannedRedrive } from '../../src/tui/redrive-port.js';

afterEach(() => cleanup());

const planned = (o: Partial<PlannedRedrive['split']> = {}): PlannedRedrive => ({
  split: { total: 33, redrive: 33, skipExpired: 0, skipPartial: 0, quarantined: 0, notInDlq: 0, skipMalformed: 0, skipOther: 0, queue: 'research', ...o },
  handle: {},
});

describe('the redrive dialog', () => {
  it('a redrive cut by an error names its run, what it moved and how to resume it', () => {
    const run = { runId: 'run_01J', moved: 7, resumeCommand: 'agentq --url redis://h:1 dlq redrive --resume run_01J' };
    const f = render(<RedriveDialog flow={{ step: 'failed', message: 'Redis at h:1 is unavailable', hasApplied: true, run }} width={120} />).lastFrame()!;
    const text = f.replace(/[│\s]+/g, ' ');
    expect(text).toContain('Redrive stopped by an error: run run_01J');
    expect(text).toContain('Redis at h:1 is unavailable');
    expect(text).toContain('moved 7 before the error');
    expect(text).toContain('resume with: agentq --url redis://h:1 dlq redrive --resume run_01J');
    const before = render(<RedriveDialog flow={{ step: 'failed', message: 'the selection spans 2 queues', hasApplied: false, run: null }} width={120} />).lastFrame()!;
    expect(before).toContain('Redrive not done');
    expect(before).not.toContain('resume');
  });

  it('wraps an error at word boundaries: no line inside the box starts with a space', () => {
    const message = 'the queue research is locked by run run_01KBA3M2Q8Y5V7 (pid 4242 on host ops-1, since 2026-11-30T17:00:00.000Z): another redrive is running';
    const hint = 'Resume it with: agentq dlq redrive --resume run_01KBA3M2Q8Y5V7, or pass --break-lock if its process is gone.';
    for (const width of [50, 60, 70, 80]) {
      const f = render(<RedriveDialog flow={{ step: 'failed', message, hint, hasApplied: false, run: null }} width={width} />).lastFrame()!;
      const inside = f.split('\n').filter((l) => l.startsWith('│'));
      expect(inside.filter((l) => l.startsWith('│  ')), `at ${width} columns`).toEqual([]);
      expect(inside.map((l) => l.slice(2, -1).trimEnd()).join(' ')).toContain('(pid 4242 on host ops-1, since 2026-11-30T17:00:00.000Z): another redrive');
    }
  });

  it('says how many selected jobs the current filter hides (the redrive includes them)', () => {
    const f = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={22} />).lastFrame()!;
    expect(f.replace(/[│\s]+/g, ' ')).toContain('22 of the selected jobs are hidden by the current filter: the redrive includes them');
    const none = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={0} />).lastFrame()!;
    expect(none).not.toContain('hidden');
  });

  it('is shown whole or not at all: on a short terminal it says so instead of a squeezed plan', () => {
    // 60×15 (an 11-line body), 1,885 of 2,571 to redrive, 2,071 selected jobs hidden by the filter:
    // Ink squeezed this into "redrive 1,885571 selected" without the "Type 1885" prompt.
    const plan = planned({ total: 2571, redrive: 1885, skipExpired: 300, skipPartial: 386 });
    const flow = { step: 'confirm', planned: plan, focus: 'cancel', typed: '', reason: '' } as const;
    const small = render(<RedriveDialog flow={flow} width={60} hiddenSelected={2071} bodyRows={11} />).lastFrame()!;
    expect(small.replace(/\s+/g, ' ')).toContain('The redrive plan needs a terminal of at least 60×17 (this one is 60×15)');
    expect(small).not.toContain('1,885');
    const rows = confirmRows(plan, { hiddenSelected: 2071, columns: 60, needsTyping: true });
    expect(rows).toBe(13);
    const whole = render(<RedriveDialog flow={flow} width={60} hiddenSelected={2071} bodyRows={rows} />).lastFrame()!;
    const lines = whole.split('\n');
    expect(lines.length).toBe(rows);
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(60);
    expect(whole).toMatch(/│ redrive +1,885 +│/);
    expect(whole).toMatch(/│ skip: quarantined +0 +│/);
    expect(whole).toContain('Type 1885 to confirm:');
    expect(whole.replace(/[│\s]+/g, ' ')).toContain('2,071 of the selected jobs are hidden by the current filter');
  });

  it('the focused reason is marked in text, as the focused button is: without colour the cursor cell is not drawn', () => {
    const flow = { step: 'confirm', planned: planned(), focus: 'reason', typed: '', reason: 'INC-1234' } as const;
    const f = render(<RedriveDialog flow={flow} width={80} />).lastFrame()!;
    expect(f).toContain('> Reason (optional, recorded in the audit): INC-1234');
    expect(f).not.toContain('> Cancel <');
    const narrow = render(<RedriveDialog flow={flow} width={40} />).lastFrame()!;
    expect(narrow).toContain('> Reason: INC-1234');
    const away = render(<RedriveDialog flow={{ ...flow, focus: 'cancel' }} width={80} />).lastFrame()!;
    expect(away).toContain('Reason (optional, recorded in the audit; Tab to it): INC-1234');
    expect(away).not.toContain('> Reason');
  });

  it('a long reason takes one line: while it is typed, its end is shown', () => {
    const reason = `INC-1234 ${'x'.repeat(150)} end`;
    const flow = { step: 'confirm', planned: planned(), focus: 'reason', typed: '', reason } as const;
    const f = render(<RedriveDialog flow={flow} width={80} />).lastFrame()!;
    expect(f.split('\n').length).toBe(confirmRows(planned(), { hiddenSelected: 0, columns: 80, needsTyping: true }));
    expect(f).toMatch(/> Reason \(optional, recorded in the audit\): …x+ end/);
    const cjk = render(<RedriveDialog flow={{ ...flow, reason: `障害対応${'東京'.repeat(60)}終` }} width={80} />).lastFrame()!;
    const line = cjk.split('\n').find((l) => l.includes('Reason'))!;
    expect(displayWidth(line)).toBe(78);
    expect(line).toMatch(/…[東京]+終 +│$/);
  });

  it('on a terminal narrower than the confirmation (40 columns) the progress and the result still fit: nothing wraps at the edge', () => {
    const progress = { done: 2, total: 3, moved: 2, skipped: 0, failed: 0, runId: 'run_01J', resumeCommand: 'agentq dlq redrive --resume run_01J' };
    const flows = [
      { step: 'applying', planned: planned(), progress, isStopRequested: false, reason: '' },
      { step: 'done', result: { runId: 'run_01M8PN38DQSDD1F0V66VSMW00Z', status: 'interrupted', moved: 2, skipped: 0, failed: 0, resumeCommand: 'agentq dlq redrive --resume run_01M8PN38DQSDD1F0V66VSMW00Z' } },
      { step: 'failed', message: 'Redis at h:1 is unavailable', hasApplied: true, run: { runId: 'run_01J', moved: 7, resumeCommand: 'agentq dlq redrive --resume run_01J' } },
    ] as const;
    for (const flow of flows) {
      const f = render(<RedriveDialog flow={flow} width={34} />).lastFrame()!;
      for (const l of f.split('\n')) expect(displayWidth(l), `${flow.step}: ${l}`).toBeLessThanOrEqual(34);
      expect(f.split('\n')[0], flow.step).toMatch(/^╭─+╮$/);
    }
  });

  it('the note that the terminal is too small for the plan is itself no taller than the body', () => {
    const flow = { step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' } as const;
    for (const [width, bodyRows] of [[40, 2], [60, 2], [80, 3], [34, 1]] as const) {
      const f = render(<RedriveDialog flow={flow} width={width} bodyRows={bodyRows} />).lastFrame()!;
      expect(f.split('\n').length, `${width}×${bodyRows}`).toBeLessThanOrEqual(bodyRows);
      expect(f.replace(/\s+/g, ' '), `${width}×${bodyRows}`).toMatch(/^The redrive plan needs a terminal/);
      for (const l of f.split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(width);
    }
  });
});
