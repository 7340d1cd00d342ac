import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LockHolder } from '../../src/backend/contract.js';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { RetryLaterError } from '../../src/core/errors.js';
import { describeHolder, holderFor, holderLiveness, processStartTime, takeQueueLock, type Identity } from '../../src/dlq/lock.js';
import { observedStatus } from '../../src/dlq/run-status.js';

const me: Identity = { user: 'alice', host: 'box1', pid: 100, context: 'prod' };

describe('lock holder liveness', () => {
  const held = (host: string, pid: number) => holderFor({ user: 'bob', host, pid, context: null }, 'run_1', '2026-01-01T03:12:00.000Z');
  it('a holder on this host is checked by pid', () => {
    expect(holderLiveness(held('box1', 200), me, () => false)).toBe('dead');
    expect(holderLiveness(held('box1', 200), me, () => true)).toBe('alive');
  });
  it('a holder on another host cannot be checked', () => {
    expect(holderLiveness(held('box2', 200), me, () => false)).toBe('unknown');
  });
  it('our own pid is alive without probing', () => {
    expect(holderLiveness(held('box1', 100), me, () => false)).toBe('alive');
  });
  it('names who holds it and since when', () => {
    expect(describeHolder(held('box1', 200))).toBe('bob@box1 pid 200 (run run_1) since 2026-01-01T03:12:00.000Z');
  });
});

describe('a reused pid', () => {
  const heldSince = (pidStart: string | undefined, pid = 200) => holderFor({ user: 'bob', host: 'box1', pid, pidStart, context: null }, 'run_1', '2026-01-01T03:12:00.000Z');
  it('a running pid that started at another time than the holder recorded is another process: the holder is dead', () => {
    expect(holderLiveness(heldSince('boot/500'), me, () => true, () => 'boot/900')).toBe('dead');
    expect(holderLiveness(heldSince('boot/500'), me, () => true, () => 'boot/500')).toBe('alive');
    // start time unreadable, or a lock written without it: the pid alone decides, as before
    expect(holderLiveness(heldSince('boot/500'), me, () => true, () => null)).toBe('alive');
    expect(holderLiveness(heldSince(undefined), me, () => true, () => 'boot/900')).toBe('alive');
  });

  it.runIf(process.platform === 'linux')('Linux: the start time of a real process is read from /proc, and a recorded one that differs makes its pid dead', () => {
    const mine = processStartTime(process.pid);
    expect(mine).toMatch(/^([0-9a-f-]+\/)?\d+$/);
    expect(processStartTime(process.pid)).toBe(mine);
    // the parent runs (probe: alive), but not since the start time this lock recorded
    expect(holderLiveness(heldSince('00000000-0000-0000-0000-000000000000/1', process.ppid), me, (pid) => pid === process.ppid)).toBe('dead');
    expect(holderLiveness(heldSince(processStartTime(process.ppid)!, process.ppid), me, (pid) => pid === process.ppid)).toBe('alive');
  });

  it('the lock records the start time; --break-lock breaks a reused pid\'s lock; --break-lock --force breaks a live one with a warning', async () => {
    let lock: LockHolder | null = heldSince('boot/500');
    const backend = {
      acquireLock: async (_q: string, h: LockHolder) => (lock ? { acquired: false as const, holder: lock } : ((lock = h), { acquired: true as const })),
      readLock: async () => lock,
      breakLock: async () => {
        const was = lock;
        lock = null;
        return was;
      },
      getRun: async () => ({}) as never,
    };
    const alive = () => true;
    const now = '2026-01-01T04:00:00.000Z';
    const mine = { ...me, pidStart: 'boot/42' };
    // without --break-lock: refused, even for a reused pid (an operator decides)
    await expect(takeQueueLock(backend, 'q', mine, 'run_2', now, { probe: alive, startOf: () => 'boot/900' })).rejects.toThrow(RetryLaterError);
    await takeQueueLock(backend, 'q', mine, 'run_2', now, { probe: alive, startOf: () => 'boot/900', breakLock: true });
    expect(lock).toMatchObject({ run_id: 'run_2', pid: 100, pid_start: 'boot/42' });
    // a live holder (same start time): --break-lock refuses and names the way; with --force it breaks, warning first
    lock = heldSince('boot/500');
    const e = await takeQueueLock(backend, 'q', mine, 'run_3', now, { probe: alive, startOf: () => 'boot/500', breakLock: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RetryLaterError);
    expect((e as RetryLaterError).hint).toContain('--break-lock --force breaks the lock anyway');
    const warnings: string[] = [];
    await takeQueueLock(backend, 'q', mine, 'run_3', now, { probe: alive, startOf: () => 'boot/500', breakLock: true, force: true, warn: (m) => warnings.push(m) });
    expect(lock).toMatchObject({ run_id: 'run_3' });
    expect(warnings).toEqual([expect.stringContaining('although pid 200 is running on this host (--break-lock --force)')]);
  });
});

describe('two operators breaking the same dead lock at once', () => {
  it('regression: the second one finds the lock taken by the first and is refused, instead of breaking the first one\'s fresh lock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-lock-'));
    const store = new SqliteBackend({ path: join(dir, 'agentq.db') });
    try {
      // A redrive on box1 was killed with its lock held (its pid is gone).
      const dead = holderFor({ user: 'carol', host: 'box1', pid: 300, context: null }, 'run_0', '2026-01-01T03:00:00.000Z');
      await store.acquireLock('q', dead);
      const alice = { ...me, pid: 101 };
      const bob = { ...me, user: 'bob', pid: 102 };
      const probe = (pid: number) => pid === 101 || pid === 102;
      // Bob's --break-lock judged that dead holder, then stalled just before breaking it; Alice broke it meanwhile and took the queue.
      let resumeBob!: () => void;
      const bobStalled = new Promise<void>((r) => (resumeBob = r));
      let bobAtBreak!: () => void;
      const bobReady = new Promise<void>((r) => (bobAtBreak = r));
      const slowStore = {
        acquireLock: store.acquireLock.bind(store),
        readLock: store.readLock.bind(store),
        getRun: store.getRun.bind(store),
        breakLock: async (...args: Parameters<typeof store.breakLock>) => {
          bobAtBreak();
          await bobStalled;
          return store.breakLock(...args);
        },
      };
      const bobTakes = takeQueueLock(slowStore, 'q', bob, 'run_b', '2026-01-01T04:00:00.001Z', { probe, breakLock: true }).then(
        () => null,
        (e: unknown) => e,
      );
      await bobReady;
      await takeQueueLock(store, 'q', alice, 'run_a', '2026-01-01T04:00:00.000Z', { probe, breakLock: true });
      resumeBob();
      const refused = await bobTakes;
      expect(refused).toBeInstanceOf(RetryLaterError);
      expect((refused as RetryLaterError).message).toContain('(run run_a)');
      expect(await store.readLock('q')).toMatchObject({ run_id: 'run_a', pid: 101 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the status dlq runs shows', () => {
  const lockOf = (runId: string | null, host = 'box1', pid = 200) => ({ ...holderFor({ user: 'bob', host, pid, context: null }, runId, '2026-01-01T03:12:00.000Z') });
  const running = { run_id: 'run_1', status: 'running' as const };
  it('a running run whose process is alive, or on another host, is running', () => {
    expect(observedStatus(running, lockOf('run_1'), me, () => true)).toBe('running');
    expect(observedStatus(running, lockOf('run_1', 'box2'), me, () => false)).toBe('running');
  });
  it('a running run whose process is gone, whose lock was broken or taken by another run is interrupted', () => {
    expect(observedStatus(running, lockOf('run_1'), me, () => false)).toBe('interrupted');
    expect(observedStatus(running, null, me, () => true)).toBe('interrupted');
    expect(observedStatus(running, lockOf('run_2'), me, () => true)).toBe('interrupted');
  });
  it('any other status is shown as recorded', () => {
    for (const status of ['planned', 'interrupted', 'completed', 'completed_with_failures'] as const) {
      expect(observedStatus({ run_id: 'run_1', status }, null, me, () => false)).toBe(status);
    }
  });
});
