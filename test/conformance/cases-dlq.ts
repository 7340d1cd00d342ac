import type { MakeFixture } from './fixture.js';
export function dlqCases(_make: MakeFixture): void {}
