/**
 * Ledger items on Redis are JSON text with the status first (lua/dlq.ts ledgerItem); an item an
 * older agentq stored, in cjson's key order, must still be read and applied exactly once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/index.js';
import { parseRedisUrl } from '../../src/backend/redis/url.js';
import { ManualClock } from '../../src/core/clock.js';
import { runRecord } from '../conformance/fixture.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const RUN = 'run_01JRUNAAAAAAAAAAAAAAAAAAAA';

it('applies a planned item stored in the key order of an older agentq, once', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg1`), { clock });
  const raw = new Redis(server.url);
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a', max_attempts: 1 });
  const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  await backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive' }, clock.now()), [{ job_id: job.job_id, verdict: 'redrive', detail: 'a "quoted" detail' }]);
  const key = `{lg1:q:0}:L:${RUN}`;
  const stored = await raw.hget(key, job.job_id);
  expect(JSON.parse(stored!)).toMatchObject({ status: 'planned', verdict: 'redrive', detail: 'a "quoted" detail' });
  await raw.hset(key, job.job_id, `{"verdict":"redrive","detail":null,"updated_at":${clock.now()},"status":"planned"}`);
  clock.advance(1000);
  const [first] = await backend.applyRunItems({ runId: RUN, jobIds: [job.job_id], now: clock.now() });
  expect(first).toMatchObject({ status: 'moved', verdict: 'redrive', detail: null, updated_at: new Date(clock.now()).toISOString() });
  const [again] = await backend.applyRunItems({ runId: RUN, jobIds: [job.job_id], now: clock.now() });
  expect(again).toMatchObject({ status: 'moved' });
  expect((await backend.get(job.job_id))!).toMatchObject({ state: 'queued', lineage: { redrive_count: 1 } });
  expect((await backend.ledger(RUN, { limit: 10 }, 'moved')).items.map((i) => i.job_id)).toEqual([job.job_id]);
  raw.disconnect();
  await backend.close();
});

it('a job hash missing a field the apply needs is skipped as malformed, not stranded half moved', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg3`), { clock });
  const raw = new Redis(server.url);
  const ids: string[] = [];
  for (const tenant of ['a', 'b']) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenant, max_attempts: 1 })).job.job_id);
  for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 })) {
    await backend.fail(lease, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  }
  await raw.hdel(`{lg3:q:0}:j:${ids[0]}`, 'cls');
  // no attempts recorded (never claimed, as a job taken into custody from the SQS DLQ) is not damage
  await raw.hdel(`{lg3:q:0}:j:${ids[1]}`, 'att');
  await backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive' }, clock.now()), ids.map((id) => ({ job_id: id, verdict: 'redrive' as const, detail: null })));
  const out = await backend.applyRunItems({ runId: RUN, jobIds: ids, now: clock.now() });
  expect(out.map((i) => [i.job_id, i.status, i.verdict])).toEqual([
    [ids[0], 'skipped', 'skip:malformed'],
    [ids[1], 'moved', 'redrive'],
  ]);
  expect(await raw.hget(`{lg3:q:0}:j:${ids[0]}`, 'st')).toBe('dead');
  expect(await raw.hget(`{lg3:q:0}:j:${ids[1]}`, 'max')).toBe('1');
  expect((await backend.dlqList({ queue: 'q' }, { limit: 10 })).items.map((e) => e.job_id)).toEqual([ids[0]]);
  raw.disconnect();
  await backend.close();
});

it('a damaged job hash in a batch is skipped as malformed; the items around it are moved whole (indexes and counters too)', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg2`), { clock });
  const raw = new Redis(server.url);
  const ids: string[] = [];
  for (const tenant of ['a', 'b', 'c']) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenant, max_attempts: 1 })).job.job_id);
  for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 3, leaseMs: 60_000 })) {
    await backend.fail(lease, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  }
  // a hand edit (or a foreign writer) leaves a field the apply computes with unreadable
  await raw.hset(`{lg2:q:0}:j:${ids[1]}`, 'att', 'abc');
  await backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive' }, clock.now()), ids.map((id) => ({ job_id: id, verdict: 'redrive' as const, detail: null })));
  const out = await backend.applyRunItems({ runId: RUN, jobIds: ids, now: clock.now() });
  expect(out.map((i) => [i.job_id, i.status, i.verdict])).toEqual([
    [ids[0], 'moved', 'redrive'],
    [ids[1], 'skipped', 'skip:malformed'],
    [ids[2], 'moved', 'redrive'],
  ]);
  expect(out[1]!.detail).toContain('its field att'); // (found by the client's full read; the script's own check is the backstop)
  // the moved jobs left the DLQ and can be claimed; the damaged one stays in the DLQ
  expect((await backend.dlqList({ queue: 'q' }, { limit: 10 })).items.map((e) => e.job_id)).toEqual([ids[1]]);
  expect((await backend.stats("q")).dlq_size).toBe(1);
  const again = await backend.claim({ queue: 'q', workerId: 'w', max: 3, leaseMs: 60_000 });
  expect(again.map((l) => l.jobId).sort()).toEqual([ids[0], ids[2]].sort());
  expect((await backend.getRun(RUN))!.counts).toEqual({ planned: 0, moved: 2, skipped: 1, failed: 0 });
  raw.disconnect();
  await backend.close();
});

it('a run whose process died while its ledger was written stays `creating`: --resume refuses it (it moved nothing), dlq runs shows it incomplete', async () => {
  const { resumeRun } = await import('../../src/dlq/engine.js');
  const { withObservedStatus } = await import('../../src/dlq/run-status.js');
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg4`), { clock });
  const { job } = await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: 'a', max_attempts: 1 });
  const [lease] = await backend.claim({ queue: 'q', workerId: 'w', max: 1, leaseMs: 60_000 });
  await backend.fail(lease!, { code: 'PROVIDER_429', message: 'slow down', retryable: false });
  // The process dies at its first ledger script call (as kill -9 would): the record is written, the ledger is not.
  const internals = backend as unknown as { call: (name: string, ...rest: unknown[]) => Promise<unknown> };
  const call = internals.call.bind(backend);
  internals.call = (name: string, ...rest: unknown[]) => (name === 'aqLedgerAdd' ? Promise.reject(new Error('killed')) : call(name, ...rest));
  await expect(backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive' }, clock.now()), [{ job_id: job.job_id, verdict: 'redrive', detail: null }])).rejects.toThrow('killed');
  internals.call = call;
  expect((await backend.getRun(RUN))!.status).toBe('creating');
  const me = { user: 'bob', host: 'box', pid: 2, context: null };
  const deps = { backend, clock, sleep: async () => undefined, newRunId: () => 'run_x', identity: me, probe: () => false };
  await expect(resumeRun(deps, RUN)).rejects.toMatchObject({ code: 'RUN_INCOMPLETE', message: expect.stringContaining('moved nothing') });
  const [shown] = await withObservedStatus(backend, [(await backend.getRun(RUN))!], me, () => false);
  expect(shown!.status).toBe('incomplete');
  expect((await backend.get(job.job_id))!.state).toBe('dead');
  await backend.close();
});

it('apply reads a job\'s effects and attempts list only when its hash counts them: counted ones are checked and moved, an uncounted effects hash keeps the job in the DLQ', async () => {
  const clock = new ManualClock();
  const backend = new RedisBackend(parseRedisUrl(`${server.url}?prefix=lg5`), { clock });
  const raw = new Redis(server.url);
  const ids: string[] = [];
  for (const tenant of ['a', 'b']) ids.push((await backend.submit({ workflow: 'w:v1', queue: 'q', tenant_id: tenant, max_attempts: 2 })).job.job_id);
  // two attempts each (the first one's record goes to the attempts list) and an effect on the first job
  for (let round = 0; round < 2; round++) {
    clock.advance(600_000);
    for (const lease of await backend.claim({ queue: 'q', workerId: 'w', max: 2, leaseMs: 60_000 })) {
      if (lease.jobId === ids[0] && round === 0) {
        await backend.beginEffect(lease, 'send-email');
        await backend.finishEffect(lease, 'send-email', { sent: true });
      }
      await backend.fail(lease, { code: 'PROVIDER_429', message: 'slow down', retryable: round === 0 });
    }
  }
  const dead = (await backend.dlqList({ queue: 'q' }, { limit: 10 })).items;
  expect(dead.map((e) => e.job_id).sort()).toEqual([...ids].sort());
  expect(await raw.llen(`{lg5:q:0}:a:${ids[0]}`)).toBe(1);
  // the second job's hash no longer counts an effects hash that exists (a foreign write)
  await raw.hset(`{lg5:q:0}:e:${ids[1]}`, 'stray', '{"status":"done"}');
  await backend.createRun(runRecord({ run_id: RUN, queue: 'q', action: 'redrive', options: { attempts: { kind: 'reset' }, maxRedrives: 3, minRemainingMs: 0, includePartial: true } }, clock.now()), ids.map((id) => ({ job_id: id, verdict: 'redrive' as const, detail: null })));
  const out = await backend.applyRunItems({ runId: RUN, jobIds: ids, now: clock.now() });
  expect(out.map((i) => [i.job_id, i.status, i.verdict])).toEqual([
    [ids[0], 'moved', 'redrive'],
    [ids[1], 'skipped', 'skip:changed'],
  ]);
  const moved = (await backend.get(ids[0]!))!;
  expect(moved).toMatchObject({ state: 'queued', lineage: { redrive_count: 1 } });
  expect(moved.attempts).toHaveLength(2);
  expect(moved.effects.map((e) => e.key)).toEqual(['send-email']);
  expect((await backend.get(ids[1]!))!.state).toBe('dead');
  raw.disconnect();
  await backend.close();
});
