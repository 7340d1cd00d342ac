import { render, cleanup } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { RedriveDialog } from '../../src/tui/RedriveDialog.js';
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

  it('says how many selected jobs the current filter hides (the redrive includes them)', () => {
    const f = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={22} />).lastFrame()!;
    expect(f.replace(/[│\s]+/g, ' ')).toContain('22 of the selected jobs are hidden by the current filter: the redrive includes them');
    const none = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={0} />).lastFrame()!;
    expect(none).not.toContain('hidden');
  });
});
