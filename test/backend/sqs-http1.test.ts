/**
 * The HTTP/1.1 transport of agentq's SQS wire client (src/backend/sqs/http1.ts),
 * which replaces node:http on the hot path and so has to get right what
 * node:http got right for free:
 * - the response parser alone, fed whole responses and the same bytes one at
 *   a time (a socket may cut a response anywhere): Content-Length, chunked
 *   (extensions, trailers), 1xx interim answers, 204, bodies delimited by the
 *   connection closing, keep-alive rules, repeated headers, and the malformed
 *   input it must refuse rather than misread;
 * - the pool against raw TCP servers that write scripted bytes, so the test
 *   sees exactly what goes on the wire: the request bytes, connection reuse,
 *   `Connection: close`, the maxSockets limit, time-outs, resets, refused
 *   connections, header injection, destroy();
 * - a round trip with node:http's server (200 KB JSON both ways, chunked and
 *   with Content-Length), the real peer's framing rather than ours;
 * - TLS with a self-signed certificate made at test time: trusted through
 *   `ca`, refused without it (certificates are verified) and refused for
 *   another host name.
 * Every server is a real one on 127.0.0.1, port 0; nothing waits a fixed time.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/backend/sqs/client.js';
import { Http1Pool, ResponseParser, type Endpoint, type Http1Response } from '../../src/backend/sqs/http1.js';
import { pollUntil } from '../support/poll.js';

// ---------------------------------------------------------------------------
// Helpers

/** Everything opened by a test, closed in afterEach whatever the outcome. */
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function newPool(maxSockets?: number, tlsOptions?: { ca?: string | Buffer }): Http1Pool {
  const pool = new Http1Pool(maxSockets, tlsOptions);
  cleanups.push(() => pool.destroy());
  return pool;
}

function endpoint(port: number, protocol: Endpoint['protocol'] = 'http:'): Endpoint {
  return { protocol, hostname: '127.0.0.1', port };
}

/** The headers the wire client sends (it supplies Host and Content-Length itself: the pool adds none). */
function headersFor(port: number, body: Buffer, extra: Record<string, string> = {}): Record<string, string> {
  return { host: `127.0.0.1:${port}`, 'content-type': 'application/x-amz-json-1.0', 'content-length': String(body.length), ...extra };
}

/** Feeds `bytes` one byte at a time: null until the very last byte, which must complete the response. */
function pushByteByByte(parser: ResponseParser, bytes: Buffer): Http1Response {
  for (let i = 0; i < bytes.length - 1; i++) {
    const r = parser.push(bytes.subarray(i, i + 1));
    if (r !== null) throw new Error(`response completed early, at byte ${i} of ${bytes.length}`);
  }
  const r = parser.push(bytes.subarray(bytes.length - 1));
  if (r === null) throw new Error('response not complete after its last byte');
  return r;
}

function parseWhole(text: string | Buffer): Http1Response | null {
  return new ResponseParser().push(Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1'));
}

interface RawRequest {
  requestLine: string;
  headerLines: string[];
  body: Buffer;
  /** The request's exact bytes, head and body. */
  raw: Buffer;
  socket: net.Socket;
}

interface RawServer {
  port: number;
  /** 'connection' events so far. */
  connections: number;
  /** Connections open now, and the most open at once. */
  open: number;
  maxOpen: number;
  requests: RawRequest[];
  sockets: Set<net.Socket>;
}

/**
 * A TCP server that splits what it receives into requests (head up to the
 * empty line, then Content-Length bytes) and hands each to `onRequest`, which
 * writes whatever raw bytes the test scripts (or nothing).
 */
async function startRawServer(onRequest: (req: RawRequest, srv: RawServer) => void = () => {}, onConnection?: (socket: net.Socket) => void): Promise<RawServer> {
  const state: RawServer = { port: 0, connections: 0, open: 0, maxOpen: 0, requests: [], sockets: new Set() };
  const server = net.createServer((socket) => {
    state.connections++;
    state.open++;
    state.maxOpen = Math.max(state.maxOpen, state.open);
    state.sockets.add(socket);
    socket.on('close', () => {
      state.open--;
      state.sockets.delete(socket);
    });
    socket.on('error', () => {}); // resets are part of several tests
    onConnection?.(socket);
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const at = buf.indexOf('\r\n\r\n');
        if (at < 0) return;
        const lines = buf.toString('latin1', 0, at).split('\r\n');
        const cl = lines.find((l) => /^content-length:/i.test(l));
        const length = cl ? Number(cl.slice(cl.indexOf(':') + 1).trim()) : 0;
        if (buf.length < at + 4 + length) return;
        const req: RawRequest = {
          requestLine: lines[0]!,
          headerLines: lines.slice(1),
          body: buf.subarray(at + 4, at + 4 + length),
          raw: buf.subarray(0, at + 4 + length),
          socket,
        };
        buf = buf.subarray(at + 4 + length);
        state.requests.push(req);
        onRequest(req, state);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  cleanups.push(async () => {
    for (const s of state.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return state;
}

const OK_JSON = 'HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}';

function answerOk(req: RawRequest): void {
  req.socket.write(OK_JSON);
}

async function rejectionOf(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection, got a response');
}

// ---------------------------------------------------------------------------
// The parser alone

describe('ResponseParser', () => {
  const BODY = '{"a":"b\r\n\r\nc","d":[1,2,3]}';
  const CL = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Amzn-RequestId: r-1\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

  it('reads a Content-Length body in one chunk', () => {
    const r = parseWhole(CL)!;
    expect(r.status).toBe(200);
    // Names lowercased, as node:http gives them to the wire client.
    expect(r.headers).toEqual({ 'content-type': 'application/json', 'x-amzn-requestid': 'r-1', 'content-length': String(BODY.length) });
    // The CRLFs inside the body are body bytes, not a second head.
    expect(r.body.toString('latin1')).toBe(BODY);
  });

  it('reads the same response split byte by byte (complete on the last byte, not before)', () => {
    const p = new ResponseParser();
    const r = pushByteByByte(p, Buffer.from(CL, 'latin1'));
    expect(r.status).toBe(200);
    expect(r.body.toString('latin1')).toBe(BODY);
    expect(p.keepAlive).toBe(true);
  });

  it('reads an empty Content-Length: 0 body at once', () => {
    const r = parseWhole('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')!;
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
  });

  it('reads a chunked body with chunk extensions and trailers, split byte by byte', () => {
    // Sizes in hex (B = 11, upper case), an extension on a chunk and on the last
    // chunk, chunk data containing CRLF (framing is by length, not by line), trailers.
    const wire =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n' +
      '5;x=y\r\nhello\r\n' +
      'B\r\n, \r\n\r\nworld\r\n' +
      '1;name="q"\r\n!\r\n' +
      '0;end=1\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n';
    const p = new ResponseParser();
    const r = pushByteByByte(p, Buffer.from(wire, 'latin1'));
    expect(r.status).toBe(200);
    expect(r.body.toString('latin1')).toBe('hello, \r\n\r\nworld!');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(p.keepAlive).toBe(true);
    // The same bytes in one piece give the same answer.
    expect(parseWhole(wire)!.body.toString('latin1')).toBe('hello, \r\n\r\nworld!');
  });

  it('reads a chunked body with no trailers and no data chunks', () => {
    const r = parseWhole('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')!;
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
  });

  it('skips a 100 Continue interim response and returns the real one', () => {
    const wire = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nnope!';
    const whole = parseWhole(wire)!;
    expect(whole.status).toBe(400);
    expect(whole.body.toString()).toBe('nope!');
    // Cut anywhere: in particular right after the interim head, which must not be taken for the answer.
    const r = pushByteByByte(new ResponseParser(), Buffer.from(wire, 'latin1'));
    expect(r.status).toBe(400);
    expect(r.body.toString()).toBe('nope!');
    const p = new ResponseParser();
    expect(p.push(Buffer.from('HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n'))).toBeNull();
    const final = p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'))!;
    expect(final.status).toBe(200);
    expect(final.headers['x-interim']).toBeUndefined();
  });

  it('returns a 204 at the end of its head, with no body', () => {
    const p = new ResponseParser();
    const r = pushByteByByte(p, Buffer.from('HTTP/1.1 204 No Content\r\nX-Amzn-RequestId: r-2\r\n\r\n', 'latin1'));
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
    expect(p.keepAlive).toBe(true);
  });

  it('reads a body delimited by the connection closing: nothing until end()', () => {
    const p = new ResponseParser();
    expect(p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart 1, '))).toBeNull();
    expect(p.push(Buffer.from('part 2'))).toBeNull();
    // Such a connection cannot carry another response.
    expect(p.keepAlive).toBe(false);
    const r = p.end()!;
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('part 1, part 2');
  });

  it('end() gives no response for a truncated Content-Length or chunked body, nor before the head', () => {
    const a = new ResponseParser();
    expect(a.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'))).toBeNull();
    expect(a.end()).toBeNull();
    const b = new ResponseParser();
    expect(b.push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'))).toBeNull();
    expect(b.end()).toBeNull();
    const c = new ResponseParser();
    expect(c.push(Buffer.from('HTTP/1.1 200 OK\r\nConte'))).toBeNull();
    expect(c.end()).toBeNull();
  });

  it('keepAlive: HTTP/1.1 by default, not with Connection: close; HTTP/1.0 only with keep-alive', () => {
    const cases: Array<[string, boolean]> = [
      ['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', true],
      ['HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.1 200 OK\r\nconnection: Close\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', true],
      ['HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n', true],
    ];
    for (const [wire, keepAlive] of cases) {
      const p = new ResponseParser();
      expect(p.push(Buffer.from(wire)), wire).not.toBeNull();
      expect(p.keepAlive, wire).toBe(keepAlive);
    }
  });

  it('joins repeated headers with ", " whatever the case of their names', () => {
    const r = parseWhole('HTTP/1.1 200 OK\r\nX-Thing: a\r\nx-thing: b\r\nX-THING:c \r\nContent-Length: 0\r\n\r\n')!;
    expect(r.headers['x-thing']).toBe('a, b, c');
  });

  it('throws on a malformed status line', () => {
    for (const line of ['HTTP/2 200 OK', 'HTTP/1.1 20 OK', 'ICY 200 OK', 'garbage', 'http/1.1 200 OK']) {
      expect(() => parseWhole(`${line}\r\nContent-Length: 0\r\n\r\n`), line).toThrow(/not an HTTP\/1\.x response/);
    }
  });

  it('throws on a bad Content-Length', () => {
    for (const v of ['abc', '-1', '1.5', '5, 6', '99999999999999999999']) {
      expect(() => parseWhole(`HTTP/1.1 200 OK\r\nContent-Length: ${v}\r\n\r\nhello`), JSON.stringify(v)).toThrow(/bad Content-Length/);
    }
  });

  // RFC 9110 allows decimal digits only: Number() alone would read '' as 0 and
  // '0x2', '2e0', '+2' as 2, framing heads that node:http's parser refuses.
  it('throws on a Content-Length that is not plain decimal digits', () => {
    for (const [v, body] of [['', ''], ['0x2', '{}'], ['2e0', '{}'], ['+2', '{}']] as const) {
      expect(() => parseWhole(`HTTP/1.1 200 OK\r\nContent-Length: ${v}\r\n\r\n${body}`), JSON.stringify(v)).toThrow(/bad Content-Length/);
    }
  });

  it('throws on bytes after the end of the response (Content-Length and chunked)', () => {
    expect(() => parseWhole('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}X')).toThrow(/bytes after the end/);
    expect(() => parseWhole('HTTP/1.1 204 No Content\r\n\r\nX')).toThrow(/bytes after the end/);
    expect(() => parseWhole('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nHTTP/1.1')).toThrow(/bytes after the end/);
    // Also when the extra bytes come in a later chunk of the socket.
    const p = new ResponseParser();
    expect(p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{'))).toBeNull();
    expect(() => p.push(Buffer.from('}}'))).toThrow(/bytes after the end/);
  });

  it('throws on a malformed chunk size, a header line without a colon, and an endless head', () => {
    expect(() => parseWhole('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n')).toThrow(/malformed chunk size/);
    expect(() => parseWhole('HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n')).toThrow(/malformed HTTP header line/);
    const p = new ResponseParser();
    expect(p.push(Buffer.from('HTTP/1.1 200 OK\r\n'))).toBeNull();
    expect(() => p.push(Buffer.from(`X-Big: ${'a'.repeat(70 * 1024)}\r\n`))).toThrow(/over 64 KiB/);
  });
});

// ---------------------------------------------------------------------------
// The pool against raw TCP servers

describe('Http1Pool against a raw TCP server', () => {
  it('sends exactly the request line, each header once, and the exact body', async () => {
    const srv = await startRawServer(answerOk);
    const pool = newPool();
    // Bytes that are not text, a CRLF and an empty line inside the body: sent as is.
    const body = Buffer.concat([Buffer.from('{"MessageBody":"héllo ✓\r\n\r\n"}', 'utf8'), Buffer.from([0, 255, 13, 10])]);
    const headers = headersFor(srv.port, body, { 'x-amz-target': 'AmazonSQS.SendMessage', 'x-amz-date': '20260101T000000Z' });
    const res = await pool.post(endpoint(srv.port), '/', headers, body, 5000);

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(res.body.toString()).toBe('{}');
    expect(srv.requests).toHaveLength(1);
    const req = srv.requests[0]!;
    expect(req.requestLine).toBe('POST / HTTP/1.1');
    // Exactly the headers given, in order, each once: the pool adds none of its own.
    expect(req.headerLines).toEqual([
      `host: 127.0.0.1:${srv.port}`,
      'content-type: application/x-amz-json-1.0',
      `content-length: ${body.length}`,
      'x-amz-target: AmazonSQS.SendMessage',
      'x-amz-date: 20260101T000000Z',
    ]);
    expect(req.body.equals(body)).toBe(true);
    const expected = Buffer.concat([Buffer.from(`POST / HTTP/1.1\r\n${req.headerLines.map((l) => `${l}\r\n`).join('')}\r\n`, 'latin1'), body]);
    expect(req.raw.equals(expected)).toBe(true);
  });

  it('reuses one TCP connection for sequential posts', async () => {
    const srv = await startRawServer(answerOk);
    const pool = newPool();
    const body = Buffer.from('{"n":1}');
    for (let i = 0; i < 3; i++) {
      const res = await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
      expect(res.status).toBe(200);
    }
    expect(srv.connections).toBe(1);
    expect(srv.requests).toHaveLength(3);
    expect(new Set(srv.requests.map((r) => r.socket)).size).toBe(1);
  });

  it('opens a new connection after a response with Connection: close', async () => {
    // The server leaves the socket open: only the client's reading of the header can make it move on.
    const srv = await startRawServer((req, s) => {
      if (s.requests.length === 1) req.socket.write('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}');
      else answerOk(req);
    });
    const pool = newPool();
    const body = Buffer.from('{}');
    await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    const res = await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    expect(res.status).toBe(200);
    expect(srv.connections).toBe(2);
    expect(srv.requests[0]!.socket).not.toBe(srv.requests[1]!.socket);
    // The client closed the first connection itself.
    await pollUntil(() => srv.requests[0]!.socket.destroyed || srv.requests[0]!.socket.readableEnded, { what: 'the first connection to close' });
  });

  it('opens a new connection after a body delimited by the connection closing', async () => {
    const srv = await startRawServer((req) => {
      req.socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"until":"close"}');
    });
    const pool = newPool();
    const body = Buffer.from('{}');
    const a = await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    expect(a.body.toString()).toBe('{"until":"close"}');
    const b = await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    expect(b.body.toString()).toBe('{"until":"close"}');
    expect(srv.connections).toBe(2);
  });

  it('with maxSockets 2, five concurrent posts use at most 2 connections at once and all complete', async () => {
    // Answers are held until two requests wait (or all five have come): proves
    // the pool does use two connections in parallel, and gives a pool that
    // ignored the limit every chance to open more.
    const held: RawRequest[] = [];
    const srv = await startRawServer((req, s) => {
      held.push(req);
      if (held.length >= 2 || s.requests.length === 5) {
        for (const r of held.splice(0)) r.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${r.body.length}\r\n\r\n${r.body.toString()}`);
      }
    });
    const pool = newPool(2);
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => {
        const body = Buffer.from(`{"i":${i}}`);
        return pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
      }),
    );
    // Each answer went to its own request.
    expect(results.map((r) => r.body.toString())).toEqual([0, 1, 2, 3, 4].map((i) => `{"i":${i}}`));
    expect(srv.requests).toHaveLength(5);
    expect(srv.maxOpen).toBe(2);
    // Queued requests took the released connections rather than new ones.
    expect(srv.connections).toBe(2);
  });

  it('rejects with a TimeoutError when the server accepts and never answers', async () => {
    const srv = await startRawServer(() => {});
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 200));
    expect(e.name).toBe('TimeoutError');
    expect(isConnectionError(e)).toBe(true);
    // The request did arrive; the connection is then given up.
    expect(srv.requests).toHaveLength(1);
    await pollUntil(() => srv.open === 0, { what: 'the timed-out connection to close' });
  });

  it('rejects with ECONNRESET when the server closes the connection mid-response', async () => {
    const srv = await startRawServer((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial":');
      req.socket.destroy();
    });
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000));
    expect(e.code).toBe('ECONNRESET');
    expect(isConnectionError(e)).toBe(true);
  });

  it('rejects with ECONNRESET when the server resets the connection (RST) mid-response', async () => {
    const srv = await startRawServer((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel', () => req.socket.resetAndDestroy());
    });
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000));
    expect(e.code).toBe('ECONNRESET');
    expect(isConnectionError(e)).toBe(true);
  });

  it('rejects (not a garbled response) when the server answers with a malformed response', async () => {
    const srv = await startRawServer((req) => req.socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000));
    expect(e.message).toMatch(/not an HTTP\/1\.x response/);
    await pollUntil(() => srv.open === 0, { what: 'the broken connection to close' });
  });

  it('rejects with ECONNREFUSED on a closed port', async () => {
    // A port that was just free: listen, note it, close.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(port), '/', headersFor(port, body), body, 5000));
    expect(e.code).toBe('ECONNREFUSED');
    expect(isConnectionError(e)).toBe(true);
    // A refused connection must give its slot back: with maxSockets 1 a second try still gets to connect.
    const one = newPool(1);
    await rejectionOf(one.post(endpoint(port), '/', headersFor(port, body), body, 5000));
    const again = await rejectionOf(one.post(endpoint(port), '/', headersFor(port, body), body, 5000));
    expect(again.code).toBe('ECONNREFUSED');
  });

  it('refuses a header name or value containing CR, LF, NUL or a character outside latin1 with a TypeError, sending nothing', async () => {
    const srv = await startRawServer(answerOk);
    const pool = newPool();
    const body = Buffer.from('{}');
    const bad: Array<Record<string, string>> = [
      { 'x-amz-target': 'AmazonSQS.SendMessage\r\nX-Injected: 1' },
      { 'x-amz-target': 'a\nb' },
      { 'x-amz-target': 'a\0b' },
      { 'x-injected\r\nx': 'v' },
      // not latin1 (it would be garbled on the wire), and a name that is not a token
      { 'x-amz-target': 'caf\u00e9 \u2603' },
      { 'bad name': 'v' },
    ];
    for (const extra of bad) {
      const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body, extra), body, 5000));
      expect(e).toBeInstanceOf(TypeError);
    }
    // A valid post afterwards: the server then sees one connection and that one request only.
    await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    expect(srv.connections).toBe(1);
    expect(srv.requests).toHaveLength(1);
    expect(srv.requests[0]!.raw.toString('latin1')).not.toMatch(/injected/i);
  });

  it('after destroy() closes its idle connections and rejects new posts', async () => {
    const srv = await startRawServer(answerOk);
    const pool = newPool();
    const body = Buffer.from('{}');
    await pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000);
    expect(srv.open).toBe(1);
    pool.destroy();
    await pollUntil(() => srv.open === 0, { what: 'the idle connection to close' });
    const e = await rejectionOf(pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 5000));
    expect(e.code).toBe('ERR_CLIENT_CLOSED');
    expect(srv.connections).toBe(1);
    expect(srv.requests).toHaveLength(1);
  });

  // destroy() closes the busy connections too, not only the idle ones.
  it('destroy() makes a request in flight fail (as its doc comment says)', async () => {
    const held: RawRequest[] = [];
    const srv = await startRawServer((req) => held.push(req));
    const pool = newPool();
    const body = Buffer.from('{}');
    const p = pool.post(endpoint(srv.port), '/', headersFor(srv.port, body), body, 10_000);
    p.catch(() => {}); // observed below; no unhandled rejection meanwhile
    await pollUntil(() => held.length === 1, { what: 'the request to arrive' });
    pool.destroy();
    // The server answers after destroy(): a request that still succeeds was not failed.
    held[0]!.socket.write(OK_JSON);
    const e = await rejectionOf(p);
    expect(isConnectionError(e) || e.code === 'ERR_CLIENT_CLOSED').toBe(true);
  });
});

// ---------------------------------------------------------------------------
// Against node:http's server

describe('Http1Pool against a node:http server', () => {
  let server: HttpServer;
  let port: number;
  const seen: Array<{ method?: string; url?: string; headers: Record<string, unknown>; body: Buffer }> = [];

  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        const input = JSON.parse(body.toString('utf8')) as { mode: string; payload: string };
        const answer = Buffer.from(JSON.stringify({ echoedLength: input.payload.length, payload: input.payload.split('').reverse().join('') }), 'utf8');
        res.statusCode = 200;
        res.setHeader('content-type', 'application/x-amz-json-1.0');
        if (input.mode === 'chunked') {
          // No Content-Length and several writes: node:http sends it chunked.
          const step = Math.ceil(answer.length / 7);
          for (let i = 0; i < answer.length; i += step) res.write(answer.subarray(i, i + step));
          res.end();
        } else {
          res.setHeader('content-length', answer.length);
          res.end(answer);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  for (const mode of ['chunked', 'content-length'] as const) {
    it(`round-trips 200 KB of JSON each way (${mode} response)`, async () => {
      const pool = newPool();
      // Multi-byte characters: the Content-Length is bytes, not characters.
      const unit = 'abcdefghij-é✓';
      const payload = unit.repeat(Math.ceil((200 * 1024) / Buffer.byteLength(unit)));
      const body = Buffer.from(JSON.stringify({ mode, payload }), 'utf8');
      expect(body.length).toBeGreaterThan(200 * 1024);
      seen.length = 0;
      const res = await pool.post(endpoint(port), '/', headersFor(port, body, { 'x-amz-target': 'AmazonSQS.ReceiveMessage' }), body, 10_000);

      expect(res.status).toBe(200);
      if (mode === 'chunked') {
        expect(res.headers['transfer-encoding']).toBe('chunked');
        expect(res.headers['content-length']).toBeUndefined();
      } else {
        expect(res.headers['transfer-encoding']).toBeUndefined();
        expect(Number(res.headers['content-length'])).toBe(res.body.length);
      }
      const out = JSON.parse(res.body.toString('utf8')) as { echoedLength: number; payload: string };
      expect(out.echoedLength).toBe(payload.length);
      expect(out.payload).toBe(payload.split('').reverse().join(''));
      expect(res.body.length).toBeGreaterThan(200 * 1024);

      expect(seen).toHaveLength(1);
      expect(seen[0]!.method).toBe('POST');
      expect(seen[0]!.url).toBe('/');
      expect(seen[0]!.headers['x-amz-target']).toBe('AmazonSQS.ReceiveMessage');
      expect(seen[0]!.body.equals(body)).toBe(true);

      // The connection is still good for the next request (the framing was read to its exact end).
      const again = await pool.post(endpoint(port), '/', headersFor(port, body), body, 10_000);
      expect(again.body.equals(res.body)).toBe(true);
      expect(seen).toHaveLength(2);
    });
  }
});

// ---------------------------------------------------------------------------
// TLS

describe('Http1Pool over TLS', () => {
  let dir: string;
  let cert: string;
  let key: string;
  let otherCert: string;
  let otherKey: string;

  function makeCert(name: string, san: string): { cert: string; key: string } {
    const k = join(dir, `${name}.key`);
    const c = join(dir, `${name}.crt`);
    execFileSync('/usr/bin/openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`, '-days', '1', '-keyout', k, '-out', c], { stdio: 'pipe' });
    return { cert: readFileSync(c, 'utf8'), key: readFileSync(k, 'utf8') };
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentq-http1-tls-'));
    ({ cert, key } = makeCert('localhost', 'IP:127.0.0.1,DNS:localhost'));
    ({ cert: otherCert, key: otherKey } = makeCert('sqs.example.com', 'DNS:sqs.example.com'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function startHttps(tlsKey: string, tlsCert: string): Promise<number> {
    let connections = 0;
    const server = createHttpsServer({ key: tlsKey, cert: tlsCert }, (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ got: Buffer.concat(parts).toString('utf8'), secure: true, connections }));
      });
    });
    server.on('secureConnection', () => connections++);
    server.on('tlsClientError', () => {}); // the untrusting client hangs up mid-handshake
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return (server.address() as net.AddressInfo).port;
  }

  it('posts over TLS to a server whose self-signed certificate is trusted through `ca`, reusing the connection', async () => {
    const port = await startHttps(key, cert);
    const pool = newPool(50, { ca: cert });
    const body = Buffer.from('{"QueueUrl":"https://127.0.0.1/q"}');
    const a = await pool.post(endpoint(port, 'https:'), '/', headersFor(port, body), body, 5000);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body.toString())).toEqual({ got: body.toString(), secure: true, connections: 1 });
    const b = await pool.post(endpoint(port, 'https:'), '/', headersFor(port, body), body, 5000);
    // Still one TLS session: keep-alive works over TLS too.
    expect(JSON.parse(b.body.toString()).connections).toBe(1);
  });

  it('refuses the same server without the `ca` (certificates are verified)', async () => {
    const port = await startHttps(key, cert);
    const pool = newPool();
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(port, 'https:'), '/', headersFor(port, body), body, 5000));
    expect(e.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
  });

  it('refuses a trusted certificate issued for another host name', async () => {
    const port = await startHttps(otherKey, otherCert);
    const pool = newPool(50, { ca: otherCert });
    const body = Buffer.from('{}');
    const e = await rejectionOf(pool.post(endpoint(port, 'https:'), '/', headersFor(port, body), body, 5000));
    expect(e.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});
