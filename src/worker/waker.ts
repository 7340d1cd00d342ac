/**
 * A sleep that can be cut short. The claim loop sleeps while idle (or while
 * every slot is busy) and is woken when a slot frees up or the worker stops,
 * so it never busy-loops and never waits longer than it must.
 */
export class Waker {
  private pending: { timer: NodeJS.Timeout | null; resolve: () => void } | null = null;

  /** Resolves after `ms` (never, when `ms` is null) or at the next `wake()`, whichever is first. */
  sleep(ms: number | null): Promise<void> {
    this.wake();
    return new Promise((resolve) => {
      const timer = ms === null ? null : setTimeout(() => this.wake(), ms);
      this.pending = { timer, resolve };
    });
  }

  wake(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    if (p.timer) clearTimeout(p.timer);
    p.resolve();
  }
}
