/**
 * The SDK client (sdk.ts: `sqs setup`, `autocreate=1`, `client=sdk`) against an endpoint that
 * accepts connections and never answers (a stalled proxy, a wrong port on a firewall that holds
 * connections): each call times out and is retried a bounded number of times, then fails as
 * "SQS is unreachable" (exit 75). Before, it had no request timeout and waited for ever.
 */
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAgentqError } from '../../src/backend/sqs/client.js';
import { createSqsClient } from '../../src/backend/sqs/sdk.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';

useEmulatorCredentials();
let server: Server;
const sockets = new Set<Socket>();
let endpoint: string;
beforeAll(async () => {
  server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('the SDK client against an endpoint that never answers', () => {
  it('fails each attempt at its request timeout and gives up after its attempts, as "SQS is unreachable" (exit 75)', async () => {
    const client = createSqsClient({ region: 'us-east-1', endpoint }, { requestMs: 300 });
    try {
      const err = await client.send(new CreateQueueCommand({ QueueName: 'never-answered' })).catch((e: unknown) => e);
      const mapped = toAgentqError(err, 'setting up never-answered');
      expect(mapped.message).toMatch(/^SQS is unreachable \(setting up never-answered: /);
      expect(mapped.exitCode).toBe(75);
    } finally {
      client.destroy();
    }
  }, 30_000);
});
