/**
 * A throwaway `redis-server` for integration tests: the installed binary,
 * started on a free loopback port with its own temp dir, and killed (dir
 * removed) afterwards. Never the machine's Redis on 6379.
 *
 * `--save ''` turns RDB snapshots off; `aof` turns the append-only file on
 * (with `appendfsync always` by default) for the restart tests.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerOptions {
  aof?: boolean;
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Extra `--name value` arguments. */
  args?: string[];
  /** Use this port (e.g. to restart on the same one). */
  port?: number;
  /** Use this directory (e.g. to restart on the same AOF). */
  dir?: string;
}

export interface RedisServer {
  port: number;
  host: string;
  url: string;
  dir: string;
  /** SIGKILLs the server (no shutdown save) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
  /** Sends the server process a signal (SIGSTOP freezes it with its sockets open; SIGCONT resumes it). */
  signal(sig: NodeJS.Signals): void;
  /** Runs `redis-cli` against it and returns stdout. */
  cli(...args: string[]): string;
}

/** A free TCP port on 127.0.0.1 (and, when `alsoPlus` is given, port+alsoPlus free too: the cluster bus). */
export async function freePort(alsoPlus?: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    if (alsoPlus === undefined) return port;
    if (port + alsoPlus > 65535) continue;
    if (await isFree(port + alsoPlus)) return port;
  }
  throw new Error('no free port pair found');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The server process ended before it answered (see waitForPing): starting again on new ports may work. */
export class RedisExitedError extends Error {}

/** Resolves when a PING on the port gets +PONG (polls with a deadline, no fixed sleep). */
// Generous: after a SIGKILL, redis-server replays its AOF before it answers (it says -LOADING
// meanwhile), and on a loaded 2-core CI machine that can take far longer than on a laptop.
export async function waitForPing(port: number, timeoutMs = 60_000, logFile?: string, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const logTail = () => (logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '(no log)');
  for (;;) {
    // A server that exited will never answer: say so now (most often its port was taken between
    // freePort and the bind, by another test's server or an outgoing connection), not after a minute.
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new RedisExitedError(`redis-server on ${port} exited (${child.exitCode ?? child.signalCode}) before answering PING; its log ends with:\n${logTail()}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      let buf = '';
      const done = (v: boolean) => {
        s.destroy();
        resolve(v);
      };
      s.setTimeout(1000, () => done(false));
      s.once('error', () => done(false));
      s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
      s.on('data', (d) => {
        buf += d.toString();
        if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
      });
    });
    if (ok) return;
    if (Date.now() > deadline) {
      throw new Error(`redis-server on ${port} did not answer PING within ${timeoutMs} ms; its log ends with:\n${logTail()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function serverArgs(port: number, dir: string, o: RedisServerOptions): string[] {
  return [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--save', '',
    '--appendonly', o.aof ? 'yes' : 'no',
    '--appendfsync', o.appendfsync ?? 'always',
    '--maxmemory-policy', 'noeviction',
    '--daemonize', 'no',
    '--logfile', join(dir, 'redis.log'),
    ...(o.args ?? []),
  ];
}

export function spawnRedis(args: string[]): ChildProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  child.unref();
  return child;
}

export function killChild(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function startRedisServer(o: RedisServerOptions = {}): Promise<RedisServer> {
  // A port chosen here may be taken before the server binds it: then try another (a given port is kept).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisServerOnce(o);
    } catch (e) {
      if (!(e instanceof RedisExitedError) || o.port !== undefined || attempt >= 3) throw e;
    }
  }
}

async function startRedisServerOnce(o: RedisServerOptions): Promise<RedisServer> {
  const port = o.port ?? (await freePort());
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'agentq-redis-'));
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawnRedis(serverArgs(port, dir, o));
    await waitForPing(port, undefined, join(dir, 'redis.log'), child);
  };
  const kill = async () => {
    await killChild(child);
    child = null;
  };
  try {
    await start();
  } catch (e) {
    await kill();
    if (o.dir === undefined) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    port,
    host: '127.0.0.1',
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill,
    start,
    stop: async () => {
      // a stopped process cannot act on SIGKILL's cleanup until it runs again
      (child as ChildProcess | null)?.kill('SIGCONT');
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    signal: (sig) => void (child as ChildProcess | null)?.kill(sig),
    cli: (...args: string[]) => {
      const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    },
  };
}
