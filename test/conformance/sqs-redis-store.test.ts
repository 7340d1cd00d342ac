/**
 * The shared conformance suite on the SQS backend with a Redis job store
 * (`store=redis://…`): fauxqs on loopback as the broker, a spawned
 * redis-server as the store, a fresh queue prefix and key prefix per case.
 * Same exception as test/conformance/sqs.test.ts (no tenant-fairness cases:
 * SQS delivers a class queue in its own order) and the same manual-clock
 * arrangement (`maxVisibilitySeconds: 0`, see sqs-fixture.ts). Run on standard
 * queues and on FIFO queues (`fifo=job`: deduplication ids from the job's generation).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { dlqCases } from './cases-dlq.js';
import { dlqRowsCases } from './cases-dlq-rows.js';
import type { MakeFixture } from './fixture.js';
import { jobCases } from './cases-jobs.js';
import { runCases } from './cases-runs.js';
import { statsCases } from './cases-stats.js';
import { workerCases } from './cases-worker.js';
import { useEmulatorCredentials } from './sqs-fixture.js';

let sqs: SqsServer;
let redis: RedisServer;
beforeAll(async () => {
  [sqs, redis] = await Promise.all([startSqsServer(), startRedisServer()]);
});
afterAll(async () => {
  await Promise.all([sqs?.stop(), redis?.stop()]);
});

let seq = 0;
const makeWith = (extraUrl: string): MakeFixture => async (opts) => {
  useEmulatorCredentials();
  const clock = new ManualClock();
  const prefix = `r${process.pid}x${++seq}`;
  const store = `${redis.url}?prefix=${prefix}`;
  const url = `sqs://us-east-1/${prefix}?endpoint=${encodeURIComponent(sqs.endpoint)}&store=${encodeURIComponent(store)}&autocreate=1&wait=0&max_receive_count=1000${extraUrl}`;
  const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, random: seededRandom(seq), admission: opts?.admission, fairness: opts?.fairness, maxVisibilitySeconds: 0 });
  return {
    backend,
    clock,
    cleanup: () => backend.close(),
    injectMalformedDlqEntry: (queue: string) => (backend.store as RedisBackend).injectMalformedDlqEntryForTests(queue),
  };
};

for (const [name, extra] of [['standard queues', ''], ['FIFO queues', '&fifo=job']] as const) {
  describe(`sqs backend conformance, Redis job store (${name})`, () => {
    const make = makeWith(extra);
    jobCases(make);
    workerCases(make);
    dlqCases(make);
    dlqRowsCases(make);
    runCases(make);
    statsCases(make);
  });
}
