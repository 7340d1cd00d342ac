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
  it('says how many selected jobs the current filter hides (the redrive includes them)', () => {
    const f = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={22} />).lastFrame()!;
    expect(f.replace(/[│\s]+/g, ' ')).toContain('22 of the selected jobs are hidden by the current filter: the redrive includes them');
    const none = render(<RedriveDialog flow={{ step: 'confirm', planned: planned(), focus: 'cancel', typed: '', reason: '' }} width={100} hiddenSelected={0} />).lastFrame()!;
    expect(none).not.toContain('hidden');
  });
});
