/**
 * test/support/servers.ts: whatever started is stopped, also when a sibling
 * start failed or the set-up gave up before a start finished; and a Redis
 * server that cannot start says so at once (redis-server.ts).
 */
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RedisExitedError, startRedisServer } from '../support/redis-server.js';
import { TestServers } from '../support/servers.js';

function fakeServer() {
  const s = { stopped: 0, stop: async () => void s.stopped++ };
  return s;
}

describe('TestServers', () => {
  it('stops a server that came up although its sibling failed to start', async () => {
    const servers = new TestServers();
    const up = fakeServer();
    const started = Promise.all([servers.start(Promise.resolve(up)), servers.start(Promise.reject(new Error('no port')))]);
    await expect(started).rejects.toThrow('no port');
    await servers.stopAll();
    expect(up.stopped).toBe(1);
  });

  it('waits for a start still under way (the set-up timed out) and stops it once it is up', async () => {
    const servers = new TestServers();
    const late = fakeServer();
    let finish!: (s: typeof late) => void;
    void servers.start(new Promise<typeof late>((r) => (finish = r)));
    let stopped = false;
    const stopping = servers.stopAll().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish(late);
    await stopping;
    expect(late.stopped).toBe(1);
  });
});

describe('startRedisServer', () => {
  it('a server that cannot bind its port fails at once with its log, not after a minute of PINGs', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as AddressInfo).port;
    try {
      const err = await startRedisServer({ port }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisExitedError);
      expect((err as Error).message).toMatch(new RegExp(`redis-server on ${port} exited`));
    } finally {
      taken.close();
    }
  });
});
