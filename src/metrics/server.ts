/**
 * The `/metrics` HTTP endpoint of `agentq metrics serve`. Plain `node:http`:
 * one route, no framework. Concurrent scrapes share one in-flight collection,
 * so a burst of scrapers never multiplies the load on the backend.
 *
 * A scrape waits for the collection at most its budget: Prometheus's
 * `X-Prometheus-Scrape-Timeout-Seconds` less a margin, else
 * DEFAULT_COLLECT_TIMEOUT_MS. Past it the answer is 503 at once (a backend
 * that is down can take 12 s to say so, longer than the scraper waits, which
 * then records a bare timeout with no reason); the collection keeps running
 * and the next scrape shares it. A failure streak is logged once when it
 * starts and once when a collection works again, not once per scrape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redactCredentials } from '../cli/output/redact.js';
import { sanitize } from '../cli/output/sanitize.js';
import { ValidationError } from '../core/errors.js';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus.js';

export const DEFAULT_LISTEN = '127.0.0.1:9464';

/** A scrape's budget when the scraper does not send one (Prometheus's own default timeout is 10 s). */
export const DEFAULT_COLLECT_TIMEOUT_MS = 5_000;

/** The budget for one scrape: the scraper's timeout header less a margin for the answer, within [0.1 s, 60 s]. */
export function scrapeBudgetMs(header: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  if (header === undefined || !Number.isFinite(seconds) || seconds <= 0) return DEFAULT_COLLECT_TIMEOUT_MS;
  return Math.min(60_000, Math.max(100, Math.round(seconds * 1000 * 0.9) - 100));
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** `127.0.0.1:9464`, `[::1]:9464`, `localhost:0`; a bare `:9464` binds loopback, not every interface. */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new ValidationError(`--listen ${JSON.stringify(text)} must be HOST:PORT, e.g. ${DEFAULT_LISTEN} or [::1]:9464`);
  }
  const host = m[1] ?? (m[2] || '127.0.0.1');
  return { host, port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

export interface MetricsServer {
  /** The base URL actually bound (the port is real even when 0 was asked for). */
  url: string;
  address: ListenAddress;
  /** Scrapes not yet answered (what `close()` waits for). */
  unanswered(): number;
  close(): Promise<void>;
}

export interface ServerLog {
  /** A collection failed after working (or at the first one): the start of a failure streak. */
  failing(message: string): void;
  /** A collection worked after a failure streak. */
  recovered(message: string): void;
}

export async function startMetricsServer(opts: { listen: ListenAddress; collect: () => Promise<string>; log?: ServerLog }): Promise<MetricsServer> {
  let inflight: Promise<string> | null = null;
  let failingSince: number | null = null;
  const failed = (why: string): void => {
    if (failingSince !== null) return;
    failingSince = Date.now();
    opts.log?.failing(`collecting stats failed, answering 503 until it works again: ${why}`);
  };
  const worked = (): void => {
    if (failingSince === null) return;
    opts.log?.recovered(`collecting stats works again (it failed for ${Math.round((Date.now() - failingSince) / 1000)}s)`);
    failingSince = null;
  };
  const collectOnce = (): Promise<string> => {
    inflight ??= opts.collect().finally(() => {
      inflight = null;
    });
    return inflight;
  };

  /** Requests not yet answered: close() waits for them (each is answered within its budget). */
  let unanswered = 0;
  let closing = false;
  const server: Server = createServer((req, res) => {
    unanswered++;
    res.once('close', () => {
      unanswered--;
      // The last answer is out: what is left open are idle keep-alive connections.
      if (closing && unanswered === 0) server.closeAllConnections();
    });
    // While closing, answers say so, so the scraper does not reuse a connection about to go.
    if (closing) res.setHeader('connection', 'close');
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('agentq metrics: see /metrics\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const budgetMs = scrapeBudgetMs(req.headers['x-prometheus-scrape-timeout-seconds']);
    let timer: NodeJS.Timeout | undefined;
    const overBudget = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new CollectTimeout(budgetMs)), budgetMs);
    });
    Promise.race([collectOnce(), overBudget])
      .finally(() => clearTimeout(timer))
      .then(
        (body) => {
          worked();
          res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
          res.end(req.method === 'HEAD' ? undefined : body);
        },
        (err: unknown) => {
          // A failed collection is a 503 so Prometheus marks the target down (`up == 0`) instead of reading stale data.
          const why = err instanceof Error ? err.message : String(err);
          failed(why);
          // (the reason can carry stored text, such as a damaged record's; the body is read with curl)
          res.writeHead(503, { 'content-type': 'text/plain' }).end(`collecting stats failed: ${sanitize(redactCredentials(why))}\n`);
        },
      );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen.port, opts.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    address: { host: addr.address, port: addr.port },
    unanswered: () => unanswered,
    // No new connections; a scrape in flight is answered first (within its budget: a collection
    // that hangs gets its 503), then the connections left, idle keep-alive ones, are closed.
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true;
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
        if (unanswered === 0) server.closeAllConnections();
      }),
  };
}

class CollectTimeout extends Error {
  constructor(ms: number) {
    super(`the backend did not answer within ${ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`} (slow or unreachable); the collection goes on and the next scrape shares it`);
  }
}
