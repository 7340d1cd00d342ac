#!/usr/bin/env node
// Regenerates completions/ (bash, zsh, fish) from the built command tree.
// Run after `npm run build`:  node scripts/gen-completions.mjs
// `--check` exits 1 when a committed script differs from a fresh one (the drift test does the same in vitest).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { buildProgram } = await import(join(root, 'dist/cli/program.js'));
const { renderCompletion, COMPLETION_FILES, SHELLS } = await import(join(root, 'dist/cli/completion/index.js'));

// The tree only: no command runs, so the host is never called.
const program = buildProgram({ run: async () => { throw new Error('not for running'); } });
const check = process.argv.includes('--check');
let drift = 0;
for (const shell of SHELLS) {
  const file = join(root, COMPLETION_FILES[shell]);
  const text = renderCompletion(shell, program);
  if (check) {
    let old = '';
    try { old = readFileSync(file, 'utf8'); } catch {}
    if (old !== text) { drift++; console.error(`${COMPLETION_FILES[shell]} is out of date: run node scripts/gen-completions.mjs`); }
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${COMPLETION_FILES[shell]}`);
  }
}
process.exit(drift ? 1 : 0);
