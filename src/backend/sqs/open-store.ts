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
import { RedisBackend } from '../redis/redis-backend.js';
import { parseRedisUrl } from '../redis/url.js';
import { RedisSqsStore } from './redis-store.js';
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
  if (url.redisStore !== null) {
    const opts = parseRedisUrl(url.redisStore);
    const backend = new RedisBackend(opts, deps);
    return { backend, ext: new RedisSqsStore(backend, opts, deps) };
  }
  mkdirSync(dirname(url.storePath), { recursive: true });
  const backend = new SqliteBackend({ path: url.storePath, clock: deps.clock, random: deps.random, admission: deps.admission, fairness: deps.fairness, retryPolicy: deps.retryPolicy });
  const ext = new SqliteSqsStore(url.storePath, deps.clock, deps.random, { retryPolicy: deps.retryPolicy, fairness: deps.fairness });
  return { backend, ext };
}
