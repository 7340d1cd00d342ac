import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { runWorkerSuite } from './worker-cases.js';

runWorkerSuite('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentq-worker-'));
  const clock = new ManualClock();
  const backend = new SqliteBackend({ path: join(dir, 'store.db'), clock, random: seededRandom(7) });
  return {
    backend,
    clock,
    cleanup: async () => {
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
