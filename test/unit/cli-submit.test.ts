/** Flags → submit request (pure): every envelope field, and the rules the flags add. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSubmitRequest } from '../../src/cli/commands/submit.js';
import { sha256Hex } from '../../src/core/submit.js';
import { InterruptedError, ValidationError } from '../../src/core/errors.js';

const NOW = Date.UTC(2026, 10, 29, 10, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'agentq-submit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('buildSubmitRequest', () => {
  it('maps every flag to its wire field', async () => {
    const req = await buildSubmitRequest(
      {
        workflow: 'report:v2', queue: 'q', tenant: 'acme', class: 'interactive', operation: 'op', deadline: '2h',
        idempotencyKey: 'k', inputRef: 's3://b/k', inputSha256: 'A'.repeat(64), maxAttempts: '7', traceId: 't',
        budgetTokens: '1000', budgetUsd: '2.5', allowedTool: ['a', 'b'], estimatedSeconds: '30', runAt: '10m',
      },
      NOW,
      'ctx-queue',
    );
    expect(req).toEqual({
      workflow: 'report:v2', queue: 'q', tenant_id: 'acme', class: 'interactive', operation: 'op', input: null,
      input_ref: 's3://b/k', input_sha256: 'a'.repeat(64), deadline_at: new Date(NOW + 7_200_000).toISOString(),
      idempotency_key: 'k', max_attempts: 7, trace_id: 't', budget: { tokens: 1000, cost_usd: 2.5 },
      allowed_tools: ['a', 'b'], estimated_seconds: 30, run_at: new Date(NOW + 600_000).toISOString(),
    });
  });

  // Regression: Number() read --budget-usd 0x10 as a $16 ceiling and took Infinity-free oddities such as 0b11.
  it('takes --budget-usd and --estimated-seconds as decimal numbers only (1.5, 1e-2), not hex or binary', async () => {
    expect((await buildSubmitRequest({ workflow: 'x:v1', budgetUsd: '1e-2', estimatedSeconds: '1.5' }, NOW, 'q'))).toMatchObject({ budget: { cost_usd: 0.01 }, estimated_seconds: 1.5 });
    for (const [flag, value] of [['budgetUsd', '0x10'], ['budgetUsd', '0b11'], ['estimatedSeconds', '0o7'], ['budgetUsd', '1_000']] as const) {
      await expect(buildSubmitRequest({ workflow: 'x:v1', [flag]: value }, NOW, 'q'), value).rejects.toThrow(/must be a positive number/);
    }
  });

  it('refuses a WORKFLOW that is not name:vN, naming the argument', async () => {
    await expect(buildSubmitRequest({ workflow: 'bad' }, NOW, 'd')).rejects.toThrowError(/^WORKFLOW "bad": workflow must look like name:vN, e.g. research_report:v3$/);
  });

  it('refuses a --run-at not before the --deadline in the flags\' words (it said run_at/deadline_at)', async () => {
    await expect(buildSubmitRequest({ workflow: 'x:v1', runAt: '1h', deadline: '30m' }, NOW, 'q')).rejects.toThrowError(
      /^--run-at 1h \(.+\) is not before --deadline 30m \(.+\): the job could never run$/,
    );
  });

  it('uses the context queue when no --queue is given', async () => {
    expect((await buildSubmitRequest({ workflow: 'x:v1' }, NOW, 'research')).queue).toBe('research');
  });

  it('--input-file alone inlines the text; with --input-ref only its checksum is used', async () => {
    const f = join(dir, 'in.txt');
    writeFileSync(f, 'hello');
    expect(await buildSubmitRequest({ workflow: 'x:v1', inputFile: f }, NOW, 'd')).toMatchObject({ input: 'hello', input_ref: null, input_sha256: null });
    expect(await buildSubmitRequest({ workflow: 'x:v1', inputFile: f, inputRef: 's3://b/in.txt' }, NOW, 'd')).toMatchObject({
      input: null,
      input_ref: 's3://b/in.txt',
      input_sha256: sha256Hex('hello'),
    });
  });

  it.each([
    [{ input: 'a', inputFile: '/x' }, /--input or --input-file, not both/],
    [{ input: 'a', inputRef: 's3://x' }, /not both/],
    [{ inputFile: '/x', inputSha256: 'a'.repeat(64) }, /computed from --input-file/],
    [{ timeout: '1m' }, /--timeout only applies with --wait/],
    // (naming the flag, as every other flag's message does: it once said `deadline "-5m" …`)
    [{ deadline: '-5m' }, /^--deadline "-5m" is neither a duration nor an ISO-8601 time/],
    [{ deadline: '2020-01-01T00:00:00Z' }, /^--deadline "2020-01-01T00:00:00Z" is not in the future/],
    [{ deadline: '2026-11-29T10:00:00' }, /^--deadline "2026-11-29T10:00:00" has no time zone/],
    // Regression: `--deadline 1ms` passed the flag's check and then failed in the store's words
    // ("deadline_at 2026-… is not in the future"): it had passed before the job was stored.
    [{ deadline: '1ms' }, /^--deadline "1ms" is less than 1s away: the job would expire before a worker could claim it$/],
    [{ deadline: '2026-11-29T10:00:00.500Z' }, /^--deadline "2026-11-29T10:00:00.500Z" is less than 1s away/],
    [{ maxAttempts: '1.5' }, /--max-attempts "1.5" must be a whole number/],
    [{ budgetUsd: '-1' }, /--budget-usd "-1" must be a positive number/],
    [{ estimatedSeconds: '1e308' }, /--estimated-seconds "1e308" must be at most 3153600000 \(100 years\)/],
    [{ inputFile: join(dir, 'missing') }, /cannot be read: ENOENT/],
    // Regression: these were refused in the wire's words (`invalid submit request: operation: Too big:
    // expected string to have <=200 characters`, `tenant_id: …`, `allowed_tools.0: …`), naming no flag.
    [{ operation: 'x'.repeat(201) }, /^--operation must be at most 200 characters \(got 201\)$/],
    [{ operation: '' }, /^--operation must not be empty$/],
    [{ traceId: 't'.repeat(129) }, /^--trace-id must be at most 128 characters \(got 129\)$/],
    [{ idempotencyKey: '' }, /^--idempotency-key must not be empty$/],
    [{ allowedTool: ['web', ''] }, /^--allowed-tool must not be empty$/],
    [{ tenant: 'a b' }, /^--tenant "a b": name must be 1-128 characters/],
    [{ queue: '' }, /^--queue "": name must be 1-128 characters/],
    [{ inputRef: 'r'.repeat(2049), inputSha256: 'a'.repeat(64) }, /^--input-ref must be at most 2048 characters \(got 2049\)$/],
    [{ inputRef: 's3://b/k', inputSha256: 'zz' }, /^--input-sha256 "zz": sha256 must be 64 lowercase hex digits$/],
  ])('refuses %j', async (flags, message) => {
    await expect(buildSubmitRequest({ workflow: 'x:v1', ...flags }, NOW, 'd')).rejects.toThrowError(ValidationError);
    await expect(buildSubmitRequest({ workflow: 'x:v1', ...flags }, NOW, 'd')).rejects.toThrowError(message);
  });

  it('refuses an inline file over 64 KiB with its sha256 in the hint, and a binary file', async () => {
    const big = join(dir, 'big');
    writeFileSync(big, Buffer.alloc(64 * 1024 + 1, 'a'));
    try {
      await buildSubmitRequest({ workflow: 'x:v1', inputFile: big }, NOW, 'd');
      expect.unreachable();
    } catch (e) {
      expect((e as ValidationError).code).toBe('INPUT_TOO_LARGE');
      expect((e as ValidationError).hint).toContain(sha256Hex(Buffer.alloc(64 * 1024 + 1, 'a')));
    }
    const bin = join(dir, 'bin');
    writeFileSync(bin, Buffer.from([0xff, 0xfe, 0x00, 0x80]));
    await expect(buildSubmitRequest({ workflow: 'x:v1', inputFile: bin }, NOW, 'd')).rejects.toThrowError(/is not UTF-8 text/);
  });

  it('regression: an endless --input-file to inline (/dev/zero) is read only to one byte past the limit, which is named', async () => {
    await expect(buildSubmitRequest({ workflow: 'x:v1', inputFile: '/dev/zero' }, NOW, 'd')).rejects.toThrowError(
      '--input-file /dev/zero is over 65536 bytes; inline input is limited to 65536 bytes (64 KiB)',
    );
  });

  it('regression: the hint for a character device too large to inline does not suggest --input-ref --input-file of it (refused as well)', async () => {
    const e = (await buildSubmitRequest({ workflow: 'x:v1', inputFile: '/dev/zero' }, NOW, 'd').catch((err: unknown) => err)) as ValidationError;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.hint).not.toContain('--input-file /dev/zero');
    expect(e.hint).toContain('save what you need to a file');
  });

  it('a checksum of a character device (which may never end) is refused; Ctrl-C stops reading', async () => {
    await expect(buildSubmitRequest({ workflow: 'x:v1', inputFile: '/dev/zero', inputRef: 's3://b/x' }, NOW, 'd')).rejects.toThrowError(
      '--input-file /dev/zero is a character device, which may never end',
    );
    const f = join(dir, 'some.txt');
    writeFileSync(f, 'x');
    await expect(buildSubmitRequest({ workflow: 'x:v1', inputFile: f, inputRef: 's3://b/x' }, NOW, 'd', AbortSignal.abort())).rejects.toThrowError(InterruptedError);
  });
});
