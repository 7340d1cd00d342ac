/**
 * Hostile strings through the real CLI: stored by submit and cancel (the
 * fields that accept free text), then printed by every command in every
 * non-terminal output mode. Not one control byte, escape introducer or bidi
 * control from the data may reach stdout or stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../src/core/schemas.js';
import { makeCliHome, runCli, runCliOk, type CliHome } from '../support/cli.js';
import { HOSTILE_STRINGS, findUnsafe } from '../support/hostile.js';

// argv cannot carry NUL, and lone surrogates do not survive UTF-8 encoding of argv.
const usable = HOSTILE_STRINGS.filter((h) => !h.value.includes('\0') && !/[\ud800-\udfff]/.test(h.value));

// Few jobs, each carrying many hostile strings (one spawn is ~0.3 s; the corpus is long).
const joined = usable.map((h) => h.value).join(' | ');
const chunks: string[] = [];
for (let i = 0; i < joined.length; i += 120) chunks.push(joined.slice(i, i + 120));

let home: CliHome;
const ids: string[] = [];
beforeAll(async () => {
  home = makeCliHome();
  for (const [i, chunk] of chunks.entries()) {
    const r = await runCliOk(home, [
      'submit', 'hostile:v1', '--queue', 'hostile',
      '--operation', chunk, '--trace-id', chunk, '--idempotency-key', `${i}-${chunk}`,
      ...usable.flatMap((h) => ['--allowed-tool', h.value]),
      '--input', joined,
    ]);
    ids.push(r.stdout.trim());
  }
  await runCliOk(home, ['cancel', ...ids, '--reason', joined]);
});
afterAll(() => home.cleanup());

describe('hostile data through the CLI', () => {
  it('the strings were stored exactly (the test data really is hostile)', async () => {
    const job = Job.parse(JSON.parse((await runCliOk(home, ['inspect', ids[0]!, '-o', 'json'])).stdout));
    expect(job.operation).toBe(chunks[0]);
    expect(job.cancel_reason).toBe(joined);
    expect(job.allowed_tools).toEqual(usable.map((h) => h.value));
    expect(findUnsafe(job.cancel_reason!)).not.toEqual([]);
  });

  const modes = ['plain', 'wide', 'table', 'json', 'ndjson'] as const;
  it.each(modes)('inspect, -o %s', async (mode) => {
    for (const id of ids.slice(0, 2)) {
      const r = await runCliOk(home, ['inspect', id, '-o', mode]);
      expect(findUnsafe(r.stdout, { allowTabs: mode === 'plain' })).toEqual([]);
      expect(findUnsafe(r.stderr)).toEqual([]);
    }
  });

  it.each(modes)('list, tail and cancel, -o %s', async (mode) => {
    for (const args of [['list', '--queue', 'hostile', '--all'], ['tail', '--queue', 'hostile'], ['cancel', ...ids]]) {
      const r = await runCliOk(home, [...args, '-o', mode]);
      expect(r.stdout.length).toBeGreaterThan(0);
      expect(findUnsafe(r.stdout, { allowTabs: mode === 'plain' })).toEqual([]);
      expect(findUnsafe(r.stderr)).toEqual([]);
    }
  });

  it('error messages that quote hostile input are neutralised too', async () => {
    for (const args of [['inspect', joined], ['submit', `${joined}:v1`], ['list', '--state', joined], ['--context', joined, 'list'], ['help', joined]]) {
      const r = await runCli(home, args);
      expect(r.code).not.toBe(0);
      expect(r.stderr.length).toBeGreaterThan(0);
      expect(findUnsafe(r.stderr)).toEqual([]);
      expect(findUnsafe(r.stdout)).toEqual([]);
    }
  });
});
