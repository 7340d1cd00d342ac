/**
 * The shared conformance suite: every backend runs it by passing a factory,
 * and a feature exists for a backend when this passes on it. Cases talk to
 * the `Backend` contract only (never SQL or Redis commands).
 */
import { describe } from 'vitest';
import { argCases, sizeCases } from './cases-args.js';
import { dlqCases } from './cases-dlq.js';
import { dlqRowsCases } from './cases-dlq-rows.js';
import { fairnessCases } from './cases-fairness.js';
import { jobCases } from './cases-jobs.js';
import { lifecycleCases } from './cases-lifecycle.js';
import { modelCases } from './cases-model.js';
import { pruneCases } from './cases-prune.js';
import { runCases } from './cases-runs.js';
import { statsCases } from './cases-stats.js';
import { workerCases } from './cases-worker.js';
import type { MakeFixture } from './fixture.js';

export type { ConformanceFixture, FixtureOptions, MakeFixture } from './fixture.js';

export function runConformanceSuite(name: string, makeFixture: MakeFixture): void {
  describe(`${name} backend conformance`, () => {
    jobCases(makeFixture);
    workerCases(makeFixture);
    lifecycleCases(makeFixture);
    fairnessCases(makeFixture);
    dlqCases(makeFixture);
    dlqRowsCases(makeFixture);
    runCases(makeFixture);
    pruneCases(makeFixture);
    statsCases(makeFixture);
    modelCases(makeFixture);
    argCases(makeFixture);
    sizeCases(makeFixture);
  });
}
