#!/usr/bin/env node
/**
 * TUI benchmark: the built CLI (`agentq dlq browse`) in a real terminal
 * (a private tmux server, 160×40), measured from the outside the way a
 * person experiences it:
 *
 * - first frame: spawn → the header is on screen;
 * - first rows:  spawn → the first page of entries is on screen;
 * - loaded:      spawn → every entry is loaded (the header stops saying "loading");
 * - key-to-frame: `send-keys` → the screen shows the change (cursor moves,
 *   filter toggles over the whole DLQ, group view, select all), polled with
 *   `capture-pane`; includes tmux's own latency, so it is an upper bound;
 * - RSS: the process's peak resident set (VmHWM) at the end.
 *
 *   node bench/tui.mjs --url sqlite:/tmp/agentq-tui-bench/dlq-100000.db [--redis 100000] [--keys 40]
 *
 * Seed SQLite first: node bench/tui-seed.mjs sqlite:/tmp/agentq-tui-bench/dlq-100000.db 100000
 * `--redis N` starts a throwaway redis-server on a free loopback port, seeds N entries and measures it too.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'agentq.js');

const args = process.argv.slice(2);
const urls = [];
let keyRuns = 40;
let queue = 'research';
let redisN = 0;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--url') urls.push(args[++i]);
  else if (args[i] === '--redis') redisN = Number(args[++i]);
  else if (args[i] === '--keys') keyRuns = Number(args[++i]);
  else if (args[i] === '--queue') queue = args[++i];
}
if (urls.length === 0 && redisN === 0) {
  console.error('usage: node bench/tui.mjs --url sqlite:PATH [--url redis://HOST:PORT] [--redis N] [--keys N] [--queue Q]');
  process.exit(2);
}

let redis = null;
if (redisN > 0) {
  const port = await new Promise((res) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => res(p));
    });
  });
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
      break;
    } catch {
      if (tries > 200) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const t = performance.now();
  execFileSync(process.execPath, [join(ROOT, 'bench', 'tui-seed.mjs'), url, String(redisN), queue], { stdio: ['ignore', 'ignore', 'inherit'] });
  console.error(`seeded ${redisN} into ${url} in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  urls.push(url);
}
// The throwaway server must not outlive the benchmark, however it ends.
const stopRedis = () => {
  if (redis !== null && redis.exitCode === null) redis.kill('SIGKILL');
};
process.on('exit', stopRedis);
process.on('SIGINT', () => process.exit(130));

const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-bench-'));
const conf = join(dir, 'tmux.conf');
writeFileSync(conf, 'set -s escape-time 0\nset -g remain-on-exit on\nset -g status off\nset -g default-terminal xterm-256color\n');
const socket = `agentq-tui-bench-${process.pid}`;
const tmux = (...a) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
const capture = () => tmux('capture-pane', '-p', '-t', 'b:0.0');

function waitScreen(test, timeoutMs = 120_000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const s = capture();
    if (test(s)) return { at: performance.now(), screen: s };
    if (performance.now() > end) throw new Error(`timed out; screen:\n${s}`);
  }
}

/** CPU time (user + system) the process has used so far, from /proc (clock ticks of 10 ms). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function cursorLine(screen) {
  return screen.split('\n').find((l) => l.startsWith('›')) ?? '';
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(1)} ms`;

let tracePath = '';
const traceLines = () => {
  try {
    return readFileSync(tracePath, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};

/**
 * Sends one key and waits until `changed(before, after)` holds. Returns the
 * latency seen from outside (send-keys → screen changed, via tmux) and the
 * app's own (key read → frame rendered, from the AGENTQ_TUI_TRACE file).
 */
function keyToFrame(key, changed, literal = false) {
  const before = capture();
  const seen = traceLines().length;
  const t0 = performance.now();
  tmux('send-keys', '-t', 'b:0.0', ...(literal ? ['-l'] : []), key);
  const { at, screen } = waitScreen((s) => changed(before, s), 30_000);
  const inApp = traceLines().slice(seen).map((l) => l.keyToFrameMs).filter((x) => x !== null);
  return { latency: at - t0, inApp: inApp.length ? Math.max(...inApp) : NaN, screen };
}

const results = [];
for (const url of urls) {
  tracePath = join(dir, `trace-${results.length}.ndjson`);
  const env = ['PATH=' + process.env.PATH, 'HOME=' + dir, 'TERM=xterm-256color', 'LANG=C.UTF-8', 'AGENTQ_TUI_TRACE=' + tracePath];
  // `npm run build` replaces tsc's dist/tui/run.js with the bundled app; a later tsc-only build puts
  // the unbundled file back (same behaviour, ~0.6 s more CPU to the first frame). Say which ran.
  const isAppBundled = readFileSync(join(ROOT, 'dist', 'tui', 'run.js'), 'utf8').includes('node_modules/ink/');
  const t0 = performance.now();
  tmux('-f', conf, 'new-session', '-d', '-s', 'b', '-x', '160', '-y', '40', '--', 'env', '-i', ...env, process.execPath, BIN, '--url', url, 'dlq', 'browse', '--queue', queue);
  const pid = Number(tmux('display-message', '-p', '-t', 'b:0.0', '#{pane_pid}').trim());
  const firstFrame = waitScreen((s) => s.includes('agentq DLQ triage')).at - t0;
  const cpuFirstFrame = cpuMs(pid);
  const firstRows = waitScreen((s) => s.includes('› [')).at - t0;
  const loadedAt = waitScreen((s) => /total [\d,]+/.test(s) && !s.includes('loading'), 600_000);
  const loaded = loadedAt.at - t0;
  const cpuLoaded = cpuMs(pid);
  const hwmLoaded = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  const total = /total ([\d,]+)/.exec(loadedAt.screen)[1];

  const firstTrace = traceLines()[0];
  const down = [];
  const cpuBeforeKeys = cpuMs(pid);
  for (let i = 0; i < keyRuns; i++) down.push(keyToFrame('j', (b, a) => cursorLine(a) !== cursorLine(b)));
  const cpuPerKey = (cpuMs(pid) - cpuBeforeKeys) / keyRuns;
  const pageDown = [];
  for (let i = 0; i < 10; i++) pageDown.push(keyToFrame('PgDn', (b, a) => cursorLine(a) !== cursorLine(b)));
  const bottom = keyToFrame('G', (b, a) => cursorLine(a) !== cursorLine(b));
  const top = keyToFrame('Home', (b, a) => cursorLine(a) !== cursorLine(b));
  // Whole-DLQ operations: each re-filters or scans every loaded row.
  const filterE = [];
  for (let i = 0; i < 10; i++) filterE.push(keyToFrame('e', (b, a) => /shown [\d,]+/.exec(a)?.[0] !== /shown [\d,]+/.exec(b)?.[0]));
  const textFilter = keyToFrame('/', (b, a) => a.includes('type to filter'));
  // The typed character re-filters every row (live filter) before the prompt shows it.
  const typeChar = keyToFrame('4', (b, a) => /^\/4\s/m.test(a), true);
  keyToFrame('Escape', (b, a) => !a.includes('type to filter'));
  const groups = keyToFrame('g', (b, a) => a.includes('COUNT'));
  keyToFrame('Escape', (b, a) => !a.includes('COUNT'));
  const selectAll = keyToFrame('a', (b, a) => a.includes('matching'));
  const detail = keyToFrame('Enter', (b, a) => a.includes('Attempts timeline'));
  keyToFrame('Escape', (b, a) => !a.includes('Attempts timeline'));

  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
  const maxFrameLines = capture().trimEnd().split('\n').length;
  tmux('send-keys', '-t', 'b:0.0', 'q');
  waitScreen(() => tmux('display-message', '-p', '-t', 'b:0.0', '#{pane_dead}').trim() === '1');
  tmux('kill-session', '-t', 'b');

  results.push({ url: url.replace(/\/\/[^@]*@/, '//***@'), isAppBundled, total, firstFrame, firstTrace, cpuFirstFrame, firstRows, loaded, cpuLoaded, hwmLoaded, cpuPerKey, down, pageDown, bottom, top, filterE, textFilter, typeChar, groups, selectAll, detail, hwm, rss, maxFrameLines });
}
try {
  execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
} catch {}
rmSync(dir, { recursive: true, force: true });
stopRedis();

const one = (k) => `${ms(k.latency)} (app ${ms(k.inApp)})`;
const many = (ks) => {
  const out = ks.map((k) => k.latency);
  const app = ks.map((k) => k.inApp).filter((x) => !Number.isNaN(x));
  return `median ${ms(pct(out, 50))} p95 ${ms(pct(out, 95))} (app median ${ms(pct(app, 50))} p95 ${ms(pct(app, 95))}, n=${ks.length})`;
};
for (const r of results) {
  console.log(`\n${r.url}  (${r.total} DLQ entries, terminal 160x40, frame ${r.maxFrameLines} lines; TUI app ${r.isAppBundled ? 'bundled' : 'NOT bundled: run npm run build'})`);
  console.log(`  first frame (header)        ${ms(r.firstFrame)} (app: ${r.firstTrace ? ms(r.firstTrace.sinceStartMs) : '?'} after process start, ${r.firstTrace?.cpuMs ?? '?'} ms of CPU; seen from outside: ${r.cpuFirstFrame} ms CPU)`);
  console.log(`  first rows on screen        ${ms(r.firstRows)}`);
  console.log(`  all entries loaded          ${ms(r.loaded)} (CPU ${r.cpuLoaded} ms, peak RSS by then ${r.hwmLoaded.toFixed(0)} MB)`);
  console.log(`  j (move)                    ${many(r.down)}; CPU per key ${r.cpuPerKey.toFixed(1)} ms`);
  console.log(`  PgDn                        ${many(r.pageDown)}`);
  console.log(`  G / Home                    ${one(r.bottom)} / ${one(r.top)}`);
  console.log(`  e (re-filter all rows)      ${many(r.filterE)}`);
  console.log(`  / then one typed character  ${one(r.textFilter)} / ${one(r.typeChar)}`);
  console.log(`  g (group all rows)          ${one(r.groups)}`);
  console.log(`  a (select all matching)     ${one(r.selectAll)}`);
  console.log(`  Enter (detail, one dlqGet)  ${one(r.detail)}`);
  console.log(`  RSS peak / at end           ${r.hwm.toFixed(0)} MB / ${r.rss.toFixed(0)} MB`);
}
console.log(`\nload average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
