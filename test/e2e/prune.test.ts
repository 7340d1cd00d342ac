/**
 * `agentq prune` end to end: the built CLI against an SQLite store seeded through the backend
 * contract (jobs that ended ten days ago by a clock set back, others just now). What an operator
 * and a nightly script rely on: the plan, a dry run that changes nothing, --yes in scripts, the
 * exit codes of bad input, the runs in the audit, the counts after.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { ManualClock } from '../../src/core/clock.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';

const DAY = 86_400_000;

let home: CliHome;
const old: string[] = [];
const recent: string[] = [];
let dead: string;

/** Submits and ends a job on `backend`: succeeded, or cancelled while waiting. */
async function finished(backend: Backend, queue: string, how: 'succeeded' | 'cancelled', key?: string): Promise<string> {
  const { job } = await backend.submit({ workflow: 'w:v1', queue, tenant_id: 'acme', ...(key ? { idempotency_key: key } : {}) });
  if (how === 'cancelled') await backend.cancel(job.job_id, 'withdrawn');
  else {
    const [lease] = await backend.claim({ queue, workerId: 'w', max: 1, leaseMs: 60_000 });
    expect(lease!.jobId).toBe(job.job_id);
    await backend.complete(lease!, 'ok');
  }
  return job.job_id;
}

beforeAll(async () => {
  home = makeCliHome('agentq-e2e-prune-');
  const past = await openBackend(home.dataUrl, { clock: new ManualClock(Date.now() - 10 * DAY) });
  old.push(await finished(past, 'research', 'succeeded', 'order-1'), await finished(past, 'research', 'cancelled'), await finished(past, 'mail', 'succeeded'));
  const { job } = await past.submit({ workflow: 'w:v1', queue: 'research', tenant_id: 'acme', max_attempts: 1 });
  const [lease] = await past.claim({ queue: 'research', workerId: 'w', max: 1, leaseMs: 60_000 });
  await past.fail(lease!, { code: 'VALIDATION', message: 'bad', retryable: false });
  dead = job.job_id;
  await past.close();
  const today = await openBackend(home.dataUrl);
  recent.push(await finished(today, 'research', 'succeeded'));
  await today.close();
});

afterAll(() => home?.cleanup());

const exists = async (id: string) => (await runCli(home, ['inspect', id, '-o', 'json'])).code === 0;

describe('agentq prune', () => {
  it('refuses bad input with exit 2 naming the rule', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['prune'], /--older-than is required/],
      [['prune', '--older-than', 'soon'], /--older-than "soon" is not a duration/],
      [['prune', '--older-than', '0s'], /too short: at least 1s/],
      [['prune', '--older-than', '7d', '--state', 'dead'], /dead jobs are DLQ entries.*dlq purge/s],
      [['prune', '--older-than', '7d', '--state', 'running'], /cannot be pruned/],
      [['prune', '--older-than', '7d', '--max', '0'], /--max "0" must be a whole number from 1/],
      [['prune', '--older-than', '7d', '--resume', 'run_01JPRVNE000000000000000001'], /--older-than does not apply/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(home, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('plans per queue and state, and a dry run changes nothing', async () => {
    const r = await runCliOk(home, ['prune', '--older-than', '7d', '--dry-run', '-o', 'json']);
    const plan = JSON.parse(r.stdout) as { total: number; states: string[]; groups: Array<{ queue: string; state: string; count: number; oldest_ended_at: string; newest_ended_at: string }> };
    expect(plan.total).toBe(3);
    expect(plan.states).toEqual(['succeeded', 'cancelled', 'expired']);
    expect(plan.groups.map((g) => [g.queue, g.state, g.count])).toEqual([
      ['mail', 'succeeded', 1],
      ['research', 'succeeded', 1],
      ['research', 'cancelled', 1],
    ]);
    expect(Date.parse(plan.groups[0]!.oldest_ended_at)).toBeLessThan(Date.now() - 9 * DAY);
    const plain = await runCliOk(home, ['prune', '--older-than', '7d', '--dry-run', '--queue', 'research', '--state', 'cancelled']);
    expect(plain.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 3).join(' '))).toEqual(['research cancelled 1']);
    expect(plain.stderr).toContain('plan: 1 finished job (cancelled) ended before');
    for (const id of [...old, ...recent, dead]) expect(await exists(id)).toBe(true);
  });

  it('needs --yes without a terminal (exit 3), then deletes the planned jobs only, one run per queue', async () => {
    const refused = await runCli(home, ['prune', '--older-than', '7d']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('add --yes');
    for (const id of old) expect(await exists(id)).toBe(true);

    const before = JSON.parse((await runCliOk(home, ['stats', '--queue', 'research', '-o', 'json'])).stdout) as Array<{ dlq_size: number; queued: number; totals: Record<string, number> }>;
    const r = await runCliOk(home, ['prune', '--older-than', '7d', '--yes', '--reason', 'retention', '-o', 'json']);
    const out = JSON.parse(r.stdout) as { total: number; runs: Array<{ run_id: string; queue: string; action: string; status: string; counts: Record<string, number>; reason: string }> };
    expect(out.runs.map((x) => [x.queue, x.action, x.status, x.counts.moved, x.reason])).toEqual([
      ['mail', 'prune', 'completed', 1, 'retention'],
      ['research', 'prune', 'completed', 2, 'retention'],
    ]);
    for (const id of old) expect(await exists(id)).toBe(false);
    for (const id of [...recent, dead]) expect(await exists(id)).toBe(true);
    const after = JSON.parse((await runCliOk(home, ['stats', '--queue', 'research', '-o', 'json'])).stdout) as typeof before;
    // the lifetime totals stay (the jobs did end); the DLQ is untouched
    expect(after[0]!.totals).toEqual(before[0]!.totals);
    expect(after[0]!.totals.succeeded).toBeGreaterThan(0);
    expect([after[0]!.dlq_size, after[0]!.queued]).toEqual([before[0]!.dlq_size, before[0]!.queued]);
    // the runs are in the audit, and the freed key makes a new job
    const runs = await runCliOk(home, ['dlq', 'runs', '-o', 'json']);
    expect((JSON.parse(runs.stdout) as { items: Array<{ run_id: string }> }).items.map((x) => x.run_id)).toEqual(expect.arrayContaining(out.runs.map((x) => x.run_id)));
    const again = await runCliOk(home, ['submit', 'w:v1', '--queue', 'research', '--tenant', 'acme', '--idempotency-key', 'order-1', '-o', 'json']);
    expect((JSON.parse(again.stdout) as { job_id: string }).job_id).not.toBe(old[0]);
    // nothing left to prune: exit 0, said on stderr
    const none = await runCliOk(home, ['prune', '--older-than', '7d', '--yes']);
    expect(none.stderr).toContain('nothing to prune');
  });

  it('regression: -o json names the queues it covered, also when it finds nothing to prune (it named none)', async () => {
    const one = await runCliOk(home, ['prune', '--older-than', '7d', '--queue', 'research', '--state', 'expired', '--yes', '-o', 'json']);
    expect(one.stderr).toContain('nothing to prune');
    expect(JSON.parse(one.stdout)).toMatchObject({ total: 0, groups: [], runs: [], queues: ['research'] });
    // Without --queue: every queue it walked, in name order (here the store's two), dry run or not.
    const every = await runCliOk(home, ['prune', '--older-than', '7d', '--state', 'expired', '--dry-run', '-o', 'json']);
    expect(JSON.parse(every.stdout)).toMatchObject({ total: 0, queues: ['mail', 'research'] });
  });

  it("a read-only context refuses it (exit 4) but shows its dry run; a context's queue scopes it, -A lifts that", async () => {
    const past = await openBackend(home.dataUrl, { clock: new ManualClock(Date.now() - 10 * DAY) });
    const a = await finished(past, 'research', 'succeeded');
    const b = await finished(past, 'mail', 'succeeded');
    await past.close();
    mkdirSync(join(home.env.XDG_CONFIG_HOME!, 'agentq'), { recursive: true });
    writeFileSync(
      join(home.env.XDG_CONFIG_HOME!, 'agentq', 'config.json'),
      JSON.stringify({ contexts: { ro: { url: home.dataUrl, readOnly: true }, scoped: { url: home.dataUrl, queue: 'mail' } } }),
    );
    const refused = await runCli(home, ['--context', 'ro', 'prune', '--older-than', '7d', '--yes']);
    expect(refused.code).toBe(4);
    expect(await exists(a)).toBe(true);
    const dry = await runCliOk(home, ['--context', 'ro', 'prune', '--older-than', '7d', '--dry-run', '-o', 'json']);
    expect((JSON.parse(dry.stdout) as { total: number }).total).toBe(2);
    const scoped = await runCliOk(home, ['--context', 'scoped', 'prune', '--older-than', '7d', '--dry-run', '-o', 'json']);
    expect((JSON.parse(scoped.stdout) as { groups: Array<{ queue: string }> }).groups.map((g) => g.queue)).toEqual(['mail']);
    await runCliOk(home, ['--context', 'scoped', 'prune', '--older-than', '7d', '--yes']);
    expect([await exists(a), await exists(b)]).toEqual([true, false]);
    await runCliOk(home, ['--context', 'scoped', 'prune', '-A', '--older-than', '7d', '--yes']);
    expect(await exists(a)).toBe(false);
  });
});
