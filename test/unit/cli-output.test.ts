/**
 * Every output mode, fed data full of hostile strings: no control byte,
 * escape sequence introducer or bidi control from the data reaches the output.
 * Data read from a store is untrusted even when our own submit validated it:
 * another producer, an older version or a hand-edited row may have written it.
 */
import { describe, expect, it } from 'vitest';
import type { Job, JobEvent } from '../../src/core/schemas.js';
import { Job as JobSchema, JobEvent as JobEventSchema } from '../../src/core/schemas.js';
import { NO_COLOUR, createPalette } from '../../src/cli/output/colour.js';
import { RecordStream, printObject, type OutputFormat, type OutputTarget } from '../../src/cli/output/format.js';
import { JOB_COLUMNS } from '../../src/cli/commands/list.js';
import { EVENT_COLUMNS } from '../../src/cli/commands/tail.js';
import { renderJob } from '../../src/cli/commands/inspect.js';
import { HOSTILE_STRINGS, findUnsafe } from '../support/hostile.js';

const NOW = Date.UTC(2026, 10, 29, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function hostileJob(h: string, i: number): Job {
  return {
    job_id: `job_${h}`,
    tenant_id: h,
    queue: h,
    workflow: h,
    operation: h,
    class: 'batch',
    input: h,
    input_ref: null,
    input_sha256: null,
    deadline_at: iso(NOW + 60_000),
    idempotency_key: h,
    attempt: 1,
    max_attempts: 3,
    trace_id: h,
    budget: { tokens: 100, cost_usd: null },
    allowed_tools: [h, h],
    estimated_seconds: null,
    created_at: iso(NOW - 1000 * i),
    state: 'dead',
    outcome: 'partially_completed',
    updated_at: iso(NOW),
    run_at: iso(NOW),
    ended_at: iso(NOW),
    lease: { worker_id: h, fence: 2, expires_at: iso(NOW + 5000) },
    cancel_requested_at: iso(NOW),
    cancel_reason: h,
    checkpoint: { note: h },
    effects: [{ key: h, status: 'started', idempotency_key: h, attempt: 1, started_at: iso(NOW), done_at: null, result: h }],
    last_error: { code: h, message: h, retryable: false },
    attempts: [{ attempt: 1, worker_id: h, worker_version: h, started_at: iso(NOW), ended_at: iso(NOW), outcome: 'failed', error_code: h, error_message: h }],
    result: h,
    dead: { reason: 'permanent', dead_at: iso(NOW), error_code: h, error_message: h, worker_version: h },
    lineage: { redrive_count: 1, redriven_at: iso(NOW), redrive_run: h },
  };
}

function hostileEvent(h: string, i: number): JobEvent {
  return { type: 'dead', seq: String(i), at: iso(NOW), job_id: h, queue: h, tenant_id: h, from_state: 'running', to_state: 'dead', attempt: 1, data: { why: h } };
}

const jobs = HOSTILE_STRINGS.map((h, i) => hostileJob(h.value, i));
const events = HOSTILE_STRINGS.map((h, i) => hostileEvent(h.value, i));

function target(format: OutputFormat, width?: number): { out: OutputTarget; text: () => string } {
  let text = '';
  return { out: { format, write: (s) => void (text += s), width, palette: NO_COLOUR }, text: () => text };
}

describe('no hostile byte from data reaches any output mode', () => {
  it('the fixtures really are hostile (the check can fail)', () => {
    expect(findUnsafe(jobs.map((j) => j.workflow).join(''))).not.toEqual([]);
    // Plain JSON.stringify escapes C0 but lets DEL, C1 and bidi through: the JSON layer has work to do.
    expect(findUnsafe(JSON.stringify(jobs))).not.toEqual([]);
  });

  for (const format of ['table', 'wide', 'plain', 'json', 'ndjson'] as const) {
    it(`list output, -o ${format}`, async () => {
      const t = target(format, 120);
      const stream = new RecordStream(t.out, { columns: JOB_COLUMNS, empty: 'No jobs.' });
      await stream.page(jobs.slice(0, 10));
      await stream.page(jobs.slice(10));
      stream.end();
      expect(t.text().length).toBeGreaterThan(100);
      expect(findUnsafe(t.text(), { allowTabs: format === 'plain' })).toEqual([]);
    });

    it(`tail output, -o ${format}`, async () => {
      const t = target(format, 100);
      const stream = new RecordStream(t.out, { columns: EVENT_COLUMNS, empty: 'No events.' });
      for (const e of events) await stream.page([e]);
      stream.end();
      expect(findUnsafe(t.text(), { allowTabs: format === 'plain' })).toEqual([]);
    });
  }

  it('plain output keeps one record per line and a fixed number of columns, whatever the data', async () => {
    const t = target('plain');
    await new RecordStream(t.out, { columns: JOB_COLUMNS, empty: 'No jobs.' }).page(jobs);
    const lines = t.text().trimEnd().split('\n');
    expect(lines).toHaveLength(jobs.length);
    for (const l of lines) expect(l.split('\t')).toHaveLength(JOB_COLUMNS.length);
  });

  it('inspect text view (terminal and plain)', () => {
    for (const job of jobs) {
      for (const plain of [false, true]) {
        const text = renderJob(job, null, events.slice(0, 3), NOW, plain);
        expect(text).toContain('last error');
        expect(findUnsafe(text, { allowTabs: plain })).toEqual([]);
      }
    }
  });

  it('JSON and NDJSON objects stay valid against the schemas and round-trip the original strings', async () => {
    for (const format of ['json', 'ndjson'] as const) {
      const t = target(format);
      printObject(t.out, jobs[0]);
      expect(findUnsafe(t.text())).toEqual([]);
      const back = JobSchema.parse(JSON.parse(t.text()));
      expect(back.workflow).toBe(jobs[0]!.workflow);
    }
    const t = target('ndjson');
    const stream = new RecordStream(t.out, { columns: EVENT_COLUMNS, empty: 'No events.' });
    await stream.page(events);
    const lines = t.text().trimEnd().split('\n');
    expect(lines).toHaveLength(events.length);
    for (const l of lines) expect(JobEventSchema.parse(JSON.parse(l)).type).toBe('dead');
  });

  it('colour codes come only from agentq, never from data: with colour on, data escapes are still neutralised', async () => {
    const palette = await createPalette(1);
    let text = '';
    const stream = new RecordStream({ format: 'table', write: (s) => void (text += s), width: 200, palette }, { columns: JOB_COLUMNS, empty: 'No jobs.' });
    await stream.page(jobs);
    // Our own SGR sequences are ESC [ ... m; strip exactly those, then nothing unsafe may remain.
    // eslint-disable-next-line no-control-regex
    const withoutOurColours = text.replace(/\x1b\[\d+(;\d+)*m/g, '');
    expect(text).toContain('\x1b['); // colour really was on
    expect(findUnsafe(withoutOurColours)).toEqual([]);
  });

  it('a streamed JSON array is one valid document, also when empty', async () => {
    const t = target('json');
    const stream = new RecordStream(t.out, { columns: JOB_COLUMNS, empty: 'No jobs.' });
    await stream.page(jobs.slice(0, 2));
    await stream.page([]);
    await stream.page(jobs.slice(2, 3));
    stream.end();
    expect(JSON.parse(t.text())).toHaveLength(3);
    const e = target('json');
    new RecordStream(e.out, { columns: JOB_COLUMNS, empty: 'No jobs.' }).end();
    expect(JSON.parse(e.text())).toEqual([]);
  });
});

describe('tail --follow on a terminal, started with nothing to show', () => {
  // The header is shown before any event (stream.header), so later rows take the widths the header
  // gave: a time cut to `2…` and a job id to `jo…`, which cannot be copied into `inspect`.
  it.each([80, 100, 120])('later events show their whole time and job id at %i columns', async (width) => {
    const t = target('table', width);
    const stream = new RecordStream(t.out, { columns: EVENT_COLUMNS, empty: 'No events.' });
    await stream.header();
    const event: JobEvent = {
      type: 'submitted', seq: '1', at: '2026-11-30T22:33:57.077Z', job_id: 'job_01M8Q9FT209T4EQ6F09W9YTFE2',
      queue: 'research', tenant_id: 'acme', from_state: null, to_state: 'queued', attempt: 0, data: null,
    };
    await stream.page([event]);
    await stream.page([{ ...event, type: 'retry_scheduled', to_state: 'cancel_requested' as never }]);
    const lines = t.text().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT\s+TYPE\s+JOB/);
    for (const line of lines.slice(1)) {
      expect(line).toContain('2026-11-30 22:33:57Z');
      expect(line).toContain('job_01M8Q9FT209T4EQ6F09W9YTFE2');
      expect(line.length).toBeLessThanOrEqual(width);
    }
    expect(lines[2]).toContain('retry_scheduled');
  });

  it('-o wide: the seq column holds a Redis stream id whole', async () => {
    const t = target('wide', 160);
    const stream = new RecordStream(t.out, { columns: EVENT_COLUMNS, empty: 'No events.' });
    await stream.header();
    await stream.page([{
      type: 'submitted', seq: '1796076348705-0', at: '2026-11-30T22:33:57.077Z', job_id: 'job_01M8Q9FT209T4EQ6F09W9YTFE2',
      queue: 'research', tenant_id: 'acme', from_state: null, to_state: 'queued', attempt: 0, data: null,
    }]);
    expect(t.text().trimEnd().split('\n')[1]).toMatch(/ 1796076348705-0$/);
  });
});
