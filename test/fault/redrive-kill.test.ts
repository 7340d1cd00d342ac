/**
 * SIGKILL fault test of `agentq dlq redrive` on the embedded SQLite store
 * (see redrive-kill-scenario.ts). Spawns the built CLI: `npm test` builds first.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRedriveKillScenario } from './redrive-kill-scenario.js';

runRedriveKillScenario('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentq-redrive-fault-'));
  return { url: `sqlite:${join(dir, 'store.db')}`, cleanup: () => rm(dir, { recursive: true, force: true }) };
});
