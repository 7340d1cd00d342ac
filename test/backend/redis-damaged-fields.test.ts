/**
 * The job hash's counts and times are written by agentq's scripts as whole numbers. Text a foreign
 * writer puts there (`dat` = "yesterday", `att` = "abc") makes the record a malformed DLQ entry on
 * every read path (full entries, light rows) and at apply, as the apply script already judged it:
 * never a RangeError out of `dlq list`, `summary`, `export` or `show`, never `attempts: NaN`.
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

/** `n` jobs of queue `q` failed for good, in submission order: dead, in the DLQ. */
async function deadJobs(backend: RedisBackend, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'acme', max_attempts: 1 })).job.job_id);
  for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: n, leaseMs: 60_000 })) {
    await backend.fail(lease, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  }
  return ids;
}

/** A run over `ids` whose plan (wrongly, for damaged ones) says `verdict` to each, applied a second after it was made. */
async function planAndApply(backend: RedisBackend, clock: ManualClock, runId: string, verdict: 'redrive' | 'purge', ids: string[]) {
  const at = new Date(clock.now()).toISOString();
  clock.advance(1000);
  await backend.createRun(
    { run_id: runId, queue: 'q', action: verdict, user: 'oncall', context: null, reason: null, filters: {}, options: { plannedAt: at }, created_at: at, updated_at: at, status: 'planned', counts: { planned: 0, moved: 0, skipped: 0, failed: 0 } },
    ids.map((job_id) => ({ job_id, verdict, detail: null })),
  );
  return backend.applyRunItems({ runId, jobIds: ids, now: clock.now() });
}

const DAMAGE: Array<[field: string, value: string]> = [
  ['dat', 'yesterday'],
  ['upd', 'soon'],
  ['dat', '1e400'],
  ['att', 'abc'],
  ['max', '-5'],
  ['rc', '1.5'],
  ['upd', ''],
];

it('regression: a count or time field that is not a whole number makes the entry malformed on every read and at apply, never a crash', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=df1`), { clock });
  const raw = new Redis(server.url);
  try {
    const ids = await deadJobs(backend, DAMAGE.length + 1);
    const good = ids[DAMAGE.length]!;
    for (const [i, [field, value]] of DAMAGE.entries()) await raw.hset(`{df1:q:0}:j:${ids[i]}`, field, value);

    const entries = (await backend.dlqList({ queue: 'q' }, { limit: 100 })).items;
    expect(entries.map((e) => [e.job_id, e.malformed === null])).toEqual(ids.map((id) => [id, id === good]));
    for (const e of entries) {
      expect(Number.isInteger(e.attempts) && Number.isInteger(e.max_attempts) && !Number.isNaN(Date.parse(e.dead_at)), JSON.stringify(e)).toBe(true);
    }
    for (const [i, [field]] of DAMAGE.entries()) expect((await backend.dlqGet(ids[i]!))!.malformed, field).toContain(`its field ${field}`);
    const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 100 })).items;
    expect(rows.map((r) => [r.job_id, r.malformed])).toEqual(ids.map((id) => [id, id !== good]));
    expect(rows.every((r) => Number.isFinite(r.dead_at_ms))).toBe(true);

    // A plan that (wrongly) says redrive: each damaged one is skip:malformed and left in place.
    const out = await planAndApply(backend, clock, 'run_01JDAMAGEDF1E1DS00000000000', 'redrive', ids);
    expect(out.map((o) => [o.job_id, o.status === 'moved' ? 'moved' : o.verdict])).toEqual(ids.map((id) => [id, id === good ? 'moved' : 'skip:malformed']));
    for (const id of ids) if (id !== good) expect((await backend.dlqGet(id))!.malformed).toEqual(expect.any(String));
  } finally {
    raw.disconnect();
    await backend.close();
  }
});

it('regression: a DLQ member whose job hash is gone (evicted, or deleted outside agentq) is listed as malformed, counted as stats counts it, and left in place', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=df2`), { clock });
  const raw = new Redis(server.url);
  try {
    const ids = await deadJobs(backend, 3);
    const [, gone] = ids as [string, string, string];
    await raw.del(`{df2:q:0}:j:${gone}`);
    expect((await backend.stats('q')).dlq_size).toBe(3);

    const entries = (await backend.dlqList({ queue: 'q' }, { limit: 100 })).items;
    expect(entries.map((e) => [e.job_id, e.malformed !== null])).toEqual(ids.map((id) => [id, id === gone]));
    expect(entries[1]!.malformed).toContain('job record is missing');
    expect(entries[1]!.dead_at).toBe(entries[0]!.dead_at); // when it died, from the DLQ index (all died at one clock time)
    expect((await backend.dlqGet(gone))!.malformed).toContain('job record is missing');
    const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 100 })).items;
    expect(rows.map((r) => [r.job_id, r.malformed])).toEqual(ids.map((id) => [id, id === gone]));
    // one at a time too: a page that ends on it carries on after it
    const byOne = [];
    let cursor: string | null = null;
    do {
      const page = await backend.dlqList({ queue: 'q' }, { limit: 1, cursor });
      byOne.push(...page.items.map((e) => e.job_id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(byOne).toEqual(ids);

    // A plan made from it says skip:malformed; an edited one that says purge leaves it too.
    const [item] = await planAndApply(backend, clock, 'run_01JM1SS1NGREC0RD0000000000', 'purge', [gone]);
    expect(item).toMatchObject({ job_id: gone, status: 'skipped', verdict: 'skip:malformed' });
    expect(await raw.zscore('{df2:q:0}:s:dead', gone)).not.toBeNull();
  } finally {
    raw.disconnect();
    await backend.close();
  }
});

it('regression: a DLQ member whose job key holds another type than a hash (a foreign write to the key) is malformed on every read and at apply, never an internal error', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=df3`), { clock });
  const raw = new Redis(server.url);
  try {
    const ids = await deadJobs(backend, 3);
    const [, odd] = ids as [string, string, string];
    await raw.del(`{df3:q:0}:j:${odd}`);
    await raw.set(`{df3:q:0}:j:${odd}`, 'not a hash');

    const entries = (await backend.dlqList({ queue: 'q' }, { limit: 100 })).items;
    expect(entries.map((e) => [e.job_id, e.malformed !== null])).toEqual(ids.map((id) => [id, id === odd]));
    expect(entries[1]!.malformed).toContain('not a job hash');
    expect((await backend.dlqGet(odd))!.malformed).toContain('not a job hash');
    // `inspect` says to save such a record with `dlq show --raw`: it shows what the key holds
    expect(JSON.parse(Buffer.from((await backend.dlqRaw(odd))!).toString('utf8'))).toEqual({ job_id: odd, state: null, stored: { type: 'string', value: 'not a hash' } });
    const rows = (await backend.dlqRows({ queue: 'q' }, { limit: 100 })).items;
    expect(rows.map((r) => [r.job_id, r.malformed])).toEqual(ids.map((id) => [id, id === odd]));

    const out = await planAndApply(backend, clock, 'run_01JWR0NGTYPE00000000000000', 'redrive', ids);
    expect(out.map((o) => [o.job_id, o.status === 'moved' ? 'moved' : o.verdict])).toEqual(ids.map((id) => [id, id === odd ? 'skip:malformed' : 'moved']));
    expect(await raw.get(`{df3:q:0}:j:${odd}`)).toBe('not a hash');
  } finally {
    raw.disconnect();
    await backend.close();
  }
});
