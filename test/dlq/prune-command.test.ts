/**
 * `agentq prune` run in-process with injected I/O over a real SQLite store: the confirmation a
 * terminal shows (y/N, the typed count above 20 jobs), and Ctrl-C after a batch, then --resume,
 * without a pseudo-terminal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { DeclinedError, InterruptedError, RetryLaterError } from '../../src/core/errors.js';
import { createIdFactory } from '../../src/core/ids.js';
import { prune } from '../../src/cli/commands/prune.js';
import type { DlqIo } from '../../src/cli/commands/dlq-io.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';

const DAY = 86_400_000;
let dir: string;
let backend: Backend;
let clock: ManualClock;
let out: string;
let err: string;
let prompts: string[];
let answers: string[];

function io(over: Partial<DlqIo> = {}): DlqIo {
  const ids = createIdFactory(clock, seededRandom(7));
  return {
    backend: async () => backend,
    clock,
    out: { format: 'plain', write: (s) => void (out += s), width: undefined, palette: NO_COLOUR, isTTY: false, writeBytes: async (b) => void (out += Buffer.from(b).toString()) },
    formatChosen: false,
    err: { write: (s) => void (err += s), isTTY: false },
    interactive: true,
    prompt: async (q) => {
      prompts.push(q);
      return answers.shift() ?? '';
    },
    signal: new AbortController().signal,
    sleep: async (ms) => clock.advance(ms),
    newRunId: () => ids('run_'),
    identity: { user: 'alice', host: 'box1', pid: 1, context: 'prod' },
    assertMutable: () => undefined,
    contextName: 'prod',
    probe: () => false,
    readFile: async () => '',
    writeFile: async () => undefined,
    ...over,
  };
}

/** `n` jobs of queue q that succeeded now; returns their ids. */
async function succeeded(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
    await backend.complete(lease!, null);
    ids.push(job.job_id);
  }
  return ids;
}

const left = async (ids: string[]) => (await Promise.all(ids.map((id) => backend.get(id)))).filter((j) => j !== null).length;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentq-prune-cmd-'));
  clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  backend = new SqliteBackend({ path: join(dir, 'store.db'), clock, random: seededRandom(3) });
  out = '';
  err = '';
  prompts = [];
  answers = [];
});

afterEach(async () => {
  await backend.close();
  await rm(dir, { recursive: true, force: true });
});

describe('prune on a terminal', () => {
  it('asks y/N with the plan and the store; "n" changes nothing (exit 3), "y" prunes', async () => {
    const ids = await succeeded(3);
    clock.advance(8 * DAY);
    answers = ['n'];
    const e = await prune({ olderThan: '7d' }, io()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DeclinedError);
    expect((e as DeclinedError).exitCode).toBe(3);
    expect(prompts).toEqual(['prune 3 jobs? [y/N] ']);
    expect(err).toMatch(/plan: 3 finished jobs \(succeeded, cancelled, expired\) ended before 2026-03-02T00:00:00\.000Z, in 1 queue/);
    expect(err).toMatch(/context prod, store sqlite:\S+store\.db: 3 jobs will be deleted for good/);
    expect(await left(ids)).toBe(3);
    answers = ['y'];
    await prune({ olderThan: '7d' }, io());
    expect(await left(ids)).toBe(0);
  });

  it('above 20 jobs the count must be typed; a wrong count changes nothing', async () => {
    const ids = await succeeded(21);
    clock.advance(8 * DAY);
    answers = ['y'];
    await expect(prune({ olderThan: '7d' }, io())).rejects.toThrow(/did not match 21: nothing was changed/);
    expect(prompts[0]).toBe('Type the number of jobs (21) to prune them: ');
    expect(await left(ids)).toBe(21);
    answers = ['21'];
    await prune({ olderThan: '7d' }, io());
    expect(await left(ids)).toBe(0);
  });
});

describe('Ctrl-C and --resume', () => {
  it('stops after the batch in flight with exit 130 and the resume command; --resume prunes the rest', async () => {
    const ids = await succeeded(5);
    clock.advance(8 * DAY);
    const ctl = new AbortController();
    let batches = 0;
    const counting: Backend = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop !== 'applyRunItems') return Reflect.get(target, prop, receiver);
        return async (...args: Parameters<Backend['applyRunItems']>) => {
          const r = await target.applyRunItems(...args);
          // the operator presses Ctrl-C while the first batch is applied
          if (++batches === 1) ctl.abort();
          return r;
        };
      },
    });
    const e = await prune({ olderThan: '7d', yes: true, batchSize: '2' }, io({ backend: async () => counting, signal: ctl.signal })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InterruptedError);
    expect((e as InterruptedError).exitCode).toBe(130);
    const hint = (e as InterruptedError).hint ?? '';
    const runId = /prune --resume (run_\w+)/.exec(hint)?.[1];
    expect(runId, hint).toBeDefined();
    expect(await left(ids)).toBe(3);
    await prune({ resume: runId!, yes: true }, io());
    expect(await left(ids)).toBe(0);
    expect((await backend.getRun(runId!))!).toMatchObject({ action: 'prune', status: 'completed', counts: { moved: 5, planned: 0 } });
  });
});

describe('--max', () => {
  it('prunes at most N jobs this time, says more may remain, and the next run takes the rest', async () => {
    const ids = await succeeded(5);
    clock.advance(8 * DAY);
    await prune({ olderThan: '7d', yes: true, max: '2' }, io());
    expect(await left(ids)).toBe(3);
    // the oldest ends first (here also the first created)
    expect(await backend.get(ids[0]!)).toBeNull();
    expect(err).toContain('--max 2 reached: 3 more remain (those that ended last); run it again for them');
    out = '';
    await prune({ olderThan: '7d', dryRun: true, max: '10' }, io({ out: { format: 'json', write: (s) => void (out += s), width: undefined, palette: NO_COLOUR, isTTY: false, writeBytes: async () => undefined } }));
    expect(JSON.parse(out)).toMatchObject({ total: 3, max_reached: false });
    clock.advance(1000); // (a run id of its own: the injected id factory is seeded)
    await prune({ olderThan: '7d', yes: true, max: '10' }, io());
    expect(await left(ids)).toBe(0);
  });
});

describe('--max, one job left over', () => {
  it('says "1 more remains", in the plan line and after the run', async () => {
    const ids = await succeeded(3);
    clock.advance(8 * DAY);
    await prune({ olderThan: '7d', dryRun: true, max: '2' }, io());
    expect(err).toContain('(--max 2 reached: 1 more remains)');
    await prune({ olderThan: '7d', yes: true, max: '2' }, io());
    expect(await left(ids)).toBe(1);
    expect(err).toContain('--max 2 reached: 1 more remains (the one that ended last); run it again for it');
    expect(err).not.toContain('1 more remain ');
  });
});

describe('--max takes the jobs that ended longest ago', () => {
  /** One job of `queue` that succeeded at the clock's time now. */
  async function endedNow(queue: string): Promise<string> {
    const { job } = await backend.submit({ workflow: 'w:v1', queue, tenant_id: 'acme' });
    const [lease] = await backend.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
    await backend.complete(lease!, null);
    return job.job_id;
  }

  it('across every queue it covers: a capped prune of all queues reaches the oldest jobs of the last queue first', async () => {
    // queue z's jobs ended first; queue a's (first in name order) later
    const z = [await endedNow('z'), await endedNow('z')];
    clock.advance(DAY);
    const a = [await endedNow('a'), await endedNow('a'), await endedNow('a')];
    clock.advance(8 * DAY);
    let json = '';
    const jsonOut = { format: 'json' as const, write: (s: string) => void (json += s), width: undefined, palette: NO_COLOUR, isTTY: false, writeBytes: async () => undefined };
    await prune({ olderThan: '7d', dryRun: true, max: '2' }, io({ out: jsonOut }));
    expect(JSON.parse(json)).toMatchObject({ total: 2, max_reached: true, groups: [{ queue: 'z', count: 2 }] });
    await prune({ olderThan: '7d', yes: true, max: '2' }, io());
    expect(await left(z)).toBe(0);
    expect(await left(a)).toBe(3);
    expect(err).toContain('--max 2 reached: 3 more remain (those that ended last); run it again for them');
    clock.advance(1000);
    err = '';
    await prune({ olderThan: '7d', yes: true, max: '3' }, io());
    expect(await left(a)).toBe(0);
    // exactly N left: nothing more remains, and the prune does not say otherwise
    expect(err).not.toContain('reached');
  });

  it('within a queue too: a job created later that ended earlier goes first', async () => {
    const { job: first } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const { job: second } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme' });
    const leases = await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 600_000 });
    const leaseOf = (id: string) => leases.find((l) => l.jobId === id)!;
    await backend.complete(leaseOf(second.job_id), null);
    clock.advance(60_000);
    await backend.complete(leaseOf(first.job_id), null);
    clock.advance(8 * DAY);
    await prune({ olderThan: '7d', yes: true, max: '1' }, io());
    expect(await backend.get(second.job_id)).toBeNull();
    expect(await backend.get(first.job_id)).not.toBeNull();
  });
});

describe('a job whose end time was edited by hand', () => {
  it('is kept and named on stderr, missing or unreadable, and the others are pruned', async () => {
    const ids = await succeeded(3);
    clock.advance(8 * DAY);
    // another program (or an operator with sqlite3) edits the stored documents
    const db = new Database(join(dir, 'store.db'));
    db.prepare(`UPDATE jobs SET doc = json_remove(doc, '$.ended_at') WHERE id = ?`).run(ids[0]);
    db.prepare(`UPDATE jobs SET doc = json_set(doc, '$.ended_at', 'garbage') WHERE id = ?`).run(ids[1]);
    db.close();
    await prune({ olderThan: '7d', yes: true }, io());
    expect(await backend.get(ids[0]!)).not.toBeNull();
    expect(await backend.get(ids[1]!)).not.toBeNull();
    expect(await backend.get(ids[2]!)).toBeNull();
    expect(err).toContain(`2 jobs of queue q have no readable end time and are kept: ${ids[0]}, ${ids[1]}`);
  });
});

describe('a queue whose bulk-action lock another run holds', () => {
  it('is left for the next prune while the other queues are pruned; exit 75 naming it, after the runs are printed', async () => {
    const byQueue: Record<string, string> = {};
    for (const queue of ['a', 'b', 'c']) {
      const { job } = await backend.submit({ workflow: 'w:v1', queue, tenant_id: 'acme' });
      const [lease] = await backend.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
      await backend.complete(lease!, null);
      byQueue[queue] = job.job_id;
    }
    clock.advance(8 * DAY);
    // a long redrive of queue b, by a process that is alive (this one)
    await backend.acquireLock('b', { owner: `bob@${hostname()} pid ${process.pid}`, host: hostname(), pid: process.pid, run_id: null, acquired_at: new Date(clock.now()).toISOString() });
    const e = await prune({ olderThan: '7d', yes: true }, io()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RetryLaterError);
    expect((e as RetryLaterError).exitCode).toBe(75);
    expect((e as Error).message).toMatch(/queue b was not pruned: another bulk action holds/);
    expect(await backend.get(byQueue.a!)).toBeNull();
    expect(await backend.get(byQueue.b!)).not.toBeNull();
    expect(await backend.get(byQueue.c!)).toBeNull();
    // the runs that did prune are printed
    expect(out.match(/\tprune\t[ac]\t/g)).toHaveLength(2);
  });
});

describe('a job whose stored record does not read', () => {
  it('is kept and named on stderr, not passed over in silence', async () => {
    const ids = await succeeded(2);
    clock.advance(8 * DAY);
    const db = new Database(join(dir, 'store.db'));
    db.prepare(`UPDATE jobs SET doc = '{bad' WHERE id = ?`).run(ids[0]);
    db.close();
    await prune({ olderThan: '7d', yes: true }, io());
    expect(await backend.get(ids[1]!)).toBeNull();
    expect(err).toMatch(new RegExp(`warning: the stored record of ${ids[0]} is malformed: .*: kept, not pruned`));
  });
});
