/** The DLQ list's columns at the widths people have: nothing runs off the edge, the error code stays readable. */
import { describe, expect, it } from 'vitest';
import { listColumns, rowLine } from '../../src/tui/layout.js';
import { fit, fitId, fitMiddle, fitRight } from '../../src/tui/text.js';
import { StringPool, toTriageRow } from '../../src/tui/row.js';
import { displayWidth } from '../../src/cli/output/width.js';
import { makeEntry, T0, toDlqRow } from './support/entries.js';
import { groupColumns } from '../../src/tui/GroupView.js';

const lineWidth = (w: number) => {
  const cols = listColumns(w);
  return cols.reduce((n, c) => n + c.width, 0) + cols.length - 1;
};
const keys = (w: number) => listColumns(w).map((c) => c.key);

describe('listColumns', () => {
  it('at 80 columns keeps the error code wide enough to tell PROVIDER_429 from PROVIDER_5XX, and deadline and partial, within the width', () => {
    const cols = listColumns(80);
    expect(lineWidth(80)).toBeLessThanOrEqual(80);
    expect(cols.find((c) => c.key === 'error')!.width).toBeGreaterThanOrEqual('PROVIDER_429'.length);
    // what a redrive decision needs stays; the redrive count, age and attempts go first
    expect(keys(80)).toEqual(expect.arrayContaining(['id', 'error', 'deadline', 'partial']));
    expect(keys(80)).not.toContain('redrives');
  });

  it('shows every column from 100 columns on, the error code getting the most of the free room', () => {
    for (const w of [100, 120, 160, 200]) {
      expect(lineWidth(w), String(w)).toBe(w);
      expect(keys(w)).toEqual(['cursor', 'sel', 'id', 'workflow', 'tenant', 'error', 'attempts', 'age', 'deadline', 'partial', 'redrives']);
    }
    const wide = listColumns(160);
    const width = (k: string) => wide.find((c) => c.key === k)!.width;
    expect(width('error')).toBeGreaterThan(width('workflow'));
    expect(width('workflow')).toBeGreaterThan(width('tenant'));
  });

  it('below 80 columns shortens the job id, then drops workflow and tenant, but keeps deadline and partial and fits', () => {
    for (let w = 50; w < 80; w++) {
      expect(lineWidth(w), String(w)).toBeLessThanOrEqual(w);
      expect(keys(w), String(w)).toEqual(expect.arrayContaining(['id', 'error', 'deadline', 'partial']));
      expect(listColumns(w).find((c) => c.key === 'error')!.width, String(w)).toBeGreaterThanOrEqual(8);
    }
    expect(keys(70)).toContain('workflow');
    expect(keys(55)).not.toContain('workflow');
  });

  it('keeps every built-in error code whole (BUDGET_EXCEEDED, the longest) wherever workflow and tenant are shown, also beside a QUEUE column', () => {
    // BUDGET_EXCEEDED read "BUDGET_EXCEED…" at 120 columns across several queues, and at 100 on one.
    for (const queueWidth of [0, 8, 16]) {
      for (let w = 60; w <= 200; w++) {
        const cols = listColumns(w, queueWidth);
        if (!cols.some((c) => c.key === 'workflow')) continue;
        expect(cols.find((c) => c.key === 'error')!.width, `${w} cols, queue ${queueWidth}`).toBeGreaterThanOrEqual('BUDGET_EXCEEDED'.length);
      }
    }
    expect(listColumns(120, 8).find((c) => c.key === 'error')!.width).toBeGreaterThanOrEqual('BUDGET_EXCEEDED'.length);
  });

  it('gives workflow and tenant readable room before the id keeps all 30 characters', () => {
    const at80 = listColumns(80);
    expect(at80.find((c) => c.key === 'workflow')!.width).toBeGreaterThanOrEqual(10);
    expect(at80.find((c) => c.key === 'id')!.width).toBeLessThan(30);
    expect(listColumns(120).find((c) => c.key === 'id')!.width).toBe(30);
  });
});

describe('fitId', () => {
  it('keeps the type prefix and the distinguishing end', () => {
    expect(fitId('job_01M8K94SHNF0KNG69QW7FVK8GB', 12)).toBe('job_…7FVK8GB');
    expect(fitId('job_01M8K94SHNF0KNG69QW7FVK8GB', 30)).toBe('job_01M8K94SHNF0KNG69QW7FVK8GB');
    expect(fitId('abc', 5)).toBe('abc  ');
  });
});

describe('groupColumns (the group view)', () => {
  const items = [
    { errorCode: 'PROVIDER_CONTEXT_LENGTH_EXCEEDED', workflow: 'research_report:v3' },
    { errorCode: 'PROVIDER_429', workflow: 'triage_ticket:v2' },
  ];
  it('does not cut an error code when there is room for it and the workflow', () => {
    const { codeW, wfW } = groupColumns(items, 100);
    expect(codeW).toBeGreaterThanOrEqual('PROVIDER_CONTEXT_LENGTH_EXCEEDED'.length);
    expect(wfW).toBeGreaterThanOrEqual('research_report:v3'.length);
    expect(codeW + wfW).toBe(100 - 34);
  });
  it('at 60 columns the code gets its whole width first (BUDGET_EXCEEDED, not BUDGET_EXCE…), the workflow the rest', () => {
    const { codeW, wfW } = groupColumns([{ errorCode: 'BUDGET_EXCEEDED', workflow: 'research_report:v3' }], 60);
    expect(codeW).toBe('BUDGET_EXCEEDED'.length);
    expect(wfW).toBe(60 - 34 - 'BUDGET_EXCEEDED'.length);
  });
  it('when both cannot fit, the code keeps at least half', () => {
    const { codeW, wfW } = groupColumns(items, 70);
    expect(codeW + wfW).toBe(36);
    expect(codeW).toBeGreaterThanOrEqual(18);
  });
});

describe('wide and combining characters in cells (an error code a foreign writer stored)', () => {
  const row = (errorCode: string) => toTriageRow(toDlqRow(makeEntry(0, { errorCode, redriveCount: 7 })), new StringPool());
  const line = (code: string, width: number) => rowLine(row(code), listColumns(width), { now: T0, isCursor: false, isSelected: false });

  it('a list row takes the terminal cells of an ASCII row: CJK and emoji count two, combining marks none', () => {
    for (const code of ['東京_タイムアウト_エラー', '🚀🚀🚀_FAILED', 'e\u0301\u0301\u0301_COMBINING', '東'.repeat(40)]) {
      for (const width of [80, 100, 160]) {
        const l = line(code, width);
        expect(displayWidth(l), `${code} at ${width}`).toBe(displayWidth(line('PROVIDER_429', width)));
        // the columns after the error code stay in place, the redrive count last
        if (width >= 100) expect(l.endsWith('    7'), `${code} at ${width}`).toBe(true);
      }
    }
  });

  it('fit and fitRight pad and cut by cells', () => {
    expect(fit('東京', 6)).toBe('東京  ');
    expect(displayWidth(fit('東京東京', 6))).toBe(6);
    expect(fit('東京東京', 6)).toBe('東京… '); // a wide character does not fit in the one cell left
    expect(fitRight('東京', 6)).toBe('  東京');
  });

  it('fitMiddle keeps the start and the end, by cells', () => {
    expect(fitMiddle('tenant-eu-west-prod', 30)).toBe('tenant-eu-west-prod' + ' '.repeat(11));
    expect(fitMiddle('tenant-eu-west-prod', 11)).toBe('tenan…-prod');
    expect(fitMiddle('東京東京東京', 7)).toBe('東京…京');
    for (const w of [1, 2, 3, 4, 5, 8]) expect(displayWidth(fitMiddle('東京東京東京-x', w)), String(w)).toBe(w);
  });

  it('the group view gives a wide error code the cells it needs', () => {
    const { codeW } = groupColumns([{ errorCode: '東京_タイムアウト', workflow: 'research_report:v3' }], 100);
    expect(codeW).toBe(displayWidth('東京_タイムアウト'));
  });
});

describe('listColumns with a QUEUE column (browsing several queues)', () => {
  it('is as wide as the longest queue name (5 to 16), and the line still fits from 52 columns up', () => {
    expect(listColumns(120, 8).find((c) => c.key === 'queue')!.width).toBe(8);
    expect(listColumns(120, 40).find((c) => c.key === 'queue')!.width).toBe(16);
    // At 80 columns a long queue name gives way (to 8) before workflow and tenant are cut to a few letters.
    const at80 = listColumns(80, 27);
    expect(at80.find((c) => c.key === 'queue')!.width).toBe(8);
    expect(at80.find((c) => c.key === 'tenant')!.width).toBeGreaterThanOrEqual(6);
    for (let w = 52; w <= 200; w++) {
      const cols = listColumns(w, 16);
      expect(cols.reduce((n, c) => n + c.width, 0) + cols.length - 1, String(w)).toBeLessThanOrEqual(w);
      expect(cols.map((c) => c.key), String(w)).toEqual(expect.arrayContaining(['id', 'queue', 'error', 'deadline', 'partial']));
    }
  });
});
