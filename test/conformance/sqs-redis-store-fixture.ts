/**
 * Conformance fixtures for the SQS backend with a Redis job store: a fresh
 * queue prefix and Redis key prefix per case, on a fauxqs and a Redis (or
 * Redis Cluster) started once per test file. As sqs-fixture.ts, the store runs
 * on the suite's manual clock with `maxVisibilitySeconds: 0`.
 */
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import type { DlqDamage, MakeFixture } from './fixture.js';
import { useEmulatorCredentials } from './sqs-fixture.js';

let seq = 0;

/** `storeParams` adds Redis URL parameters (e.g. `&shards=3`); `extraUrl` adds sqs:// ones (e.g. `&fifo=job`). */
export function sqsRedisStoreFixtureFactory(endpoint: () => string, redisUrl: () => string, extraUrl = '', storeParams = ''): MakeFixture {
  useEmulatorCredentials();
  return async (opts) => {
    const clock = new ManualClock();
    const prefix = `r${process.pid}x${++seq}`;
    const sep = redisUrl().includes('?') ? '&' : '?';
    const store = `${redisUrl()}${sep}prefix=${prefix}${storeParams}`;
    const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(endpoint())}&store=${encodeURIComponent(store)}&autocreate=1&wait=0&max_receive_count=1000${extraUrl}`;
    const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, random: seededRandom(seq), admission: opts?.admission, fairness: opts?.fairness, maxVisibilitySeconds: 0 });
    return {
      backend,
      clock,
      cleanup: () => backend.close(),
      injectMalformedDlqEntry: (queue: string) => (backend.store as RedisBackend).injectMalformedDlqEntryForTests(queue),
      damageDlqEntry: (jobId: string, damage?: DlqDamage) => (backend.store as RedisBackend).damageDlqEntryForTests(jobId, damage),
    };
  };
}
