import type { MakeFixture } from './fixture.js';
export function runCases(_make: MakeFixture): void {}
