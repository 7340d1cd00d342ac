/**
 * Opens the Redis job store of the SQS backend (`store=redis://…`). A module of
 * its own, imported by open-store.ts only when the URL names a Redis store, so
 * that an SQS backend on the default SQLite store never loads ioredis and the
 * Redis adapter (about 100 ms of CPU per CLI run).
 */
import { RedisBackend } from '../redis/redis-backend.js';
import { parseRedisUrl } from '../redis/url.js';
import type { OpenedStore, StoreDeps } from './open-store.js';
import { SQS_JOB_HASHES } from './redis-lua.js';
import { RedisSqsStore } from './redis-store.js';

export async function openRedisSqsStore(storeUrl: string, deps: StoreDeps): Promise<OpenedStore> {
  const opts = parseRedisUrl(storeUrl);
  // (a purge removes the job's fields from this store's per-job hashes in the script that removes it)
  const backend = new RedisBackend(opts, { ...deps, jobFieldHashes: SQS_JOB_HASHES });
  // The SQS side uses the raw client, past the guarded methods that wait for the URL's database:
  // nothing may run before it is selected (a server without it would be written in database 0).
  await backend.dbReady().catch(async (e: unknown) => {
    await backend.close().catch(() => undefined);
    throw e;
  });
  return { backend, ext: new RedisSqsStore(backend, opts, deps) };
}
