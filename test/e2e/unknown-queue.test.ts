/**
 * A `--queue` the store has never seen (a typo) that finds nothing says so on stderr, naming the
 * queues there, in every command that lists or acts on a selection; an empty queue the store does
 * know stays quiet about it. The exit stays 0: an empty result is a result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/contract.js';
import { openBackend } from '../../src/backend/open.js';
import { collect, makeCliHome, runCliOk, spawnCli, type CliHome } from '../support/cli.js';
import { pollUntil } from '../support/poll.js';

let home: CliHome;
let backend: Backend;

beforeAll(async () => {
  home = makeCliHome('agentq-e2e-unknown-queue-');
  backend = await openBackend(home.dataUrl);
  // a queue with a job and an empty DLQ
  await backend.submit({ workflow: 'research_report:v3', queue: 'research', tenant_id: 'acme' });
});

afterAll(async () => {
  await backend?.close();
  home?.cleanup();
});

const NOTE = 'queue reserach has never had a job in this store (queues here: research)';

describe('a --queue the store has never seen', () => {
  const commands: string[][] = [
    ['list'],
    ['list', '-o', 'json'],
    ['dlq', 'list'],
    ['dlq', 'list', '--all'],
    ['dlq', 'list', '-o', 'json'],
    ['dlq', 'summary'],
    ['dlq', 'export'],
    ['dlq', 'redrive', '--dry-run'],
    ['dlq', 'redrive', '--yes'],
    ['dlq', 'purge', '--yes'],
    ['tail'],
  ];
  for (const cmd of commands) {
    it(`agentq ${cmd.join(' ')} --queue reserach: exit 0, the note on stderr, stdout as for any empty result`, async () => {
      const r = await runCliOk(home, [...cmd, '--queue', 'reserach']);
      expect(r.stderr).toContain(NOTE);
      expect(r.stdout).not.toContain('never had a job');
      const known = await runCliOk(home, [...cmd, '--queue', 'research']);
      expect(known.stderr).not.toContain('never had a job');
    });
  }

  it('tail --follow says it before it waits for events', async () => {
    const child = spawnCli(home, ['tail', '--queue', 'reserach', '--follow', '--events', '0']);
    child.stdin.end();
    const done = collect(child);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    await pollUntil(() => stderr.includes('never had a job'), { timeoutMs: 20_000, what: 'the note' });
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(0); // (Ctrl-C is how a follow ends: README, tail)
    expect(r.stderr).toContain(`${NOTE}; waiting for its events (Ctrl-C to stop)`);
  });
});
