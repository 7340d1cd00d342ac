/**
 * The one timer-based wait of agentq's loops (follow polls, rate-limit pauses,
 * `stats --watch`, `submit --wait`): resolves after `ms`, or at once when
 * `signal` aborts, so Ctrl-C never waits out a pause. Outside `core/`, which
 * has no timers.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
