/**
 * `submit --file`: a line's rules (pure), cutting chunks into lines, the caps, and the in-order
 * submit loop against a fake backend that fails at a chosen job (which jobs were sent, in what
 * order the stored ones are printed, how many were ever in flight).
 */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { lineRanges, submitInOrder, type SubmittedLine } from '../../src/cli/commands/submit-file.js';
import { JobLineChecker, LineSplitter, MAX_JOBS, MAX_LINE_BYTES, parseJobLine, type JobDefaults, type JobLine } from '../../src/cli/job-lines.js';
import { RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { normalizeSubmit } from '../../src/core/submit.js';
import type { Job, SubmitRequest } from '../../src/core/schemas.js';

const NOW = Date.UTC(2026, 10, 29, 10, 0, 0);
const DEFAULTS: JobDefaults = { queue: 'research', tenant_id: 'acme', class: 'batch', max_attempts: 3, allowed_tools: [] };

const parse = (line: unknown, defaults: JobDefaults = DEFAULTS) => parseJobLine(typeof line === 'string' ? line : JSON.stringify(line), defaults, NOW);

describe('parseJobLine', () => {
  it('takes the submit request\'s field names, the flags\' defaults filling what the line leaves out, and null as given', () => {
    const d: JobDefaults = { ...DEFAULTS, deadline_at: new Date(NOW + 3_600_000).toISOString(), budget: { tokens: 10, cost_usd: null } };
    expect(parse({ workflow: 'r:v1' }, d)).toMatchObject({ workflow: 'r:v1', queue: 'research', tenant_id: 'acme', deadline_at: '2026-11-29T11:00:00.000Z', budget: { tokens: 10 } });
    expect(parse({ workflow: 'r:v1', queue: 'q2', tenant_id: 'globex', deadline_at: null, budget: null, max_attempts: 7, allowed_tools: ['a'] }, d)).toMatchObject({
      queue: 'q2',
      tenant_id: 'globex',
      deadline_at: null,
      budget: null,
      max_attempts: 7,
      allowed_tools: ['a'],
    });
    // the same request the library's submit would store
    const line = { workflow: 'r:v1', input: 'hi', idempotency_key: 'k', run_at: '2026-11-29T12:00:00+02:00', estimated_seconds: 30 };
    expect(parse(line)).toEqual(normalizeSubmit({ ...DEFAULTS, ...line }, NOW));
  });

  it.each<[unknown, RegExp]>([
    ['{"workflow": "r:v1"', /^not JSON: /],
    ['[1]', /^must be a JSON object \(one job's fields\), not an array$/],
    ['"r:v1"', /^must be a JSON object .*, not a string$/],
    ['null', /not null$/],
    [{ queue: 'q' }, /^workflow is missing/],
    [{ workflow: 'r:v1', tenant: 'acme' }, /^unknown field "tenant" \(did you mean tenant_id\?\); the fields are workflow, queue, tenant_id, /],
    [{ workflow: 'r:v1', deadline: '2h' }, /did you mean deadline_at\?/],
    [{ workflow: 'r:v1', 'idempotency-key': 'k' }, /did you mean idempotency_key\?/],
    [{ workflow: 'r:v1', budget_usd: 1 }, /did you mean budget: \{"tokens": N, "cost_usd": X\}\?/],
    [{ workflow: 'bad' }, /^workflow "bad": workflow must look like name:vN/],
    [{ workflow: 'r:v1', max_attempts: 500 }, /^max_attempts: Too big/],
    [{ workflow: 'r:v1', max_attempts: '3' }, /^max_attempts "3": .*expected number/],
    [{ workflow: 'r:v1', budget: { tokens: -1 } }, /^budget\.tokens: /],
    [{ workflow: 'r:v1', input: 'x'.repeat(64 * 1024 + 1) }, /^input is 65537 bytes; inline input is limited to 65536 bytes \(64 KiB\): store the document elsewhere and give input_ref with input_sha256$/],
    [{ workflow: 'r:v1', input: 'a', input_ref: 's3://b/k' }, /not both/],
    [{ workflow: 'r:v1', input_ref: 's3://b/k' }, /input_ref needs input_sha256/],
    [{ workflow: 'r:v1', deadline_at: '2020-01-01T00:00:00Z' }, /^deadline_at 2020-01-01T00:00:00Z is not in the future$/],
    [{ workflow: 'r:v1', deadline_at: new Date(NOW + 500).toISOString() }, /is less than 1s away: the job would expire before a worker could claim it$/],
    [{ workflow: 'r:v1', run_at: '2026-11-29T12:00:00Z', deadline_at: '2026-11-29T11:00:00Z' }, /the job could never run/],
  ])('refuses %j naming the rule', (line, rule) => {
    expect(() => parse(line)).toThrowError(ValidationError);
    expect(() => parse(line)).toThrowError(rule);
  });

  it('shows untrusted values with their escapes visible and cut to 80 characters', () => {
    expect(() => parse({ workflow: '\u001b]0;owned\u0007' })).toThrowError(/^workflow "\\u001b\]0;owned\\u0007": /);
    expect(() => parse({ workflow: 'r:v1', tenant_id: '\u202eevil' })).toThrowError(/^tenant_id "\\u202eevil": /);
    expect(() => parse({ workflow: 'r:v1', ['\u001b[2J']: 1 })).toThrowError(/^unknown field "\\u001b\[2J"/);
    const long = (() => { try { parse({ workflow: 'w'.repeat(500) }); } catch (e) { return (e as Error).message; } return ''; })();
    expect(long).toMatch(/^workflow "w{79}…": /);
  });
});

/** Lines as the checker saw them. */
function split(chunks: Array<string | Buffer>): Array<[number, string | null]> {
  const seen: Array<[number, string | null]> = [];
  const s = new LineSplitter((line, bytes) => (seen.push([line, bytes === null ? null : bytes.toString('utf8')]), true));
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c) : c);
  s.end();
  return seen;
}

describe('LineSplitter', () => {
  it('cuts at \\n across chunks, drops a \\r before it, keeps a last line without one, and counts blank lines', () => {
    expect(split(['{"a"', ':1}\r\n\n{"b":2}\n{"c"', ':3}'])).toEqual([[1, '{"a":1}'], [2, ''], [3, '{"b":2}'], [4, '{"c":3}']]);
    expect(split(['x\n'])).toEqual([[1, 'x']]);
  });

  it('passes a line over 1 MiB as null without holding it, and goes on with the next', () => {
    const big = Buffer.alloc(MAX_LINE_BYTES + 1, 'a');
    expect(split([big.subarray(0, 1000), big.subarray(1000), '\n{"ok":1}\n'])).toEqual([[1, null], [2, '{"ok":1}']]);
    expect(split([Buffer.alloc(MAX_LINE_BYTES, 'a'), '\r\n'])[0]![1]).toHaveLength(MAX_LINE_BYTES);
  });
});

function check(lines: string[]): JobLineChecker {
  const c = new JobLineChecker(DEFAULTS, NOW, 3);
  const s = new LineSplitter((line, bytes) => c.add(line, bytes));
  s.push(Buffer.from(lines.join('\n')));
  s.end();
  return c;
}

describe('JobLineChecker', () => {
  it('keeps the jobs with their line numbers, skipping blank lines and a byte-order mark', () => {
    const c = check(['\ufeff{"workflow":"a:v1"}', '', '   ', '{"workflow":"b:v1"}']);
    expect(c.errorCount).toBe(0);
    expect(c.jobs.map((j) => [j.line, j.req.workflow])).toEqual([[1, 'a:v1'], [4, 'b:v1']]);
  });

  it('reports every bad line (the first few kept, all counted) and keeps no jobs once one is bad', () => {
    const c = check(['{"workflow":"a:v1"}', 'x', '{}', '{"workflow":"ok:v1"}', '1', '2', Buffer.from([0xff, 0xfe]).toString('latin1')]);
    expect(c.errors).toEqual([
      { line: 2, message: expect.stringMatching(/^not JSON/) },
      { line: 3, message: expect.stringMatching(/^workflow is missing/) },
      { line: 5, message: expect.stringMatching(/^must be a JSON object/) },
    ]);
    expect(c.errorCount).toBe(5);
    expect(c.jobs).toEqual([]);
  });

  it('refuses a line that is not UTF-8', () => {
    const c = new JobLineChecker(DEFAULTS, NOW, 10);
    c.add(1, Buffer.from([0x7b, 0xff, 0x7d]));
    expect(c.errors).toEqual([{ line: 1, message: 'is not UTF-8 text' }]);
  });

  it('refuses the same idempotency key with another body in one file (queue and tenant alike), and takes it again with the same body', () => {
    const c = check([
      '{"workflow":"a:v1","idempotency_key":"k"}',
      '{"workflow":"a:v1","idempotency_key":"k"}',
      '{"workflow":"a:v1","idempotency_key":"k","tenant_id":"other"}',
      '{"workflow":"a:v1","idempotency_key":"k","input":"changed"}',
    ]);
    expect(c.errors).toEqual([{ line: 4, message: 'idempotency_key "k" was given on line 1 with other fields (queue research, tenant acme); the same key must mean the same job' }]);
  });

  it(`stops at job ${MAX_JOBS + 1}`, () => {
    const c = new JobLineChecker(DEFAULTS, NOW, 10);
    const line = Buffer.from('{"workflow":"a:v1"}');
    let stoppedAt = 0;
    for (let n = 1; n <= MAX_JOBS + 5; n++) {
      if (!c.add(n, line)) {
        stoppedAt = n;
        break;
      }
    }
    expect(stoppedAt).toBe(MAX_JOBS + 1);
    expect(c.overCap).toBe(`has more than ${MAX_JOBS} jobs (non-blank lines)`);
  });
});

/** A backend whose submit answers on demand: `fail(i)` settles the i-th call, `unpublished(i)` says its job was not published. */
function fakeBackend(fail: (i: number) => Error | null, unpublished: (i: number) => string | undefined = () => undefined) {
  const calls: SubmitRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const backend = {
    submit(req: SubmitRequest) {
      const i = calls.length;
      calls.push(req);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve, reject) =>
        setImmediate(() => {
          inFlight--;
          const e = fail(i);
          if (e) reject(e);
          else resolve({ job: { job_id: `job_${i}`, state: 'queued', queue: req.queue, tenant_id: req.tenant_id, workflow: req.workflow, idempotency_key: req.idempotency_key ?? null } as Job, created: true, unpublished: unpublished(i) });
        }),
      );
    },
  } as unknown as Backend;
  return { backend, calls, maxInFlight: () => maxInFlight };
}

const jobs = (n: number): JobLine[] => Array.from({ length: n }, (_v, i) => ({ line: i * 2 + 1, req: normalizeSubmit({ workflow: 'a:v1', input: `${i}` }, NOW) }));

describe('submitInOrder', () => {
  it('submits every job, at most 256 at a time, and hands the stored ones over in line order', async () => {
    const f = fakeBackend(() => null);
    const printed: SubmittedLine[] = [];
    const run = await submitInOrder(f.backend, jobs(1000), async (rows) => void printed.push(...rows), new AbortController().signal);
    expect(f.calls.map((r) => r.input)).toEqual(Array.from({ length: 1000 }, (_v, i) => `${i}`));
    expect(f.maxInFlight()).toBeLessThanOrEqual(256);
    expect(f.maxInFlight()).toBeGreaterThan(1);
    expect(printed.map((r) => r.line)).toEqual(Array.from({ length: 1000 }, (_v, i) => i * 2 + 1));
    expect(run.interrupted).toBe(false);
    expect(run.unpublished.size).toBe(0);
  });

  it('keeps which stored jobs were not published (SQS broker unreachable), by job index, out of the printed records', async () => {
    const f = fakeBackend(() => null, (i) => (i % 2 === 1 ? 'SQS is unreachable' : undefined));
    const printed: SubmittedLine[] = [];
    const run = await submitInOrder(f.backend, jobs(6), async (rows) => void printed.push(...rows), new AbortController().signal);
    expect([...run.unpublished].sort(([a], [b]) => a - b)).toEqual([[1, 'SQS is unreachable'], [3, 'SQS is unreachable'], [5, 'SQS is unreachable']]);
    expect(printed.every((r) => !('unpublished' in r))).toBe(true);
  });

  it('stops sending at the first failure, waits for those in flight, and knows the fate of every job', async () => {
    const down = new RetryLaterError('Redis at x is unavailable', 'BACKEND_UNAVAILABLE');
    const f = fakeBackend((i) => (i >= 300 ? down : null));
    const printed: SubmittedLine[] = [];
    const all = jobs(2000);
    const run = await submitInOrder(f.backend, all, async (rows) => void printed.push(...rows), new AbortController().signal);
    const sent = f.calls.length;
    // (the window was full when job 300 failed: no more than one window past it was sent)
    expect(sent).toBeGreaterThan(300);
    expect(sent).toBeLessThanOrEqual(300 + 256);
    expect(printed.map((r) => r.line)).toEqual(all.slice(0, 300).map((j) => j.line));
    expect(run.results.slice(300, sent).every((r) => r !== undefined && 'error' in r && r.error === down)).toBe(true);
    expect(run.results.slice(sent).every((r) => r === undefined)).toBe(true);
  });

  it('stops sending on the signal (Ctrl-C) and says it was interrupted', async () => {
    const stop = new AbortController();
    const f = fakeBackend((i) => (i === 10 ? (stop.abort(), null) : null));
    const run = await submitInOrder(f.backend, jobs(5000), async () => undefined, stop.signal);
    expect(run.interrupted).toBe(true);
    expect(f.calls.length).toBeLessThan(5000);
    expect(run.results.slice(0, f.calls.length).every((r) => r !== undefined && !('error' in r))).toBe(true);
  });
});

describe('lineRanges', () => {
  it('writes runs of consecutive jobs as ranges of their lines', () => {
    const js = jobs(10); // lines 1, 3, 5, …
    expect(lineRanges([0, 1, 2, 4, 7, 8], js)).toBe('lines 1-5, 9, 15-17 (6 jobs)');
    expect(lineRanges([3], js)).toBe('line 7 (1 job)');
    expect(lineRanges([], js)).toBe('none');
  });
});
