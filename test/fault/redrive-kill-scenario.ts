/**
 * The SIGKILL fault scenario for `agentq dlq redrive`, parameterised by store
 * URL so every backend runs the same test.
 *
 * DLQ_SIZE entries are seeded through the contract: most redrivable, some
 * expired and some partial (both must be skipped), and some with another
 * error code (outside the selection). The built CLI redrives them with no
 * rate limit and is SIGKILLed at several random points — right after the run
 * is recorded, then after random numbers of moved jobs — and resumed with
 * `--resume RUN_ID` until it finishes. Then:
 * - every planned job moved exactly once: state queued, lineage
 *   redrive_count 1 and this run, exactly one `redriven` event;
 * - none half-moved: a job is queued exactly when its ledger item is moved;
 * - skipped and unselected jobs are untouched (still dead, never redriven);
 * - the ledger and the run's counts agree with the store; the lock is free;
 * - while killed, `dlq runs show` calls the run `interrupted`, not `running`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, LedgerItem } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { seededRandom } from '../../src/core/clock.js';
import { seedDead, type DeadSpec } from '../dlq/seed.js';
import { pollUntil } from '../support/poll.js';

export interface FreshStore {
  url: string;
  cleanup(): Promise<void>;
}

export interface RedriveKillOptions {
  size?: number;
  kills?: number;
  seed?: number;
}

const BIN = fileURLToPath(new URL('../../bin/agentq.js', import.meta.url));
const QUEUE = 'faults';

interface Child {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function cli(url: string, args: string[]): Child {
  const proc = spawn(process.execPath, [BIN, '--url', url, '--no-input', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const child: Child = {
    proc,
    stdout: '',
    stderr: '',
    exit: new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal }))),
  };
  proc.stdout!.on('data', (d: Buffer) => (child.stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (child.stderr += d.toString()));
  return child;
}

export function runRedriveKillScenario(name: string, fresh: () => Promise<FreshStore>, o: RedriveKillOptions = {}): void {
  const size = o.size ?? 5000;
  const kills = o.kills ?? 4;
  const random = seededRandom(o.seed ?? Date.now() % 100_000);

  describe(`redrive survives SIGKILL (${name}, ${size} entries)`, () => {
    let store: FreshStore;
    let backend: Backend;
    const planned = new Set<string>();
    const skipped = new Set<string>();
    const outside = new Set<string>();

    beforeAll(async () => {
      store = await fresh();
      backend = await openBackend(store.url);
      const nSkipExpired = Math.floor(size * 0.02);
      const nSkipPartial = Math.floor(size * 0.02);
      const nOutside = Math.floor(size * 0.02);
      const roles: Array<[DeadSpec, Set<string>]> = [];
      for (let i = 0; i < size - nSkipExpired; i++) {
        if (i < nSkipPartial) roles.push([{ queue: QUEUE, withEffect: true }, skipped]);
        else if (i < nSkipPartial + nOutside) roles.push([{ queue: QUEUE, code: 'VALIDATION' }, outside]);
        else roles.push([{ queue: QUEUE }, planned]);
      }
      const ids = await seedDead(backend, () => Date.now(), roles.map(([s]) => s));
      ids.forEach((id, i) => roles[i]![1].add(id));
      // Entries that will have expired by the time the plan is made: seeded last and quickly, so they
      // reach the DLQ before their deadline (a job failing after its deadline is expired, not dead).
      const expiring = await seedDead(backend, () => Date.now(), Array.from({ length: nSkipExpired }, () => ({ queue: QUEUE, deadlineInMs: 3000 })));
      const seededBy = Date.now();
      for (const id of expiring) skipped.add(id);
      const inDlq = await Promise.all(expiring.slice(0, 5).map((id) => backend.dlqGet(id)));
      expect(inDlq.every((e) => e !== null)).toBe(true);
      // No fixed sleep: wait for the clock to pass those deadlines.
      await pollUntil(() => Date.now() > seededBy + 3000, { what: 'the seeded deadlines to pass', intervalMs: 50 });
    }, 120_000);

    afterAll(async () => {
      await backend?.close();
      await store?.cleanup();
    });

    it('moves every planned job exactly once across kills and resumes', async () => {
      // Kill points: as soon as the run is recorded, then after random, increasing numbers of moved jobs.
      const points = [0, ...Array.from({ length: kills - 1 }, () => Math.floor(random() * planned.size * 0.9))].sort((a, b) => a - b);
      let runId: string | null = null;
      let killed = 0;
      let shownInterrupted = 0;
      const exits: Array<{ code: number | null; signal: NodeJS.Signals | null }> = [];
      for (const point of points) {
        const args = runId === null
          ? ['dlq', 'redrive', '--queue', QUEUE, '--error-code', 'PROVIDER_429', '--yes', '--rate', '0', '--batch-size', '20', '--reason', 'fault test']
          : ['dlq', 'redrive', '--resume', runId];
        const child = cli(store.url, args);
        let exited = false;
        void child.exit.then(() => (exited = true));
        const found = await pollUntil(
          async () => {
            const m = /run (run_[0-9A-Z]{26})/.exec(child.stderr);
            if (m) runId ??= m[1]!;
            if (exited) return { kill: false as const };
            if (runId === null) return false;
            const run = await backend.getRun(runId);
            return run !== null && run.counts.moved >= point ? { kill: true as const } : false;
          },
          { timeoutMs: 60_000, intervalMs: 2, what: `the run to pass ${point} moved jobs` },
        );
        if (found.kill) {
          child.proc.kill('SIGKILL');
          killed++;
          const at = runId ? (await backend.getRun(runId))?.counts.moved : null;
          console.info(`redrive-kill: SIGKILL #${killed} (target ${point} moved, ${at} moved when killed)`);
        }
        exits.push(await child.exit);
        if (found.kill && runId !== null && (await backend.getRun(runId))?.status === 'running') {
          // Its record still says running (a killed process cannot say otherwise); the lock's dead holder tells.
          const shown = cli(store.url, ['dlq', 'runs', 'show', runId, '-o', 'json']);
          expect(await shown.exit, shown.stderr).toEqual({ code: 0, signal: null });
          expect(JSON.parse(shown.stdout).run.status).toBe('interrupted');
          shownInterrupted++;
        }
        if (runId !== null && (await backend.getRun(runId))?.status === 'completed') break;
      }
      expect(runId).not.toBeNull();
      expect(killed).toBeGreaterThanOrEqual(2);
      expect(exits.filter((e) => e.signal === 'SIGKILL')).toHaveLength(killed);
      expect(shownInterrupted).toBeGreaterThanOrEqual(1);

      // Resume until done (a kill may have landed after the last batch).
      for (let i = 0; i < 3 && (await backend.getRun(runId!))?.status !== 'completed'; i++) {
        const child = cli(store.url, ['dlq', 'redrive', '--resume', runId!]);
        const r = await child.exit;
        expect(r, child.stderr).toEqual({ code: 0, signal: null });
      }

      const run = (await backend.getRun(runId!))!;
      expect(run.status).toBe('completed');
      expect(run.counts).toEqual({ planned: 0, moved: planned.size, skipped: skipped.size, failed: 0 });
      expect(await backend.readLock(QUEUE)).toBeNull();

      // The ledger agrees with the plan and with the store.
      const ledger: LedgerItem[] = [];
      let cursor: string | null = null;
      do {
        const page = await backend.ledger(runId!, { limit: 1000, cursor });
        ledger.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(ledger).toHaveLength(planned.size + skipped.size);
      for (const item of ledger) {
        if (planned.has(item.job_id)) expect(item.status, item.job_id).toBe('moved');
        else {
          expect(skipped.has(item.job_id), item.job_id).toBe(true);
          expect(item.status).toBe('skipped');
        }
      }

      // Exactly one `redriven` event per planned job, none for the rest.
      const redriven = new Map<string, number>();
      for await (const e of backend.events({ queue: QUEUE })) {
        if (e.type === 'redriven') redriven.set(e.job_id, (redriven.get(e.job_id) ?? 0) + 1);
      }
      expect(redriven.size).toBe(planned.size);
      for (const id of planned) {
        expect(redriven.get(id), id).toBe(1);
        const job = (await backend.get(id))!;
        expect(job.state).toBe('queued');
        expect(job.dead).toBeNull();
        expect(job.lineage).toMatchObject({ redrive_count: 1, redrive_run: runId });
      }
      for (const id of [...skipped, ...outside]) {
        const job = (await backend.get(id))!;
        expect(job.state, id).toBe('dead');
        expect(job.lineage.redrive_count).toBe(0);
      }
    }, 180_000);
  });
}
