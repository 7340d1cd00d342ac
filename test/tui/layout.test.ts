/** The DLQ list's columns at the widths people have: nothing runs off the edge, the error code stays readable. */
import { describe, expect, it } from 'vitest';
import { listColumns } from '../../src/tui/layout.js';

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
});
