/**
 * kill -9 fault test on the embedded SQLite store (see worker-kill-scenario.ts).
 * Runs the built library (dist/): `npm test` builds first.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkerKillScenario } from './worker-kill-scenario.js';

runWorkerKillScenario('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentq-fault-'));
  return { url: `sqlite:${join(dir, 'store.db')}`, cleanup: () => rm(dir, { recursive: true, force: true }) };
});
