import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/cli/output/width.js';
import { detailLines, ERROR_MESSAGE_LINES } from '../../src/tui/detail.js';
import { makeEntry, T0 } from './support/entries.js';

describe('the detail view text', () => {
  it('shows the trace link under the trace id when a template is set, the id URL-encoded; none without one', () => {
    const template = 'https://grafana.example/explore?traceId={trace_id}';
    const entry = makeEntry(0);
    entry.job!.trace_id = 'tr/ä b\x1b[31m';
    const lines = detailLines(entry, T0, 100, template);
    const at = lines.findIndex((l) => l.startsWith('Trace      '));
    expect(lines[at]).toBe('Trace      tr/ä b\\x1b[31m');
    expect(lines[at + 1]).toBe('Trace link https://grafana.example/explore?traceId=tr%2F%C3%A4%20b%1B%5B31m');
    expect(lines.join('\n')).not.toContain('\x1b');
    expect(detailLines(entry, T0, 100).some((l) => l.startsWith('Trace link'))).toBe(false);
    expect(detailLines(entry, T0, 100, null).some((l) => l.startsWith('Trace link'))).toBe(false);
    entry.job!.trace_id = null;
    expect(detailLines(entry, T0, 100, template).some((l) => l.startsWith('Trace link'))).toBe(false);
  });

  it('wraps a long trace link to the screen rather than cutting off its end (where the trace id is)', () => {
    const entry = makeEntry(0);
    entry.job!.trace_id = '4bf92f3577b34da6a3ce929d0e0e4736';
    const lines = detailLines(entry, T0, 60, `https://grafana.example/explore?orgId=1&left=${'x'.repeat(60)}&traceId={trace_id}`);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(60);
    const at = lines.findIndex((l) => l.startsWith('Trace link'));
    expect(lines.slice(at, at + 4).join('').replace(/\s+/g, '')).toContain('traceId=4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('wraps the whole error message over several lines instead of cutting it at the screen edge', () => {
    const message = `${'the tool call timed out while waiting for the upstream search API to answer; '.repeat(10)}END-OF-MESSAGE`;
    const lines = detailLines(makeEntry(0, { errorMessage: message }), T0, 80);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(80);
    const at = lines.indexOf('Error');
    const body = lines.slice(at + 1).join(' ');
    expect(body.replace(/\s+/g, ' ')).toContain(message.replace(/\s+/g, ' '));
  });

  it('bounds a huge message and says where to read the rest', () => {
    const lines = detailLines(makeEntry(0, { errorMessage: 'word '.repeat(20_000) }), T0, 80);
    const more = lines.find((l) => l.includes('more lines: agentq dlq show job_01J'));
    expect(more).toBeDefined();
    const at = lines.indexOf('Error');
    expect(lines.indexOf(more!) - at - 1).toBe(ERROR_MESSAGE_LINES);
  });

  it('keeps a message’s line breaks and still shows control bytes escaped', () => {
    const lines = detailLines(makeEntry(0, { errorMessage: 'first line\nsecond \x1b[31mline' }), T0, 80);
    expect(lines).toContain('  PROVIDER_429: first line');
    expect(lines.some((l) => l.startsWith('  second \\x1b[31mline'))).toBe(true);
    expect(lines.join('\n')).not.toContain('\x1b');
  });

  it('wraps long payload lines to the screen', () => {
    const input = JSON.stringify({ prompt: 'p'.repeat(150) });
    const lines = detailLines(makeEntry(0, { input }), T0, 60);
    const from = lines.indexOf('Payload');
    const payload = lines.slice(from + 1);
    expect(Math.max(...payload.map((l) => [...l].length))).toBeLessThanOrEqual(60);
    expect(payload.join('').replace(/\s+/g, '')).toContain(input);
  });

  it('wraps the summary and effect lines on a narrow terminal: partial YES, the tenant and the effect key stay on screen', () => {
    const lines = detailLines(makeEntry(0, { isPartial: true, tenant: 'tenant-with-a-long-name' }), T0, 40);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(40);
    const text = lines.join('\n').replace(/\n +/g, '');
    expect(text).toContain('partial YES');
    expect(text).toContain('tenant tenant-with-a-long-name');
    expect(text).toMatch(/send-email {2}STARTED \(not done\) {2}attempt \d+ {2}key job_01J\S+:send-email/);
  });

  it('wraps CJK text by the cells it takes on screen, so none of it is cut off (message and payload)', () => {
    const message = `${'東京の上流APIがタイムアウトしました。'.repeat(12)}END`;
    const input = JSON.stringify({ prompt: '要約してください'.repeat(20) });
    const lines = detailLines(makeEntry(0, { errorMessage: message, input }), T0, 80);
    for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
    const at = lines.indexOf('Error');
    expect(lines.slice(at + 1, lines.indexOf('', at)).join('').replace(/\s+/g, '')).toContain(message);
    const payload = lines.slice(lines.indexOf('Payload') + 1);
    expect(payload.join('').replace(/\s+/g, '')).toContain(input);
  });

  it('shows what the attempts reported spending, in total and per attempt; nothing for a job without usage', () => {
    const entry = makeEntry(0);
    entry.job!.attempts[0]!.usage = { tokens: 1000, cost_usd: 0.02 };
    entry.job!.attempts[2]!.usage = { tokens: 500, cost_usd: 0.01 };
    const lines = detailLines(entry, T0, 120);
    expect(lines).toContain('Usage      1500 tokens, $0.03');
    expect(lines.filter((l) => l.includes('spent '))).toEqual([expect.stringMatching(/^  #1 .* spent 1000 tokens, \$0\.02  PROVIDER_429/), expect.stringMatching(/^  #3 .* spent 500 tokens, \$0\.01/)]);
    expect(detailLines(makeEntry(1), T0, 120).some((l) => l.startsWith('Usage'))).toBe(false);
  });

  it('says when the job has used up its budget: a redrive skips it', () => {
    const entry = makeEntry(0);
    entry.job!.attempts[0]!.usage = { tokens: 1000, cost_usd: 0.02 };
    entry.job!.budget = { tokens: 2000, cost_usd: 0.02 };
    expect(detailLines(entry, T0, 160)).toContain('Usage      1000 tokens, $0.02   budget used up (it spent $0.02 of its $0.02): a redrive skips it');
    entry.job!.budget = { tokens: 2000, cost_usd: null };
    expect(detailLines(entry, T0, 160)).toContain('Usage      1000 tokens, $0.02');
  });
});
