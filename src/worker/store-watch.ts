/**
 * Whether the store answers, as the worker sees it through its own calls: a call that fails for
 * want of the store (exit 75, or an error agentq does not know) or calls left unanswered for
 * STALL_MS make it unavailable; any answer (a lost lease is an answer) makes it available again.
 * Each change is one event, so a worker whose every slot waits on a store that went away says so
 * within seconds, instead of nothing until the calls give up (25-40 s on a Redis restart), and says
 * once when it is back. A few counters per call, no timer per call: one interval checks. A claim's
 * wait for work by design (SQS's long poll, `Backend.claimWaitMs`) is not counted as unanswered.
 * Where the broker is not the store (SQS, `Backend.broker`), a call that fails for want of the
 * broker (`BrokerUnavailableError`) says the broker is unavailable, not the store, and only an
 * answer of the broker itself says it is back: the store's answers (the orphan sweep's list) do not.
 * Calls left unanswered while the broker is silent on one of its own (`broker.silentMs`: an SQS
 * endpoint that accepts and never answers) are the broker's stall too, not the store's.
 */
import type { Backend } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import { AgentqError, BrokerUnavailableError, RetryLaterError } from '../core/errors.js';

/** Calls unanswered this long mean the store is not answering. */
export const STALL_MS = 5_000;
/** How often unanswered calls are looked at. */
const CHECK_MS = 1_000;
/**
 * Calls that only read: under a write lock another process holds (SQLite, BACKEND_BUSY) they still
 * answer, so one of them (the orphan sweep's list after a failed claim) answering does not mean the
 * store is back; "answers again" then waits for a write to go through.
 */
const READS: ReadonlySet<PropertyKey> = new Set(['list', 'get', 'stats', 'queues', 'dlqList', 'dlqGet', 'dlqRows', 'storeIdentity']);
/** A second "unavailable" within this long of the first is not said again (a store that flaps). */
const REPEAT_MS = 10_000;

export type StoreChange =
  | { kind: 'store_unavailable'; waiting: number; error: unknown }
  | { kind: 'store_available'; downMs: number }
  | { kind: 'broker_unavailable'; broker: string; error: unknown }
  | { kind: 'broker_available'; broker: string; downMs: number };

/**
 * Whether a failed store call may still have been applied, or may work later: a store that could
 * not be reached or did not answer (exit 75), or an error agentq does not know. A refusal
 * (credentials, permissions, configuration, validation, a lost lease) is an answer.
 */
export function isUnavailable(error: unknown): boolean {
  return !(error instanceof AgentqError) || error instanceof RetryLaterError;
}

export class StoreWatch {
  private pending = 0;
  /**
   * Claims that may wait for work by design (`Backend.claimWaitMs`: SQS's long poll), by when that
   * wait is over: counted as pending only from then, so an idle worker's long poll is not a stall.
   */
  private readonly waiting = new Set<{ until: number; counted: boolean }>();
  /** When a call last settled, or the first of the calls now pending started. */
  private progressAt: number;
  private downSince: number | null = null;
  /** Down because another process holds the write lock (BACKEND_BUSY): only a write says it is back. */
  private downOnWriteLock = false;
  private lastSaid = -Infinity;
  private saidDown = false;
  private timer: NodeJS.Timeout | null = null;
  /** The broker where it is not the store (`Backend.broker`), as of the last `wrap`. */
  private brokerOf: Backend | null = null;
  /** The broker is down since then (the failed call's start), and had answered this many calls by then. */
  private brokerDown: { since: number; answered: number; said: boolean } | null = null;
  private brokerLastSaid = -Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly report: (change: StoreChange) => void,
  ) {
    this.progressAt = clock.now();
  }

  /** `backend` with each of its promise-returning calls watched. */
  wrap(backend: Backend): Backend {
    const wrapped = new Map<PropertyKey, unknown>();
    const claimWaitMs = backend.claimWaitMs ?? 0;
    this.brokerOf = backend.broker ? backend : null;
    return new Proxy(backend, {
      get: (target, prop) => {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function' || prop === 'events' || prop === 'close' || prop === 'constructor') return v;
        let w = wrapped.get(prop);
        if (!w) {
          w = (...args: unknown[]) => {
            // Before the call: a synchronous store (better-sqlite3) may wait inside it.
            const startedAt = this.clock.now();
            const r = (v as (...a: unknown[]) => unknown).apply(target, args);
            const waitMs = prop === 'claim' || prop === 'completeAndClaim' ? claimWaitMs : 0;
            return r instanceof Promise ? this.watch(r, startedAt, waitMs, prop) : r;
          };
          wrapped.set(prop, w);
        }
        return w;
      },
    });
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private watch<T>(call: Promise<T>, startedAt: number, waitMs: number, prop: PropertyKey): Promise<T> {
    if (waitMs > 0) {
      const w = { until: startedAt + waitMs, counted: false };
      this.waiting.add(w);
      const done = (error: unknown) => {
        this.waiting.delete(w);
        this.settled(error, startedAt, w.counted, prop);
      };
      call.then(() => done(null), done);
      return call;
    }
    if (this.pending++ === 0) this.progressAt = startedAt;
    call.then(
      () => this.settled(null, startedAt, true, prop),
      (e: unknown) => this.settled(e, startedAt, true, prop),
    );
    return call;
  }

  private settled(error: unknown, startedAt: number, counted: boolean, prop: PropertyKey): void {
    if (counted) this.pending--;
    this.progressAt = this.clock.now();
    // From the failed call's start: a store call can block the event loop while it waits (SQLite's
    // busy timeout is a synchronous 10 s wait), so no stall check ran, and timing the outage from
    // the failure said "answers again (after 2ms)" after a 10 s wait.
    this.brokerAnswered();
    if (error instanceof BrokerUnavailableError && this.brokerOf) this.brokerUnavailable(error, startedAt);
    else if (error !== null && isUnavailable(error)) this.down(error, startedAt);
    // A read answers under a held write lock (SQLite's WAL): not a sign the store takes writes again.
    else if (this.downSince !== null && !(this.downOnWriteLock && READS.has(prop))) {
      const downMs = this.clock.now() - this.downSince;
      this.downSince = null;
      if (this.saidDown) this.report({ kind: 'store_available', downMs });
      this.saidDown = false;
    }
  }

  private check(): void {
    const now = this.clock.now();
    this.brokerAnswered();
    for (const w of this.waiting) {
      if (w.counted || now < w.until) continue;
      w.counted = true;
      if (this.pending++ === 0) this.progressAt = w.until;
    }
    // A broker that accepts and never answers (SQS) is silent on a call of its own, past when its
    // answer was due (a long poll's wait allowed for): said as such, whether or not this worker's
    // calls have stalled yet (a claim that may long-poll counts only after its wait), and calls
    // stalled meanwhile are the broker's, not the store's. (At the stall the broker's call may have
    // begun a moment after the stalled call, a check later at most: it counts from CHECK_MS less.)
    const broker = this.brokerOf?.broker;
    const silentMs = broker?.silentMs ?? 0;
    const stalled = this.pending > 0 && this.clock.now() - this.progressAt >= STALL_MS;
    if (silentMs >= STALL_MS || (stalled && silentMs >= STALL_MS - CHECK_MS)) {
      const error = new BrokerUnavailableError(`a call unanswered for ${Math.round(silentMs / 1000)} s`, 'BACKEND_UNAVAILABLE', 'Check the endpoint and network, then try again.');
      this.brokerUnavailable(error, this.clock.now() - silentMs);
    } else if (stalled) this.down(null, this.progressAt);
  }

  /** The store is down since `since` (the failed call's start, or the start of the wait that stalled). */
  private down(error: unknown, since: number): void {
    const now = this.clock.now();
    if (this.downSince !== null) return;
    this.downSince = since;
    this.downOnWriteLock = error instanceof RetryLaterError && error.code === 'BACKEND_BUSY';
    if (now - this.lastSaid < REPEAT_MS) return;
    this.lastSaid = now;
    this.saidDown = true;
    this.report({ kind: 'store_unavailable', waiting: this.pending, error });
  }

  /** The broker is down since `since` (the failed call's start); said once, not again within REPEAT_MS. */
  private brokerUnavailable(error: BrokerUnavailableError, since: number): void {
    const broker = this.brokerOf?.broker;
    if (!broker || this.brokerDown !== null) return;
    const now = this.clock.now();
    const say = now - this.brokerLastSaid >= REPEAT_MS;
    this.brokerDown = { since, answered: broker.answered, said: say };
    if (!say) return;
    this.brokerLastSaid = now;
    this.report({ kind: 'broker_unavailable', broker: broker.name, error });
  }

  /** Whether the broker, down, has answered a call since: then it is back. */
  private brokerAnswered(): void {
    const broker = this.brokerOf?.broker;
    if (!broker || this.brokerDown === null || broker.answered === this.brokerDown.answered) return;
    const { since, said } = this.brokerDown;
    this.brokerDown = null;
    if (said) this.report({ kind: 'broker_available', broker: broker.name, downMs: this.clock.now() - since });
  }
}
