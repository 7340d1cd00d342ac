import { describe, expect, it } from 'vitest';
import { describeHolder, holderFor, holderLiveness, type Identity } from '../../src/dlq/lock.js';
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
