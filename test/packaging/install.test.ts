/**
 * The npm package as a user gets it: `npm pack` holds only what is needed,
 * and the tarball installs globally into a temporary prefix and works there
 * (`--version`, `--help`, a submit/inspect round trip on the embedded
 * default, the completion scripts).
 *
 * No network beyond the npm registry here, so:
 * - dependencies come from the local npm cache where it has them (`--prefer-offline`;
 *   `npm ci` filled it), else from the npm registry;
 * - better-sqlite3's install script (`prebuild-install || node-gyp rebuild`)
 *   would download a prebuilt binary, and without one compile SQLite from
 *   source (minutes). prebuild-install's documented offline route is a
 *   "local prebuild": a directory named by `npm_config_better_sqlite3_local_prebuilds`
 *   holding the tarball it would have downloaded. The test makes that tarball
 *   from the binary already built in this checkout (same Node ABI, platform and
 *   arch), so the install runs the real install script without a compile.
 *
 * Needs `npm run build` first (npm test does): the pack skips `prepare`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

let dir: string;
let tarball: string;
let packed: string[];
let prefix: string;
let env: Record<string, string>;

async function npm(args: string[], extraEnv: Record<string, string> = {}) {
  return run('npm', args, { cwd: dir, env: { ...process.env, ...extraEnv } as Record<string, string>, timeout: 170_000, maxBuffer: 64 * 1024 * 1024 });
}

/** The prebuild tarball prebuild-install would download, made from this checkout's compiled binary. */
async function localPrebuild(into: string): Promise<void> {
  const sqliteDir = join(REPO_ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  mkdirSync(into, { recursive: true });
  await run('tar', ['-czf', join(into, name), '-C', sqliteDir, 'build/Release/better_sqlite3.node']);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentq-pack-'));
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  const info = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(dir, info[0]!.filename);
  packed = info[0]!.files.map((f) => f.path);

  prefix = join(dir, 'prefix');
  await localPrebuild(join(dir, 'prebuilds'));
  await npm(['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tarball], {
    npm_config_better_sqlite3_local_prebuilds: join(dir, 'prebuilds'),
  });
  env = {
    PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    LANG: 'C.UTF-8',
  };
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const agentq = (args: string[]) => run(join(prefix, 'bin', 'agentq'), args, { cwd: dir, env, timeout: 60_000 });

describe('npm pack', () => {
  it('holds the bin, the built code, the completions, README and LICENSE', () => {
    // The bin is CommonJS (bin/package.json) and runs the bundled CLI with its V8 code cache.
    for (const f of ['bin/agentq.js', 'bin/package.json', 'bin/code-cache.js', 'dist/bundle/agentq.cjs', 'dist/bundle/agentq.cjs.v8cache', 'dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts', 'completions/agentq.bash', 'completions/_agentq', 'completions/agentq.fish', 'README.md', 'LICENSE', 'package.json']) {
      expect(packed).toContain(f);
    }
  });

  it('holds nothing else: no sources, tests, benchmarks, source maps or local state', () => {
    const stray = packed.filter((f) => !/^(bin\/|dist\/|completions\/|README\.md$|LICENSE$|package\.json$)/.test(f));
    expect(stray).toEqual([]);
    // A build's temporary directories (dist/bundle.next-PID, dist/bundle.old-PID) are never packed.
    expect(packed.filter((f) => f.startsWith('dist/bundle.'))).toEqual([]);
    expect(packed.filter((f) => f.endsWith('.map') || /\.(db|db-wal|db-shm|tgz)$/.test(f) || f.includes('node_modules/'))).toEqual([]);
  });

  it("leaves out Ink's devtools chunk, which agentq never loads (dlq browse clears DEV; react-devtools-core is no dependency)", () => {
    // The TUI bundle splits Ink's `DEV=true` devtools connection (ws and all, ~118 kB) into a chunk
    // of its own; shipped, it was weight no agentq run could load.
    expect(packed).not.toContain('dist/tui/run-devtools.js');
    const needsDevtools = packed.filter((f) => /\.(c|m)?js$/.test(f) && /from\s*["']react-devtools-core["']/.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    expect(needsDevtools).toEqual([]);
    // The TUI's chunks that are loaded are all there.
    expect(packed).toContain('dist/tui/run.js');
    expect(packed).toContain('dist/tui/run-rolldown-runtime.js');
  });
});

describe('installed from the tarball into a temporary prefix', () => {
  it('links agentq into the prefix and shows the agentq and Node versions', async () => {
    expect(existsSync(join(prefix, 'bin', 'agentq'))).toBe(true);
    const { stdout } = await agentq(['--version']);
    expect(stdout.trim()).toBe(`agentq ${pkg.version} (node ${process.version})`);
  });

  it('prints --help with the commands', async () => {
    const { stdout } = await agentq(['--help']);
    for (const cmd of ['submit', 'inspect', 'list', 'dlq', 'stats', 'completion']) expect(stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
  });

  it('submits and inspects a job on the embedded default store (better-sqlite3 loads)', async () => {
    const { stdout: id } = await agentq(['submit', 'smoke:v1', '--queue', 'pack', '--input', 'hello']);
    expect(id.trim()).toMatch(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
    const { stdout } = await agentq(['inspect', id.trim(), '-o', 'json']);
    expect(JSON.parse(stdout)).toMatchObject({ job_id: id.trim(), queue: 'pack', state: 'queued', input: 'hello' });
    expect(existsSync(join(dir, 'data', 'agentq', 'agentq.db'))).toBe(true);
  });

  it('loads as a library with import, and with require where Node requires ES modules (the README says which)', async () => {
    const installed = join(prefix, 'lib', 'node_modules');
    const node = (args: string[]) => run(process.execPath, args, { cwd: dir, env: { ...env, NODE_PATH: installed }, timeout: 60_000 });
    const imported = await node(['--input-type=module', '-e', `const m = await import(${JSON.stringify(join(installed, pkg.name, 'dist', 'index.js'))}); console.log(typeof m.createClient)`]);
    expect(imported.stdout.trim()).toBe('function');
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const requireEsm = major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
    const required = await node(['-e', `try { console.log(typeof require('${pkg.name}').createClient) } catch (e) { console.log(e.code) }`]);
    expect(required.stdout.trim()).toBe(requireEsm ? 'function' : 'ERR_REQUIRE_ESM');
    expect(required.stderr).toBe('');
  });

  it('names no source map it does not ship: a shipped file that points at a missing .map makes bundlers and debuggers warn', () => {
    // tsc writes `//# sourceMappingURL=x.js.map` into every file it compiles; the maps themselves
    // are left out of the package (they would point at src/, which is not shipped either).
    const installed = join(prefix, 'lib', 'node_modules', pkg.name);
    const dangling: string[] = [];
    for (const f of packed.filter((p) => /\.(c|m)?js$/.test(p))) {
      const text = readFileSync(join(installed, f), 'utf8');
      for (const m of text.matchAll(/^\/\/# sourceMappingURL=(\S+)\s*$/gm)) {
        if (m[1]!.startsWith('data:')) continue;
        if (!existsSync(join(installed, dirname(f), m[1]!))) dangling.push(`${f} -> ${m[1]}`);
      }
    }
    expect(dangling).toEqual([]);
  });

  it('claims in engines only Node versions that its runtime dependencies and its own code support', () => {
    const semver = createRequire(join(REPO_ROOT, 'package.json'))('semver') as {
      satisfies(v: string, range: string): boolean;
      minVersion(range: string): { version: string } | null;
      gte(a: string, b: string): boolean;
    };
    const installed = join(prefix, 'lib', 'node_modules', pkg.name);
    const ours = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    // The newest Node API agentq calls: AbortSignal.any (waitForJob's signal), added in 20.3.0.
    expect(semver.gte(semver.minVersion(ours)!.version, '20.3.0')).toBe(true);
    // Every released line a user might run, early and late in it.
    const nodes = [18, 19, 20, 21, 22, 23, 24, 25, 26].flatMap((major) => [`${major}.0.0`, `${major}.3.0`, `${major}.99.0`]);
    const refused: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        if (name.startsWith('.')) continue;
        if (name.startsWith('@')) {
          walk(join(dir, name));
          continue;
        }
        const manifest = join(dir, name, 'package.json');
        if (!existsSync(manifest)) continue;
        const dep = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string; engines?: { node?: string } };
        const theirs = dep.engines?.node;
        if (theirs) for (const v of nodes) if (semver.satisfies(v, ours) && !semver.satisfies(v, theirs)) refused.push(`node ${v}: ${dep.name}@${dep.version} needs ${theirs}`);
        if (existsSync(join(dir, name, 'node_modules'))) walk(join(dir, name, 'node_modules'));
      }
    };
    walk(join(installed, 'node_modules'));
    expect(refused).toEqual([]);
  });

  it('ships the same completion scripts as `agentq completion` prints', async () => {
    const installed = join(prefix, 'lib', 'node_modules', pkg.name, 'completions', 'agentq.bash');
    const { stdout } = await agentq(['completion', 'bash']);
    expect(stdout).toBe(readFileSync(installed, 'utf8'));
  });
});
