/**
 * Conformance fixtures for the Redis backend: a fresh adapter per case with
 * its own key prefix on a server (or cluster) started once per test file.
 */
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import type { DlqDamage, MakeFixture } from './fixture.js';

let seq = 0;

export function redisFixtureFactory(url: () => string, extraParams = ''): MakeFixture {
  return async (opts) => {
    const clock = new ManualClock();
    const prefix = `t${process.pid}x${++seq}`;
    const sep = url().includes('?') ? '&' : '?';
    const backend = new RedisBackend(parseRedisUrl(`${url()}${sep}prefix=${prefix}${extraParams}`), {
      clock,
      random: seededRandom(seq),
      admission: opts?.admission,
      fairness: opts?.fairness,
    });
    return {
      backend,
      clock,
      cleanup: () => backend.close(),
      injectMalformedDlqEntry: (queue: string) => backend.injectMalformedDlqEntryForTests(queue),
      damageDlqEntry: (jobId: string, damage?: DlqDamage) => backend.damageDlqEntryForTests(jobId, damage),
    };
  };
}
