/**
 * A store with more queues than one page of `Backend.queues` (1,000): the commands that go through
 * every queue reach those past the first page. `dlq check` without --queue (the cron alert) once
 * never checked them, `stats` never showed them, and a typed queue past them read as unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE_LIMIT, type Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { seedDead } from '../dlq/seed.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';

let home: CliHome;
let backend: Backend;
/** Sorts after every `q-NNNN`: on the second page. */
const LATE = 'zz-late';

beforeAll(async () => {
  home = makeCliHome('agentq-e2e-many-queues-');
  backend = await openBackend(home.dataUrl);
  for (let i = 0; i < MAX_PAGE_LIMIT; i++) await backend.submit({ workflow: 'research_report:v3', queue: `q-${String(i).padStart(4, '0')}`, tenant_id: 'acme' });
  await seedDead(backend, () => Date.now(), [{ queue: LATE }]);
}, 120_000);

afterAll(async () => {
  await backend?.close();
  home?.cleanup();
});

describe('more queues than one page', () => {
  it('dlq check without --queue checks the queues past the first 1,000 too', async () => {
    const r = await runCli(home, ['dlq', 'check', '--max-size', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`queue ${LATE}: DLQ holds 1 job`);
  });

  it('dlq check --queue takes a queue past the first 1,000 as known', async () => {
    const r = await runCli(home, ['dlq', 'check', '--queue', LATE, '--max-size', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain('not known');
  });

  it('stats shows every queue', async () => {
    const doc = JSON.parse((await runCliOk(home, ['stats', '-o', 'json'])).stdout) as unknown;
    const queues = (Array.isArray(doc) ? doc : (doc as { queues: unknown[] }).queues) as Array<{ queue: string }>;
    expect(queues).toHaveLength(MAX_PAGE_LIMIT + 1);
    expect(queues.at(-1)!.queue).toBe(LATE);
  });

  it('an unknown queue names a few queues and how many more, not a thousand', async () => {
    const r = await runCliOk(home, ['dlq', 'list', '--queue', 'reserach']);
    expect(r.stderr).toContain('(queues here: q-0000, q-0001, q-0002, q-0003, q-0004, q-0005, q-0006, q-0007, q-0008, q-0009, and 991 more)');
  });
});
