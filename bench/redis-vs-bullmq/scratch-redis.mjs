// A throwaway redis-server for the probes in this folder: a free loopback port (never 6379), no
// persistence, killed by stop(). `admin` is a connection for INFO and the like; it retries until
// the server is up, so the first command waits for it. `distDir` resolves a probe's [dist dir]
// argument (default: this checkout's build) to an importable URL.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

export function distDir(arg) {
  return pathToFileURL(resolve(arg ?? fileURLToPath(new URL('../../dist', import.meta.url)))).href;
}

/** A loopback port nothing listens on now. */
export function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = srv.address();
      srv.close(() => resolve(free));
    });
  });
}

export async function startScratchRedis() {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const admin = new Redis({ port, retryStrategy: () => 50 });
  admin.on('error', () => {}); // refused connections while the server starts: retried
  await admin.ping();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    admin,
    stop() {
      admin.disconnect();
      proc.kill();
    },
  };
}
