#!/usr/bin/env node
// What the Redis stats counters cost on the hot path (issue 8): the same workload through the
// backend with the transition scripts as shipped and with the stats hooks stubbed out (one age
// zset for the queue, per-state counts without the class, no tenant rank, no activity: the
// scripts as they were before the breakdowns), in one run against the same redis-server.
//
//   npm run build && node bench/stats.redis-overhead.mjs [--jobs 2000] [--rounds 3] [--callgrind]
//
// Per job, for submit and for claim (max 50) + complete: Redis commands (INFO commandstats:
// script calls and the commands they run) and Redis main-thread CPU µs (INFO cpu), median of the
// rounds, alternating the two variants. With --callgrind, redis-server runs under
// valgrind --tool=callgrind and the figure is instructions per job instead: it does not depend
// on the machine's load (slow: about 50x). A throwaway redis-server on a free loopback port.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('jobs', '2000'));
const ROUNDS = Number(arg('rounds', '3'));
const CALLGRIND = process.argv.includes('--callgrind');
const dist = new URL('../dist', import.meta.url).pathname;
const { RedisBackend } = await import(`${dist}/backend/redis/index.js`);
const { parseRedisUrl } = await import(`${dist}/backend/redis/url.js`);
const { SHARD_SCRIPTS } = await import(`${dist}/backend/redis/scripts.js`);
const { PRELUDE } = await import(`${dist}/backend/redis/lua/prelude.js`);
const { STATS_HOOKS } = await import(`${dist}/backend/redis/lua/stats.js`);

// The prelude without the stats hooks: what `move`, `enqueue`, `dequeue` and `endAttempt` did before.
const STUB = String.raw`
local function qagek(cls) return P .. 'qage' end
local function statsCountField(id, st) return st end
local function statsMove(id, from, to) end
local function statsAttemptEnded(out) end
`;
if (!PRELUDE.includes(STATS_HOOKS)) throw new Error('the prelude does not contain the stats hooks verbatim');
const PRELUDE_WITHOUT = PRELUDE.replace(STATS_HOOKS, STUB);

const port = await new Promise((resolve) => {
  const srv = createServer().listen(0, '127.0.0.1', () => {
    const p = srv.address().port;
    srv.close(() => resolve(p));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'agentq-stats-redis-overhead-'));
const serverArgs = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
const proc = CALLGRIND
  ? spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg.out')}`, 'redis-server', ...serverArgs], { stdio: 'ignore' })
  : spawn('redis-server', serverArgs, { stdio: 'ignore' });
const admin = new Redis({ port, retryStrategy: () => 100 });
admin.on('error', () => {}); // refused until the server is up (slow under valgrind)
for (;;) {
  try {
    if ((await admin.ping()) === 'PONG') break;
  } catch {}
  await new Promise((r) => setTimeout(r, 100));
}

const cpu = async () => {
  const s = await admin.info('cpu');
  const g = (k) => Number(new RegExp(k + ':([\\d.]+)').exec(s)[1]);
  return (g('used_cpu_user_main_thread') + g('used_cpu_sys_main_thread')) * 1e6;
};
const calls = async () => {
  const s = await admin.info('commandstats');
  let n = 0;
  for (const l of s.split('\n')) {
    const m = /^cmdstat_(\w+):calls=(\d+)/.exec(l);
    if (m && m[1] !== 'info' && m[1] !== 'ping') n += Number(m[2]);
  }
  return n;
};
// Under callgrind: instructions executed since the last dump (each dump resets the counters).
let dumps = 0;
const instructions = async () => {
  if (!CALLGRIND) return 0;
  spawnSync('callgrind_control', ['-d', String(proc.pid)], { stdio: 'ignore' });
  for (let i = 0; i < 600; i++) {
    const files = readdirSync(dir).filter((f) => f.startsWith('cg.out.'));
    if (files.length > dumps) {
      dumps = files.length;
      const text = readFileSync(join(dir, files.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).at(-1)), 'utf8');
      const m = /^(?:summary|totals):\s+(\d+)/m.exec(text);
      return m ? Number(m[1]) : NaN;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('callgrind dump did not appear');
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let seq = 0;
async function round(withStats) {
  const backend = new RedisBackend(parseRedisUrl(`redis://127.0.0.1:${port}?prefix=ovh${++seq}`));
  if (!withStats) {
    const client = backend.client;
    // (the stats read script needs the hooks' keys; it is not part of the hot path)
    for (const [name, [body]] of Object.entries(SHARD_SCRIPTS)) if (name !== 'aqStats') client.defineCommand(name, { lua: PRELUDE_WITHOUT + body });
  }
  // Warm up: every script loaded (EVALSHA misses cost a load), then the counters reset.
  await backend.submit({ workflow: 'noop:v1', queue: 'warm', tenant_id: 't0' });
  const [l] = await backend.claim({ queue: 'warm', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.complete(l, null);
  if (withStats) await backend.stats('warm');
  const measure = async (fn) => {
    await instructions();
    const c0 = await cpu();
    const k0 = await calls();
    await fn();
    const ir = await instructions();
    return { cpu: ((await cpu()) - c0) / N, cmd: ((await calls()) - k0) / N, ir: ir / N };
  };
  const submit = await measure(async () => {
    for (let i = 0; i < N; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_v, k) => backend.submit({ workflow: 'noop:v1', queue: 'q', tenant_id: `t${(i + k) % 20}`, class: ['interactive', 'batch', 'maintenance'][k % 3] })));
    }
  });
  const work = await measure(async () => {
    let n = 0;
    while (n < N) {
      const ls = await backend.claim({ queue: 'q', workerId: 'w', max: 50, leaseMs: 60_000 });
      if (ls.length === 0) throw new Error('queue ran dry');
      await Promise.all(ls.map((x) => backend.complete(x, null)));
      n += ls.length;
    }
  });
  await backend.close();
  return { submit, work };
}

const res = { with: [], without: [] };
for (let r = 0; r < ROUNDS; r++) {
  res.with.push(await round(true));
  res.without.push(await round(false));
}
const unit = CALLGRIND ? 'instr' : 'cpu µs';
const key = CALLGRIND ? 'ir' : 'cpu';
const fmt = (v) => (CALLGRIND ? Math.round(v).toLocaleString('en') : v.toFixed(1));
console.log(`Redis per job, median of ${ROUNDS} rounds of ${N} jobs${CALLGRIND ? ' (callgrind instructions)' : ' (main-thread CPU, depends on load)'}`);
console.log(`${''.padEnd(22)}submit cmds  submit ${unit}   claim50+complete cmds  claim50+complete ${unit}`);
for (const v of ['with', 'without']) {
  const m = (phase, k) => median(res[v].map((x) => x[phase][k]));
  console.log(`${(v === 'with' ? 'with stats hooks' : 'hooks stubbed out').padEnd(22)}${m('submit', 'cmd').toFixed(1).padStart(11)}  ${fmt(m('submit', key)).padStart(12)}   ${m('work', 'cmd').toFixed(1).padStart(21)}  ${fmt(m('work', key)).padStart(22)}`);
}
const ratio = (phase) => median(res.with.map((x) => x[phase][key])) / median(res.without.map((x) => x[phase][key]));
console.log(`ratio with/without: submit ${ratio('submit').toFixed(3)}, claim50+complete ${ratio('work').toFixed(3)}`);
admin.disconnect();
proc.kill('SIGTERM');
await new Promise((r) => proc.once('exit', r));
rmSync(dir, { recursive: true, force: true });
