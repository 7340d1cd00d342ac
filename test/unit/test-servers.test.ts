/**
 * test/support/servers.ts: whatever started is stopped, also when a sibling
 * start failed or the set-up gave up before a start finished.
 */
import { describe, expect, it } from 'vitest';
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
