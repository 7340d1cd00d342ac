/**
 * Every key of a store that names a job id, for tests of what a removal leaves
 * behind: a SCAN of the test's own server, each key read whole by its type.
 */
import type { Redis } from 'ioredis';

export interface Mention {
  key: string;
  type: string;
  /** seconds to live, -1 for none */
  ttl: number;
}

/** The keys whose name contains `prefix` and that mention `id` in their name or anywhere in their value. */
export async function keysMentioning(raw: Redis, prefix: string, id: string): Promise<Mention[]> {
  const out: Mention[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      if (!key.includes(prefix)) continue;
      const type = await raw.type(key);
      let text = '';
      if (type === 'string') text = (await raw.get(key)) ?? '';
      else if (type === 'hash') text = JSON.stringify(await raw.hgetall(key));
      else if (type === 'zset') text = JSON.stringify(await raw.zrange(key, 0, -1));
      else if (type === 'list') text = JSON.stringify(await raw.lrange(key, 0, -1));
      else if (type === 'set') text = JSON.stringify(await raw.smembers(key));
      else if (type === 'stream') text = JSON.stringify(await raw.xrange(key, '-', '+'));
      if (key.includes(id) || text.includes(id)) out.push({ key, type, ttl: await raw.ttl(key) });
    }
  } while (cursor !== '0');
  return out;
}

/**
 * What a purge keeps of a job on purpose: its location key (a purged job is told from one the
 * store never had by it), its history list while it expires, the shard's events stream (capped)
 * and the ledgers of the runs that moved it (their audit).
 */
export function keptAfterPurge(prefix: string, id: string, runIds: string[]): (m: Mention) => boolean {
  return (m) =>
    m.key === `${prefix}:loc:${id}` ||
    (m.key.endsWith(`:h:${id}`) && m.ttl > 0) ||
    (m.type === 'stream' && m.key.endsWith(':ev')) ||
    runIds.some((r) => m.key.endsWith(`:L:${r}`) || m.key.includes(`:Li:${r}:`));
}
