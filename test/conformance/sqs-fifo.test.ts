/**
 * The shared conformance suite on the SQS backend with FIFO queues
 * (`fifo=job`: every job its own message group, so FIFO's per-group
 * ordering adds no waiting of its own and the suite's claim cases apply as
 * they are). What FIFO changes — deduplication ids, message groups by tenant,
 * no per-message delays — is tested in test/backend/sqs-fifo.test.ts.
 *
 * Same exception as the standard-queue run (test/conformance/sqs.test.ts):
 * the tenant deficit-round-robin cases are not run. With `fifo=1` (group =
 * tenant) three more cases cannot hold, by FIFO's contract (one message of a
 * group in flight at a time): "claims at most max jobs … oldest first", the
 * retry-budget case and "concurrent calls independent" each claim several
 * jobs of one tenant at once.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { argCases, sizeCases } from './cases-args.js';
import { dlqCases } from './cases-dlq.js';
import { dlqRowsCases } from './cases-dlq-rows.js';
import { classAndCapCases } from './cases-fairness.js';
import { jobCases } from './cases-jobs.js';
import { lifecycleCases } from './cases-lifecycle.js';
import { pruneCases } from './cases-prune.js';
import { runCases } from './cases-runs.js';
import { statsCases } from './cases-stats.js';
import { workerCases } from './cases-worker.js';
import { sqsFixtureFactory } from './sqs-fixture.js';

let server: SqsServer;
beforeAll(async () => {
  server = await startSqsServer();
});
afterAll(async () => {
  await server?.stop();
});

const make = sqsFixtureFactory(() => server.endpoint, '&fifo=job');

describe('sqs backend conformance (FIFO queues)', () => {
  jobCases(make);
  argCases(make);
  sizeCases(make);
  workerCases(make);
  lifecycleCases(make);
  classAndCapCases(make);
  dlqCases(make);
  dlqRowsCases(make);
  runCases(make);
  pruneCases(make);
  statsCases(make);
});
