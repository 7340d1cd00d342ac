/**
 * Ctrl-C against a store that stopped answering (a real redis-server frozen with SIGSTOP, its
 * sockets open): a command that only reads has no safe point to stop at, so the first Ctrl-C ends
 * it (130) instead of being held until the call gives up (15 s, then exit 75); a command that has
 * started changing state says at once what it waits for and that a second Ctrl-C exits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, makeCliHome, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';
import { requestPendingAt, tcpSockets } from '../support/tcp-sockets.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let home: CliHome;
let frozen: RedisServer;

beforeAll(async () => {
  home = makeCliHome('agentq-interrupt-');
  frozen = await startRedisServer();
  await runCliOk(home, ['--url', frozen.url, 'submit', 'task:v1', '--queue', 'q']);
  frozen.signal('SIGSTOP');
});

afterAll(async () => {
  frozen?.signal('SIGCONT');
  await frozen?.stop();
  home?.cleanup();
});

/** Whether a connection to the frozen server is open (the kernel accepts it; the server never answers). */
function connectedToFrozen(): boolean {
  return tcpSockets().some((s) => s.remotePort === frozen.port && s.state === '01');
}

/** Starts `args` against the frozen store and waits until it is waiting on it. */
async function waitingOnStore(args: string[]) {
  const child = spawnCli(home, ['--url', frozen.url, ...args]);
  const done = collect(child, 60_000);
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  await pollUntil(connectedToFrozen, { timeoutMs: 20_000, what: 'the command to connect to the frozen store' });
  return { child, done, stderr: () => stderr };
}

describe('Ctrl-C while the store does not answer', () => {
  for (const args of [
    ['list', '--queue', 'q'],
    ['dlq', 'list', '--queue', 'q'],
    ['dlq', 'summary', '--queue', 'q'],
    ['stats', '--queue', 'q'],
    ['inspect', 'job_01jaaaaaaaaaaaaaaaaaaaaaaa'],
  ]) {
    it(`regression: agentq ${args.join(' ')} ends on the first Ctrl-C (130), not when the call gives up`, async () => {
      const { child, done } = await waitingOnStore(args);
      child.kill('SIGINT');
      const r = await done;
      expect(r.stderr).not.toContain('did not answer within');
      expect(r.code).toBe(130);
    }, 60_000);
  }

  it('regression: dlq redrive interrupted while planning ends at once (130) saying nothing was changed, not without a word', async () => {
    const { child, done } = await waitingOnStore(['dlq', 'redrive', '--queue', 'q', '--yes']);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('interrupted: the redrive plan was not finished; nothing was changed\n');
  }, 60_000);

  it('a command that changes state says at once what it waits for, and a second Ctrl-C exits at once', async () => {
    const { child, done, stderr } = await waitingOnStore(['submit', 'task:v1', '--queue', 'q']);
    child.kill('SIGINT');
    await pollUntil(() => /Ctrl-C again to exit at once/.test(stderr()), { timeoutMs: 10_000, what: 'the note on the first Ctrl-C' });
    expect(stderr()).toContain('waiting for the store to answer');
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stderr).not.toContain('did not answer within');
  }, 60_000);

  it('regression: submit --wait stops waiting on the first Ctrl-C also while a poll is unanswered (130, the job named)', async () => {
    // The wait's poll of the job held the first Ctrl-C until it gave up (15 s, then exit 75).
    const server = await startRedisServer();
    try {
      const child = spawnCli(home, ['--url', server.url, 'submit', 'task:v1', '--queue', 'w', '--wait']);
      const done = collect(child, 60_000);
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      const id = await pollUntil(() => /^(job_\w+)\n/.exec(stdout)?.[1], { timeoutMs: 20_000, what: 'the job id' });
      server.signal('SIGSTOP');
      await pollUntil(() => requestPendingAt(server.port), { timeoutMs: 20_000, what: 'a poll of the job sent to the frozen server' });
      child.kill('SIGINT');
      const r = await done;
      expect(r.stderr).not.toContain('did not answer within');
      expect(r.stderr).toContain(`stopped waiting for ${id} (it stays queued)`);
      expect(r.stderr).not.toContain('waiting for the store to answer');
      expect(r.code).toBe(130);
    } finally {
      server.signal('SIGCONT');
      await server.stop();
    }
  }, 60_000);

  it('regression: submit --wait --timeout ends at its timeout (124) while a poll is unanswered, not when the poll gives up (75)', async () => {
    const server = await startRedisServer();
    try {
      const child = spawnCli(home, ['--url', server.url, 'submit', 'task:v1', '--queue', 'w', '--wait', '--timeout', '3s']);
      const done = collect(child, 60_000);
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      const id = await pollUntil(() => /^(job_\w+)\n/.exec(stdout)?.[1], { timeoutMs: 20_000, what: 'the job id' });
      server.signal('SIGSTOP');
      const r = await done;
      expect(r.stderr).not.toContain('did not answer within');
      expect(r.stderr).toContain(`${id} is still queued after 3s`);
      expect(r.code).toBe(124);
    } finally {
      server.signal('SIGCONT');
      await server.stop();
    }
  }, 60_000);

  it('regression: cancel of several jobs stopped by Ctrl-C exits 130 naming those it did not cancel, not 0', async () => {
    const server = await startRedisServer();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await runCliOk(home, ['--url', server.url, 'submit', 'task:v1', '--queue', 'c'])).stdout.trim());
      server.signal('SIGSTOP');
      const child = spawnCli(home, ['--url', server.url, 'cancel', ...ids]);
      const done = collect(child, 60_000);
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      // the first job's calls are sent and unanswered: Ctrl-C, then the store answers them
      await pollUntil(() => requestPendingAt(server.port), { timeoutMs: 20_000, what: 'the first cancel sent to the frozen server' });
      child.kill('SIGINT');
      await pollUntil(() => stderr.includes('Ctrl-C again'), { timeoutMs: 10_000, what: 'the note on the first Ctrl-C' });
      server.signal('SIGCONT');
      const r = await done;
      expect(r.stdout).toContain(ids[0]);
      expect(r.stderr).toContain(`2 of 3 jobs were not cancelled: ${ids[1]} ${ids[2]}`);
      expect(r.code).toBe(130);
    } finally {
      server.signal('SIGCONT');
      await server.stop();
    }
  }, 60_000);
});

/** Each connection of clients other than redis-cli: its client port and the last command it sent. */
function clientsOf(server: RedisServer): Array<{ port: number; cmd: string }> {
  return server
    .cli('CLIENT', 'LIST')
    .split('\n')
    .filter((l) => l.includes('addr=') && !/cmd=client\|list/.test(l))
    .map((l) => ({ port: Number(/addr=\S+:(\d+)/.exec(l)![1]), cmd: /cmd=(\S+)/.exec(l)![1]! }));
}

/** Bytes a frozen server on `serverPort` has not read from the connection of `clientPort` (its socket open or half closed). */
function unreadFrom(serverPort: number, clientPort: number): number {
  const socket = tcpSockets().find((s) => s.localPort === serverPort && s.remotePort === clientPort);
  if (!socket) return 0;
  // (in CLOSE_WAIT, 08, the client's FIN is counted as one byte more)
  return socket.rxQueue - (socket.state === '08' ? 1 : 0);
}

describe('Ctrl-C of a command that stops by itself, while the store does not answer', () => {
  it('regression: tail --follow ends on the first Ctrl-C without a QUIT to the frozen server (it waited for its answer, 2 s)', async () => {
    const server = await startRedisServer();
    try {
      const id = (await runCliOk(home, ['--url', server.url, 'submit', 'task:v1', '--queue', 'f'])).stdout.trim();
      const child = spawnCli(home, ['--url', server.url, 'tail', '--queue', 'f', '--follow', '-o', 'ndjson']);
      const done = collect(child, 60_000);
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      await pollUntil(() => stdout.includes(id), { timeoutMs: 20_000, what: 'the history shown' });
      // following: a blocked read on a connection of its own; the main connection is idle
      const main = await pollUntil(() => {
        const clients = clientsOf(server);
        return clients.some((c) => c.cmd === 'xread') ? clients.find((c) => c.cmd !== 'xread') : undefined;
      }, { timeoutMs: 20_000, what: 'the follow to start' });
      server.signal('SIGSTOP');
      child.kill('SIGINT');
      const r = await done;
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      // a QUIT sent on the way out sits unread at the frozen server
      expect(unreadFrom(server.port, main.port)).toBe(0);
    } finally {
      server.signal('SIGCONT');
      await server.stop();
    }
  }, 60_000);
});
