/**
 * SIGKILL fault test of `agentq dlq redrive` on the SQS backend (fauxqs on
 * loopback as the broker, a SQLite job store with the outbox): the same
 * scenario as on SQLite (redrive-kill-scenario.ts). Plans and ledgers run
 * against the store; a redriven job goes back to SQS through the outbox.
 * Smaller than the SQLite run: seeding goes through SQS receives of 10.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';
import { runRedriveKillScenario } from './redrive-kill-scenario.js';

let server: SqsServer | undefined;
afterAll(async () => {
  await server?.stop();
});

// The emulator takes any credentials; they come through the SDK's default chain (env), as a user would set them.
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';

runRedriveKillScenario(
  'sqs',
  async () => {
    server = await startSqsServer();
    const dir = await mkdtemp(join(tmpdir(), 'agentq-redrive-sqs-'));
    const store = encodeURIComponent(`sqlite:${join(dir, 'store.db')}`);
    return {
      url: `sqs://us-east-1/rk${process.pid}?endpoint=${encodeURIComponent(server.endpoint)}&store=${store}&autocreate=1&wait=0`,
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
  { size: 1000, kills: 3 },
);
