import { describe, expect, it } from 'vitest';
import { StringPool, toTriageRow } from '../../src/tui/row.js';
import type { PlannedRedrive } from '../../src/tui/redrive-port.js';
import { currentRow, initialState, reduce, type TriageAction, type TriageState } from '../../src/tui/state.js';
import { outcomeOf } from '../../src/tui/run.js';
import { resultHint } from '../../src/tui/StatusBar.js';
import { makeEntry, T0, toDlqRow, type EntryOptions } from './support/entries.js';

function rowsOf(n: number, opts: (i: number) => EntryOptions = () => ({})) {
  const pool = new StringPool();
  return Array.from({ length: n }, (_, i) => toTriageRow(toDlqRow(makeEntry(i, opts(i))), pool));
}

function loaded(n: number, opts?: (i: number) => EntryOptions, pageSize = 10, extra: Partial<Parameters<typeof initialState>[0]> = {}): TriageState {
  return reduce(initialState({ now: T0, pageSize, ...extra }), { type: 'rows/append', rows: rowsOf(n, opts), isDone: true });
}

function keys(s: TriageState, ...names: string[]): TriageState {
  return names.reduce((acc, name) => reduce(acc, { type: 'key', name } satisfies TriageAction), s);
}

function planned(redrive: number, total = redrive): PlannedRedrive {
  return { split: { total, redrive, skipExpired: total - redrive, skipPartial: 0, quarantined: 0, notInDlq: 0, skipMalformed: 0, skipOther: 0, queue: 'research' }, handle: {} };
}

describe('loading', () => {
  it('appends pages, counts expired and partial, and keeps loading until done', () => {
    let s = initialState({ now: T0, pageSize: 5 });
    const pool = new StringPool();
    s = reduce(s, { type: 'rows/append', rows: [0, 1, 2].map((i) => toTriageRow(toDlqRow(makeEntry(i, { deadlineIn: -1 })), pool)), isDone: false });
    expect(s.isLoading).toBe(true);
    s = reduce(s, { type: 'rows/append', rows: [3, 4].map((i) => toTriageRow(toDlqRow(makeEntry(i, { isPartial: true })), pool)), isDone: false });
    s = reduce(s, { type: 'rows/append', rows: [], isDone: true });
    expect(s.isLoading).toBe(false);
    expect(s.rows.length).toBe(5);
    expect(s.expiredCount).toBe(3);
    expect(s.partialCount).toBe(2);
    expect(s.visible).toEqual([0, 1, 2, 3, 4]);
  });

  it('filters rows that arrive after a filter was set', () => {
    let s = keys(initialState({ now: T0, pageSize: 5 }), 'e');
    s = reduce(s, { type: 'rows/append', rows: rowsOf(4, (i) => ({ deadlineIn: i % 2 === 0 ? -1 : 60_000 })), isDone: true });
    expect(s.visible.map((i) => s.rows[i]!.jobId)).toEqual([s.rows[1]!.jobId, s.rows[3]!.jobId]);
  });

  it('takes the expected total from the counters, and drops a count that belongs to an earlier load', () => {
    let s = reduce(initialState({ now: T0, pageSize: 5 }), { type: 'rows/expected', total: 100_000, generation: 0 });
    expect(s.expectedTotal).toBe(100_000);
    s = reduce(s, { type: 'rows/append', rows: rowsOf(3), isDone: true });
    // After a redrive the DLQ is loaded again: the old count is cleared and a late one for load 0 ignored.
    s = reduce(keys(s, 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_X', status: 'completed', moved: 3, skipped: 0, failed: 0, resumeCommand: null } });
    s = keys(s, 'enter');
    expect(s).toMatchObject({ loadGeneration: 1, expectedTotal: null });
    s = reduce(s, { type: 'rows/expected', total: 100_000, generation: 0 });
    expect(s.expectedTotal).toBeNull();
    s = reduce(s, { type: 'rows/expected', total: 99_997, generation: 1 });
    expect(s.expectedTotal).toBe(99_997);
  });

  it('recounts expired jobs when time passes (tick)', () => {
    let s = loaded(3, (i) => ({ deadlineIn: (i + 1) * 1000 }));
    expect(s.expiredCount).toBe(0);
    s = reduce(s, { type: 'tick', now: T0 + 2000 });
    expect(s.expiredCount).toBe(2);
  });
});

describe('moving', () => {
  it('keeps the cursor inside a window of pageSize rows', () => {
    let s = loaded(100, undefined, 10);
    s = keys(s, ...Array(12).fill('j'));
    expect(s.list).toEqual({ cursor: 12, top: 3 });
    s = keys(s, 'pgdn');
    expect(s.list.cursor).toBe(22);
    expect(s.list.cursor - s.list.top).toBeLessThan(10);
    s = keys(s, 'G');
    expect(s.list).toEqual({ cursor: 99, top: 90 });
    s = keys(s, 'j');
    expect(s.list.cursor).toBe(99);
    s = keys(s, 'home');
    expect(s.list).toEqual({ cursor: 0, top: 0 });
    s = keys(s, 'k', 'pgup');
    expect(s.list).toEqual({ cursor: 0, top: 0 });
  });

  it('keeps the cursor visible when the terminal shrinks', () => {
    let s = keys(loaded(100, undefined, 20), ...Array(15).fill('j'));
    s = reduce(s, { type: 'resize', pageSize: 5 });
    expect(s.pageSize).toBe(5);
    expect(s.list.cursor).toBe(15);
    expect(s.list.cursor - s.list.top).toBeLessThan(5);
    expect(s.list.cursor).toBeGreaterThanOrEqual(s.list.top);
  });
});

describe('filters', () => {
  const mixed = (i: number): EntryOptions => ({
    deadlineIn: i % 3 === 0 ? -1000 : 3_600_000,
    isPartial: i % 4 === 0,
    errorCode: i % 2 === 0 ? 'PROVIDER_429' : 'TOOL_TIMEOUT',
    tenant: i < 10 ? 'acme' : 'globex',
  });

  it('e drops expired and p drops partial jobs; pressing again brings them back', () => {
    let s = loaded(20, mixed);
    s = keys(s, 'e');
    expect(s.visible.every((i) => s.rows[i]!.deadlineMs! > T0)).toBe(true);
    s = keys(s, 'p');
    expect(s.visible.every((i) => !s.rows[i]!.isPartial)).toBe(true);
    expect(s.visible.length).toBe(20 - 7 - 5 + 2); // 7 expired (0,3,..18), 5 partial (0,4,..16), 2 both (0,12)
    s = keys(s, 'e', 'p');
    expect(s.visible.length).toBe(20);
  });

  it('/ filters as you type, Enter keeps it, and Esc restores the previous filter', () => {
    let s = loaded(20, mixed);
    s = keys(s, '/', 't', 'o', 'o', 'l', '_', 't', 'enter');
    expect(s.mode).toBe('list');
    expect(s.filter.text).toBe('tool_t');
    expect(s.visible.length).toBe(10);
    s = keys(s, '/', 'backspace', 'backspace', 'backspace', 'backspace', 'backspace', 'backspace', 'g', 'l', 'o', 'b', 'e', 'x');
    expect(s.filter.text).toBe('globex');
    expect(s.visible.length).toBe(10);
    s = keys(s, 'esc');
    expect(s.mode).toBe('list');
    expect(s.filter.text).toBe('tool_t');
    expect(s.visible.length).toBe(10);
  });

  // Regression: Backspace took off one code point: after an emoji of several (👩‍💻 is 👩, a joiner and
  // 💻) it left 👩 and a dangling joiner the terminal drew elsewhere on the line; é typed as e and an
  // accent lost only the accent. It now takes off what shows as one character.
  it('Backspace in / and in the reason takes off the last character as shown (an emoji sequence, a letter with its accent)', () => {
    let s = keys(loaded(3), '/', 'a', 'b', '👩\u200d💻', 'backspace');
    expect(s.textDraft).toBe('ab');
    s = keys(s, 'e\u0301', 'backspace', 'backspace');
    expect(s.textDraft).toBe('a');
    s = keys(s, 'esc', 'space', 'R');
    s = reduce(s, { type: 'redrive/planned', planned: planned(1) });
    s = keys(s, 'tab', 'tab', 'x', '🇫🇷', 'backspace');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'reason', reason: 'x' });
  });

  it('the error-code and tenant pickers list values by count and set the filter', () => {
    let s = loaded(20, mixed);
    s = keys(s, 'E');
    expect(s.mode).toBe('picker');
    expect(s.picker!.options.map((o) => o.value)).toEqual([null, 'PROVIDER_429', 'TOOL_TIMEOUT']);
    s = keys(s, 'j', 'j', 'enter');
    expect(s.filter.errorCode).toBe('TOOL_TIMEOUT');
    s = keys(s, 'T', 'j', 'enter');
    expect(s.filter.tenant).not.toBeNull();
    expect(s.visible.every((i) => s.rows[i]!.errorCode === 'TOOL_TIMEOUT' && s.rows[i]!.tenant === s.filter.tenant)).toBe(true);
    s = keys(s, 'E', 'home', 'enter');
    expect(s.filter.errorCode).toBeNull();
    s = keys(s, 'x');
    expect(s.visible.length).toBe(20);
  });

  it('keeps the cursor on the same job when a filter still shows it', () => {
    let s = loaded(20, mixed);
    s = keys(s, 'j'); // row 1: TOOL_TIMEOUT, not expired
    const id = currentRow(s)!.jobId;
    s = keys(s, 'e');
    expect(currentRow(s)!.jobId).toBe(id);
  });
});

describe('group-by-error view', () => {
  it('counts error code × workflow and drills into a group', () => {
    let s = loaded(30, (i) => ({ errorCode: i < 20 ? 'PROVIDER_429' : 'SCHEMA', workflow: i % 2 === 0 ? 'a:v1' : 'b:v2', deadlineIn: i < 3 ? -1 : 1000 }));
    s = keys(s, 'g');
    expect(s.mode).toBe('groups');
    expect(s.groups!.items.map((g) => [g.errorCode, g.workflow, g.count])).toEqual([
      ['PROVIDER_429', 'a:v1', 10],
      ['PROVIDER_429', 'b:v2', 10],
      ['SCHEMA', 'a:v1', 5],
      ['SCHEMA', 'b:v2', 5],
    ]);
    expect(s.groups!.items[0]!.expired).toBe(2);
    s = keys(s, 'j', 'j', 'enter');
    expect(s.mode).toBe('list');
    expect(s.filter).toMatchObject({ errorCode: 'SCHEMA', workflow: 'a:v1' });
    expect(s.visible.length).toBe(5);
  });

  it('regroups when a filter toggles inside the view', () => {
    let s = keys(loaded(10, (i) => ({ deadlineIn: i < 4 ? -1 : 1000 })), 'g');
    expect(s.groups!.items[0]!.count).toBe(10);
    s = keys(s, 'e');
    expect(s.groups!.items[0]!.count).toBe(6);
    s = keys(s, 'esc');
    expect(s.mode).toBe('list');
  });
});

describe('selection', () => {
  it('space toggles the row under the cursor and moves down', () => {
    let s = loaded(5);
    s = keys(s, 'space', 'space');
    expect([...s.selected]).toEqual([s.rows[0]!.jobId, s.rows[1]!.jobId]);
    s = keys(s, 'k', 'space');
    expect([...s.selected]).toEqual([s.rows[0]!.jobId]);
  });

  it('a selects every entry matching the filter, not only the visible page, and says so', () => {
    let s = loaded(500, (i) => ({ errorCode: i % 5 === 0 ? 'SCHEMA' : 'PROVIDER_429' }), 10);
    s = keys(s, '/', 's', 'c', 'h', 'e', 'm', 'a', 'enter', 'a');
    expect(s.selected.size).toBe(100);
    expect(s.selectionLabel).toBe('all 100 matching text="schema"');
    expect([...s.selected].every((id) => s.rows.find((r) => r.jobId === id)!.errorCode === 'SCHEMA')).toBe(true);
    s = keys(s, 'c');
    expect(s.selected.size).toBe(0);
  });
});

describe('redrive dialog', () => {
  it('refuses in a read-only context and says why', () => {
    const s = keys(loaded(3, undefined, 10, { readOnlyReason: 'context "prod" is read-only' }), 'space', 'R');
    expect(s.mode).toBe('list');
    expect(s.redrive).toBeNull();
    expect(s.notice).toContain('read-only');
  });

  it('refuses with nothing selected', () => {
    const s = keys(loaded(3), 'R');
    expect(s.redrive).toBeNull();
    expect(s.notice).toContain('nothing selected');
  });

  it('plans the selection, opens focused on Cancel, and Enter there cancels', () => {
    let s = keys(loaded(3), 'space', 'R');
    expect(s.redrive).toEqual({ step: 'planning', jobIds: [s.rows[0]!.jobId], context: { inAppFilter: {}, selection: null, hiddenByFilter: 0, queue: 'research' } });
    s = reduce(s, { type: 'redrive/planned', planned: planned(1) });
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'cancel' });
    s = keys(s, 'enter');
    expect(s.mode).toBe('list');
    expect(s.redrive).toBeNull();
    expect(s.notice).toContain('nothing moved');
  });

  it('up to 20 jobs: Tab to Redrive and Enter applies', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    expect(s.mode).toBe('progress');
    expect(s.redrive).toMatchObject({ step: 'applying', progress: { done: 0, total: 3 } });
  });

  it('above 20 jobs the count must be typed exactly before Redrive works', () => {
    let s = reduce(keys(loaded(30), 'a', 'R'), { type: 'redrive/planned', planned: planned(25, 30) });
    s = keys(s, 'tab', 'enter');
    expect(s.mode).toBe('confirm');
    expect(s.notice).toBe('type 25 to confirm');
    s = keys(s, '2', '6', 'enter');
    expect(s.mode).toBe('confirm');
    s = keys(s, 'backspace', 'x', '5', 'enter');
    expect(s.mode).toBe('progress');
  });

  it('Redrive is refused while the plan does not fit on the terminal, and works once it is enlarged', () => {
    // 40×10: the body has 6 lines; the plan with its typed-count prompt needs 11 (the title wraps).
    let s = reduce(keys(loaded(30, undefined, 5, { columns: 40 }), 'a', 'R'), { type: 'redrive/planned', planned: planned(25, 30) });
    s = keys(s, '2', '5', 'tab', 'enter');
    expect(s.mode).toBe('confirm');
    expect(s.notice).toContain('the plan does not fit on this terminal');
    s = reduce(s, { type: 'resize', pageSize: 5, columns: 39 });
    s = reduce(s, { type: 'resize', pageSize: 10, columns: 40 });
    s = keys(s, 'enter');
    expect(s.mode).toBe('progress');
  });

  it('← and Shift-Tab move focus back towards Cancel: ← on Cancel never focuses Redrive', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'left');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'reason' });
    s = keys(s, 'left', 'left');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'cancel' });
    s = keys(s, 'right', 'S-tab', 'enter');
    expect(s.mode).toBe('list');
    expect(s.notice).toBe('redrive cancelled: nothing moved');
  });

  it('a reason past its 200 characters is cut, and the status bar says so', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'tab', 'x'.repeat(250));
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'reason', reason: 'x'.repeat(200) });
    expect(s.notice).toBe('the reason takes at most 200 characters: the rest was not typed');
  });

  // Regression: both limits cut between code points: an emoji sequence across the 200th character
  // left its first half and a dangling joiner, drawn by the terminal further along the line.
  it('the filter and the reason are cut at their limit between characters as shown, never inside an emoji sequence', () => {
    let s = keys(loaded(3), '/', 'a'.repeat(197) + '👩\u200d💻');
    expect(s.textDraft).toBe('a'.repeat(197));
    expect(s.notice).toBe('the text filter takes at most 200 characters, as --grep');
    s = reduce(keys(s, 'esc', 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'tab', 'x'.repeat(198) + '👩\u200d💻');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'reason', reason: 'x'.repeat(198) });
    expect(s.notice).toBe('the reason takes at most 200 characters: the rest was not typed');
  });

  it('a plan with nothing to redrive cannot be applied', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(0, 3) });
    s = keys(s, 'tab', 'enter');
    expect(s.mode).toBe('confirm');
    expect(s.notice).toContain('nothing to redrive');
  });

  it('Esc/Ctrl-C while applying asks to stop after the batch; q does not quit mid-run', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter', 'q');
    expect(s.isQuitting).toBe(false);
    s = keys(s, 'C-c');
    expect(s.redrive).toMatchObject({ step: 'applying', isStopRequested: true });
  });

  it('a paste while a run applies neither stops it nor hides what the status bar says about it', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter', 'C-c');
    const notice = s.notice;
    expect(notice).toContain('stopping after the current batch');
    s = reduce(s, { type: 'paste', text: 'q\x03q' });
    expect(s.notice).toBe(notice);
    expect(s.isQuitting).toBe(false);
    expect(s.isForceQuit).toBeFalsy();
  });

  it('the result leads back to a fresh load of the DLQ with the selection cleared', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/progress', progress: { done: 3, total: 3, moved: 3, skipped: 0, failed: 0 } });
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_X', status: 'completed', moved: 3, skipped: 0, failed: 0, resumeCommand: null } });
    expect(s.mode).toBe('result');
    const gen = s.loadGeneration;
    s = keys(s, 'enter');
    expect(s).toMatchObject({ mode: 'list', loadGeneration: gen + 1, isLoading: true, rows: [] });
    expect(s.selected.size).toBe(0);
  });

  it('a failure during apply keeps the run it cut short: its id, what it moved, the resume command', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/progress', progress: { runId: 'run_X', resumeCommand: 'agentq dlq redrive --resume run_X', done: 2, total: 3, moved: 2, skipped: 0, failed: 0 } });
    s = reduce(s, { type: 'redrive/failed', message: 'Redis is unavailable', code: 'BACKEND_UNAVAILABLE', exitCode: 75 });
    expect(s.redrive).toEqual({ step: 'failed', message: 'Redis is unavailable', hasApplied: true, run: { runId: 'run_X', moved: 2, resumeCommand: 'agentq dlq redrive --resume run_X' }, hint: null });
    // Kept after the result screen is left, for the exit code and last words of the command.
    s = keys(s, 'enter');
    expect(s.mode).toBe('list');
    expect(s.cutShort).toEqual([
      { message: 'Redis is unavailable', code: 'BACKEND_UNAVAILABLE', exitCode: 75, run: { runId: 'run_X', moved: 2, resumeCommand: 'agentq dlq redrive --resume run_X' }, hint: null },
    ]);
  });

  it('a run stopped with Esc is kept after the result screen is left: quitting still says how to resume it', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter', 'escape');
    const stopped = { runId: 'run_X', status: 'interrupted', moved: 1, skipped: 0, failed: 0, resumeCommand: 'agentq dlq redrive --resume run_X' };
    s = reduce(s, { type: 'redrive/finished', result: stopped });
    s = keys(s, 'enter');
    expect(s.mode).toBe('list');
    // A later run that completes does not make the stopped one's resume command go away either.
    s = reduce(s, { type: 'rows/append', rows: rowsOf(2), isDone: true });
    s = reduce(keys(s, 'a', 'R'), { type: 'redrive/planned', planned: planned(2) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_Y', status: 'completed', moved: 2, skipped: 0, failed: 0, resumeCommand: null } });
    expect(outcomeOf(keys(s, 'q')).stopped).toEqual([stopped]);
  });

  it('a redrive refused before its run was recorded (the queue locked by another) keeps the selection: nothing moved', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/failed', message: 'another bulk action holds the research DLQ lock', code: 'LOCK_HELD', exitCode: 75 });
    const gen = s.loadGeneration;
    s = keys(s, 'enter');
    expect(s.mode).toBe('list');
    expect(s.selected.size).toBe(3);
    expect(s.selectionLabel).toBe('all 3 matching no filter');
    expect(s.loadGeneration).toBe(gen);
  });

  it('a redrive refused before its run was recorded stops counting once a later redrive of the session is recorded: the session exits on what it was left with', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/failed', message: 'Redis is unavailable', code: 'BACKEND_UNAVAILABLE', exitCode: 75 });
    // Quit now, the refusal is what the operator is left with: the command exits 75 on it.
    expect(outcomeOf(keys(s, 'enter', 'q')).cutShort.map((c) => c.code)).toEqual(['BACKEND_UNAVAILABLE']);
    // Retried in the same session, the redrive goes through: nothing is left to resume or retry.
    s = keys(s, 'enter');
    s = reduce(keys(s, 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_Y', status: 'completed', moved: 3, skipped: 0, failed: 0, resumeCommand: null } });
    expect(outcomeOf(keys(s, 'enter', 'q')).cutShort).toEqual([]);
  });

  // Regression: a redrive refused while its plan was built (the SQLite store removed, the backend
  // unreachable) was not counted: quitting exited 0, though README says a session whose last
  // redrive was refused before its run was recorded exits with the error's code.
  it('a redrive refused while its plan was built counts as one refused before its run was recorded: quitting exits with its code, until a later run is recorded', () => {
    let s = keys(loaded(3), 'a', 'R');
    s = reduce(s, { type: 'redrive/failed', message: 'the agentq store at /x.db was removed', code: 'STORE_REPLACED', exitCode: 78, hint: 'Quit (q) and start again.' });
    expect(outcomeOf(keys(s, 'q')).cutShort).toEqual([{ message: 'the agentq store at /x.db was removed', code: 'STORE_REPLACED', exitCode: 78, run: null, hint: 'Quit (q) and start again.' }]);
    // Also once its screen was left (back to the list).
    s = keys(s, 'enter');
    expect(outcomeOf(keys(s, 'q')).cutShort.map((c) => c.exitCode)).toEqual([78]);
    // Retried, the plan is built and the run recorded: the refusal was got past.
    s = reduce(keys(s, 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_Y', status: 'completed', moved: 3, skipped: 0, failed: 0, resumeCommand: null } });
    expect(outcomeOf(keys(s, 'enter', 'q')).cutShort).toEqual([]);
  });

  it('Esc while a plan is built is not a failure: quitting exits 0', () => {
    const s = keys(loaded(3), 'a', 'R', 'esc');
    expect(s.redrive).toBeNull();
    expect(outcomeOf(keys(s, 'q')).cutShort).toEqual([]);
  });

  it('a run an error cut short after it was recorded still counts after a later redrive: its ledger says failed, with work to resume', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/progress', progress: { runId: 'run_X', resumeCommand: 'agentq dlq redrive --resume run_X', done: 1, total: 3, moved: 1, skipped: 0, failed: 0 } });
    s = reduce(s, { type: 'redrive/failed', message: 'Redis is unavailable', code: 'BACKEND_UNAVAILABLE', exitCode: 75 });
    s = keys(s, 'enter');
    s = reduce(s, { type: 'rows/append', rows: rowsOf(2), isDone: true });
    s = reduce(keys(s, 'a', 'R'), { type: 'redrive/planned', planned: planned(2) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_Y', status: 'completed', moved: 2, skipped: 0, failed: 0, resumeCommand: null } });
    expect(outcomeOf(keys(s, 'enter', 'q')).cutShort.map((c) => c.run?.runId)).toEqual(['run_X']);
  });

  it('a planning failure (e.g. a selection over two queues) returns to the list without reloading', () => {
    let s = keys(loaded(3), 'a', 'R');
    const gen = s.loadGeneration;
    s = reduce(s, { type: 'redrive/failed', message: 'the selection spans 2 queues', code: 'VALIDATION', exitCode: 2 });
    expect(s.mode).toBe('result');
    expect(s.redrive).toMatchObject({ step: 'failed', hasApplied: false, run: null });
    s = keys(s, 'enter');
    expect(s.loadGeneration).toBe(gen);
    expect(s.mode).toBe('list');
    expect(s.rows.length).toBe(3);
    expect(s.selected.size).toBe(3);
  });
});

describe('the selection during a reload', () => {
  it('selected jobs not loaded again yet are not counted as hidden by the filter (the header, the dialog and the audit say so)', () => {
    const rows = rowsOf(5);
    let s = reduce(initialState({ now: T0, pageSize: 10 }), { type: 'rows/append', rows: rows.slice(), isDone: true });
    s = keys(s, 'a', 'r');
    expect(s.isLoading).toBe(true);
    s = reduce(s, { type: 'rows/append', rows: rows.slice(0, 2), isDone: false });
    expect(s.selected.size).toBe(5);
    expect(s.selectedHidden).toBe(0);
    // R now: the run's audit must not record 3 jobs as hidden by a filter there is not.
    s = keys(s, 'R');
    expect(s.redrive).toMatchObject({ step: 'planning', context: { hiddenByFilter: 0 } });
  });

  it('still counts what the filter hides among the rows loaded so far', () => {
    const rows = rowsOf(4, (i) => ({ errorCode: i < 2 ? 'PROVIDER_429' : 'TOOL_TIMEOUT' }));
    let s = reduce(initialState({ now: T0, pageSize: 10 }), { type: 'rows/append', rows: rows.slice(), isDone: true });
    s = keys(s, 'a', 'E', 'down', 'enter');
    expect(s.selectedHidden).toBe(2);
    s = keys(s, 'r');
    s = reduce(s, { type: 'rows/append', rows: rows.slice(0, 3), isDone: false });
    expect(s.selectedHidden).toBe(1);
  });
});

describe('select all while the whole messages are searched', () => {
  // Two entries whose messages match "needle" only past the characters a row holds.
  const deep = (i: number): EntryOptions => (i < 2 ? { errorMessage: `${'x'.repeat(300)} needle` } : {});

  it('a is refused until the backend has searched whole messages: "all matching" would leave out the deep matches', () => {
    let s = keys(loaded(5, deep), '/', 'n', 'e', 'e', 'd', 'l', 'e', 'enter');
    expect(s.fullText).toEqual({ text: 'needle', ids: null });
    s = keys(s, 'a');
    expect(s.selected.size).toBe(0);
    expect(s.notice).toContain('searching whole error messages');
    s = reduce(s, { type: 'fulltext/found', text: 'needle', ids: new Set([s.rows[0]!.jobId, s.rows[1]!.jobId]) });
    s = keys(s, 'a');
    expect([...s.selected].sort()).toEqual([s.rows[0]!.jobId, s.rows[1]!.jobId].sort());
  });
});

describe('detail, help and quit', () => {
  it('Enter opens the entry under the cursor and Esc goes back', () => {
    let s = keys(loaded(3), 'j', 'enter');
    expect(s.detail).toMatchObject({ jobId: s.rows[1]!.jobId, lines: undefined });
    s = reduce(s, { type: 'detail/loaded', jobId: s.rows[1]!.jobId, lines: Array.from({ length: 40 }, (_, i) => `line ${i}`) });
    s = keys(s, 'j', 'j', 'pgdn');
    expect(s.detail!.scroll).toBe(12);
    s = keys(s, 'G');
    expect(s.detail!.scroll).toBe(30);
    s = keys(s, 'esc');
    expect(s.mode).toBe('list');
    expect(s.detail).toBeNull();
  });

  it('ignores a detail that arrives for a job no longer shown', () => {
    let s = keys(loaded(3), 'enter', 'esc');
    s = reduce(s, { type: 'detail/loaded', jobId: s.rows[0]!.jobId, lines: ['x'] });
    expect(s.detail).toBeNull();
  });

  it('? opens a help that swallows keys until closed', () => {
    let s = keys(loaded(3), '?', 'j', 'R', 'q');
    expect(s.isHelpOpen).toBe(false);
    expect(s.isQuitting).toBe(false);
    expect(s.list.cursor).toBe(0);
    s = keys(s, 'q');
    expect(s.isQuitting).toBe(true);
  });
});

describe('stopping a running redrive', () => {
  const applying = () => keys(reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) }), 'tab', 'enter');
  const finished = { type: 'redrive/finished', result: { runId: 'run_X', status: 'interrupted', moved: 1, skipped: 0, failed: 0, resumeCommand: 'agentq dlq redrive --resume run_X' } } as const;

  it('a signal stops the run after its batch, and the app quits once the run has recorded its outcome', () => {
    let s = reduce(applying(), { type: 'interrupt', reason: 'SIGTERM' });
    expect(s.redrive).toMatchObject({ step: 'applying', isStopRequested: true });
    expect(s.isQuitting).toBe(false);
    s = reduce(s, finished);
    expect(s).toMatchObject({ isQuitting: true, interruptedBy: 'SIGTERM', isForceQuit: false });
  });

  it('a signal while idle quits at once', () => {
    expect(reduce(loaded(3), { type: 'interrupt', reason: 'SIGHUP' })).toMatchObject({ isQuitting: true, interruptedBy: 'SIGHUP' });
  });

  it('the first Ctrl-C or q stops after the batch; the second quits at once (a hung backend never ends the batch)', () => {
    for (const key of ['C-c', 'q']) {
      let s = keys(applying(), key);
      expect(s).toMatchObject({ isQuitting: false, redrive: { isStopRequested: true } });
      s = keys(s, key);
      expect(s).toMatchObject({ isQuitting: true, isForceQuit: true });
    }
    // Esc only ever asks to stop.
    expect(keys(applying(), 'esc', 'esc')).toMatchObject({ isQuitting: false, isForceQuit: false });
  });

  it('the result screen no longer says "stopping after the current batch…"', () => {
    let s = keys(applying(), 'esc');
    expect(s.notice).toContain('stopping after the current batch');
    s = reduce(s, finished);
    expect(s.notice).toBeNull();
  });
});

describe('select all matching (a)', () => {
  it('is refused while the list is still loading: "all matching" must not mean "all loaded so far"', () => {
    let s = reduce(initialState({ now: T0, pageSize: 10 }), { type: 'rows/expected', total: 50, generation: 0 });
    s = reduce(s, { type: 'rows/append', rows: rowsOf(20), isDone: false });
    s = keys(s, 'a');
    expect(s.selected.size).toBe(0);
    expect(s.notice).toContain('still loading (20 of ~50)');
    s = reduce(s, { type: 'rows/append', rows: [], isDone: true });
    s = keys(s, 'a');
    expect(s.selected.size).toBe(20);
  });

  it('pressed again, or after picks it covers, says "all matching": "(+ earlier picks)" only when a pick lies outside', () => {
    let s = keys(loaded(6, (i) => ({ errorCode: i < 2 ? 'TOOL_TIMEOUT' : 'PROVIDER_429' })), 'a', 'a');
    expect(s.selectionLabel).toBe('all 6 matching no filter');
    s = keys(s, 'c', 'E', 'down', 'enter', 'a', 'x', 'a');
    expect(s.selectionLabel).toBe('all 6 matching no filter');
    s = keys(s, 'c', 'home', 'space', 'E', 'down', 'enter', 'a');
    expect(s.selectionLabel).toBe('all 4 matching error=PROVIDER_429 (+ earlier picks)');
  });

  it('on a list that shows nothing selects nothing and says so: no "all 0 matching" label over an earlier pick', () => {
    let s = keys(loaded(5), 'space', '/', ...'no such text', 'enter', 'a');
    expect(s.selected.size).toBe(1);
    expect(s.selectionLabel).toBeNull();
    expect(s.notice).toBe('nothing matches the filter: nothing to select (x clears the filter)');
    s = keys(reduce(initialState({ now: T0, pageSize: 10 }), { type: 'rows/append', rows: [], isDone: true }), 'a');
    expect(s.selectionLabel).toBeNull();
    expect(s.notice).toBe('the DLQ is empty: nothing to select');
  });

  it('counts the selected jobs the current filter hides, for the header and the dialog', () => {
    let s = keys(loaded(33, (i) => ({ errorCode: i < 11 ? 'TOOL_TIMEOUT' : 'PROVIDER_429' })), 'a');
    expect(s).toMatchObject({ selectedHidden: 0, selectionLabel: 'all 33 matching no filter' });
    s = keys(s, '/', ...'tool_timeout', 'enter');
    expect(s.visible.length).toBe(11);
    expect(s.selectedHidden).toBe(22);
    s = keys(s, 'x');
    expect(s.selectedHidden).toBe(0);
  });
});

describe('reload (r)', () => {
  it('loads again, puts the cursor back on the same job and unselects jobs that left the DLQ', () => {
    const rows = rowsOf(10);
    let s = reduce(initialState({ now: T0, pageSize: 5 }), { type: 'rows/append', rows: rows.slice(), isDone: true, at: T0 });
    expect(s.loadedAt).toBe(T0);
    s = keys(s, 'space', 'space', 'j', 'j', 'j');
    expect(currentRow(s)!.jobId).toBe(rows[5]!.jobId);
    s = keys(s, 'r');
    expect(s).toMatchObject({ isLoading: true, loadGeneration: 1, rows: [], reloadAnchor: rows[5]!.jobId });
    // The store now lacks job 1 (redriven from another shell) and has a new failure.
    const fresh = [rows[0]!, ...rows.slice(2), ...rowsOf(11).slice(10)];
    s = reduce(s, { type: 'rows/append', rows: fresh, isDone: true, at: T0 + 60_000 });
    expect(currentRow(s)!.jobId).toBe(rows[5]!.jobId);
    expect(s.loadedAt).toBe(T0 + 60_000);
    expect([...s.selected]).toEqual([rows[0]!.jobId]);
    expect(s.notice).toContain('1 selected jobs left the DLQ');
    expect(s.rows.length).toBe(10);
  });

  it('Ctrl-R reloads too, also from the group view; a failed load can be retried', () => {
    let s = keys(loaded(4), 'g', 'C-r');
    expect(s).toMatchObject({ loadGeneration: 1, mode: 'groups' });
    s = reduce(s, { type: 'rows/failed', message: 'Redis at 127.0.0.1:6390 is unavailable' });
    s = keys(s, 'esc', 'r');
    expect(s).toMatchObject({ loadGeneration: 2, loadError: null, isLoading: true });
  });
});

describe('Ctrl-C everywhere', () => {
  it('quits from the text filter and from the help overlay, and cancels the redrive dialog', () => {
    expect(keys(loaded(3), '/', 'a', 'C-c').isQuitting).toBe(true);
    expect(keys(loaded(3), '?', 'C-c').isQuitting).toBe(true);
    const dialog = keys(reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) }), 'C-c');
    expect(dialog).toMatchObject({ mode: 'list', redrive: null, isQuitting: false, notice: 'redrive cancelled: nothing moved' });
    expect(keys(loaded(3), 'a', 'R', 'C-c')).toMatchObject({ mode: 'list', redrive: null });
  });
});

describe('what the run records about the selection', () => {
  it('R passes the in-app filter, the selection label and the hidden count to the plan', () => {
    let s = keys(loaded(6, (i) => ({ errorCode: i < 2 ? 'TOOL_TIMEOUT' : 'PROVIDER_429' })), 'a', '/', ...'tool_timeout', 'enter', 'e', 'R');
    expect(s.redrive).toMatchObject({
      step: 'planning',
      context: { inAppFilter: { text: 'tool_timeout', hide_expired: true }, selection: 'all 6 matching no filter', hiddenByFilter: 4 },
    });
  });

  it('the dialog takes an optional reason after Tab, typed (digits too); Enter there goes back to Cancel, never redrives', () => {
    let s = reduce(keys(loaded(3), 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'tab');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'reason' });
    s = keys(s, ...'quota raised 2x', 'backspace', 'enter');
    expect(s.redrive).toMatchObject({ step: 'confirm', focus: 'cancel', reason: 'quota raised 2', typed: '' });
    s = keys(s, 'tab', 'enter');
    expect(s.redrive).toMatchObject({ step: 'applying', reason: 'quota raised 2' });
  });
});


describe('several queues (browse without --queue)', () => {
  const twoQueues = (i: number): EntryOptions => ({ queue: i % 2 === 0 ? 'research' : 'support' });

  it('Q picks a queue: the list narrows to it, and (any) widens it again', () => {
    let s = loaded(6, twoQueues);
    s = keys(s, 'Q');
    expect(s.mode).toBe('picker');
    expect(s.picker!.options).toEqual([
      { value: null, count: 6 },
      { value: 'research', count: 3 },
      { value: 'support', count: 3 },
    ]);
    s = keys(s, 'down', 'down', 'enter');
    expect(s.mode).toBe('list');
    expect(s.filter.queue).toBe('support');
    expect(s.visible.map((i) => s.rows[i]!.queue)).toEqual(['support', 'support', 'support']);
    s = keys(s, 'Q', 'home', 'enter');
    expect(s.visible.length).toBe(6);
  });

  it('R on a selection spanning two queues offers the queues of the selection; picking one narrows the list and the selection to it', () => {
    let s = keys(loaded(6, twoQueues), 'a', 'R');
    expect(s.mode).toBe('picker');
    expect(s.redrive).toBeNull();
    expect(s.notice).toMatch(/spans 2 queues/);
    expect(s.picker!.options).toEqual([
      { value: 'research', count: 3 },
      { value: 'support', count: 3 },
    ]);
    s = keys(s, 'down', 'enter');
    expect(s.mode).toBe('list');
    expect(s.filter.queue).toBe('support');
    expect([...s.selected].every((id) => s.rows.find((r) => r.jobId === id)!.queue === 'support')).toBe(true);
    expect(s.selected.size).toBe(3);
    expect(s.selectedHidden).toBe(0);
    expect(s.notice).toMatch(/3 selected in queue support kept; 3 in other queues unselected/);
    s = keys(s, 'R');
    expect(s.mode).toBe('confirm');
    expect(s.redrive).toMatchObject({ step: 'planning' });
    expect(s.redrive!.step === 'planning' && s.redrive!.jobIds.length).toBe(3);
  });

  it('Esc in that picker keeps the list and the selection as they were', () => {
    let s = keys(loaded(6, twoQueues), 'a', 'R', 'esc');
    expect(s.mode).toBe('list');
    expect(s.selected.size).toBe(6);
    expect(s.filter.queue).toBeNull();
  });

  it('g splits groups by queue too, and Enter on one narrows the list to its queue: a then R needs no queue picker', () => {
    let s = keys(loaded(6, twoQueues), 'g');
    expect(s.groups!.items.map((g) => [g.queue, g.errorCode, g.count])).toEqual([
      ['research', 'PROVIDER_429', 3],
      ['support', 'PROVIDER_429', 3],
    ]);
    s = keys(s, 'j', 'enter');
    expect(s.filter).toMatchObject({ queue: 'support', errorCode: 'PROVIDER_429' });
    s = keys(s, 'a', 'R');
    expect(s.mode).toBe('confirm');
    // One queue: groups are not split (no queue to tell apart).
    expect(keys(loaded(3), 'g').groups!.items.map((g) => g.queue)).toEqual([null]);
  });

  it('a picker counts what the other filters let through (narrowed to a queue, T counts that queue\'s tenants); values only elsewhere show 0', () => {
    let s = loaded(6, (i) => ({ queue: i < 4 ? 'research' : 'support', tenant: i < 3 ? 'acme' : 'globex' }));
    s = keys(s, 'Q', 'down', 'down', 'enter');
    expect(s.filter.queue).toBe('support');
    s = keys(s, 'T');
    expect(s.picker!.options).toEqual([
      { value: null, count: 2 },
      { value: 'globex', count: 2 },
      { value: 'acme', count: 0 },
    ]);
  });

  it('a redrive that empties the queue narrowed to with Q drops the narrowing once the list is reloaded, and says why', () => {
    let s = keys(loaded(6, twoQueues), 'Q', 'down', 'down', 'enter');
    expect(s.filter.queue).toBe('support');
    s = reduce(keys(s, 'a', 'R'), { type: 'redrive/planned', planned: planned(3) });
    s = keys(s, 'tab', 'enter');
    s = reduce(s, { type: 'redrive/finished', result: { runId: 'run_X', status: 'completed', moved: 3, skipped: 0, failed: 0, resumeCommand: null } });
    s = keys(s, 'enter');
    // The reload brings only research: support's DLQ is empty now.
    const pool = new StringPool();
    const left = [0, 2, 4].map((i) => toTriageRow(toDlqRow(makeEntry(i, { queue: 'research' })), pool));
    s = reduce(s, { type: 'rows/append', rows: left, isDone: true });
    expect(s.filter.queue).toBeNull();
    expect(s.visible.length).toBe(3);
    expect(s.notice).toMatch(/queue support's DLQ is empty now/);
    // A queue that still holds entries stays narrowed across a reload.
    s = keys(s, 'Q', 'down', 'enter', 'r');
    s = reduce(s, { type: 'rows/append', rows: [0, 2].map((i) => toTriageRow(toDlqRow(makeEntry(i, { queue: 'research' })), pool)), isDone: true });
    expect(s.filter.queue).toBe('research');
  });

  it('the label of a selection narrowed with R is what a would say on the narrowed list, not the whole label again inside a longer one', () => {
    let s = keys(loaded(6, twoQueues), '/', ...'rate limited', 'enter', 'a', 'R', 'down', 'enter');
    expect(s.selectionLabel).toBe('all 3 matching queue=support text="rate limited"');
    // Picks added to an a-selection, or a filter changed since a: the label keeps what a selected, once.
    const firstExpired = (i: number): EntryOptions => ({ ...twoQueues(i), deadlineIn: i === 0 ? -1 : undefined });
    s = keys(loaded(6, firstExpired), 'space', 'e', 'a', 'e', 'R', 'down', 'enter');
    expect(s.selectionLabel).toBe('3 in queue support of all 5 matching no expired (+ earlier picks)');
    s = keys(loaded(6, twoQueues), 'e', 'a', 'e', 'R', 'down', 'enter');
    expect(s.selectionLabel).toBe('3 in queue support of all 6 matching no expired');
  });

  it('R on a one-queue selection opens the dialog as before', () => {
    const s = keys(loaded(6, twoQueues), 'Q', 'down', 'enter', 'a', 'R');
    expect(s.mode).toBe('confirm');
  });
});
describe('pickers while loading', () => {
  it('the error-code picker follows the rows that arrive after it was opened, and says it is partial until the load is done', () => {
    const pool = new StringPool();
    const page = (from: number, code: string) => Array.from({ length: 3 }, (_, k) => toTriageRow(toDlqRow(makeEntry(from + k, { errorCode: code })), pool));
    let s = reduce(initialState({ now: T0, pageSize: 10 }), { type: 'rows/append', rows: page(0, 'PROVIDER_429'), isDone: false });
    s = keys(s, 'E', 'down');
    expect(s.picker!.options.map((o) => o.value)).toEqual([null, 'PROVIDER_429']);
    expect(s.picker!.isPartial).toBe(true);
    s = reduce(s, { type: 'rows/append', rows: [...page(3, 'TOOL_TIMEOUT'), ...page(6, 'TOOL_TIMEOUT')], isDone: true });
    expect(s.picker!.options).toEqual([
      { value: null, count: 9 },
      { value: 'TOOL_TIMEOUT', count: 6 },
      { value: 'PROVIDER_429', count: 3 },
    ]);
    expect(s.picker!.isPartial).toBe(false);
    // The cursor stays on the value it was on.
    expect(s.picker!.options[s.picker!.cursor]!.value).toBe('PROVIDER_429');
  });
});
describe('resize', () => {
  it('a taller terminal pulls the help and an open entry back so their last page is full', () => {
    let s = loaded(3, undefined, 5);
    s = keys(s, '?', 'G');
    const scrolledAt5 = s.helpScroll;
    expect(scrolledAt5).toBeGreaterThan(0);
    s = reduce(s, { type: 'resize', pageSize: 15 });
    expect(s.helpScroll).toBe(scrolledAt5 - 10);
    s = keys(s, '?', 'enter');
    s = reduce(s, { type: 'detail/loaded', jobId: s.detail!.jobId, lines: Array.from({ length: 30 }, (_, i) => `line ${i}`) });
    s = keys(s, 'G');
    expect(s.detail!.scroll).toBe(15);
    s = reduce(s, { type: 'resize', pageSize: 25 });
    expect(s.detail!.scroll).toBe(5);
  });

  it('the group view and the picker keep their cursor on screen when the terminal shrinks, and fill it when it grows', () => {
    let s = loaded(30, (i) => ({ tenant: `t${String(i).padStart(2, '0')}` }), 20);
    s = keys(s, 'T', 'G');
    expect(s.picker).toMatchObject({ cursor: 30, top: 11 });
    s = reduce(s, { type: 'resize', pageSize: 5 });
    expect(s.picker).toMatchObject({ cursor: 30, top: 26 });
    s = reduce(s, { type: 'resize', pageSize: 20 });
    expect(s.picker).toMatchObject({ cursor: 30, top: 11 });
  });
});
describe('a refused redrive', () => {
  it('the result screen does not promise a reload when nothing moved', () => {
    let s = keys(loaded(3), 'a', 'R');
    s = reduce(s, { type: 'redrive/failed', message: 'the queue is locked by another run' });
    expect(s.mode).toBe('result');
    expect(resultHint(s)).not.toMatch(/reloaded/);
  });
});
