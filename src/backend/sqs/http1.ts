/**
 * The HTTP/1.1 transport of the SQS wire client (wire.ts): keep-alive
 * connections (TCP or TLS) per endpoint, one request at a time on each, the
 * request written in one piece, the response read by a small parser.
 *
 * Why not node:http: for a 1 KB-10 KB POST and its JSON answer, Node's client
 * (ClientRequest, the agent, IncomingMessage and their streams and events)
 * cost more CPU than the request's signature and JSON together; a redrive of
 * 5,000 entries with its sweep makes ~1,500 calls, and this was the largest
 * share of the CLI's CPU after the store work (BENCHMARKS.md, "SQS").
 *
 * What it does, and no more: POST with a body of known length; responses with
 * Content-Length, chunked, or delimited by the connection closing; 1xx
 * interim responses skipped; `Connection: close` honoured; an idle
 * connection closed after IDLE_MS (before the usual server keep-alive
 * time-outs, so a reused connection is rarely one the server is closing); at
 * most `maxSockets` connections per endpoint, further requests queued. No
 * pipelining, no proxies (as node:http without an agent that adds them).
 * Errors are Node's socket errors (ECONNRESET, ECONNREFUSED, …) or a
 * `TimeoutError`, which the wire client retries as the SDK would.
 */
import * as net from 'node:net';
import * as tls from 'node:tls';

export interface Endpoint {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
}

export interface Http1Response {
  status: number;
  /** Header names lowercased; repeated headers joined with ", " (as node:http does for most). */
  headers: Record<string, string>;
  body: Buffer;
}

/** Idle connections are closed after this long (Node's HTTP server closes them after 5 s by default). */
const IDLE_MS = 4000;
const CRLF2 = Buffer.from('\r\n\r\n');
/** Header names are tokens; values are visible latin1 and tabs (no CR, LF or NUL to split the request): as node:http checks them. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export class Http1Pool {
  private readonly idle = new Map<string, Connection[]>();
  private readonly open = new Map<string, number>();
  private readonly queued = new Map<string, Array<() => void>>();
  /** Every open connection, idle or busy: destroy() closes them all. */
  private readonly all = new Set<Connection>();
  private closed = false;

  constructor(
    private readonly maxSockets = 50,
    /** Extra TLS options for https endpoints (tests: a `ca` for a self-signed certificate); certificates are always verified. */
    private readonly tlsOptions: Pick<tls.ConnectionOptions, 'ca'> = {},
  ) {}

  /** Sends `POST path` with these headers and body; resolves with the whole response. */
  async post(ep: Endpoint, path: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<Http1Response> {
    let head = `POST ${path} HTTP/1.1\r\n`;
    for (const name of Object.keys(headers)) {
      const value = headers[name]!;
      if (!HEADER_NAME.test(name) || BAD_VALUE.test(value)) throw new TypeError(`invalid character in HTTP header ${JSON.stringify(name)}`);
      head += `${name}: ${value}\r\n`;
    }
    const request = Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
    const conn = await this.acquire(ep);
    try {
      return await conn.exchange(request, timeoutMs);
    } finally {
      this.release(ep, conn);
    }
  }

  /** Closes every connection; requests in flight and queued ones fail. */
  destroy(): void {
    this.closed = true;
    for (const c of this.all) c.socket.destroy();
    this.all.clear();
    this.idle.clear();
    // Queued requests wake up, see the pool closed and fail.
    for (const q of this.queued.values()) for (const wake of q.splice(0)) wake();
  }

  private key(ep: Endpoint): string {
    return `${ep.protocol}//${ep.hostname}:${ep.port}`;
  }

  private async acquire(ep: Endpoint): Promise<Connection> {
    const key = this.key(ep);
    for (;;) {
      if (this.closed) throw Object.assign(new Error('the SQS client was closed'), { code: 'ERR_CLIENT_CLOSED' });
      const list = this.idle.get(key);
      while (list && list.length > 0) {
        const c = list.pop()!;
        if (c.usable) return c.take();
      }
      const n = this.open.get(key) ?? 0;
      if (n < this.maxSockets) {
        this.open.set(key, n + 1);
        const conn: Connection = new Connection(ep, this.tlsOptions, () => {
          // A connection closed: room for a queued request.
          this.all.delete(conn);
          this.open.set(key, (this.open.get(key) ?? 1) - 1);
          this.queued.get(key)?.shift()?.();
        });
        this.all.add(conn);
        return conn;
      }
      await new Promise<void>((resolve) => {
        const q = this.queued.get(key);
        if (q) q.push(resolve);
        else this.queued.set(key, [resolve]);
      });
    }
  }

  private release(ep: Endpoint, conn: Connection): void {
    const key = this.key(ep);
    if (conn.usable && !this.closed) {
      conn.park(IDLE_MS);
      const list = this.idle.get(key);
      if (list) list.push(conn);
      else this.idle.set(key, [conn]);
      this.queued.get(key)?.shift()?.();
    } else conn.socket.destroy(); // its close makes room (onGone)
  }
}

type Pending = { resolve: (r: Http1Response) => void; reject: (e: Error) => void; parser: ResponseParser };

/** One connection: at most one exchange at a time. */
class Connection {
  readonly socket: net.Socket;
  private pending: Pending | null = null;
  private reusable = true;
  private gone = false;

  constructor(ep: Endpoint, tlsOptions: Pick<tls.ConnectionOptions, 'ca'>, onGone: () => void) {
    this.socket =
      ep.protocol === 'https:'
        ? tls.connect({ ...tlsOptions, host: ep.hostname, port: ep.port, servername: net.isIP(ep.hostname) ? undefined : ep.hostname, ALPNProtocols: ['http/1.1'] })
        : net.connect({ host: ep.hostname, port: ep.port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('end', () => this.onEnd());
    this.socket.on('close', () => {
      if (!this.gone) {
        this.gone = true;
        onGone();
      }
      this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    });
    this.socket.on('timeout', () => {
      if (this.pending) {
        const e = new Error('SQS did not answer in time');
        e.name = 'TimeoutError';
        this.socket.destroy(e);
      } else this.socket.destroy();
    });
  }

  /** Idle, connected and not told to close. */
  get usable(): boolean {
    return this.reusable && !this.gone && !this.socket.destroyed && this.pending === null;
  }

  take(): this {
    this.socket.ref();
    return this;
  }

  /** Idle in the pool: does not keep the process alive, closed after `idleMs`. */
  park(idleMs: number): void {
    this.socket.setTimeout(idleMs);
    this.socket.unref();
  }

  exchange(request: Buffer, timeoutMs: number): Promise<Http1Response> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, parser: new ResponseParser() };
      this.socket.setTimeout(timeoutMs);
      this.socket.write(request);
    });
  }

  private onData(chunk: Buffer): void {
    const p = this.pending;
    if (!p) {
      // Bytes nobody asked for: the connection is out of step; never reuse it.
      this.reusable = false;
      this.socket.destroy();
      return;
    }
    let res: Http1Response | null;
    try {
      res = p.parser.push(chunk);
    } catch (e) {
      this.reusable = false;
      this.socket.destroy(e as Error);
      return;
    }
    if (res) this.settle(p, res);
  }

  private onEnd(): void {
    const p = this.pending;
    this.reusable = false;
    if (p) {
      // A body delimited by the end of the connection is complete now.
      const res = p.parser.end();
      if (res) this.settle(p, res);
    }
  }

  private settle(p: Pending, res: Http1Response): void {
    this.pending = null;
    if (!p.parser.keepAlive) this.reusable = false;
    p.resolve(res);
  }

  private fail(e: Error): void {
    this.reusable = false;
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    p.reject(e);
  }
}

/**
 * Parses one HTTP/1.1 response from the chunks of a socket. `push` returns the
 * response once it is complete (null: more bytes needed) and throws on a
 * malformed one. Interim (1xx) responses are skipped.
 */
export class ResponseParser {
  private buf: Buffer = Buffer.alloc(0);
  private status = 0;
  private headers: Record<string, string> | null = null;
  /** Body bytes expected (Content-Length), or 'chunked', or 'close' (until the connection ends). */
  private framing: number | 'chunked' | 'close' = 0;
  private body: Buffer[] = [];
  /** Content-Length framing: body bytes received so far. */
  private bodyLength = 0;
  /** Chunked: bytes left of the current chunk's data (-1: at a chunk-size line). */
  private chunkLeft = -1;
  keepAlive = true;

  push(chunk: Buffer): Http1Response | null {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.headers === null && !this.readHead()) return null;
    return this.readBody();
  }

  /** The connection ended: the response, if it was delimited by the end; otherwise an error. */
  end(): Http1Response | null {
    if (this.headers !== null && this.framing === 'close') {
      this.body.push(this.buf);
      this.buf = Buffer.alloc(0);
      return this.done();
    }
    return null;
  }

  private readHead(): boolean {
    for (;;) {
      const at = this.buf.indexOf(CRLF2);
      if (at < 0) {
        if (this.buf.length > 64 * 1024) throw new Error('HTTP response head over 64 KiB');
        return false;
      }
      const lines = this.buf.toString('latin1', 0, at).split('\r\n');
      this.buf = this.buf.subarray(at + 4);
      const m = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]!);
      if (!m) throw new Error(`not an HTTP/1.x response: ${JSON.stringify(lines[0]!.slice(0, 40))}`);
      const status = Number(m[2]);
      if (status >= 100 && status < 200) continue; // 100 Continue and the like: the real answer follows
      const headers: Record<string, string> = {};
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(':');
        if (colon <= 0) throw new Error(`malformed HTTP header line: ${JSON.stringify(line.slice(0, 40))}`);
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      this.status = status;
      this.headers = headers;
      const connection = (headers.connection ?? '').toLowerCase();
      this.keepAlive = m[1] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
      if (status === 204 || status === 304) this.framing = 0;
      else if ((headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) this.framing = 'chunked';
      else if (headers['content-length'] !== undefined) {
        const n = /^\d+$/.test(headers['content-length']) ? Number(headers['content-length']) : NaN;
        if (!Number.isSafeInteger(n)) throw new Error(`bad Content-Length ${JSON.stringify(headers['content-length'])}`);
        this.framing = n;
      } else {
        this.framing = 'close';
        this.keepAlive = false;
      }
      return true;
    }
  }

  private readBody(): Http1Response | null {
    if (this.framing === 'close') {
      this.body.push(this.buf);
      this.buf = Buffer.alloc(0);
      return null;
    }
    if (typeof this.framing === 'number') {
      // Chunks are kept as they come (no copy of the body so far per chunk) until the length is reached.
      this.body.push(this.buf);
      this.bodyLength += this.buf.length;
      this.buf = Buffer.alloc(0);
      if (this.bodyLength < this.framing) return null;
      if (this.bodyLength > this.framing) throw new Error('bytes after the end of the HTTP response');
      return this.done();
    }
    // chunked: size line, data, CRLF, …, a zero-size chunk, trailers, CRLF
    for (;;) {
      if (this.chunkLeft < 0) {
        const eol = this.buf.indexOf('\r\n');
        if (eol < 0) return null;
        const size = parseInt(this.buf.toString('latin1', 0, eol).split(';')[0]!.trim(), 16);
        if (!Number.isFinite(size) || size < 0) throw new Error('malformed chunk size in the HTTP response');
        if (size === 0) {
          // The last chunk, then trailers (ignored) up to an empty line: `0\r\n\r\n` without any.
          const end = this.buf.indexOf(CRLF2, eol);
          if (end < 0) return null;
          if (end + 4 !== this.buf.length) throw new Error('bytes after the end of the HTTP response');
          return this.done();
        }
        this.chunkLeft = size;
        this.buf = this.buf.subarray(eol + 2);
      }
      if (this.buf.length < this.chunkLeft + 2) return null;
      this.body.push(this.buf.subarray(0, this.chunkLeft));
      this.buf = this.buf.subarray(this.chunkLeft + 2);
      this.chunkLeft = -1;
    }
  }

  private done(): Http1Response {
    const body = this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body);
    return { status: this.status, headers: this.headers!, body };
  }
}
