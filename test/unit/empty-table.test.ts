/**
 * A table with no rows: the one rule every listing shares (RecordStream). A header alone reads as
 * output cut short, so a table or plain listing with no rows prints nothing on stdout and says so in
 * one line on stderr, as kubectl prints "No resources found in <ns> namespace." (exit 0); json and
 * ndjson stay machine-shaped ([] and nothing) and say nothing.
 */
import { describe, expect, it } from 'vitest';
import { NO_COLOUR } from '../../src/cli/output/colour.js';
import { RecordStream, printRecords, type OutputFormat, type OutputTarget } from '../../src/cli/output/format.js';

interface Row {
  name: string;
  n: number;
}
const spec = { columns: [{ header: 'NAME', get: (r: Row) => r.name }, { header: 'COUNT', get: (r: Row) => r.n }], empty: 'No things match this selection.' };

function target(format: OutputFormat): { out: OutputTarget; stdout: () => string; notes: string[] } {
  let text = '';
  const notes: string[] = [];
  return { out: { format, write: (s) => void (text += s), width: 80, palette: NO_COLOUR, note: (l) => void notes.push(l) }, stdout: () => text, notes };
}

describe('a listing with no rows', () => {
  it.each(['table', 'wide', 'plain'] as const)('-o %s: nothing on stdout (no header alone), the line on stderr', async (format) => {
    const t = target(format);
    await printRecords(t.out, spec, []);
    expect(t.stdout()).toBe('');
    expect(t.notes).toEqual(['No things match this selection.']);
  });

  it('-o json is [] and -o ndjson nothing, and neither says more', async () => {
    const json = target('json');
    await printRecords(json.out, spec, []);
    expect(JSON.parse(json.stdout())).toEqual([]);
    const ndjson = target('ndjson');
    await printRecords(ndjson.out, spec, []);
    expect(ndjson.stdout()).toBe('');
    expect([...json.notes, ...ndjson.notes]).toEqual([]);
  });

  it('a stream whose first pages are empty prints the header once, with the first rows, and no line', async () => {
    const t = target('table');
    const stream = new RecordStream(t.out, spec);
    await stream.page([]);
    await stream.page([{ name: 'a', n: 1 }]);
    await stream.page([]);
    await stream.page([{ name: 'b', n: 2 }]);
    stream.end();
    expect(t.stdout().trimEnd().split('\n')).toEqual(['NAME  COUNT', 'a     1', 'b     2']);
    expect(t.notes).toEqual([]);
  });

  it('a stream that waits for rows (tail --follow) may show its header at once; it then ends without the line', async () => {
    const t = target('table');
    const stream = new RecordStream(t.out, spec);
    await stream.header();
    await stream.header();
    stream.end();
    expect(t.stdout()).toBe('NAME  COUNT\n');
    expect(t.notes).toEqual([]);
    // (plain has no header to show: it says nothing until rows come, and the line at its end)
    const p = target('plain');
    const plain = new RecordStream(p.out, spec);
    await plain.header();
    plain.end();
    expect([p.stdout(), p.notes]).toEqual(['', ['No things match this selection.']]);
  });
});
