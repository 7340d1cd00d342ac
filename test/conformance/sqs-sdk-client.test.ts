/**
 * The shared conformance suite on the SQS backend with `client=sdk`: every SQS
 * call through the AWS SDK, the way back from agentq's own wire client
 * (src/backend/sqs/wire.ts), which sqs.test.ts runs as the default. Same
 * cases, same exceptions as there.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
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

const make = sqsFixtureFactory(() => server.endpoint, '&client=sdk');

describe('sqs backend conformance (client=sdk)', () => {
  jobCases(make);
  workerCases(make);
  lifecycleCases(make);
  classAndCapCases(make);
  dlqCases(make);
  dlqRowsCases(make);
  runCases(make);
  pruneCases(make);
  statsCases(make);
});
