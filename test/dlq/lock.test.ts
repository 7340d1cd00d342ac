import { describe, expect, it } from 'vitest';
import { describeHolder, holderFor, holderLiveness, type Identity } from '../../src/dlq/lock.js';

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
