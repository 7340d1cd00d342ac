/** abortableSleep (src/util/sleep.ts): the pause of every polling loop, cut short by Ctrl-C. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { abortableSleep, unlessAborted } from '../../src/util/sleep.js';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** Whether the promise has settled after the pending microtasks ran. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('abortableSleep', () => {
  it('resolves after ms, not before', async () => {
    const p = abortableSleep(1000);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(p)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(p)).toBe(true);
  });

  it('resolves at once when the signal aborts, and leaves no timer or listener behind', async () => {
    const c = new AbortController();
    const p = abortableSleep(60_000, c.signal);
    expect(await settled(p)).toBe(false);
    c.abort();
    expect(await settled(p)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an already aborted signal does not wait at all', async () => {
    const c = new AbortController();
    c.abort();
    expect(await settled(abortableSleep(60_000, c.signal))).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after the time is up the abort listener is gone (a long-lived signal does not collect them)', async () => {
    const c = new AbortController();
    const remove = vi.spyOn(c.signal, 'removeEventListener');
    const p = abortableSleep(10, c.signal);
    await vi.advanceTimersByTimeAsync(10);
    expect(await settled(p)).toBe(true);
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
  });

  it('regression: a pause longer than a timer can hold (2^31-1 ms, ~24.8 days) is waited out in full, not ended after 1 ms (--rate 0.0000001/s moved every job at once)', async () => {
    const c = new AbortController();
    const p = abortableSleep(2 ** 31 + 10_000, c.signal);
    await vi.advanceTimersByTimeAsync(50);
    expect(await settled(p)).toBe(false);
    await vi.advanceTimersByTimeAsync(2 ** 31 - 50);
    expect(await settled(p)).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await settled(p)).toBe(true);
    // and Ctrl-C still ends one at once, leaving no timer behind
    const q = abortableSleep(2 ** 33, c.signal);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    c.abort();
    expect(await settled(q)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

// Regression: a timer past 2^31-1 ms fires after 1 ms (Node's TimeoutOverflowWarning). waitForJob
// with a 30-day timeoutMs gave up each poll's read after 1 ms, so on Redis, whose answer takes
// longer, the wait never saw the job end; a sleep that long was a busy loop.
describe('waits past the longest timer (2^31-1 ms)', () => {
  const THIRTY_DAYS = 30 * 86_400_000;

  it('unlessAborted with such a timeout waits for the answer, as it would for a shorter one', async () => {
    let answer!: (v: string) => void;
    const p = unlessAborted(new Promise<string>((r) => (answer = r)), new AbortController().signal, 'stopped', THIRTY_DAYS);
    let got: string | undefined;
    void p.then((v) => (got = v));
    await vi.advanceTimersByTimeAsync(50);
    expect(got).toBeUndefined();
    answer('read');
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toBe('read');
  });

  it('abortableSleep of such a length does not end after 1 ms', async () => {
    const p = abortableSleep(THIRTY_DAYS);
    await vi.advanceTimersByTimeAsync(50);
    expect(await settled(p)).toBe(false);
  });
});
