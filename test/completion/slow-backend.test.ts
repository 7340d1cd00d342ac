/**
 * A TAB must never hang the shell: `agentq __complete` against a real
 * redis-server that has stopped answering (SIGSTOP: it still accepts TCP
 * connections, it never replies) gives up at its deadline and exits 0 with
 * no candidates, instead of waiting for the connection or for its close.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

let redis: RedisServer;
let home: CliHome;
let pid: number;

beforeAll(async () => {
  redis = await startRedisServer();
  pid = Number(/process_id:(\d+)/.exec(redis.cli('INFO', 'server'))![1]);
  home = makeCliHome('agentq-complete-slow-');
}, 60_000);

afterAll(async () => {
  if (pid) process.kill(pid, 'SIGCONT');
  await redis?.stop();
  home?.cleanup();
});

describe('live completion values from a backend that stops answering', () => {
  it('come from the backend while it answers', async () => {
    // A generous deadline here: on a loaded machine loading ioredis alone can take longer than 0.5 s.
    const env = { AGENTQ_URL: redis.url, AGENTQ_COMPLETE_TIMEOUT_MS: '20000' };
    await runCliOk(home, ['submit', 'demo:v1', '--queue', 'on-redis'], { env });
    const r = await runCliOk(home, ['__complete', 'queues'], { env });
    expect(r.stdout).toBe('on-redis\n');
  });

  it('are given up on at the deadline: exit 0, nothing printed, no hang', async () => {
    process.kill(pid, 'SIGSTOP');
    try {
      // The default ~0.5 s deadline; runCli's 30 s safety net is far above it, so a hang fails here.
      const r = await runCli(home, ['__complete', 'queues'], { env: { AGENTQ_URL: redis.url }, timeoutMs: 30_000 });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });
});

describe('live completion values from a SQLite database another process is writing to', () => {
  it('still come: opening a current schema takes no write lock', async () => {
    const local = makeCliHome('agentq-complete-locked-');
    try {
      await runCliOk(local, ['submit', 'x:v1', '--queue', 'locked-q']);
      const other = new Database(local.dataUrl.slice('sqlite:'.length));
      other.exec('BEGIN IMMEDIATE');
      try {
        // A deadline far past the 10 s busy timeout: before, the open waited out the lock and failed.
        const r = await runCliOk(local, ['__complete', 'queues', '--'], { env: { AGENTQ_COMPLETE_TIMEOUT_MS: '60000' } });
        expect(r.stdout).toBe('locked-q\n');
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
    } finally {
      local.cleanup();
    }
  }, 30_000);
});
