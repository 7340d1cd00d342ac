/**
 * The kill -9 fault scenario, parameterised by store so every backend runs
 * the same test: give it a function that returns the URL of a fresh store.
 *
 * A worker process (worker-kill-child.mjs, the library worker from dist/)
 * processes JOBS jobs. Each handler performs one external effect through
 * `ctx.effect` against a side channel in this process that behaves like an
 * idempotent API: it applies each idempotency key once and counts every call.
 * The worker is SIGKILLed at several random points (after a random number of
 * further jobs succeeded) and restarted. Afterwards:
 * - every job succeeded; none lost, none stuck running;
 * - every job's effect was applied exactly once, with the job's own key;
 * - no effect was called while the store already recorded it `done`: the side
 *   channel checks the store on every call, so a re-run of a done effect is
 *   caught when it happens, not inferred afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { pollUntil } from '../support/poll.js';

export interface FreshStore {
  url: string;
  cleanup(): Promise<void>;
}

export interface KillScenarioOptions {
  jobs?: number;
  kills?: number;
  concurrency?: number;
  leaseMs?: number;
}

const CHILD = fileURLToPath(new URL('./worker-kill-child.mjs', import.meta.url));
const QUEUE = 'faults';

/** The idempotent external API: applies each key once, counts every call, and flags calls for effects the store already has as done. */
class SideChannel {
  readonly calls = new Map<string, number>();
  readonly applied = new Map<string, string>();
  readonly doneViolations: string[] = [];
  private server: Server | null = null;
  private receipts = 0;

  constructor(private readonly backend: Backend) {}

  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      const key = new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? '';
      void this.call(key).then(
        (receipt) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ receipt }));
        },
        (e: unknown) => {
          res.writeHead(500);
          res.end(String(e));
        },
      );
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async call(key: string): Promise<string> {
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    // Idempotency key = `<job_id>:<effect key>`.
    const [jobId, effectKey] = key.split(':');
    const job = await this.backend.get(jobId!);
    if (job?.effects.some((e) => e.key === effectKey && e.status === 'done')) this.doneViolations.push(key);
    let receipt = this.applied.get(key);
    if (receipt === undefined) {
      receipt = `r${++this.receipts}`;
      this.applied.set(key, receipt);
    }
    return receipt;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

function startWorker(url: string, side: string, concurrency: number, leaseMs: number, stderr: string[]): ChildProcess {
  const child = spawn(process.execPath, [CHILD, url, QUEUE, side, String(concurrency), String(leaseMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  child.stdout!.resume();
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

export function runWorkerKillScenario(name: string, freshStore: () => Promise<FreshStore>, opts: KillScenarioOptions = {}): void {
  const JOBS = opts.jobs ?? 300;
  const KILLS = opts.kills ?? 4;
  const CONCURRENCY = opts.concurrency ?? 8;
  const LEASE_MS = opts.leaseMs ?? 1_500;

  describe(`fault: worker killed with SIGKILL mid-run (${name})`, () => {
    let store: FreshStore;
    let backend: Backend;
    let side: SideChannel;
    let sideUrl: string;
    const stderr: string[] = [];
    let current: ChildProcess | null = null;

    beforeAll(async () => {
      store = await freshStore();
      backend = await openBackend(store.url);
      side = new SideChannel(backend);
      sideUrl = await side.listen();
    });

    afterAll(async () => {
      if (current && current.exitCode === null && current.signalCode === null) {
        current.kill('SIGKILL');
        await exited(current);
      }
      await side?.close();
      await backend?.close();
      await store?.cleanup();
    });

    it(`processes ${JOBS} jobs through ${KILLS} kills: all succeed, each effect applied once, no done effect re-run`, { timeout: 240_000 }, async () => {
      const ids: string[] = [];
      for (let i = 0; i < JOBS; i++) {
        const { job } = await backend.submit({ workflow: 'charge:v1', queue: QUEUE, tenant_id: `t${i % 3}`, input: `order-${i}`, max_attempts: 25 });
        ids.push(job.job_id);
      }
      const succeeded = async (): Promise<number> => (await backend.stats(QUEUE)).counts.succeeded;

      const t0 = Date.now();
      const killLog: Array<{ afterSucceeded: number; runningAtKill: number; atMs: number }> = [];
      for (let k = 0; k < KILLS; k++) {
        current = startWorker(store.url, sideUrl, CONCURRENCY, LEASE_MS, stderr);
        const base = await succeeded();
        // A random point: after 10..50 more jobs finished (capped so work is left for later rounds).
        const target = Math.min(base + 10 + Math.floor(Math.random() * 40), JOBS - (KILLS - k) * 10);
        // Only at a moment when every running job is on its first attempt: the default backoff makes a
        // job killed twice wait 30–90 s (three times: minutes), which would only slow the test down.
        const firstAttemptsOnly = async (): Promise<boolean> =>
          (await backend.list({ queue: QUEUE, states: ['running'] }, { limit: 100 })).items.every((j) => j.attempt === 1);
        await pollUntil(async () => (await succeeded()) >= target && (await firstAttemptsOnly()), {
          timeoutMs: 60_000,
          intervalMs: 5,
          what: `${target} jobs succeeded before kill ${k + 1}`,
        });
        current.kill('SIGKILL');
        const how = await exited(current);
        expect(how.signal).toBe('SIGKILL');
        killLog.push({ afterSucceeded: await succeeded(), runningAtKill: (await backend.stats(QUEUE)).counts.running, atMs: Date.now() - t0 });
      }

      // The last run finishes the queue; leases left by the killed workers expire and are reclaimed.
      current = startWorker(store.url, sideUrl, CONCURRENCY, LEASE_MS, stderr);
      // Usually ~20 s. On a slow, loaded machine the queue's retry budget (at most 20% retries per
      // 60 s of traffic) pushes the reclaimed jobs' retries 60 s later: that is the design working.
      await pollUntil(async () => (await succeeded()) === JOBS, { timeoutMs: 170_000, intervalMs: 50, what: `all ${JOBS} jobs succeeded` });
      current.kill('SIGTERM');
      expect(await exited(current)).toEqual({ code: 0, signal: null });

      // Every job succeeded, none lost or stuck.
      const counts = (await backend.stats(QUEUE)).counts;
      expect(counts).toMatchObject({ succeeded: JOBS, running: 0, queued: 0, scheduled: 0, dead: 0, cancelled: 0, expired: 0 });
      const finishedMs = Date.now() - t0;
      let reclaimed = 0;
      let maxAttempts = 0;
      for (const id of ids) {
        const job = (await backend.get(id))!;
        expect(job.state).toBe('succeeded');
        expect(job.effects).toHaveLength(1);
        expect(job.effects[0]).toMatchObject({ key: 'charge', status: 'done', idempotency_key: `${id}:charge` });
        // The recorded result is the receipt the side channel issued for this key.
        expect(job.effects[0]!.result).toEqual({ receipt: side.applied.get(`${id}:charge`) });
        if (job.attempts.length > 1) reclaimed++;
        maxAttempts = Math.max(maxAttempts, job.attempts.length);
      }

      // Each effect applied exactly once, for exactly these jobs.
      expect([...side.applied.keys()].sort()).toEqual(ids.map((id) => `${id}:charge`).sort());
      // No effect recorded done was ever called again.
      expect(side.doneViolations).toEqual([]);

      const repeatedCalls = [...side.calls.values()].filter((n) => n > 1).length;
      let retries = 0;
      let overBudget = 0;
      for await (const ev of backend.events({ queue: QUEUE })) {
        if (ev.type !== 'retry_scheduled') continue;
        retries++;
        if (ev.data?.over_budget === true) overBudget++;
      }
      // Proof the kills landed mid-work (otherwise the test shows nothing).
      expect(reclaimed).toBeGreaterThan(0);
      console.log(
        `[${name}] ${JOBS} jobs, ${KILLS} kills at ${JSON.stringify(killLog)}; all succeeded after ${finishedMs} ms; ` +
          `jobs with >1 attempt: ${reclaimed} (most attempts of one job: ${maxAttempts}); ` +
          `effect keys called more than once (started, not done, then retried with the same key): ${repeatedCalls}; ` +
          `total effect calls: ${[...side.calls.values()].reduce((a, b) => a + b, 0)}; ` +
          `retries scheduled: ${retries}, of which pushed later by the retry budget: ${overBudget}`,
      );
      if (stderr.length) console.log(`worker stderr:\n${stderr.join('')}`);
    });
  });
}
