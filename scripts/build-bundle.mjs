#!/usr/bin/env node
// The bundled start path: tsc's output for the CLI (dist/cli/entry.js and everything it
// imports) linked by rolldown into a few CommonJS files under dist/bundle/, which
// bin/agentq.js loads. `npm run build` runs it after tsc.
//
// Why: loading ~60 small ES modules (plus zod's ~100 and commander's) through Node's ESM
// loader (resolve, read, link, evaluate per file) was most of `agentq --help` and
// `agentq inspect` (see BENCHMARKS.md, Start-up). CommonJS because it loads measurably faster
// than an ES-module bundle on Node 20 (no async linker, no ESM loader at all when the bin is
// CommonJS too). Still lazy: every `import()` in the CLI stays a separate chunk, loaded when
// its command runs.
//
// Kept outside the bundle, loaded from node_modules at run time:
// - better-sqlite3's native addon (its JavaScript is bundled, see REWRITES), ioredis and the
//   AWS SDK (CommonJS, big, only their own commands need them);
// - the TUI app (dist/tui/run.js and its imports: Ink, React, Yoga). Ink and Yoga are ES
//   modules with top-level await, which a CommonJS chunk cannot require; `agentq dlq browse`
//   imports tsc's output for it with a real `import()`. That graph shares only pure helpers
//   (formatDuration, sanitize) with the bundle, so a second copy of them changes nothing.
// The library entry (dist/index.js) stays tsc output.
//
// Last, a V8 code cache for the chunks (`<chunk>.v8cache`, see bin/code-cache.js), written by
// running the common commands once on a throw-away store.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outDir = join(dist, 'bundle');
// Written next to the old bundle and swapped in at the end, so a CLI started during a rebuild
// (other test runs share the tree) finds a whole bundle, old or new.
const nextDir = join(dist, `bundle.next-${process.pid}`);

/** better-sqlite3's compiled addon, where its install (prebuild-install or node-gyp) puts it. */
const SQLITE_ADDON = 'better-sqlite3/build/Release/better_sqlite3.node';
const EXTERNAL_PACKAGES = [SQLITE_ADDON, 'ioredis', '@aws-sdk/'];
/** tsc output that stays ES modules, imported from the bundle by path. */
const EXTERNAL_FILES = [join(dist, 'tui', 'run.js')];

/**
 * Exact source rewrites in dependencies, each for start-up time (CPU profiles of `--help` and
 * `inspect`). The build fails if a text is not found, so a dependency update is looked at again.
 */
const REWRITES = [
  {
    // commander loads child_process (with net and stream) at the top for stand-alone executable
    // subcommands, which agentq does not use: load it only if one is ever spawned.
    file: join('node_modules', 'commander', 'lib', 'command.js'),
    from: "const childProcess = require('node:child_process');",
    to: "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };",
  },
  {
    // better-sqlite3 finds its addon with the `bindings` package, which tries a dozen paths (a
    // failed require each). The addon of the installed better-sqlite3 is at one known place.
    file: join('node_modules', 'better-sqlite3', 'lib', 'database.js'),
    from: "require('bindings')('better_sqlite3.node')",
    to: `require(${JSON.stringify(SQLITE_ADDON)})`,
  },
];

/**
 * ulid's "node" build differs from its default one only by importing node:crypto at the top
 * (for a PRNG agentq never asks it for: ids.ts passes its own Random). Loading node:crypto is
 * ~7% of `agentq inspect`; the default build finds Node's global WebCrypto if it ever needs one.
 */
const ULID_DEFAULT_BUILD = join(root, 'node_modules', 'ulid', 'dist', 'browser', 'index.js');

const packageOf = (id) => EXTERNAL_PACKAGES.some((p) => (p.endsWith('/') ? id.startsWith(p) : id === p || id.startsWith(`${p}/`)));

rmSync(nextDir, { recursive: true, force: true });
const result = await build({
  cwd: root,
  input: { agentq: join(dist, 'cli', 'entry.js') },
  platform: 'node',
  // The entry's exports are read only by bin/agentq.js, so its chunk may also carry the small
  // modules it loads anyway (errors, clock, sanitize, ...) instead of a chunk file for each.
  preserveEntrySignatures: 'allow-extension',
  logLevel: 'warn',
  onLog(level, log, handler) {
    // entry.ts re-exports colour.ts for the bin, so main's import() of it stays in the entry chunk: intended.
    if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT' && log.message.includes('colour.js')) return;
    handler(level, log);
  },
  plugins: [
    {
      name: 'agentq-rewrites',
      transform(code, id) {
        const rewrite = REWRITES.find((r) => id === join(root, r.file));
        if (!rewrite) return null;
        if (!code.includes(rewrite.from)) throw new Error(`build-bundle: ${rewrite.file} no longer contains: ${rewrite.from}`);
        rewrite.done = true;
        return { code: code.replace(rewrite.from, rewrite.to), map: null };
      },
    },
    {
      name: 'agentq-externals',
      resolveId(source, importer) {
        if (packageOf(source)) return { id: source, external: true };
        if (source === 'ulid') return ULID_DEFAULT_BUILD;
        if (importer && source.startsWith('.')) {
          const abs = join(dirname(importer), source);
          // Imported by path relative to the chunk that imports it (every chunk is in dist/bundle/).
          if (EXTERNAL_FILES.includes(abs)) return { id: `./${relative(outDir, abs)}`, external: true };
        }
        return null;
      },
    },
  ],
  output: {
    dir: nextDir,
    format: 'cjs',
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    // Readable output: stack traces under --debug name real functions and lines.
    minify: false,
    sourcemap: false,
  },
});

// Nothing may require an ES-module-only package from CommonJS (Node 20.0-20.18 cannot), and
// nothing outside the list above may be left for run time.
const chunkNames = new Set(result.output.map((o) => o.fileName));
const allowed = (spec) => chunkNames.has(spec) || isBuiltin(spec) || packageOf(spec) || spec.startsWith('./../');
const problems = REWRITES.filter((r) => !r.done).map((r) => `${r.file} was not bundled, so it was not rewritten`);
problems.push(...EXTERNAL_FILES.filter((f) => !existsSync(f)).map((f) => `${relative(root, f)} is imported at run time but was not built`));
for (const chunk of result.output) {
  if (chunk.type !== 'chunk') continue;
  for (const spec of [...chunk.imports, ...chunk.dynamicImports]) if (!allowed(spec)) problems.push(`${chunk.fileName}: ${spec}`);
}
// The TUI's libraries must never be inside a chunk: non-TUI commands would load them.
const TUI_ONLY = /[\\/]node_modules[\\/](ink|react|react-dom|react-reconciler|scheduler|yoga-layout)[\\/]/;
// Which modules each chunk holds (paths relative to the package root): test/e2e/cli-basics.test.ts
// expands the chunks a command loads into these to check what it really runs.
const manifest = {};
for (const chunk of result.output) {
  if (chunk.type !== 'chunk') continue;
  manifest[chunk.fileName] = chunk.moduleIds.filter((id) => !id.startsWith('\0')).map((id) => relative(root, id));
  for (const id of chunk.moduleIds) if (TUI_ONLY.test(id)) problems.push(`${chunk.fileName} holds ${relative(root, id)} (Ink/React belong to the TUI only)`);
}
writeFileSync(join(nextDir, 'modules.json'), JSON.stringify(manifest, null, 1) + '\n');
if (problems.length) {
  console.error(`build-bundle: the bundle is not as it must be:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
// Swap in with two renames, so the bundle is missing only between them (deleting the old one
// takes longer). Another build may swap at the same time (engineers share a tree): retry.
const oldDir = join(dist, `bundle.old-${process.pid}`);
for (let attempt = 0; ; attempt++) {
  try {
    if (existsSync(outDir)) renameSync(outDir, oldDir);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e; // the other build moved it first
  }
  try {
    renameSync(nextDir, outDir);
    break;
  } catch (e) {
    if (!['ENOTEMPTY', 'EEXIST'].includes(e.code) || attempt >= 5) throw e; // the other build put its bundle in first
  }
}
rmSync(oldDir, { recursive: true, force: true });

// V8 code cache (bin/code-cache.js): run the commands whose start-up matters once each, on a
// throw-away store, writing what V8 compiled next to each chunk. From the swapped-in bundle, not
// the build directory: V8 keeps the file name a cache was made under, so --debug stack traces
// would name dist/bundle.next-<pid>/. A CLI started in between runs without a cache, and a cache
// made from another build's source is refused by V8 (it compiles from source): slower, never wrong.
// Not fatal if it fails (e.g. better-sqlite3 not built yet): the CLI then compiles from source.
const home = mkdtempSync(join(tmpdir(), 'agentq-build-'));
try {
  const env = { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config'), AGENTQ_WRITE_CODE_CACHE: '1' };
  // A file, not `node -e`: after -e, node itself would take `inspect` for its debugger.
  const runner = join(home, 'warm-up.cjs');
  writeFileSync(
    runner,
    `require(${JSON.stringify(join(root, 'bin', 'code-cache.js'))}).install(${JSON.stringify(outDir)});\n` +
      `require(${JSON.stringify(join(outDir, 'agentq.cjs'))}).runCli(process.argv.slice(2));\n`,
  );
  const agentq = (...args) =>
    execFileSync(process.execPath, [runner, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }).toString();
  agentq('--help');
  const job = agentq('submit', 'warmup:v1', '--input', 'x').trim();
  agentq('inspect', job);
  agentq('list');
  agentq('tail');
  agentq('cancel', job);
  // On Node 20 a script compiled from a code cache loses its dynamic-import loader: an import()
  // in it fails with "A dynamic import callback was not specified" (it broke every confirmation
  // prompt once). A chunk that keeps a real import() (of a built-in, an external package or a
  // file outside the bundle; chunk-to-chunk imports are require() calls) is never cached.
  for (const chunk of result.output) {
    if (chunk.type !== 'chunk' || !chunk.dynamicImports.some((spec) => !chunkNames.has(spec))) continue;
    rmSync(join(outDir, `${chunk.fileName}.v8cache`), { force: true });
  }
} catch (e) {
  console.warn(`build-bundle: no code cache (${String(e.stderr || e.message).trim().split('\n')[0]}); the CLI works, it only starts slower`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
