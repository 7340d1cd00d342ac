/**
 * The longest timer Node keeps (2^31-1 ms, about 24.8 days): a longer one fires after 1 ms, with
 * a TimeoutOverflowWarning. Longer waits are made of several timers.
 */
export const LONGEST_TIMER_MS = 2_147_483_647;

/**
 * The one timer-based wait of agentq's loops (follow polls, rate-limit pauses,
 * `stats --watch`, `submit --wait`): resolves after `ms`, or at once when
 * `signal` aborts, so Ctrl-C never waits out a pause. Outside `core/`, which
 * has no timers.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    // A timer holds at most 2^31-1 ms (~24.8 days); Node fires a longer one after 1 ms. A pause that
    // long (`--rate 0.0000001/s`: one job per 116 days) is waited out in steps, or the paced run
    // moved every job at once.
    let left = ms;
    let t = setTimeout(step, Math.min(left, LONGEST_TIMER_MS));
    function step() {
      left -= LONGEST_TIMER_MS;
      if (left > 0) t = setTimeout(step, Math.min(left, LONGEST_TIMER_MS));
      else done();
    }
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * `p`'s value, or `aborted` as soon as `signal` aborts (`p` is left to settle on its own, its
 * failure ignored): a loop that stops on Ctrl-C (`stats --watch`) does not wait for a call to a
 * store that stopped answering (15 s on a frozen Redis) before it ends.
 */
export function unlessAborted<T, A>(p: Promise<T>, signal: AbortSignal, aborted: A, timeoutMs = Infinity): Promise<T | A> {
  if (signal.aborted || timeoutMs <= 0) {
    p.catch(() => undefined);
    return Promise.resolve(aborted);
  }
  return new Promise<T | A>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      p.catch(() => undefined);
      resolve(aborted);
    };
    // (also given up after `timeoutMs`: `submit --wait --timeout` ends on time)
    // (past the longest timer, none: a read given up after 1 ms was never seen to answer)
    if (timeoutMs <= LONGEST_TIMER_MS) timer = setTimeout(onAbort, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    p.then(
      (v) => {
        settle();
        resolve(v);
      },
      (e: unknown) => {
        settle();
        reject(e);
      },
    );
  });
}
