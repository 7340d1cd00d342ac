import type { MakeFixture } from './fixture.js';
export function workerCases(_make: MakeFixture): void {}
