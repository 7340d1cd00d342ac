/**
 * The key layout. Everything about a queue shard lives under one hash tag,
 * `{<prefix>:<queue>:<shard>}`, so every script touches one slot. Only a few
 * small global keys sit outside any queue:
 *   <prefix>:queues          zset (lex) of queue names
 *   <prefix>:q:<queue>       hash: the queue's shard count (fixed when it is first used)
 *   <prefix>:loc:<job id>    string "<queue>\t<shard>": find a job without scanning
 *   <prefix>:runs            zset (lex) of run ids;  <prefix>:runloc:<run id> → queue
 *   <prefix>:store           string: the store's identity, a random id set once (SET NX)
 * The per-shard keys are documented in docs/architecture.md ("Redis backend").
 */
export class KeyLayout {
  constructor(readonly prefix: string) {}

  /** `{aq:research:0}:` — prefix of every key of one queue shard. */
  shard(queue: string, shard: number): string {
    return `{${this.prefix}:${queue}:${shard}}:`;
  }
  /** The queue and shard of a key under `shard()` (queue names hold no ':'); null for any other key. */
  shardOfKey(key: string): { queue: string; shard: number } | null {
    const head = `{${this.prefix}:`;
    if (!key.startsWith(head)) return null;
    const m = /^([^:}]+):(\d+)\}:/.exec(key.slice(head.length));
    return m ? { queue: m[1]!, shard: Number(m[2]) } : null;
  }
  queues(): string {
    return `${this.prefix}:queues`;
  }
  queueMeta(queue: string): string {
    return `${this.prefix}:q:${queue}`;
  }
  loc(jobId: string): string {
    return `${this.prefix}:loc:${jobId}`;
  }
  runs(): string {
    return `${this.prefix}:runs`;
  }
  storeIdentity(): string {
    return `${this.prefix}:store`;
  }
  runLoc(runId: string): string {
    return `${this.prefix}:runloc:${runId}`;
  }
}

/** FNV-1a, 32 bit: spreads jobs over a queue's shards by tenant, so a tenant's jobs (and idempotency keys) share a shard. */
export function shardOf(s: string, shards: number): number {
  if (shards <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}
