/**
 * What is left of a stop's grace period for handing leases back. A stop is bounded by its grace
 * (`--grace`): a release the store leaves unanswered (Redis down: each call waits out one
 * reconnect cycle, about 10 s) is not waited for past it. Such a lease simply expires and its job
 * is claimed again, as after a crash; the worker says how many and by when.
 */
import type { Clock } from '../core/clock.js';

/**
 * Even with the grace spent (waiting for handlers to finish), a release gets this long: a store
 * that answers does so in milliseconds, so leases still go back; one that does not is not waited for.
 */
export const RELEASE_FLOOR_MS = 1_000;

export interface LeftLease {
  jobId: string;
  expiresAt: number;
}

export class StopBudget {
  private readonly left: LeftLease[] = [];

  /** `endsAt`: the end of the grace, on `clock`. */
  constructor(
    private readonly clock: Clock,
    readonly endsAt: number,
  ) {}

  /** How long a release started now may take. */
  remainingMs(): number {
    return Math.max(this.endsAt - this.clock.now(), RELEASE_FLOOR_MS);
  }

  /**
   * Runs `release` within what is left of the grace. `true`: it settled in time (resolved, or
   * threw: the error is the caller's); `false`: it did not, the lease is counted as left to expire.
   * The call itself is not cancelled (nothing can recall a sent command); its late answer is ignored.
   */
  async within(lease: LeftLease, release: () => Promise<void>): Promise<boolean> {
    const call = release();
    if (!(await this.settles(call))) {
      call.catch(() => undefined);
      this.left.push(lease);
      return false;
    }
    await call; // settled: its error, if any, is the caller's
    return true;
  }

  /**
   * Whether `work` settles (resolves or throws) within what is left of the grace. Not cancelled
   * when it does not: its late outcome is ignored.
   */
  async settles(work: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      work.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), this.remainingMs()))),
    ]).finally(() => clearTimeout(timer));
    return outcome === 'done';
  }

  /** The leases given up on: how many, and when the last of them expires. */
  leftBehind(): { count: number; expiresAt: number } | null {
    if (this.left.length === 0) return null;
    return { count: this.left.length, expiresAt: Math.max(...this.left.map((l) => l.expiresAt)) };
  }
}
