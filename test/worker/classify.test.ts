import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { RetryLaterError, ValidationError } from '../../src/core/errors.js';
import { toFailure, MAX_ERROR_MESSAGE_CHARS, withValidCode } from '../../src/worker/classify.js';
import { HandlerError } from '../../src/worker/handler-error.js';

describe('toFailure: what a thrown value means for the retry decision', () => {
  it('keeps a HandlerError code and takes retryability from the error-code table', () => {
    expect(toFailure(new HandlerError('PROVIDER_429', 'slow down'))).toEqual({
      code: 'PROVIDER_429',
      message: 'slow down',
      retryable: true,
      workerVersion: null,
    });
    expect(toFailure(new HandlerError('BUDGET_EXCEEDED', 'out of tokens')).retryable).toBe(false);
  });

  it('lets an explicit retryable flag override the table', () => {
    expect(toFailure(new HandlerError('VALIDATION', 'x', { retryable: true })).retryable).toBe(true);
    expect(toFailure(new HandlerError('PROVIDER_429', 'x', { retryable: false })).retryable).toBe(false);
  });

  it('treats an unknown handler code as permanent unless marked retryable', () => {
    expect(toFailure(new HandlerError('MY_CODE', 'x')).retryable).toBe(false);
    expect(toFailure(new HandlerError('MY_CODE', 'x', { retryable: true })).retryable).toBe(true);
  });

  it('maps Node network errors to NETWORK (retryable)', () => {
    const e = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(toFailure(e)).toMatchObject({ code: 'NETWORK', retryable: true });
  });

  // Regression: `fetch` to a refused port was HANDLER_FAILED (permanent) and went to the DLQ after one attempt.
  it('maps a network error wrapped in `cause` (Node fetch: TypeError "fetch failed") to NETWORK', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']) {
      const cause = Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
      const f = toFailure(new TypeError('fetch failed', { cause }));
      expect(f).toMatchObject({ code: 'NETWORK', retryable: true, message: `fetch failed: connect ${code} 127.0.0.1:9` });
    }
  });

  it('finds the network code deeper in the cause chain and in an AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:9'), { code: 'ECONNREFUSED' });
    const aggregate = new AggregateError([new Error('other'), refused], 'all addresses failed');
    expect(toFailure(new TypeError('fetch failed', { cause: aggregate }))).toMatchObject({ code: 'NETWORK', retryable: true });
    const deep = new Error('outer', { cause: new Error('middle', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }) });
    expect(toFailure(deep)).toMatchObject({ code: 'NETWORK', retryable: true });
  });

  it('ends the cause walk on a cycle or past the depth bound, and leaves an error with its own code alone', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(toFailure(a)).toMatchObject({ code: 'HANDLER_FAILED', retryable: false });
    let chain: Error = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    for (let i = 0; i < 20; i++) chain = new Error(`wrap ${i}`, { cause: chain });
    expect(toFailure(chain).code).toBe('HANDLER_FAILED');
    const own = new HandlerError('MY_CODE', 'mine', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    expect(toFailure(own)).toMatchObject({ code: 'MY_CODE', retryable: false });
  });

  it('maps HTTP statuses of SDK errors to the documented codes', () => {
    expect(toFailure(Object.assign(new Error('rate'), { status: 429 }))).toMatchObject({ code: 'PROVIDER_429', retryable: true });
    expect(toFailure(Object.assign(new Error('bad gw'), { statusCode: 502 }))).toMatchObject({ code: 'PROVIDER_5XX', retryable: true });
    expect(toFailure(Object.assign(new Error('no'), { status: 403 }))).toMatchObject({ code: 'PERMISSION', retryable: false });
    expect(toFailure(Object.assign(new Error('??'), { status: 404 }))).toMatchObject({ code: 'HTTP_404', retryable: false });
  });

  it('maps TimeoutError to TIMEOUT (retryable)', () => {
    const e = new Error('took too long');
    e.name = 'TimeoutError';
    expect(toFailure(e)).toMatchObject({ code: 'TIMEOUT', retryable: true });
  });

  it('treats typed agentq errors by their code: validation permanent, retry-later retryable', () => {
    expect(toFailure(new ValidationError('bad input'))).toMatchObject({ code: 'VALIDATION', retryable: false });
    expect(toFailure(new RetryLaterError('busy'))).toMatchObject({ code: 'RETRY_LATER', retryable: true });
  });

  it('makes any other throw a permanent HANDLER_FAILED carrying the message and worker version', () => {
    expect(toFailure(new TypeError('undefined is not a function'), 'v7')).toEqual({
      code: 'HANDLER_FAILED',
      message: 'undefined is not a function',
      retryable: false,
      workerVersion: 'v7',
    });
    expect(toFailure('plain string')).toMatchObject({ code: 'HANDLER_FAILED', message: 'plain string' });
    expect(toFailure({ weird: 1 })).toMatchObject({ code: 'HANDLER_FAILED', message: '{"weird":1}' });
    // Regression: these were stored as "{}" and as the whole object in JSON.
    expect(toFailure(runInNewContext('new Error("boom in another realm")'))).toMatchObject({ code: 'HANDLER_FAILED', message: 'boom in another realm' });
    expect(toFailure(runInNewContext('new RangeError("")'))).toMatchObject({ message: 'RangeError' });
    expect(toFailure({ status: 429, message: 'Too many requests' })).toMatchObject({ code: 'PROVIDER_429', message: 'Too many requests' });
  });

  it('bounds the message so a DLQ entry stays small', () => {
    const f = toFailure(new Error('x'.repeat(MAX_ERROR_MESSAGE_CHARS + 10)));
    expect(f.message.startsWith('x'.repeat(MAX_ERROR_MESSAGE_CHARS))).toBe(true);
    expect(f.message).toContain('[truncated 10 chars]');
  });
});

describe('withValidCode: the error-code rule at the library boundary', () => {
  const rule = 'error codes must be 1-64 characters of A-Z, 0-9 and _ (e.g. PROVIDER_429)';
  it('keeps a code that follows the rule, untouched', () => {
    const f = toFailure(new HandlerError('PROVIDER_429', 'x'));
    expect(withValidCode(f, new HandlerError('PROVIDER_429', 'x'))).toBe(f);
  });

  it('replaces a code with spaces or 300 characters by HANDLER_FAILED, quoting it cut at 80 characters; retryability is kept', () => {
    const spaced = new HandlerError('rate limited', 'try later', { retryable: true });
    expect(withValidCode(toFailure(spaced), spaced)).toEqual({
      code: 'HANDLER_FAILED',
      message: `the handler threw an error with the code "rate limited", which is not one (${rule}): try later`,
      retryable: true,
      workerVersion: null,
    });
    const long = new HandlerError('A'.repeat(300), 'm');
    expect(withValidCode(toFailure(long), long).message).toContain(`"${'A'.repeat(80)}…(300 characters)"`);
  });

  it('takes the code of the HTTP status when the error has one', () => {
    const e = Object.assign(new Error('boom'), { code: 'server_error', statusCode: 503 });
    expect(withValidCode(toFailure(e), e)).toMatchObject({ code: 'PROVIDER_5XX', retryable: true });
    const odd = Object.assign(new Error('boom'), { code: 'x', status: -1.5 });
    expect(withValidCode(toFailure(odd), odd).code).toBe('HANDLER_FAILED');
  });
});
