/**
 * A throwaway SQS-protocol server for integration tests and benches: fauxqs
 * 1.9.2 in its own Node process, its app built and listening on 127.0.0.1 on
 * a free port (fauxqs's own `startFauxqs` binds 0.0.0.0, which a test must
 * never do). Killed at the end. Never the machine's services on 4566.
 *
 * A separate process (not the test's own event loop) so a test can kill it,
 * and so its CPU does not compete with the code under test on one thread.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis-server.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The child: build the fauxqs app, listen on loopback only, print the port, exit with the parent. */
const CHILD = `
import { buildApp } from 'fauxqs';
const app = buildApp({ logger: false });
const port = Number(process.env.FAUXQS_TEST_PORT);
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write('LISTENING ' + port + '\\n');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

export interface SqsServer {
  port: number;
  /** `http://127.0.0.1:PORT`, for `endpoint=`. */
  endpoint: string;
  /** Kills it. */
  stop(): Promise<void>;
  /** Sends the server process a signal (SIGSTOP freezes it with its sockets open; SIGCONT resumes it). */
  signal(sig: NodeJS.Signals): void;
}

/** The server exited before it listened (on a port chosen here: another process may have taken it since). */
class ExitedBeforeListening extends Error {}

/**
 * `port`: that port (a server stopped and started again on its port, as SQS coming back); a free
 * one otherwise, chosen again should another process take it between the choice and the bind
 * (EADDRINUSE: the suite's servers and outgoing connections share the loopback ports).
 */
export async function startSqsServer(opts: { port?: number } = {}): Promise<SqsServer> {
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await startOn(port);
    } catch (e) {
      if (!(e instanceof ExitedBeforeListening) || opts.port !== undefined || attempt >= 5) throw e;
    }
  }
}

async function startOn(port: number): Promise<SqsServer> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: REPO,
    env: { ...process.env, FAUXQS_TEST_PORT: String(port) },
    // stdin is a pipe so the server exits when this process dies without calling stop().
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`fauxqs did not start on 127.0.0.1:${port} within 20 s`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('LISTENING')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new ExitedBeforeListening(`fauxqs exited with ${code} before listening on 127.0.0.1:${port}`));
    });
  });
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    signal: (sig) => void child.kill(sig),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
