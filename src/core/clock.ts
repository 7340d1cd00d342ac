/**
 * Time and randomness are passed in, never read from globals inside `core`,
 * so tests are deterministic.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

export const systemClock: Clock = { now: () => Date.now() };
export const systemRandom: Random = Math.random;

/** A clock that only moves when told to: for tests. */
export class ManualClock implements Clock {
  constructor(private t: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}

/** Deterministic PRNG (mulberry32) for tests and benchmarks. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
