/**
 * The TUI on the SQS backend (fauxqs, a real SQS-protocol server): what a redrive
 * there leaves behind that `agentq dlq redrive` would have dealt with or said.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup } from 'ink-testing-library';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom, systemClock } from '../../src/core/clock.js';
import { createIdFactory, RUN_ID_PREFIX } from '../../src/core/ids.js';
import { engineRedrive } from '../../src/tui/redrive-gateway.js';
import { backendSource } from '../../src/tui/source.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { KEYS, renderApp } from './support/harness.js';
import { seedDlq } from './support/seed.js';

useEmulatorCredentials();
let server: SqsServer;
beforeAll(async () => {
  server = await startSqsServer();
}, 30_000);
afterAll(async () => {
  await server?.stop();
});
afterEach(() => cleanup());

describe('agentq dlq browse on SQS', () => {
  it('a redrive says the SQS DLQ copies of the jobs it moved are still there, and the command that deletes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-sqs-'));
    const url = sqsUrl(server.endpoint, `tui${process.pid}`, join(dir, 'store.db'), '&autocreate=1&wait=0');
    const backend = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, random: seededRandom(3) });
    try {
      await seedDlq(backend, new ManualClock(Date.now()), 'research', Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(systemClock, seededRandom(9));
      const deps = { backend, clock: systemClock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } };
      const redrive = engineRedrive(deps, { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null });
      const info = { context: 'prod', backend: url, queue: 'research' };
      const app = renderApp({ redrive, info, readOnlyReason: null, tickMs: 0, source: backendSource(backend, { queue: 'research' }), clock: systemClock, size: { columns: 120, rows: 30 } });
      await app.waitForState((s) => !s.isLoading && s.rows.length === 3, 'the DLQ to load');
      await app.press('a', 'R');
      await app.waitFor('Redrive plan for queue research: 3 selected');
      await app.press(KEYS.tab, KEYS.enter);
      const done = (await app.waitFor('Redrive finished: run run_')).replace(/[│\s]+/g, ' ');
      const runId = /run (run_[0-9A-Z]{26})/.exec(done)![1]!;
      expect(done).toContain(`copies of the 3 jobs it moved stay in the SQS DLQ tui${process.pid}-research-dlq`);
      expect(done).toContain(`dlq redrive --resume ${runId}`);
      // Kept for the normal screen: quitting says it again.
      await app.waitForState((s) => s.runNotes.some((n) => n.includes(`dlq redrive --resume ${runId}`)), 'the note kept for the quit');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
