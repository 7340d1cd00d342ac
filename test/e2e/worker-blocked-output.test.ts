/**
 * A worker whose output nobody reads: a terminal that stopped being read (a
 * `docker run -t` whose log driver stalls, a paused `script`/ssh session), or a
 * pipe whose reader stalls (a log collector, `| less` left paused). Writes to a
 * terminal are synchronous in Node: once the terminal's buffer was full, the
 * worker's event loop stopped in write(2), its heartbeats stopped, its leases
 * expired and its jobs went to other workers while their handlers still ran.
 * Writes to a pipe are queued: they piled up in memory without bound, and at
 * exit the worker waited for ever for its stdout to drain.
 *
 * Both outputs are a FIFO the test holds open and never reads (64 KiB of
 * kernel buffer); the terminal is a pseudo-terminal made by util-linux
 * `script`, whose own output is that FIFO. Run `npm run build` first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Job } from '../../src/core/schemas.js';
import { AGENTQ_BIN, makeCliHome, runCliOk, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';

let home: CliHome;
let children: ChildProcess[] = [];
let fds: number[] = [];
let pidFiles: string[] = [];
beforeEach(() => {
  home = makeCliHome('agentq-e2e-blocked-output-');
});
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of pidFiles) {
    if (!existsSync(f)) continue;
    for (const pid of readFileSync(f, 'utf8').trim().split(' ').map(Number)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  for (const fd of fds) closeSync(fd);
  children = [];
  fds = [];
  pidFiles = [];
  home.cleanup();
});

/** A FIFO held open (O_RDWR: opening never waits for a writer) and read only when `drain` is called. */
function stalledPipe(): { fd: number; drain(): string } {
  const path = join(home.dir, `fifo-${fds.length}`);
  const made = spawnSync('mkfifo', [path]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString()}`);
  const fd = openSync(path, constants.O_RDWR);
  // Read through a description of its own: the child's spawn makes the one it is given blocking.
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  fds.push(fd, reader);
  return {
    fd,
    drain() {
      const chunks: Buffer[] = [];
      const buf = Buffer.alloc(65536);
      for (;;) {
        let n = 0;
        try {
          n = readSync(reader, buf, 0, buf.length, null);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw e;
        }
        if (n === 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
      }
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/**
 * A handler that writes `lines` lines of 100 bytes to stderr, says so in a file (it can only get
 * there if the worker keeps reading its stderr), then runs until the test lets it end.
 */
function chattyHandler(lines: number): { path: string; wrote: string; release: () => void } {
  const wrote = join(home.dir, 'wrote');
  const pids = join(home.dir, 'pids');
  const go = join(home.dir, 'go');
  const path = join(home.dir, 'chatty.sh');
  const line = 'x'.repeat(90);
  writeFileSync(
    path,
    `#!/bin/sh\necho "$PPID $$" > ${pids}\ni=0\nwhile [ $i -lt ${lines} ]; do echo "$i ${line}" >&2; i=$((i+1)); done\ntouch ${wrote}\nwhile [ ! -e ${go} ]; do sleep 0.05; done\necho '{}'\n`,
  );
  chmodSync(path, 0o755);
  // (a worker blocked in write(2) ignores SIGTERM: afterEach kills it and its handler by pid)
  pidFiles.push(pids);
  return { path, wrote, release: () => writeFileSync(go, '') };
}

async function inspect(id: string): Promise<Job> {
  return Job.parse(JSON.parse((await runCliOk(home, ['inspect', id, '-o', 'json'])).stdout));
}

/** Running, not a zombie left for a parent that never reaps it. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function exited(c: ChildProcess): boolean {
  return c.exitCode !== null || c.signalCode !== null;
}

describe('agentq worker whose output is not read', () => {
  it('on a terminal nobody reads: keeps heartbeating (the lease is extended), keeps reading its handler, and the job runs once', async () => {
    const id = (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', '--max-attempts', '2'])).stdout.trim();
    const out = stalledPipe();
    // 12,000 lines (about 1.5 MB with their job-id prefixes): more than the terminal, the FIFO and the cap hold.
    const h = chattyHandler(12_000);
    const command = ['node', AGENTQ_BIN, 'worker', '--queue', 'w', '--lease', '1s', '--heartbeat', '200ms', '--', h.path].map((a) => `'${a}'`).join(' ');
    // script(1) gives the worker a pseudo-terminal and copies it to the FIFO; once the FIFO is
    // full it stops reading the terminal, as a stalled log driver does.
    const worker = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: home.env, stdio: ['ignore', out.fd, 'ignore'] });
    children.push(worker);

    await pollUntil(() => existsSync(h.wrote), { what: 'the handler to get all its lines out (the worker reading its stderr)', timeoutMs: 15_000 });
    const since = Date.now();
    // Heartbeats go on: the lease ends later than a lease from now (it would have expired, never extended, with a blocked loop).
    await pollUntil(async () => {
      const job = await inspect(id);
      return job.state === 'running' && job.lease !== null && Date.parse(job.lease.expires_at) > since + 1_000;
    }, { what: 'the lease to be extended while the terminal is not read', timeoutMs: 10_000 });

    // Read at last: what could not be written is counted, in one line, once the rest is through.
    let shown = '';
    await pollUntil(() => {
      shown += out.drain();
      return /lines? of output dropped/.test(shown);
    }, { what: 'the dropped-lines note', timeoutMs: 15_000 });
    const note = /worker: (\d+) lines? of output dropped: stderr was blocked \(not read\) for \d/.exec(shown);
    expect(note, shown.slice(-2000)).not.toBeNull();
    expect(Number(note![1])).toBeGreaterThan(0);
    // The lines before the gap came through whole and in order.
    const numbers = [...shown.slice(0, note!.index).matchAll(/\] (\d+) x+\r?\n/g)].map((m) => Number(m[1]));
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));

    h.release();
    await pollUntil(async () => (await inspect(id)).state === 'succeeded', { what: 'the job to succeed', timeoutMs: 15_000 });
    await pollUntil(() => {
      shown += out.drain();
      return shown.includes('attempt 1: succeeded');
    }, { what: 'the outcome line', timeoutMs: 15_000 });
    const job = await inspect(id);
    expect(job.attempts.map((a) => a.outcome)).toEqual(['succeeded']);
  });

  it('on a terminal nobody reads: SIGTERM still stops the worker gracefully (the handler stopped, the lease released)', async () => {
    const id = (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', '--max-attempts', '2'])).stdout.trim();
    const out = stalledPipe();
    const h = chattyHandler(12_000);
    const command = ['node', AGENTQ_BIN, 'worker', '--queue', 'w', '--grace', '200ms', '--kill-grace', '1s', '--', h.path].map((a) => `'${a}'`).join(' ');
    children.push(spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: home.env, stdio: ['ignore', out.fd, 'ignore'] }));
    const pidsFile = pidFiles.at(-1)!;
    await pollUntil(() => existsSync(pidsFile) && readFileSync(pidsFile, 'utf8').includes(' '), { what: 'the handler to start' });
    const [worker] = readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number) as [number, number];
    // (signalled while the handler writes 12,000 lines: the terminal's buffer and the FIFO are
    // full within a few hundred of them, so the worker's output is blocked when the signal comes)
    process.kill(worker, 'SIGTERM');
    await pollUntil(() => !alive(worker), { what: 'the worker to stop on SIGTERM while its terminal is not read', timeoutMs: 15_000 });
    const job = await inspect(id);
    expect(job.state).toBe('queued');
    expect(job.attempts.at(-1)?.outcome).toBe('released');
  });

  it('on a pipe whose reader stalls: what waits for the reader is capped (about 1 MiB), the rest is counted as dropped', async () => {
    const id = (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', '--max-attempts', '1'])).stdout.trim();
    const out = stalledPipe();
    // 40,000 lines (about 5 MB with their job-id prefixes): several times the cap.
    const h = chattyHandler(40_000);
    const worker = spawn('node', [AGENTQ_BIN, 'worker', '--queue', 'w', '--', h.path], { env: home.env, stdio: ['ignore', out.fd, out.fd] });
    children.push(worker);
    await pollUntil(() => existsSync(h.wrote), { what: 'the handler to get all its lines out', timeoutMs: 30_000 });
    // The reader comes back: it gets what was held (capped), then the note.
    let shown = '';
    await pollUntil(() => {
      shown += out.drain();
      return /lines? of output dropped/.test(shown);
    }, { what: 'the dropped-lines note', timeoutMs: 15_000 });
    h.release();
    await pollUntil(async () => (await inspect(id)).state === 'succeeded', { what: 'the job to succeed', timeoutMs: 15_000 });
    await pollUntil(() => {
      shown += out.drain();
      return shown.includes('attempt 1: succeeded');
    }, { what: 'the outcome line', timeoutMs: 15_000 });
    const held = shown.slice(0, shown.search(/worker: \d+ lines? of output dropped/));
    expect(Buffer.byteLength(held)).toBeLessThan(1.25 * 1024 * 1024);
    const dropped = [...shown.matchAll(/worker: (\d+) lines? of output dropped/g)].reduce((n, m) => n + Number(m[1]), 0);
    const through = [...shown.matchAll(/\] \d+ x+\n/g)].length;
    // Every line is either shown or counted.
    expect(through + dropped).toBe(40_000);
  });

  it('on a pipe nobody reads: SIGTERM ends the worker, its output flushed for a bounded time and then left', async () => {
    const id = (await runCliOk(home, ['submit', 'task:v1', '--queue', 'w', '--max-attempts', '1'])).stdout.trim();
    const out = stalledPipe();
    const h = chattyHandler(5_000);
    // -o ndjson: its events on stdout, which waited for the reader at exit, for ever.
    const worker = spawn('node', [AGENTQ_BIN, 'worker', '--queue', 'w', '-o', 'ndjson', '--', h.path], { env: home.env, stdio: ['ignore', out.fd, out.fd] });
    children.push(worker);
    await pollUntil(() => existsSync(h.wrote), { what: 'the handler to get all its lines out', timeoutMs: 20_000 });
    h.release();
    await pollUntil(async () => (await inspect(id)).state === 'succeeded', { what: 'the job to succeed', timeoutMs: 15_000 });

    worker.kill('SIGTERM');
    await pollUntil(() => exited(worker), { what: 'the worker to exit although nobody reads its output', timeoutMs: 15_000 });
    expect(worker.exitCode).toBe(0);
  });

  it('a reader that went away (EPIPE) stays a quiet non-event: the worker goes on working jobs and exits 0', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await runCliOk(home, ['submit', 'task:v1', '--queue', 'w'])).stdout.trim());
    const h = join(home.dir, 'noisy.sh');
    writeFileSync(h, `#!/bin/sh\ni=0\nwhile [ $i -lt 2000 ]; do echo "$i ${'y'.repeat(90)}" >&2; i=$((i+1)); done\necho '{}'\n`);
    chmodSync(h, 0o755);
    // `head -c 0` exits at once: every line, on stdout and stderr, hits a closed pipe.
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${AGENTQ_BIN}" worker --queue w --drain -o ndjson -- ${h} 2>&1 | head -c 0; echo \${PIPESTATUS[0]}`], {
      env: home.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stdout.trim()).toBe('0');
    for (const id of ids) expect((await inspect(id)).state).toBe('succeeded');
  });
});
