/**
 * Opens the Redis job store of the SQS backend (`store=redis://…`). A module of
 * its own, imported by open-store.ts only when the URL names a Redis store, so
 * that an SQS backend on the default SQLite store never loads ioredis and the
 * Redis adapter (about 100 ms of CPU per CLI run).
 */
import { RedisBackend } from '../redis/redis-backend.js';
import { parseRedisUrl } from '../redis/url.js';
import type { OpenedStore, StoreDeps } from './open-store.js';
import { RedisSqsStore } from './redis-store.js';

export function openRedisSqsStore(storeUrl: string, deps: StoreDeps): OpenedStore {
  const opts = parseRedisUrl(storeUrl);
  const backend = new RedisBackend(opts, deps);
  return { backend, ext: new RedisSqsStore(backend, opts, deps) };
}
