/**
 * Waiting for something asynchronous in a test without a fixed sleep: poll a
 * condition until it holds or a deadline passes. The deadline is a safety net
 * against a hung test, not a timing assertion.
 */
export interface PollOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between attempts (default 20 ms). */
  intervalMs?: number;
  /** Named in the timeout error, to say what was being waited for. */
  what?: string;
}

/**
 * Calls `fn` until it returns a value other than `undefined`, `null` or
 * `false`, and returns that value. A throw from `fn` counts as "not yet"; the
 * last error is reported if the deadline passes.
 */
export async function pollUntil<T>(
  fn: () => T | Promise<T>,
  opts: PollOptions = {},
): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v as Exclude<T, undefined | null | false>;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const what = opts.what ? ` waiting for ${opts.what}` : '';
      const cause = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`pollUntil timed out after ${timeoutMs} ms${what}${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
