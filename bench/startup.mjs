#!/usr/bin/env node
// Start-up cost of the CLI against bare node, in one run (issue 2, item 9).
//
//   npm run build && node bench/startup.mjs [--runs 30] [--bin path/to/agentq.js]
//
// Runs `node -e 0`, `agentq --version`, `agentq --help` and `agentq inspect JOB`
// (embedded SQLite, a job submitted beforehand) interleaved round-robin, so a
// noisy neighbour slows every command alike; prints the median wall time of each
// and its ratio to bare node. Targets: --help within 1.5x, inspect within 2.5x.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'agentq.js');
const flag = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const runs = Number(flag('--runs', 30));
// --bin PATH measures another build of the entry (an experiment) with the same data.
const measured = flag('--bin', bin);

const home = mkdtempSync(join(tmpdir(), 'agentq-bench-startup-'));
const env = { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config') };

// Each child reports its own CPU time (user + sys) through a preload: on a busy machine that is a
// steadier figure than wall time, which also counts waiting for a core.
const probe = join(root, 'bench', 'startup-cpu-probe.cjs');

function run(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--require', probe, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const m = /@@cpu (\d+) (\d+)/.exec(r.stderr.toString());
  return { ms, cpuMs: m ? (Number(m[1]) + Number(m[2])) / 1000 : NaN, stdout: r.stdout.toString() };
}

const jobId = run([bin, 'submit', 'bench:v1', '--input', 'hello']).stdout.trim();
const cases = [
  ['node -e 0', ['-e', '0']],
  ['agentq --version', [measured, '--version']],
  ['agentq --help', [measured, '--help']],
  [`agentq inspect JOB (sqlite)`, [measured, 'inspect', jobId]],
];
// Warm the OS file cache once.
for (const [, args] of cases) run(args);

const times = new Map(cases.map(([name]) => [name, { wall: [], cpu: [] }]));
const load0 = loadavg()[0];
for (let i = 0; i < runs; i++) {
  for (const [name, args] of cases) {
    const r = run(args);
    times.get(name).wall.push(r.ms);
    times.get(name).cpu.push(r.cpuMs);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const baseWall = median(times.get('node -e 0').wall);
const baseCpu = median(times.get('node -e 0').cpu);
const targets = { 'agentq --help': 1.5, 'agentq inspect JOB (sqlite)': 2.5 };
console.log(`node ${process.version}, ${runs} runs each, interleaved; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}`);
// The build writes a V8 code cache next to the bundle's chunks (bin/code-cache.js); without it
// (a failed warm-up, see the build's output) every figure is slower.
const bundleDir = join(root, 'dist', 'bundle');
const cached = existsSync(bundleDir) ? readdirSync(bundleDir).filter((f) => f.endsWith('.v8cache')).length : 0;
console.log(`bundle: ${existsSync(join(bundleDir, 'agentq.cjs')) ? 'dist/bundle' : 'MISSING'}, code cache for ${cached} chunks`);
console.log('command                        wall ms (median)  x node   cpu ms (median)  x node   target');
for (const [name] of cases) {
  const { wall, cpu } = times.get(name);
  const rw = median(wall) / baseWall;
  const rc = median(cpu) / baseCpu;
  const target = targets[name];
  const verdict = target ? `<= ${target}x: wall ${rw <= target ? 'ok' : 'MISSED'}, cpu ${rc <= target ? 'ok' : 'MISSED'}` : '';
  console.log(
    `${name.padEnd(30)} ${median(wall).toFixed(1).padStart(16)} ${rw.toFixed(2).padStart(7)} ${median(cpu).toFixed(1).padStart(16)} ${rc.toFixed(2).padStart(7)}   ${verdict}`,
  );
}
rmSync(home, { recursive: true, force: true });
