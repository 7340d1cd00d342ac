import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only thrash. Integration tests spawn their own servers on free ports.
    maxWorkers: 2,
  },
});
