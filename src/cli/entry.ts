/**
 * What `bin/agentq.js` loads: the entry of the bundled start path
 * (`dist/bundle/agentq.cjs`, built by `scripts/build-bundle.mjs` from tsc's
 * output). It exports only what the bin needs before and when it hands over:
 * the colour decision (made before chalk or Ink load) and the CLI itself.
 * Every command is still loaded on demand: each `import()` becomes a chunk.
 */
export { resolveColourLevel } from './output/colour.js';
export { runCli } from './main.js';
