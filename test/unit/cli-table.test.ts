import { describe, expect, it } from 'vitest';
import { displayWidth, fitWidths, renderTable } from '../../src/cli/output/table.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import type { Column } from '../../src/cli/output/columns.js';
import { DLQ_ENTRY_COLUMNS, LEDGER_COLUMNS, PLAN_ITEM_COLUMNS, RUN_COLUMNS } from '../../src/cli/commands/dlq-columns.js';
import type { LedgerItem, RunRecord } from '../../src/backend/contract.js';
import type { PlanItem } from '../../src/core/plan.js';
import type { DlqEntry, Job, JobEvent } from '../../src/core/schemas.js';
import { queueColumns } from '../../src/cli/commands/stats.js';
import { EVENT_COLUMNS } from '../../src/cli/commands/tail.js';
import { JOB_COLUMNS } from '../../src/cli/commands/list.js';
import { formatDuration } from '../../src/core/duration.js';
import { formatUsd } from '../../src/core/usage.js';
import type { StatsReport } from '../../src/core/stats.js';

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

  it('regression: invisible characters take no cell, or are shown escaped and counted as such', () => {
    // (a ZWJ sequence is one emoji, two cells, as string-width and so cli-table3 and Ink count it)
    expect(displayWidth('👨\u200d👩 a\u200cb')).toBe(5);
    const cols = [{ header: 'error', get: (r: { code: string }) => r.code }];
    const { text } = renderTable(cols, [{ code: 'PROVIDER_429\u200b' }, { code: 'PROVIDER_429' }], { palette: NO_COLOUR, width: 80 });
    expect(text).toContain('PROVIDER_429\\u200b');
    expect(text).not.toContain('\u200b');
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

describe('DLQ tables keep job and run ids whole on 80-120 column terminals', () => {
  // ULIDs made in the same second share this prefix: a cut id looks the same on every row.
  const job = (n: number) => `job_01M8NDZ4J6X9Q2W3E4R5T6Y7U${n}`;
  const entry = (n: number): DlqEntry => ({
    job_id: job(n), queue: 'research', tenant_id: 'acme-corporation', workflow: 'research_report:v3', class: 'batch',
    error_code: 'PROVIDER_429', error_message: 'rate limited by the model provider, retry later please', reason: 'exhausted',
    dead_at: '2026-03-01T00:00:00.000Z', attempts: 3, max_attempts: 3, deadline_at: '2026-03-02T00:00:00.000Z',
    worker_version: 'v1.2.3', partial: true, redrive_count: 2, malformed: null, job: null,
  } as unknown as DlqEntry);
  const run = (n: number): RunRecord => ({
    run_id: `run_01M8NDZ4J6X9Q2W3E4R5T6Y7U${n}`, queue: 'research', action: 'redrive', user: 'alice', context: 'prod',
    reason: 'provider quota raised (INC-1234)', filters: {}, options: {}, created_at: '2026-03-01T00:00:00.000Z',
    updated_at: '2026-03-01T00:00:00.000Z', status: 'interrupted', counts: { planned: 400, moved: 1200, skipped: 30, failed: 2 },
  });
  const plan = (n: number): PlanItem => ({ job_id: job(n), verdict: 'skip:quarantined', detail: 'redriven 3 times already (--max-redrives 3)' } as PlanItem);
  const ledger = (n: number): LedgerItem => ({ job_id: job(n), verdict: 'redrive', status: 'skipped', updated_at: '2026-03-01T00:00:00.000Z', detail: 'left the DLQ' } as LedgerItem);
  const tables: Array<[string, readonly Column<never>[], unknown[], string[]]> = [
    ['dlq list', DLQ_ENTRY_COLUMNS as never, [entry(1), entry(2)], [job(1), job(2)]],
    ['plan / dry run', PLAN_ITEM_COLUMNS as never, [plan(1), plan(2)], [job(1), job(2)]],
    ['dlq runs show (ledger)', LEDGER_COLUMNS as never, [ledger(1), ledger(2)], [job(1), job(2)]],
    ['dlq runs', RUN_COLUMNS as never, [run(1), run(2)], [`run_01M8NDZ4J6X9Q2W3E4R5T6Y7U1`, `run_01M8NDZ4J6X9Q2W3E4R5T6Y7U2`]],
  ];
  for (const width of [80, 100, 120]) {
    for (const [name, cols, rows, ids] of tables) {
      it(`${name} at ${width} columns: whole ids, whole headers, nothing wider than the terminal`, () => {
        const { text } = renderTable(cols, rows as never[], { palette: NO_COLOUR, width });
        const lines = text.trimEnd().split('\n');
        for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(width);
        expect(lines[0]).not.toContain('…');
        ids.forEach((id, i) => expect(lines[i + 1]!.startsWith(`${id}  `), lines[i + 1]).toBe(true));
      });
    }
  }

  it('regression: dlq list keeps the error code whole at 100-120 columns (PROVIDER_429 and PROVIDER_5XX were both PROVIDER…); only what else is left is cut first', () => {
    const rows = [entry(1), { ...entry(2), error_code: 'PROVIDER_5XX', tenant_id: 'a-tenant-with-a-rather-long-name', workflow: 'a_long_workflow_name_for_reports:v12' }];
    for (const width of [100, 120]) {
      const { text } = renderTable(DLQ_ENTRY_COLUMNS, rows, { palette: NO_COLOUR, width });
      const lines = text.trimEnd().split('\n');
      for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(width);
      expect(lines[1], String(width)).toContain('PROVIDER_429 ');
      expect(lines[2], String(width)).toContain('PROVIDER_5XX ');
    }
  });

  it('at 80 columns the times show as ages so the error code stays whole; with room, or -o wide, the timestamps; later pages keep the choice', () => {
    const now = Date.parse('2026-03-01T00:05:00.000Z'); // 5 minutes after entry.dead_at, a day before its deadline
    const rows = [entry(1), { ...entry(2), error_code: 'PERMISSION' }];
    const narrow = renderTable(DLQ_ENTRY_COLUMNS, rows, { palette: NO_COLOUR, width: 80, now });
    const lines = narrow.text.trimEnd().split('\n');
    for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
    expect(narrow.ages).toBe(true);
    expect(lines[1]).toMatch(/  PROVIDER_429  5m ago  +\S/);
    expect(lines[2]).toMatch(/  PERMISSION    5m ago  +\S/);
    const next = renderTable(DLQ_ENTRY_COLUMNS, [{ ...entry(3), dead_at: '2026-02-27T22:05:00.000Z' }], { palette: NO_COLOUR, width: 80, now, colWidths: narrow.colWidths, dropped: narrow.dropped, ages: narrow.ages, header: false });
    expect(next.text).toMatch(/  PROVIDER_429  1d2h ago  +\S/);
    const roomy = renderTable(DLQ_ENTRY_COLUMNS, rows, { palette: NO_COLOUR, width: 240, now });
    expect(roomy.ages).toBe(false);
    expect(roomy.text).toContain('2026-03-01 00:00:00Z');
    expect(roomy.text).toContain('2026-03-02 00:00:00Z');
    expect(renderTable(DLQ_ENTRY_COLUMNS, rows, { palette: NO_COLOUR, width: 80, now, wide: true }).text).toContain('2026-03-01 00:00:00Z');
  });

  it('-o wide keeps every column; the next page of a stream leaves out the same ones', () => {
    const wide = renderTable(DLQ_ENTRY_COLUMNS, [entry(1)], { palette: NO_COLOUR, width: 80, wide: true });
    expect(wide.dropped).toEqual([]);
    expect(wide.text.split('\n')[0]!.split(/ {2,}/)).toHaveLength(DLQ_ENTRY_COLUMNS.length);
    const first = renderTable(DLQ_ENTRY_COLUMNS, [entry(1)], { palette: NO_COLOUR, width: 80 });
    expect(first.dropped.length).toBeGreaterThan(0);
    const next = renderTable(DLQ_ENTRY_COLUMNS, [entry(2)], { palette: NO_COLOUR, width: 80, colWidths: first.colWidths, dropped: first.dropped, header: false });
    expect(displayWidth(next.text.trimEnd())).toBe(displayWidth(first.text.trimEnd().split('\n')[1]!));
  });
});

describe('list, tail and stats tables on 80-120 column terminals', () => {
  const dur = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : formatDuration(ms));
  const pct = (r: number | null) => (r === null ? null : `${(r * 100).toFixed(1)}%`);
  const usd = (x: number | null) => (x === null ? null : formatUsd(x));
  const report = (queue: string) => ({
    queue, queued: 1200, scheduled: 3, running: 8, lease_expired: 0, dlq_size: 17, oldest_queued_age_ms: 1_003_000,
    time_in_queue: { p50_ms: 5000, p95_ms: 17_000 }, execution: { p50_ms: 295, p95_ms: 42_200 }, retry_rate: 0.123, dlq_rate: 0.957,
    backlog_seconds: 7200, throughput_per_s: 12.34, drain_estimate_seconds: 29, success_rate_by_attempt: [], cost_per_job_usd: 0.0123,
  }) as unknown as StatsReport;
  const event = (type: string, from: string, to: string) => ({
    type, seq: '1', at: '2026-11-30T10:33:25.000Z', job_id: 'job_01M8P08FZEXT3NZEQF7A10T2TY', queue: 'research', tenant_id: 'acme', from_state: from, to_state: to, attempt: 1, data: null,
  }) as unknown as JobEvent;
  const job = (workflow: string, state: string) => ({
    job_id: 'job_01M8P08FZEXT3NZEQF7A10T2TY', queue: 'research', tenant_id: 'acme-corp', workflow, class: 'batch', state, attempt: 1, max_attempts: 3,
    created_at: '2026-11-30T10:33:25.000Z', deadline_at: null, outcome: null, last_error: null,
  }) as unknown as Job;
  // What must never be cut: what a reader tells rows apart by, and what goes into the next command.
  const tables: Array<[string, readonly Column<never>[], unknown[], string[]]> = [
    ['stats', queueColumns({ dur, pct, usd }) as never, [report('research'), report('billing-invoices')], ['research', 'billing-invoices']],
    ['tail', EVENT_COLUMNS as never, [event('cancel_requested', 'running', 'running'), event('cancelled', 'running', 'cancelled')],
      ['2026-11-30 10:33:25Z', 'cancelled', 'job_01M8P08FZEXT3NZEQF7A10T2TY']],
    ['list', JOB_COLUMNS as never, [job('research_report:v3', 'succeeded'), job('x:v1', 'cancelled')], ['job_01M8P08FZEXT3NZEQF7A10T2TY', 'research', 'succeeded', 'cancelled']],
  ];
  for (const width of [80, 100, 120]) {
    for (const [name, cols, rows, whole] of tables) {
      it(`regression: ${name} at ${width} columns keeps its headers and ${whole.join(', ')} whole and fits (stats was WAIT …  WAIT …, tail 2026-…)`, () => {
        const { text } = renderTable(cols, rows as never[], { palette: NO_COLOUR, width });
        const lines = text.trimEnd().split('\n');
        for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(width);
        expect(lines[0], lines[0]).not.toContain('…');
        for (const w of whole) expect(text, `${w} in\n${text}`).toMatch(new RegExp(`(^|  )${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(  |\\n|$)`, 'm'));
      });
    }
  }

  it('JOBS/S of a queue of long jobs is not rounded to 0: two significant digits under 1/s, two decimals above', () => {
    const jobsPerS = queueColumns({ dur, pct, usd }).find((c) => c.header === 'JOBS/S')!;
    const at = (throughput_per_s: number | null) => jobsPerS.get({ ...report('q'), throughput_per_s } as StatsReport);
    // one 5-minute agent job ending per minute, over the window
    expect(at(1 / 60)).toBe(0.017);
    expect(at(1 / 300)).toBe(0.0033);
    expect(at(12.3456)).toBe(12.35);
    expect(at(0)).toBe(0);
    expect(at(null)).toBeNull();
  });

  it('-o wide and plain keep every stats column', () => {
    const cols = queueColumns({ dur, pct, usd });
    const wide = renderTable(cols, [report('research')], { palette: NO_COLOUR, width: 80, wide: true });
    expect(wide.dropped).toEqual([]);
  });
});
