/**
 * Pacing for bulk actions. `--rate N/s` paces item starts: the k-th item may
 * not start before start + k/N seconds, so the average never exceeds N/s and
 * a slow batch is not "made up for" with a burst beyond one batch. Items that
 * turn out to need no work (skipped at apply) are given back: the rate protects
 * the workers and providers the moved jobs reach, and a skip reaches nobody.
 */
import { ValidationError } from '../core/errors.js';

/** Conservative default: a redrive at 3 a.m. should not flood workers or a recovering provider. */
export const DEFAULT_RATE_PER_SEC = 50;
export const DEFAULT_BATCH_SIZE = 100;
export const MAX_BATCH_SIZE = 1000;

/** `50`, `50/s`, `300/m`, `0` or `unlimited` (no pacing). Null means unlimited. */
export function parseRate(text: string): number | null {
  const s = text.trim().toLowerCase();
  if (s === 'unlimited' || s === 'none' || s === '0') return null;
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|m|h))?$/.exec(s);
  if (!m) throw new ValidationError(`--rate ${JSON.stringify(text)} must be a number of jobs per second (e.g. 50 or 50/s, 300/m), or 0/unlimited`);
  const per = m[2] === 'm' ? 60 : m[2] === 'h' ? 3600 : 1;
  const r = Number(m[1]) / per;
  if (!(r > 0)) throw new ValidationError(`--rate ${JSON.stringify(text)} must be greater than zero (use 0 or unlimited for no limit)`);
  return r;
}

export function parseBatchSize(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 1 && n <= MAX_BATCH_SIZE)) throw new ValidationError(`--batch-size ${JSON.stringify(text)} must be a whole number from 1 to ${MAX_BATCH_SIZE}`);
  return n;
}

/** One second of work at `rate` (at least 1): the largest batch a paced run sends at once. Null: no cap. */
export function batchCap(rate: number | null): number | null {
  return rate === null ? null : Math.max(1, Math.floor(rate));
}

/**
 * Batches no bigger than one second of work at the given rate, so pacing stays smooth. A batch goes
 * at once, so `--batch-size` is capped by it too: `--rate 10/s --batch-size 1000` sends batches of
 * 10 (a thousand at once would make the rate no cap at all); without a rate it is taken as given.
 */
export function effectiveBatchSize(requested: number | undefined, rate: number | null): number {
  const cap = batchCap(rate);
  if (requested !== undefined) return cap === null ? requested : Math.min(requested, cap);
  if (cap === null) return DEFAULT_BATCH_SIZE;
  return Math.min(DEFAULT_BATCH_SIZE, cap);
}

export class Pacer {
  private started: number | null = null;
  private issued = 0;

  constructor(
    private readonly ratePerSec: number | null,
    private readonly now: () => number,
  ) {}

  /** How long to wait before starting the next `n` items. Call `issue(n)` when they start. */
  delayFor(): number {
    if (this.ratePerSec === null || this.started === null) return 0;
    const due = this.started + (this.issued * 1000) / this.ratePerSec;
    return Math.max(0, due - this.now());
  }

  issue(n: number): void {
    if (this.started === null) this.started = this.now();
    this.issued += n;
  }

  /**
   * Gives back items that needed no work (skipped at apply): the rate paces what is moved. The time
   * they took is not credit: after a refund the next items are due now at the earliest, so a long
   * stretch of skips is not followed by a burst of moves.
   */
  refund(n: number): void {
    this.issued = Math.max(0, this.issued - n);
    if (this.ratePerSec === null || this.started === null) return;
    const earliest = this.now() - (this.issued * 1000) / this.ratePerSec;
    if (this.started < earliest) this.started = earliest;
  }
}
