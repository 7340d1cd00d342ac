/**
 * The `/metrics` HTTP endpoint of `agentq metrics serve`. Plain `node:http`:
 * one route, no framework. Concurrent scrapes share one in-flight collection,
 * so a burst of scrapers never multiplies the load on the backend.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ValidationError } from '../core/errors.js';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus.js';

export const DEFAULT_LISTEN = '127.0.0.1:9464';

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
  close(): Promise<void>;
}

export async function startMetricsServer(opts: { listen: ListenAddress; collect: () => Promise<string> }): Promise<MetricsServer> {
  let inflight: Promise<string> | null = null;
  const collectOnce = (): Promise<string> => {
    inflight ??= opts.collect().finally(() => {
      inflight = null;
    });
    return inflight;
  };

  const server: Server = createServer((req, res) => {
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
    collectOnce().then(
      (body) => {
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        // A failed collection is a 503 so Prometheus marks the target down (`up == 0`) instead of reading stale data.
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`collecting stats failed: ${err instanceof Error ? err.message : String(err)}\n`);
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
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
