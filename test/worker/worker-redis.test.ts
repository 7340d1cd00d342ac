/**
 * The library worker suite against the Redis backend on a real, standalone
 * `redis-server` spawned for this file; each case gets its own key prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock, seededRandom, systemClock } from '../../src/core/clock.js';
import type { WorkerEvent } from '../../src/worker/types.js';
import { createWorker } from '../../src/worker/worker.js';
import { pollUntil } from '../support/poll.js';
import { freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { runWorkerSuite } from './worker-cases.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let seq = 0;
runWorkerSuite('redis (standalone)', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=w${process.pid}x${++seq}`), { clock, random: seededRandom(seq) });
  return { backend, clock, cleanup: () => backend.close() };
});

describe('a worker whose Redis refuses connections', () => {
  it('regression: a refused claim (never sent) starts no orphan sweep: no second error line, no listing of the running jobs', async () => {
    // Every failed claim started a sweep (its list() failed too, a second error line per claim),
    // and after a blip each worker of a fleet listed the queue's running jobs: a refused connection
    // means the claim never ran, so it cannot have leased anything.
    const url = `redis://127.0.0.1:${await freePort()}`;
    const backend = new RedisBackend(parseRedisUrl(url), { clock: systemClock });
    const events: WorkerEvent[] = [];
    let lists = 0;
    const counting = new Proxy(backend, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop === 'list') lists++;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const worker = createWorker({
      backend: counting,
      queue: 'refused',
      handler: async () => 'ok',
      minIdleMs: 5,
      maxIdleMs: 20,
      logger: (e) => events.push(e),
    });
    try {
      await worker.start();
      const claimErrors = () => events.filter((e) => e.kind === 'backend_error' && e.op === 'claim');
      await pollUntil(() => claimErrors().length >= 3, { timeoutMs: 20_000, what: 'three refused claims' });
      expect(String((claimErrors()[0] as { error: Error }).error.message)).toContain('ECONNREFUSED');
      expect(events.filter((e) => e.kind === 'backend_error' && e.op !== 'claim')).toEqual([]);
      expect(lists).toBe(0);
    } finally {
      await worker.stop();
      await backend.close();
    }
  }, 30_000);
});

describe('a worker stopped while its Redis is down', () => {
  // Regression: the release of each running job's lease on the way out was tried three times, and
  // each try waited out the client's own reconnect attempts (about 10 s on a refusing server, 15 s
  // on a frozen one): a SIGTERM with --grace 2s took 32 s to end the worker. The lease expires by
  // itself and the job is claimed again, as after a second signal.
  it('tries the release of a running job once, not three times, and stops', async () => {
    let releases = 0;
    const { events, jobId } = await stopWhileDown('down', (release) => {
      releases++;
      return release();
    });
    expect(releases).toBe(1);
    // (its one try is not waited for past the grace either: the lease is left to expire)
    expect(events.find((e) => e.kind === 'leases_left')).toMatchObject({ count: 1 });
    expect(events.some((e) => e.kind === 'released' && e.jobId === jobId)).toBe(false);
  }, 90_000);

  it('bounds the release by what is left of the grace: the lease is left to expire and said so, before the store answers', async () => {
    // Each release waited one reconnect cycle of the client (about 10 s) past --grace. The proof is
    // structural: the stop ends with a leases_left event while the release is still unanswered
    // (its answer, ECONNREFUSED, only comes when the client gives up, after the stop).
    let releaseSettled = false;
    const { events, jobId } = await stopWhileDown('downgrace', (release) => release().finally(() => (releaseSettled = true)));
    expect(releaseSettled).toBe(false);
    const left = events.find((e) => e.kind === 'leases_left') as { count: number; expiresAt: number } | undefined;
    expect(left?.count).toBe(1);
    expect(left!.expiresAt).toBeGreaterThan(0);
    expect(events.map((e) => e.kind).slice(-2)).toEqual(['leases_left', 'stopped']);
    expect(events.some((e) => (e.kind === 'released' || e.kind === 'backend_error') && 'jobId' in e && e.jobId === jobId)).toBe(false);
  }, 90_000);
});

describe('a worker stopped while its Redis is frozen', () => {
  // Regression: the stop's last orphan sweep (after a claim whose answer was lost) was not bounded
  // by --grace: on a frozen server (SIGSTOP: connected, never answering) the sweep in progress
  // waited out the client's command timeout (15 s), then the last try as long again. The proof is
  // structural: the stop ends, saying the sweep was abandoned, while its list() is still unanswered.
  it('abandons the last orphan sweep when the grace is over, says so, and stops before the store answers', async () => {
    const own = await startRedisServer();
    const backend = new RedisBackend(parseRedisUrl(`${own.url}?prefix=frozen`), { clock: systemClock });
    const events: WorkerEvent[] = [];
    let answerLost = false;
    let listStarted = false;
    let listSettled = false;
    let releases = 0;
    const frozenAfterClaim = new Proxy(backend, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        const call = (a: unknown[]) => (v as (...b: unknown[]) => Promise<unknown>).apply(target, a);
        if (prop === 'claim') {
          // The claim leases the job, then the server freezes and its answer is lost.
          return async (...a: unknown[]) => {
            const leases = (await call(a)) as unknown[];
            if (answerLost || leases.length === 0) return leases;
            answerLost = true;
            own.signal('SIGSTOP');
            throw new Error('Connection is closed.');
          };
        }
        if (prop === 'release') {
          return (...a: unknown[]) => {
            releases++;
            return call(a);
          };
        }
        if (prop === 'list') {
          return (...a: unknown[]) => {
            listStarted = true;
            return call(a).finally(() => (listSettled = true));
          };
        }
        return (v as (...b: unknown[]) => unknown).bind(target);
      },
    });
    try {
      await backend.submit({ workflow: 'w:v1', queue: 'frozen' });
      // (a long idle wait: after the lost answer the claim loop sleeps, and the stop ends it at once)
      const worker = createWorker({ backend: frozenAfterClaim, queue: 'frozen', gracefulMs: 0, minIdleMs: 60_000, maxIdleMs: 60_000, handler: async () => 'ok', logger: (e) => events.push(e) });
      await worker.start();
      await pollUntil(() => listStarted, { timeoutMs: 20_000, what: 'the orphan sweep to list the running jobs on the frozen server' });
      await worker.stop();
      expect(listSettled).toBe(false);
      expect(events.find((e) => e.kind === 'orphan_sweep_abandoned')).toEqual({ kind: 'orphan_sweep_abandoned', expiresBy: expect.any(Number) });
      expect(events.map((e) => e.kind).slice(-2)).toEqual(['orphan_sweep_abandoned', 'stopped']);
      // The abandoned sweep's late answer is ignored: nothing is released or logged after `stopped`.
      own.signal('SIGCONT');
      // (polled on a timer: the worker's continuation of that answer has run by then, and a release
      // it sent would be ahead of the list below on the same connection)
      await pollUntil(() => listSettled, { timeoutMs: 20_000, what: 'the late answer of the abandoned list' });
      const running = (await backend.list({ queue: 'frozen', states: ['running'] }, { limit: 10 })).items;
      expect(running).toHaveLength(1); // still leased to the stopped worker: its lease expires, as the event said
      expect(releases).toBe(0);
      expect(events.map((e) => e.kind).at(-1)).toBe('stopped');
    } finally {
      own.signal('SIGCONT');
      await backend.close();
      await own.stop();
    }
  }, 90_000);
});

/**
 * A worker (grace 0) on a redis-server of its own runs one job that waits for its abort; the
 * server is killed, then the worker stopped. Every `release` call goes through `onRelease`.
 */
async function stopWhileDown(queue: string, onRelease: (release: () => Promise<void>) => Promise<void>): Promise<{ events: WorkerEvent[]; jobId: string }> {
  const own = await startRedisServer();
  const backend = new RedisBackend(parseRedisUrl(`${own.url}?prefix=${queue}`), { clock: systemClock });
  const events: WorkerEvent[] = [];
  const watched = new Proxy(backend, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (prop === 'release') return (...a: unknown[]) => onRelease(() => (v as (...b: unknown[]) => Promise<void>).apply(target, a));
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  try {
    const { job } = await backend.submit({ workflow: 'w:v1', queue });
    const worker = createWorker({
      backend: watched,
      queue,
      gracefulMs: 0,
      handler: (_job, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))),
      logger: (e) => events.push(e),
    });
    await worker.start();
    await pollUntil(() => events.some((e) => e.kind === 'claimed'), { timeoutMs: 20_000, what: 'the job to run' });
    await own.kill();
    await worker.stop();
    return { events, jobId: job.job_id };
  } finally {
    await backend.close();
    await own.stop();
  }
}

