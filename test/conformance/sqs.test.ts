/**
 * The shared conformance suite on the SQS backend (fauxqs on loopback).
 *
 * Exception, written down in docs/architecture.md ("SQS backend"): the
 * tenant round-robin cases (cases-fairness.ts tenantRoundRobinCases) are not
 * run. SQS delivers a class queue's messages in its own order and cannot be
 * asked for "the next job of tenant X", so agentq cannot do deficit round
 * robin across tenants inside one SQS queue. It does weight the classes (one
 * SQS queue each) and enforce per-tenant concurrency caps: those cases
 * (classAndCapCases) run here as on every backend.
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

const make = sqsFixtureFactory(() => server.endpoint);

describe('sqs backend conformance', () => {
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
  // Stats come from the SQLite store that holds the jobs' state (the SQS queues only deliver).
  statsCases(make);
});
