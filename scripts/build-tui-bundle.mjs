#!/usr/bin/env node
// The TUI's start path, bundled: tsc's dist/tui/run.js (the Ink app) and everything it imports —
// Ink, React, react-reconciler, Yoga and their ~100 small packages — linked by rolldown into one
// ES module that replaces dist/tui/run.js. `npm run build` runs it after tsc and build-bundle.mjs.
//
// Why (issue 6, first frame under 1 s): `agentq dlq browse` spent most of its time to the first
// frame loading that graph through Node's ESM loader — per file a resolve, a read and a compile,
// and for every CommonJS package imported from ESM (React, react-reconciler) a pass of
// cjs-module-lexer over its source. Measured on the shared machine (load ~8): `import()` of
// the app took 1.0-1.2 s of CPU unbundled, 0.24 s bundled, and 20 MB less RSS.
//
// An ES module (not CommonJS like dist/bundle/): Ink and Yoga use top-level await. React's
// production build is chosen here (`NODE_ENV` is fixed at bundle time); `dlq browse` asks for the
// same at run time. The CLI bundle imports dist/tui/run.js by path, so it finds this file, or
// tsc's unbundled one when this step has not run (slower, same behaviour).
import { renameSync, rmSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tuiDir = join(root, 'dist', 'tui');
const entry = join(tuiDir, 'run.js');
// Written apart and moved in at the end, so a TUI started during a rebuild loads a whole app.
const nextDir = join(root, 'dist', 'tui-bundle.next');

rmSync(nextDir, { recursive: true, force: true });
await build({
  cwd: root,
  input: { run: entry },
  platform: 'node',
  logLevel: 'warn',
  // Ink loads its devtools (and this optional peer) only when DEV=true: never in agentq (dlq browse
  // clears DEV). Their chunk, run-devtools.js, is still written (Ink's import() of it stays in the
  // bundle) but left out of the npm package (package.json "files").
  external: ['react-devtools-core'],
  // cli-cursor's exit backstop, without its show-cursor escape written to a redirected stderr
  // (see the shim).
  resolve: { alias: { 'restore-cursor': join(root, 'scripts', 'tui-shims', 'restore-cursor.mjs') } },
  transform: { define: { 'process.env.NODE_ENV': '"production"' } },
  output: {
    dir: nextDir,
    format: 'esm',
    entryFileNames: '[name].js',
    // Fixed names (no hash): a rebuild overwrites the lazily loaded chunks instead of piling them up.
    chunkFileNames: 'run-[name].js',
    minify: false,
    sourcemap: false,
  },
});

const files = readdirSync(nextDir);
// Chunks first, the entry last: a run.js that exists always finds its chunks.
for (const f of files.filter((f) => f !== 'run.js')) renameSync(join(nextDir, f), join(tuiDir, f));
renameSync(join(nextDir, 'run.js'), entry);
rmSync(nextDir, { recursive: true, force: true });
