import type { MakeFixture } from './fixture.js';
export function fairnessCases(_make: MakeFixture): void {}
