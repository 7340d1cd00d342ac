/**
 * `tail`'s gap record (events trimmed from the store before they were read): in json and ndjson a
 * record in line with the events that no consumer can take for an event; nothing on stdout in the
 * human formats (stderr says it there).
 */
import { describe, expect, it } from 'vitest';
import type { EventGap } from '../../src/backend/contract.js';
import { gapRecord, gapWarning } from '../../src/cli/commands/tail-gap.js';
import { EVENT_COLUMNS } from '../../src/cli/commands/tail.js';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import { RecordStream, type OutputFormat } from '../../src/cli/output/format.js';
import { EVENT_TYPES } from '../../src/core/model.js';
import { JobEvent, type JobEvent as JobEventT } from '../../src/core/schemas.js';

const gap: EventGap = { where: 'queue research shard 1', queue: 'research', shard: 1, jobId: null, afterSeq: '1767225600000-0', resumedSeq: '1767225600312-4', lost: 312 };
const event = (seq: string): JobEventT => ({ type: 'submitted', seq, at: '2026-01-01T00:00:00.000Z', job_id: 'job_01M8QJB537DKTRP0J7VGXPFJX2', queue: 'research', tenant_id: 'a', from_state: null, to_state: 'queued', attempt: 0, data: null });

async function write(format: OutputFormat): Promise<string> {
  let text = '';
  const stream = new RecordStream({ format, write: (s) => void (text += s), width: 200, palette: NO_COLOUR }, { columns: EVENT_COLUMNS, empty: 'No events.' });
  await stream.page([event('1767225600000-0')]);
  await stream.extra(gapRecord(gap));
  await stream.page([event('1767225600312-4')]);
  stream.end();
  return text;
}

describe('tail gap record', () => {
  it('is no event: "gap" is not an event type, and the event schema refuses the record', () => {
    expect(EVENT_TYPES as readonly string[]).not.toContain('gap');
    expect(JobEvent.safeParse(gapRecord(gap)).success).toBe(false);
    expect(gapRecord(gap)).toEqual({ type: 'gap', gap: { queue: 'research', shard: 1, job_id: null, after_seq: '1767225600000-0', resumed_seq: '1767225600312-4', lost: 312 } });
  });

  it('-o ndjson: one line in its place between the events', async () => {
    const lines = (await write('ndjson')).trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(['submitted', 'gap', 'submitted']);
  });

  it('-o json: an item of the one array, in its place', async () => {
    expect((JSON.parse(await write('json')) as Array<{ type: string }>).map((l) => l.type)).toEqual(['submitted', 'gap', 'submitted']);
  });

  it('table and plain: not on stdout (the warning on stderr says it)', async () => {
    for (const format of ['table', 'wide', 'plain'] as const) {
      const text = await write(format);
      expect(text).not.toMatch(/gap/);
      expect(text.match(/1767225600312-4|submitted/g)?.length).toBeGreaterThanOrEqual(2);
    }
    expect(gapWarning(gap)).toBe('tail: 312 events of queue research shard 1 after seq 1767225600000-0 were trimmed from the store before they were read (the stream keeps the last events_maxlen per shard); going on from seq 1767225600312-4');
  });
});
