/**
 * The SQLite job store's SQS outbox keeps a published row only for SQS's 5-minute deduplication
 * window: each row used to stay for ever (one per publish). Against fauxqs on loopback, with the
 * store's clock moved by hand: rows published more than 5 minutes ago are pruned with the next
 * publish, and `outbox status` still counts them as published.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqsBackend } from '../../src/backend/sqs/index.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { sqsUrl, useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { withDb } from '../support/sqlite-db.js';
import { TestServers } from '../support/servers.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();
let sqs: SqsServer;
const servers = new TestServers();
let dir: string;
beforeAll(async () => {
  sqs = await servers.start(startSqsServer());
  dir = mkdtempSync(join(tmpdir(), 'agentq-outbox-prune-'));
});
afterAll(async () => {
  await servers.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQS outbox on a SQLite job store', () => {
  it('prunes rows published before the 5-minute deduplication window, in the next publish; outbox status still counts them', async () => {
    const path = join(dir, 'store.db');
    const url = sqsUrl(sqs.endpoint, `op${process.pid}`, path, '&autocreate=1&wait=0');
    const clock = new ManualClock();
    const b = new SqsBackend({ url: parseSqsUrl(url, url), shown: url, clock, random: seededRandom(7) });
    try {
      for (const queue of ['a', 'a', 'b']) expect((await b.submit({ workflow: 'w:v1', queue })).unpublished).toBeUndefined();
      const rows = () => withDb(path, (db) => db.prepare('SELECT queue, published_at IS NOT NULL AS published FROM sqs_outbox ORDER BY id').all());
      expect(rows()).toEqual([{ queue: 'a', published: 1 }, { queue: 'a', published: 1 }, { queue: 'b', published: 1 }]);

      // Within the window, nothing is pruned; past it, the next publish prunes the old rows.
      clock.advance(5 * 60_000 - 1);
      await b.submit({ workflow: 'w:v1', queue: 'b' });
      expect(rows()).toHaveLength(4);
      clock.advance(2);
      await b.submit({ workflow: 'w:v1', queue: 'b' });
      expect(rows()).toEqual([{ queue: 'b', published: 1 }, { queue: 'b', published: 1 }]);

      expect(await b.outboxStatus()).toMatchObject({ pending: 0, published: 5 });
      // (per queue too: outbox status --queue counts a queue's pruned rows)
      expect(withDb(path, (db) => db.prepare('SELECT queue, published FROM sqs_outbox_pruned ORDER BY queue').all())).toEqual([{ queue: 'a', published: 2 }, { queue: 'b', published: 1 }]);
    } finally {
      await b.close();
    }
  });
});
