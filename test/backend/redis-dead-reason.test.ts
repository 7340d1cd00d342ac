/**
 * The dead reason is stored as text (`dr` in the job hash) and printed as a word by `dlq show`
 * and the TUI: text a foreign writer puts there (escape sequences, newlines) makes the record
 * unreadable — a malformed entry, never moved in bulk — instead of reaching a terminal as a reason.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

it('regression: a dead reason that is not a known word makes the entry malformed, in the full entry and in the light row alike', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=dr1`), { clock });
  const raw = new Redis(server.url);
  try {
    const ids: string[] = [];
    for (const tenant of ['a', 'b']) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenant, max_attempts: 1 })).job.job_id);
    for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 })) {
      await backend.fail(lease, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
    }
    const [bad, good] = ids as [string, string];
    await raw.hset(`{dr1:q:0}:j:${bad}`, 'dr', '\x1b]0;PWNED\x07\x1b[31mpermanent\nforged');
    const entry = (await backend.dlqGet(bad))!;
    expect(entry.malformed).toContain('is not one of exhausted, permanent, lease_lost, custody');
    // (not shown: a reason that is not a known word reads as permanent, as on SQLite)
    expect(entry.reason).toBe('permanent');
    expect((await backend.dlqGet(good))!).toMatchObject({ malformed: null, reason: 'permanent' });
    const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 10 })).items;
    expect(rows.map((r) => [r.job_id, r.malformed, r.reason]).sort()).toEqual(
      [
        [bad, true, 'permanent'],
        [good, false, 'permanent'],
      ].sort(),
    );
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
