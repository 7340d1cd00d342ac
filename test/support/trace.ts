/**
 * Which modules a spawned `agentq` really loads. The child runs with the preload
 * `trace-modules.cjs` (`nodeArgs: TRACE_NODE_ARGS`, `env: { AGENTQ_TRACE_IMPORTS: file }`), which
 * records every file it requires or imports; `readTrace(file)` then expands each chunk of the
 * bundled CLI (dist/bundle/*.cjs) into the modules the build put into it
 * (dist/bundle/modules.json), so checks such as "never loads ink or react" or "loads commander"
 * see modules, not chunk names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './cli.js';

export const TRACER = join(REPO_ROOT, 'test', 'support', 'trace-modules.cjs');
export const TRACE_NODE_ARGS = ['--require', TRACER];

const BUNDLE_DIR = join(REPO_ROOT, 'dist', 'bundle');

/** The bundle's manifest: chunk file name → module paths relative to the package root. */
export function bundleManifest(): Record<string, string[]> {
  return JSON.parse(readFileSync(join(BUNDLE_DIR, 'modules.json'), 'utf8')) as Record<string, string[]>;
}

/** Every URL in the trace file, each bundle chunk followed by the file URLs of the modules it holds. */
export function readTrace(file: string): string[] {
  const manifest = bundleManifest();
  const prefix = pathToFileURL(BUNDLE_DIR).href + '/';
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((u) => {
      const held = u.startsWith(prefix) ? manifest[u.slice(prefix.length)] : undefined;
      return held ? [u, ...held.map((id) => pathToFileURL(join(REPO_ROOT, id)).href)] : [u];
    });
}

/** URLs of Ink, React and their renderer and layout engine, from node_modules or from the bundled TUI app (dist/tui/run.js and its chunks). */
export const inkOrReact = (urls: readonly string[]) =>
  urls.filter((u) => /\/node_modules\/(ink|react|react-reconciler|yoga-layout)\/|\/dist\/tui\/run[.-]/.test(u));
