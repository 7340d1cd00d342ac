/**
 * What a library client does after `close()`: every call is refused with a `ClosedError`, the
 * same on every backend (SQLite threw a bare TypeError or ended `events()` silently, Redis said
 * BACKEND_UNAVAILABLE: "retry later", for ever). A second `close()` does nothing.
 */
import { ClosedError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { Backend } from './contract.js';

/** The guarded clients whose close() was called. */
const closedClients = new WeakSet<object>();

/** Told when a client's close() is called: a worker running on it stops at once. */
const closeListeners = new WeakMap<object, Set<() => void>>();

/** Calls `listener` once `backend`'s close() is called (a client from createClient; others never call it). Returns the unsubscribe. */
export function onClientClose(backend: Backend, listener: () => void): () => void {
  let set = closeListeners.get(backend);
  if (!set) closeListeners.set(backend, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** The clock each client was created with (`createClient({ clock })`): its store's time. */
const clientClocks = new WeakMap<object, Clock>();

export function setClientClock(client: Backend, clock: Clock): void {
  clientClocks.set(client, clock);
}

/** The clock `backend` was created with, if it is a client given one (waitForJob and a worker judge deadlines by it). */
export function clientClock(backend: Backend): Clock | undefined {
  return clientClocks.get(backend);
}

/** Whether `backend` is a client whose close() was called (so every call of it is refused). */
export function isClosedClient(backend: Backend): boolean {
  return closedClients.has(backend);
}

export function guardClose(backend: Backend): Backend {
  let closed = false;
  const refused = (op: string): ClosedError =>
    new ClosedError(`${op}() on a client that was closed (${backend.description})`, 'Call close() only when done with the client, or open another with createClient.');
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(backend, {
    get: (target, prop, proxy: object) => {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function' || prop === 'constructor') return v;
      let w = methods.get(prop);
      if (!w) {
        const fn = v as (...a: unknown[]) => unknown;
        const op = String(prop);
        if (prop === 'close') {
          w = async (): Promise<void> => {
            if (closed) return;
            closed = true;
            closedClients.add(proxy);
            for (const listener of closeListeners.get(proxy) ?? []) listener();
            closeListeners.delete(proxy);
            await fn.apply(target);
          };
        } else if (prop === 'events') {
          // An AsyncIterable, not a promise: refused when iterated; one under way when the client
          // is closed ends with the same error (see `closedUnder`).
          w = (...args: unknown[]) => {
            if (closed) return refusedIterable(refused(op));
            const signal = (args[0] as { signal?: unknown } | null | undefined)?.signal;
            return closedUnder(fn.apply(target, args) as AsyncIterable<unknown>, {
              isClosed: () => closed,
              stoppedByCaller: () => signal instanceof AbortSignal && signal.aborted,
              error: () =>
                new ClosedError(
                  `events() stopped: the client was closed while it was read (${backend.description})`,
                  'Close the client only when done with it, or stop the reading first with its signal.',
                ),
            });
          };
        } else {
          w = (...args: unknown[]) => (closed ? Promise.reject(refused(op)) : fn.apply(target, args));
        }
        methods.set(prop, w);
      }
      return w;
    },
  });
}

async function* refusedIterable(error: ClosedError): AsyncGenerator<never> {
  throw error;
}

/**
 * `events` as its reader sees it when the client is closed under it: a ClosedError, as any call
 * after close(). The backends end a follow quietly when they close (Redis stops its blocked read,
 * SQLite's next poll finds the store shut) or fail with what closing did to them (a bare
 * TypeError, "Connection is closed"): the reader could not tell "closed under me" from "no more
 * events". A reading its caller stopped first (its signal aborted) still ends quietly.
 */
async function* closedUnder<T>(
  events: AsyncIterable<T>,
  o: { isClosed: () => boolean; stoppedByCaller: () => boolean; error: () => ClosedError },
): AsyncGenerator<T> {
  try {
    for await (const e of events) {
      // (an event read before close() was called is still the reader's)
      yield e;
    }
  } catch (e) {
    if (o.isClosed() && !o.stoppedByCaller()) throw o.error();
    throw e;
  }
  if (o.isClosed() && !o.stoppedByCaller()) throw o.error();
}
