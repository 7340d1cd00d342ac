import { describe, expect, it } from 'vitest';
import { displayWidth, fitWidths, renderTable } from '../../src/cli/output/table.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import type { Column } from '../../src/cli/output/columns.js';

interface Row {
  id: string;
  state: string;
  msg: string;
}
const columns: Column<Row>[] = [
  { header: 'job', get: (r) => r.id, keepWhole: true },
  { header: 'state', get: (r) => ({ text: r.state, style: 'state' }) },
  { header: 'message', get: (r) => r.msg, flexible: true },
  { header: 'detail', get: () => 'only-wide', wide: true },
];
const rows: Row[] = [
  { id: 'job_01', state: 'queued', msg: 'a fairly long message that will not fit on a narrow terminal at all' },
  { id: 'job_02', state: 'dead', msg: '東京' },
];

describe('table output', () => {
  it('prints an upper-case header and one line per row, without borders or trailing spaces', () => {
    const { text } = renderTable(columns, rows, { palette: NO_COLOUR });
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^JOB\s+STATE\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^job_01\s+queued\s+a fairly long/);
    for (const l of lines) expect(l).toBe(l.trimEnd());
    expect(text).not.toContain('only-wide');
  });

  it('shows wide-only columns with -o wide', () => {
    expect(renderTable(columns, rows, { palette: NO_COLOUR, wide: true }).text).toContain('only-wide');
  });

  it('shortens the free-text column first to fit the terminal width', () => {
    const { text } = renderTable(columns, rows, { palette: NO_COLOUR, width: 40 });
    for (const l of text.trimEnd().split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(40);
    expect(text).toContain('job_01');
    expect(text).toContain('queued');
    expect(text).toContain('…');
  });

  it('keeps a gap between columns even when a cell is cut, and never cuts a job id', () => {
    const long: Row[] = [{ id: 'job_01M8KBEP3X5Z56CJGGM7PKTDJ4', state: 'cancelled', msg: 'x'.repeat(80) }];
    const { text } = renderTable(columns, long, { palette: NO_COLOUR, width: 30 });
    const line = text.split('\n')[1]!;
    expect(line).toMatch(/^job_01M8KBEP3X5Z56CJGGM7PKTDJ4 {2}\S/);
    expect(line).toMatch(/… {2}/); // the cut state or message cell still ends with the gap before the next column
  });

  it("a column's minWidth holds room for later rows of a stream (its widths come from the first page)", () => {
    const cols = [{ header: 'to', get: (r: { to: string }) => r.to, minWidth: 16 }];
    const first = renderTable(cols, [{ to: '-' }], { palette: NO_COLOUR, width: 80 });
    expect(first.colWidths).toEqual([16]);
    const later = renderTable(cols, [{ to: 'cancel_requested' }], { palette: NO_COLOUR, width: 80, colWidths: first.colWidths, header: false });
    expect(later.text.trim()).toBe('cancel_requested');
  });

  it('counts wide characters as two cells', () => {
    expect(displayWidth('東京')).toBe(4);
    expect(displayWidth('abc')).toBe(3);
  });

  it('never shrinks a column below the minimum, even when nothing fits', () => {
    expect(fitWidths([30, 30], [false, false], 10)).toEqual([6, 6]);
    expect(fitWidths([10, 50], [false, true], 40)).toEqual([10, 28]);
    expect(fitWidths([30, 30], ['never', 'normal'], 40)).toEqual([30, 8]);
  });

  it('prints nothing for an empty page of a stream without header', () => {
    expect(renderTable(columns, [], { palette: NO_COLOUR, header: false }).text).toBe('');
  });
});
