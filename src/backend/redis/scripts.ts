/**
 * Registers the Lua scripts with ioredis. `defineCommand` sends EVALSHA and
 * falls back to EVAL (which loads the script) on NOSCRIPT, so each script is
 * loaded once per server — and again after a server restart lost its cache.
 */
import type { Cluster, Redis } from 'ioredis';
import { CLAIM, claimCore } from './lua/claim.js';
import { CANCEL } from './lua/cancel.js';
import { APPLY, BACKLOG, LEDGER_ADD, LOCK_ACQUIRE, LOCK_BREAK, LOCK_RELEASE, TRAFFIC } from './lua/dlq.js';
import { STATS_READ } from './lua/stats.js';
import { PRELUDE } from './lua/prelude.js';
import { HISTORY, IDS } from './lua/read.js';
import { SUBMIT } from './lua/submit.js';
import { ABORT, CHECKPOINT, COMPLETE, completeClaim, EFFECT_BEGIN, EFFECT_FINISH, FAIL, HEARTBEAT, RELEASE, SET_ASIDE, USAGE } from './lua/worker.js';

/** A script whose number of KEYS depends on the call (a batch): at least one. */
export const VARIABLE_KEYS = -1;

/**
 * Scripts that run against one queue shard (ARGV[1..4] = prefix, now, events
 * cap, queue), with the number of KEYS each declares (checked on every call).
 * The key count is sent as EVALSHA's numkeys argument, from which ioredis's
 * Cluster client finds the routing key. (ioredis's own `numberOfKeys` is not
 * used: with auto-pipelining it re-prefixes the count when a batch is retried
 * after NOSCRIPT.)
 */
export const SHARD_SCRIPTS = {
  aqSubmit: [SUBMIT, VARIABLE_KEYS],
  aqCancel: [CANCEL, 1],
  aqClaim: [CLAIM, 1],
  aqHeartbeat: [HEARTBEAT, 1],
  aqCheckpoint: [CHECKPOINT, 1],
  aqUsage: [USAGE, 3],
  aqEffectBegin: [EFFECT_BEGIN, 2],
  aqEffectFinish: [EFFECT_FINISH, 2],
  aqComplete: [COMPLETE, 1],
  aqCompleteClaim: [completeClaim(claimCore), VARIABLE_KEYS],
  aqFail: [FAIL, 1],
  aqAbort: [ABORT, 1],
  aqRelease: [RELEASE, 1],
  aqSetAside: [SET_ASIDE, 1],
  aqLedgerAdd: [LEDGER_ADD, 1],
  aqApply: [APPLY, VARIABLE_KEYS],
  aqStats: [STATS_READ, 1],
  aqTraffic: [TRAFFIC, 1],
  aqBacklog: [BACKLOG, 1],
} as const satisfies Record<string, readonly [string, number]>;

/** Scripts without the shard prelude. */
export const PLAIN_SCRIPTS = {
  aqHistory: [HISTORY, 2],
  aqIds: [IDS, VARIABLE_KEYS],
  aqLockAcquire: [LOCK_ACQUIRE, 1],
  aqLockRelease: [LOCK_RELEASE, 1],
  aqLockBreak: [LOCK_BREAK, 1],
} as const satisfies Record<string, readonly [string, number]>;

export type ScriptName = keyof typeof SHARD_SCRIPTS | keyof typeof PLAIN_SCRIPTS;
const KEY_COUNTS = new Map<string, number>();

export function registerScripts(client: Redis | Cluster): void {
  for (const [name, [body, keys]] of Object.entries(SHARD_SCRIPTS)) {
    client.defineCommand(name, { lua: PRELUDE + body });
    KEY_COUNTS.set(name, keys);
  }
  for (const [name, [body, keys]] of Object.entries(PLAIN_SCRIPTS)) {
    client.defineCommand(name, { lua: body });
    KEY_COUNTS.set(name, keys);
  }
}

/** Calls a registered script: numkeys, its declared keys, then its arguments. */
export function callScript(client: Redis | Cluster, name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
  const declared = KEY_COUNTS.get(name);
  if (declared === VARIABLE_KEYS ? keys.length < 1 : declared !== keys.length) throw new Error(`script ${name} declares ${KEY_COUNTS.get(name)} keys, called with ${keys.length}`);
  const fn = (client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[name]!;
  return fn.call(client, keys.length, ...keys, ...args);
}
