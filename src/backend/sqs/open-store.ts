/**
 * Opens the SQS backend's job store: the ordinary Backend (records,
 * idempotency, cancel flags, effects, the DLQ, runs/ledger/locks, stats) and
 * its SQS side (SqsStore: outbox, deliveries, claim-by-id, custody) over the
 * same data: the SQLite file (default) or Redis (`store=redis://…`).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AdmissionLimits } from '../../core/admission.js';
import type { Clock, Random } from '../../core/clock.js';
import type { FairnessOptions } from '../../core/fairness.js';
import type { RetryPolicy } from '../../core/retry.js';
import type { Backend } from '../contract.js';
import { SqliteBackend } from '../sqlite/index.js';
import { SqliteSqsStore } from '../sqlite/outbox.js';
import { parseRedisUrl } from '../redis/url.js';
import type { SqsStore } from './store.js';
import type { SqsUrl } from './url.js';

export interface StoreDeps {
  clock: Clock;
  random: Random;
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
  retryPolicy?: RetryPolicy;
}

export interface OpenedStore {
  backend: Backend;
  ext: SqsStore;
}

export function openSqsStore(url: SqsUrl, deps: StoreDeps): OpenedStore {
  if (url.redisStore !== null) return lazyRedisStore(url.redisStore, deps);
  mkdirSync(dirname(url.storePath), { recursive: true });
  const backend = new SqliteBackend({ path: url.storePath, clock: deps.clock, random: deps.random, admission: deps.admission, fairness: deps.fairness, retryPolicy: deps.retryPolicy });
  // One connection for both: a second one's page cache would be emptied by every commit of the other.
  const ext = new SqliteSqsStore(backend.connection, deps.clock, deps.random, { retryPolicy: deps.retryPolicy, fairness: deps.fairness });
  return { backend, ext };
}

/**
 * The Redis store, its modules (ioredis, the Redis adapter) loaded on first use:
 * SqsBackend's constructor is synchronous, and an SQS backend on the default
 * SQLite store should not pay ~100 ms of CPU per CLI run to load a Redis client
 * it never uses. Every Backend and SqsStore method but `events` and `now`
 * returns a promise already, so each forwards once the module is loaded;
 * `kind`, `description`, `now`, `events` and `close` are answered without
 * waiting.
 */
function lazyRedisStore(storeUrl: string, deps: StoreDeps): OpenedStore {
  const description = `redis ${parseRedisUrl(storeUrl).redacted}`; // a bad URL fails here, as before
  let opened: Promise<OpenedStore> | null = null;
  const ready = () => (opened ??= import('./redis-open.js').then((m) => m.openRedisSqsStore(storeUrl, deps)));
  const forward = <T extends object>(pick: (o: OpenedStore) => T, own: Record<PropertyKey, unknown>): T =>
    new Proxy(own, {
      get(target, prop) {
        if (prop in target) return target[prop];
        // Not a thenable itself (an `await` of the proxy must not call a forwarded `then`).
        if (prop === 'then') return undefined;
        return (...args: unknown[]) => ready().then((o) => (pick(o) as Record<PropertyKey, (...a: unknown[]) => unknown>)[prop as string]!(...args));
      },
    }) as unknown as T;
  // Closing a store never used does not load (and connect) it just to close it.
  const backend = forward((o) => o.backend, {
    kind: 'redis',
    description,
    close: async () => {
      if (opened) await (await opened).backend.close();
    },
    events: (query: unknown) => ({
      async *[Symbol.asyncIterator]() {
        yield* (await ready()).backend.events(query as Parameters<Backend['events']>[0]);
      },
    }),
  });
  const ext = forward((o) => o.ext, {
    close: async () => {
      if (opened) await (await opened).ext.close();
    },
    get now() {
      return deps.clock.now();
    },
  });
  return { backend, ext };
}
