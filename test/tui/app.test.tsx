import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteBackend } from '../../src/backend/sqlite/index.js';
import { ManualClock, seededRandom } from '../../src/core/clock.js';
import { createIdFactory, RUN_ID_PREFIX } from '../../src/core/ids.js';
import { engineRedrive } from '../../src/tui/redrive-gateway.js';
import { selectionText } from '../../src/cli/commands/dlq-browse.js';
import { backendSource } from '../../src/tui/source.js';
import { findUnsafe, HOSTILE_STRINGS } from '../support/hostile.js';
import { displayWidth } from '../../src/cli/output/width.js';
import { pollUntil } from '../support/poll.js';
import { arraySource, makeEntry, T0 } from './support/entries.js';
import { KEYS, renderApp } from './support/harness.js';
import { seedDlq } from './support/seed.js';

afterEach(() => cleanup());

const info = { context: 'prod', backend: 'sqlite:/tmp/x.db', queue: 'research' };
const base = { redrive: null, info, readOnlyReason: null, tickMs: 0 };

function lines(frame: string): string[] {
  return frame.split('\n');
}

describe('list', () => {
  it('renders only the rows that fit, and the frame stays one line shorter than the terminal', async () => {
    const entries = Array.from({ length: 5000 }, (_, i) => makeEntry(i));
    const app = renderApp({ ...base, source: arraySource(entries), clock: new ManualClock(T0), size: { columns: 160, rows: 30 } });
    const frame = await app.waitFor('total 5,000');
    expect(lines(frame).length).toBeLessThanOrEqual(29);
    expect(lines(frame).filter((l) => l.includes('job_01J')).length).toBe(30 - 1 - 4);
    await app.press('G');
    const bottom = await app.waitFor(entries[4999]!.job_id);
    expect(bottom).not.toContain(entries[0]!.job_id);
    expect(lines(bottom).length).toBeLessThanOrEqual(29);
  });

  it('shows the columns: id, workflow, tenant, error, attempts, age, deadline, partial, redrives', async () => {
    const entries = [makeEntry(0, { deadlineIn: -5000, isPartial: true, redriveCount: 2, tenant: 'globex', errorCode: 'TOOL_TIMEOUT' }), makeEntry(1, { deadlineIn: 90 * 60_000 })];
    const app = renderApp({ ...base, source: arraySource(entries), clock: new ManualClock(T0), size: { columns: 160, rows: 12 } });
    const frame = await app.waitFor('total 2');
    const header = lines(frame).find((l) => l.includes('JOB'))!;
    for (const col of ['JOB', 'WORKFLOW', 'TENANT', 'ERROR', 'ATT', 'AGE', 'DEADLINE', 'PARTIAL', 'REDRV']) expect(header).toContain(col);
    const first = lines(frame).find((l) => l.includes(entries[0]!.job_id))!;
    expect(first).toMatch(/research_report:v3\s+globex\s+TOOL_TIMEOUT\s+3\/3\s+1m\s+expired yes\s+2/);
    const second = lines(frame).find((l) => l.includes(entries[1]!.job_id))!;
    expect(second).toMatch(/2m\s+1h30m -\s+0/);
    expect(frame).toContain('expired 1 · partial 1');
  });

  it('follows a terminal resize', async () => {
    const entries = Array.from({ length: 100 }, (_, i) => makeEntry(i));
    const props = { ...base, source: arraySource(entries), clock: new ManualClock(T0) };
    const app = renderApp({ ...props, size: { columns: 160, rows: 30 } });
    await app.waitFor('total 100');
    app.instance.rerender(<AppWithSize {...props} size={{ columns: 100, rows: 12 }} onStateRef={app} />);
    // (at 100 columns the id is shortened to `job_…` and its distinguishing end)
    const small = await app.waitFor((f) => lines(f).filter((l) => l.includes('job_')).length === 12 - 1 - 4);
    expect(lines(small).length).toBeLessThanOrEqual(11);
    expect(Math.max(...lines(small).map((l) => [...l].length))).toBeLessThanOrEqual(100);
  });

  it('a terminal too short for the header, one row and the status bar says so in one line instead of a frame taller than the screen', async () => {
    const entries = Array.from({ length: 10 }, (_, i) => makeEntry(i));
    const props = { ...base, source: arraySource(entries), clock: new ManualClock(T0) };
    for (const rows of [3, 4, 5]) {
      const app = renderApp({ ...props, size: { columns: 80, rows } });
      const f = await app.waitFor('too small', `the ${rows}-row note`);
      expect(lines(f).length, String(rows)).toBeLessThanOrEqual(rows - 1);
      expect(f).toContain(`this terminal (80×${rows}) is too small: the app needs at least 6 rows · q quits`);
      // Keys still work: enlarged, the list is there.
      app.instance.rerender(<App {...props} size={{ columns: 80, rows: 12 }} />);
      await app.waitFor(entries[0]!.job_id.slice(-7));
      app.unmount();
    }
  });

  it('below 80 columns DEADLINE and PARTIAL stay on screen: the id is shortened to its end, then workflow and tenant go', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => makeEntry(i, { deadlineIn: -5000, isPartial: i === 0 }));
    for (const columns of [79, 70, 60, 50]) {
      const app = renderApp({ ...base, source: arraySource(entries), clock: new ManualClock(T0), size: { columns, rows: 12 } });
      const f = await app.waitFor('total 5');
      const header = lines(f).find((l) => l.includes('JOB'))!;
      expect(header, String(columns)).toMatch(/DEADLINE PARTIAL\s*$/);
      expect(Math.max(...lines(f).map((l) => [...l].length)), String(columns)).toBeLessThanOrEqual(columns);
      const first = lines(f).find((l) => l.includes('yes'))!;
      // the end of the id, which tells ids of one DLQ apart, is what stays
      expect(first, String(columns)).toContain(`job_…${entries[0]!.job_id.slice(-7)}`);
      expect(first, String(columns)).toMatch(/expired yes\s*$/);
      app.unmount();
    }
  });
});

describe('loading', () => {
  it('says how many entries are coming (from the counters) while the rows stream in', async () => {
    const entries = Array.from({ length: 30 }, (_, i) => makeEntry(i));
    const rows = arraySource(entries, 10);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const source = {
      ...rows,
      expectedTotal: async () => 30,
      async *pages(signal: AbortSignal) {
        let n = 0;
        for await (const page of rows.pages(signal)) {
          if (n++ === 1) await gate; // the second page waits until the test has seen the header
          yield page;
        }
      },
    };
    const app = renderApp({ ...base, source, clock: new ManualClock(T0), size: { columns: 160, rows: 20 } });
    await app.waitFor('total 10 of ~30 · shown 10');
    expect(app.frame()).toContain('loading…');
    release();
    const done = await app.waitFor((f) => f.includes('total 30 · shown 30') && !f.includes('loading…'));
    expect(done).not.toContain('of ~');
  });

  it('E opened while loading says the codes are those loaded so far, and lists the codes that arrive later', async () => {
    const entries = Array.from({ length: 30 }, (_, i) => makeEntry(i, { errorCode: i < 10 ? 'PROVIDER_429' : 'TOOL_TIMEOUT' }));
    const rows = arraySource(entries, 10);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const source = {
      ...rows,
      expectedTotal: async () => 30,
      async *pages(signal: AbortSignal) {
        let n = 0;
        for await (const page of rows.pages(signal)) {
          if (n++ === 1) await gate;
          yield page;
        }
      },
    };
    const app = renderApp({ ...base, source, clock: new ManualClock(T0), size: { columns: 160, rows: 20 } });
    await app.waitFor('total 10 of ~30 · shown 10');
    await app.press('E');
    const partial = await app.waitFor('Pick an error code');
    expect(partial).toContain('still loading: only the 10 of ~30 entries loaded so far');
    expect(partial).not.toContain('TOOL_TIMEOUT');
    release();
    const whole = await app.waitFor((f) => f.includes('TOOL_TIMEOUT'));
    expect(whole).not.toContain('still loading');
    expect(whole).toMatch(/TOOL_TIMEOUT\s+20/);
  });

  it('asks the backend counters only when the selection is a whole queue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(3) });
    try {
      await seedDlq(backend, clock, 'research', [{ errorCode: 'PROVIDER_429' }, { errorCode: 'SCHEMA_INVALID' }]);
      expect(await backendSource(backend, { queue: 'research' }).expectedTotal!()).toBe(2);
      expect(await backendSource(backend, { queue: 'research', errorCodes: ['PROVIDER_429'] }).expectedTotal!()).toBeNull();
      // Every queue (no --queue): the counters of each queue, summed.
      await seedDlq(backend, clock, 'support', [{ errorCode: 'TOOL_TIMEOUT' }]);
      expect(await backendSource(backend, {}).expectedTotal!()).toBe(3);
      expect(await backendSource(backend, { errorCodes: ['PROVIDER_429'] }).expectedTotal!()).toBeNull();
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The harness's rerender needs the same onState hook; this keeps it attached.
import { App, type AppProps } from '../../src/tui/App.js';
function AppWithSize(p: AppProps & { onStateRef: unknown }) {
  const { onStateRef: _ignored, ...props } = p;
  return <App {...props} />;
}

describe('filters and views through the keyboard', () => {
  const entries = Array.from({ length: 40 }, (_, i) =>
    makeEntry(i, {
      errorCode: i < 30 ? 'PROVIDER_429' : 'SCHEMA_INVALID',
      workflow: i % 2 === 0 ? 'research_report:v3' : 'summarise:v1',
      tenant: i < 20 ? 'acme' : 'globex',
      deadlineIn: i < 5 ? -1000 : 3_600_000,
      isPartial: i >= 5 && i < 8,
    }),
  );
  const open = () => renderApp({ ...base, source: arraySource(entries), clock: new ManualClock(T0), size: { columns: 160, rows: 30 } });

  it('e, p, / and Esc change what is shown, and the header counts follow', async () => {
    const app = open();
    await app.waitFor('total 40 · shown 40 · expired 5 · partial 3');
    await app.press('e');
    await app.waitFor('shown 35');
    await app.press('p');
    await app.waitFor('shown 32');
    await app.press('/', ...'schema');
    await app.waitFor('shown 10');
    await app.press(KEYS.enter, '/', 'x', 'x');
    await app.waitFor('shown 0');
    await app.press(KEYS.esc);
    const f = await app.waitFor('shown 10');
    expect(f).toContain('filter: text="schema" no expired no partial');
  });

  it('a key the app does not bind (Ctrl-F1, Ctrl-F13) or a pasted colour code is ignored, not a crash', async () => {
    const app = open();
    await app.waitFor('total 40');
    // xterm's Ctrl-F1 and Ctrl-F13, a focus report, then in the filter a pasted "ESC[31m".
    await app.press('\x1b[1;5P', '\x1b[25;5~', '\x1b[I', 'j');
    await app.waitForState((s) => s.list.cursor === 1, 'the cursor moved by j after the unknown keys');
    await app.press('/', ...'sche', '\x1b[31m', ...'ma');
    const f = await app.waitFor('shown 10');
    expect(f).toContain('filter: text="schema"');
    await app.press(KEYS.esc, KEYS.down, KEYS.pgdn, KEYS.home, KEYS.end);
    await app.waitForState((s) => s.list.cursor === 39, 'named keys still work');
  });

  it('Esc and the key after it arriving in one read (a fast typist, ssh, tmux) are two keys: the Esc is never lost', async () => {
    const app = open();
    await app.waitFor('total 40');
    // Ink reads "ESC /" as "/" alone, and "ESC Enter" as Enter alone.
    await app.press(KEYS.enter);
    await app.waitForState((s) => s.mode === 'detail', 'the entry open');
    await app.press('\x1b/');
    await app.waitForState((s) => s.mode === 'filter', 'Esc left the entry, / opened the filter');
    await app.press(...'schema', '\x1b\r');
    await app.waitForState((s) => s.mode === 'detail' && s.filter.text === '', 'Esc restored the filter, Enter opened the entry');
    await app.press('\x1b?');
    await app.waitForState((s) => s.mode === 'list' && s.isHelpOpen, 'Esc left the entry, ? opened the help');
    await app.press('\x1b ');
    await app.waitForState((s) => !s.isHelpOpen && s.selected.size === 1, 'Esc closed the help, Space selected');
    await app.press('\x1b\t', '\x1b\x7f');
    await app.waitForState((s) => s.mode === 'list' && s.selected.size === 1, 'nothing else happened');
  });

  it('a paste of a whole log into / stops at 200 characters, as --grep, and says so', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('/', `schema${'Y'.repeat(5000)}`);
    await app.waitFor('the text filter takes at most 200 characters, as --grep');
    await app.waitForState((s) => s.textDraft === `schema${'Y'.repeat(194)}`, 'the first 200 characters typed');
    await app.press(KEYS.esc);
    await app.waitForState((s) => s.mode === 'list' && s.filter.text === '', 'Esc restored the empty filter');
  });

  it('a two-line paste into / stays text: its second line is not run as commands (a, e)', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('/', 'schema\nat a e\tx');
    await app.waitForState((s) => s.textDraft === 'schema at a e x', 'the paste typed with spaces');
    expect(app.state.mode).toBe('filter');
    expect(app.state.selected.size).toBe(0);
    expect(app.state.filter.hideExpired).toBe(false);
  });

  // Regression: a paste was read as keys wherever it landed. A job id copied from an alert and pasted
  // into the list opened the queue and error-code pickers, toggled filters, and its `q` quit the app;
  // a line copied with its line break submitted the filter. The app now turns on the terminal's
  // bracketed paste (ESC[200~ … ESC[201~): a paste is text in the filter and the dialog, nothing else.
  it('a bracketed paste is never run as keys: ignored in the list (said), typed whole into / without its final line break', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('\x1b[200~job_01J0000000000000000000Q a e x q\r\x1b[201~');
    await app.waitFor('a paste is not typed here');
    expect(app.state.mode).toBe('list');
    expect(app.state.isQuitting).toBe(false);
    expect(app.state.selected.size).toBe(0);
    expect(app.state.filter.hideExpired).toBe(false);
    // Into the filter, in several reads (a long paste) with a colour code inside: text, the line break a space,
    // the final one dropped, the colour code not typed.
    await app.press('/', '\x1b[200~schema', '\x1b[31m\nq', 'a\r\n', '\x1b[201~');
    await app.waitForState((s) => s.textDraft === 'schema qa', 'the paste typed as one line');
    expect(app.state.mode).toBe('filter');
    expect(app.state.isQuitting).toBe(false);
    // Keys work as before after it.
    await app.press(KEYS.esc, 'q');
    await app.waitForState((s) => s.isQuitting, 'q quits after the paste ended');
  });

  // Regression: with bracketed paste on, Enter and a key arriving in one read (a laggy ssh, tmux)
  // were still taken for a pasted line break, so "\rr" lost the Enter on terminals that mark every
  // paste. Once the terminal is known to mark pastes (it answered the app's DECRQM query for mode
  // 2004, or marked a paste already), such a read is keys; on other terminals it stays a paste.
  it('Enter and a key in one read are two keys once the terminal is known to mark pastes; before that, a paste', async () => {
    const app = open();
    await app.waitFor('total 40');
    // Not known yet: a line break with text after it in one read is a paste (nothing in the list).
    await app.press('\rj');
    await app.waitForState((s) => s.list.cursor === 1, 'j moved the cursor');
    expect(app.state.mode).toBe('list');
    // The terminal answers that bracketed paste is on (DECRPM: mode 2004 set).
    await app.press('\x1b[?2004;1$y');
    await app.press('\rj');
    await app.waitForState((s) => s.mode === 'detail', 'Enter opened the entry');
    await app.press('q');
    await app.waitForState((s) => s.isQuitting, 'still keys');
  });

  it('a marked paste tells the app the terminal marks pastes: Enter and a key in one read are then two keys', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('\x1b[200~abc\x1b[201~');
    await app.waitFor('a paste is not typed here');
    await app.press('\rj');
    await app.waitForState((s) => s.mode === 'detail', 'Enter opened the entry');
  });

  it('g groups by error × workflow and Enter drills into a group', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('g');
    const groups = await app.waitFor('COUNT');
    expect(groups).toMatch(/PROVIDER_429\s+research_report:v3\s+15\s+3\s+1/);
    expect(groups).toMatch(/PROVIDER_429\s+summarise:v1\s+15\s+2\s+2/);
    expect(groups).toMatch(/SCHEMA_INVALID\s+summarise:v1\s+5\s+0\s+0/);
    await app.press('j', 'j', KEYS.enter);
    const list = await app.waitFor('filter: error=SCHEMA_INVALID workflow=research_report:v3');
    expect(list).toContain('shown 5');
  });

  // Regression: the group view kept its counts 9 cells wide and its names 10 at least, whatever the
  // width: below 54 columns (below about 71 with a QUEUE column) its lines ran past the edge and the
  // PARTIAL count, which decides a redrive, was cut off, where the list fits from 50 (52).
  it('g fits the terminal from 50 columns (52 with a QUEUE column): every line within the width, the PARTIAL count whole', async () => {
    const byQueue = Array.from({ length: 12 }, (_, i) =>
      makeEntry(i, { queue: i % 2 ? 'customer-support-escalations' : 'research', errorCode: i % 3 ? 'PROVIDER_CONTEXT_LENGTH_EXCEEDED' : 'PROVIDER_429', isPartial: i < 4 }),
    );
    for (const [set, widths] of [[entries, [50, 53, 60]], [byQueue, [52, 56, 64, 70]]] as const) {
      for (const columns of widths) {
        const app = renderApp({ ...base, info: { ...info, queue: null }, source: arraySource([...set]), clock: new ManualClock(T0), size: { columns, rows: 20 } });
        await app.waitForState((st) => !st.isLoading, 'the load');
        await app.press('g');
        const f = await app.waitFor('COUNT');
        const body = lines(f).slice(2, -1).filter((l) => l.trim() !== '');
        for (const l of body) expect(displayWidth(l), `${columns}: ${l}`).toBeLessThanOrEqual(columns);
        expect(body[0], String(columns)).toMatch(/ PARTIAL$/);
        for (const l of body.slice(1)) expect(l, String(columns)).toMatch(/ \d+ +\d+ +\d+$/);
        app.unmount();
      }
    }
  });

  it('E and T pick an error code and a tenant', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('E');
    await app.waitFor('Pick an error code');
    await app.press('j', 'j', KEYS.enter);
    await app.waitFor('shown 10');
    await app.press('T');
    // Counted under the error-code filter: globex holds all 10 SCHEMA_INVALID entries, so it comes first.
    const picker = await app.waitFor('Pick a tenant');
    expect(picker).toMatch(/› \(any\)\s+10\n\s+globex\s+10\n/);
    await app.press('j', KEYS.enter);
    const f = await app.waitFor('filter: error=SCHEMA_INVALID tenant=globex');
    expect(f).toContain('shown 10');
  });

  // Regression: the picker cut every name at 60 cells, at its end, whatever the terminal's width:
  // tenants (up to 128 characters) that differ only at their end were rows of the same text.
  it('T shows long tenant names whole when the terminal has room, and keeps their distinguishing end when it has not', async () => {
    const long = (end: string) => `tenant-${'z'.repeat(90)}-${end}`;
    const many = [makeEntry(0, { tenant: long('east') }), makeEntry(1, { tenant: long('west') }), makeEntry(2, { tenant: long('west') })];
    const props = { ...base, source: arraySource(many), clock: new ManualClock(T0) };
    const wide = renderApp({ ...props, size: { columns: 160, rows: 20 } });
    await wide.waitFor('total 3');
    await wide.press('T');
    const picker = await wide.waitFor('Pick a tenant');
    expect(picker).toMatch(new RegExp(`${long('west')}\\s+2\\n`));
    expect(picker).toMatch(new RegExp(`${long('east')}\\s+1\\n`));
    wide.unmount();
    const narrow = renderApp({ ...props, size: { columns: 60, rows: 20 } });
    await narrow.waitFor('total 3');
    await narrow.press('T');
    const cut = await narrow.waitFor('Pick a tenant');
    expect(cut).toMatch(/tenant-z+…z*-west\s+2\n/);
    expect(cut).toMatch(/tenant-z+…z*-east\s+1\n/);
    expect(Math.max(...lines(cut).map((l) => [...l].length))).toBeLessThanOrEqual(60);
  });

  it('a selects all matching the filter and the header says so', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
    await app.press('e', 'a');
    await app.waitFor('selected 35 (all 35 matching no expired)');
  });

  it('after a filter change the header says how many selected jobs the filter hides', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
    await app.press('a', 'e');
    await app.waitFor('selected 40 [5 hidden by the filter] (all 40 matching no filter)');
    await app.press('e');
    await app.waitFor('selected 40 (all 40 matching no filter)');
  });

  it('Enter shows the detail: error, attempts, checkpoint, effects, trace and a payload that scrolls', async () => {
    const payload = Array.from({ length: 80 }, (_, i) => `payload line ${i}`).join('\n');
    const es = [makeEntry(0, { isPartial: true, input: payload })];
    const app = renderApp({ ...base, source: arraySource(es), clock: new ManualClock(T0), size: { columns: 140, rows: 30 } });
    await app.waitFor('total 1');
    await app.press(KEYS.enter);
    const d = await app.waitFor('Attempts timeline');
    for (const part of ['PROVIDER_429: rate limited', 'Checkpoint', '"step": 2', 'Effect ledger', 'send-email  STARTED (not done)', 'Trace      trace-0']) {
      expect(d).toContain(part);
    }
    expect(d).not.toContain('payload line 0');
    await app.press(KEYS.pgdn);
    await app.waitFor('payload line 10');
    await app.press('G');
    const end = await app.waitFor('payload line 79');
    expect(lines(end).length).toBeLessThanOrEqual(29);
    await app.press(KEYS.esc);
    await app.waitFor('JOB');
  });

  it('the detail shows the trace link when a trace URL template is set', async () => {
    const es = [makeEntry(0)];
    const app = renderApp({ ...base, source: arraySource(es), clock: new ManualClock(T0), size: { columns: 140, rows: 60 }, traceUrlTemplate: 'https://jaeger.example/trace/{trace_id}' });
    await app.waitFor('total 1');
    await app.press(KEYS.enter);
    const d = await app.waitFor('Trace link');
    expect(d).toContain('Trace      trace-0');
    expect(d).toContain('Trace link https://jaeger.example/trace/trace-0');
  });

  it('? shows the help generated from the keymap; Esc closes it', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('?');
    const help = await app.waitFor('(? / Esc / q close · j/k ↑/↓ PgUp/PgDn scroll · Ctrl-C quits)');
    expect(help).toContain('select ALL entries matching the filter');
    expect(help).toMatch(/End > G\s+go to the bottom/);
    // the status bar says the same as the title
    expect(lines(help).at(-1)).toContain('? / Esc / q close');
    await app.press(KEYS.esc);
    await app.waitFor('JOB');
  });

  it('the help scrolls to its last line on a short screen', async () => {
    const app = renderApp({ ...base, source: arraySource([makeEntry(0)]), clock: new ManualClock(T0), size: { columns: 120, rows: 14 } });
    await app.waitFor('total 1');
    await app.press('?');
    const first = await app.waitFor((f) => /lines 1-\d+ of \d+/.test(f));
    const total = Number(/of (\d+)\)?/.exec(first)![1]);
    expect(total).toBeGreaterThan(20);
    await app.press('G');
    const end = await app.waitFor((f) => f.includes(`-${total} of ${total}`));
    expect(lines(end).length).toBeLessThanOrEqual(13);
    await app.press(KEYS.pgup, 'k');
    await app.waitFor((f) => !f.includes(`-${total} of ${total}`));
  });

  it('the status bar shows "? help · q quit" first, so they are on screen at 80 columns', async () => {
    const app = renderApp({ ...base, source: arraySource([makeEntry(0)]), clock: new ManualClock(T0), size: { columns: 80, rows: 14 } });
    const f = await app.waitFor('total 1');
    expect(lines(f).at(-1)).toMatch(/^\? help · q quit/);
  });

  it('q quits the app', async () => {
    const app = open();
    await app.waitFor('total 40');
    await app.press('q');
    await app.waitForState((s) => s.isQuitting, 'quit');
  });
});

describe('the command\'s selector flags', () => {
  it('an empty list under --error-code says nothing matched the selector, not "the DLQ is empty", and the header names it', async () => {
    const selection = selectionText({ queue: 'research', error_code: ['PROVIDER_428'], grep: 'no such text' });
    expect(selection).toBe('error_code=PROVIDER_428 grep="no such text"');
    const app = renderApp({ ...base, info: { ...info, selection }, source: arraySource([]), clock: new ManualClock(T0), size: { columns: 160, rows: 20 } });
    const f = await app.waitFor('no DLQ entry matches');
    expect(f).toContain('no DLQ entry matches error_code=PROVIDER_428 grep="no such text" (the command\'s selector; other entries may be in the DLQ)');
    expect(f).toContain('queue research · only error_code=PROVIDER_428 grep="no such text"');
    expect(f).not.toContain('the DLQ is empty');
    expect(selectionText({ queue: 'research' })).toBeNull();
  });

  it('the queue and the selector stay on screen next to a long backend URL (SQS, a Redis Cluster seed list)', async () => {
    // How an SQS backend describes itself: the whole URL, its parameters included.
    const backend = 'sqs://us-east-1/agentq-prod?endpoint=https%3A%2F%2Fsqs.us-east-1.amazonaws.com&store=redis%3A%2F%2Fredis.internal%3A6379%2F0%3Fprefix%3Daq';
    const entries = [makeEntry(0, { errorCode: 'PROVIDER_429' })];
    const app = renderApp({ ...base, info: { context: 'prod', backend, queue: 'research', selection: 'error_code=PROVIDER_429' }, source: arraySource(entries), clock: new ManualClock(T0), size: { columns: 120, rows: 20 } });
    const f = await app.waitFor('total 1');
    const first = lines(f)[0]!;
    expect([...first].length).toBeLessThanOrEqual(120);
    expect(first).toContain('queue research · only error_code=PROVIDER_429');
  });
});

describe('read-only context', () => {
  it('disables redrive and says why', async () => {
    const app = renderApp({
      ...base,
      readOnlyReason: 'context "prod-ro" is read-only: redrive refused',
      source: arraySource([makeEntry(0)]),
      clock: new ManualClock(T0),
      size: { columns: 160, rows: 20 },
    });
    await app.waitFor('[read-only]');
    await app.press(KEYS.space, 'R');
    await app.waitFor('redrive disabled: context "prod-ro" is read-only');
  });
});

describe('hostile data', () => {
  it('no ESC, C1, BEL or other control byte from an entry reaches any frame', async () => {
    const entries = HOSTILE_STRINGS.map((h, i) => {
      const e = makeEntry(i, { tenant: h.value, workflow: h.value, errorCode: h.value, errorMessage: h.value, input: `${h.value}\n${h.value}` });
      e.job!.trace_id = h.value;
      e.job!.checkpoint = { note: h.value };
      e.job!.attempts[0]!.worker_id = h.value;
      e.job!.effects = [{ key: h.value, status: 'started', idempotency_key: h.value, attempt: 1, started_at: e.dead_at, done_at: null, result: null }];
      return e;
    });
    const app = renderApp({ ...base, info: { context: HOSTILE_STRINGS[5]!.value, backend: 'sqlite:x', queue: HOSTILE_STRINGS[6]!.value }, source: arraySource(entries), clock: new ManualClock(T0), size: { columns: 160, rows: 40 } });
    await app.waitFor(`total ${entries.length}`);
    // Every view that shows entry data: list, detail of each entry, groups, pickers, the filter prompt.
    for (let i = 0; i < entries.length; i++) {
      await app.press(KEYS.enter);
      await app.waitFor('Attempts timeline');
      await app.press(KEYS.esc, 'j');
    }
    await app.press('g', 'G', 'g', 'E', 'G', KEYS.esc, 'T', KEYS.esc, '/', 'r', 'e', 'd', KEYS.enter);
    await app.press('x', 'a', 'R');
    const all = app.frames.join('\n');
    expect(all).toContain('\\x1b');
    expect(findUnsafe(all)).toEqual([]);
  });
});

describe('detail view and resizing', () => {
  it('a terminal narrowed while an entry is open wraps its error message again: the end of it is not cut off', async () => {
    const message = `${'rate limited by the model provider '.repeat(3)}RETRY_AFTER_SECONDS=30`;
    const props = { ...base, source: arraySource([makeEntry(0, { errorMessage: message })]), clock: new ManualClock(T0) };
    const app = renderApp({ ...props, size: { columns: 160, rows: 30 } });
    await app.waitFor('total 1');
    await app.press(KEYS.enter);
    await app.waitFor((f) => f.includes('Attempts timeline') && f.includes('RETRY_AFTER_SECONDS=30'));
    // The same component (not a wrapper), so React keeps its state: the entry stays open.
    app.instance.rerender(<App {...props} size={{ columns: 60, rows: 30 }} />);
    // The first frame at 60 columns has the old lines cut by Ink; the entry wrapped again follows.
    const errorLines = (f: string) => lines(f).slice(lines(f).indexOf('Error'), lines(f).indexOf('Attempts timeline'));
    const narrow = await app.waitFor((f) => lines(f).every((l) => [...l].length <= 60) && errorLines(f).join('\n').includes('RETRY_AFTER_SECONDS=30'), 'the error message wrapped to 60 columns, its end on screen');
    expect(errorLines(narrow).filter((l) => l.endsWith('…'))).toEqual([]);
  });
});

describe('detail view and the clock', () => {
  it('an open entry follows the clock as the list does: a deadline that passes while it is open says expired', async () => {
    const clock = new ManualClock(T0);
    const app = renderApp({ ...base, tickMs: 20, source: arraySource([makeEntry(0, { deadlineIn: 5 * 60_000 })]), clock, size: { columns: 160, rows: 30 } });
    await app.waitFor('total 1');
    await app.press(KEYS.enter);
    await app.waitFor('(5m left)');
    clock.advance(10 * 60_000);
    // The header's count follows at the next tick; the entry must not still say "5m left".
    const f = await app.waitFor((fr) => fr.includes('expired 1') && fr.includes('Deadline'), 'the tick to count the entry expired');
    await app.waitFor('(expired 5m ago)', 'the open entry to say its deadline passed');
    expect(f).toContain('Deadline');
  });
});

describe('hostile data in the detail view', () => {
  it('regression: the dead reason, class, attempt fields and codes are escaped too, and only the message keeps its line breaks', async () => {
    const title = '\x1b]0;PWNED\x07';
    const e = makeEntry(0, { errorCode: 'CODE\nforged: code line', errorMessage: 'first\nsecond line of the message' });
    // A foreign writer's record: fields the schema calls enums or numbers hold any text.
    Object.assign(e, { reason: `${title}\x1b[31mexhausted\nforged: reason line`, class: `batch${title}`, attempts: `3\x1b[2J`, max_attempts: '3\nforged: attempts line' });
    Object.assign(e.job!.attempts[0]!, { worker_id: 'w1\nforged: worker line', started_at: `x${title}`, outcome: 'failed\x1b[5m', attempt: '1\x07', error_code: 'E\nforged: attempt code' });
    Object.assign(e.job!, { effects: [{ key: 'k', status: 'done', idempotency_key: 'i', attempt: '1\x1b[31m', started_at: e.dead_at, done_at: e.dead_at, result: null }] });
    const app = renderApp({ ...base, source: arraySource([e]), clock: new ManualClock(T0), size: { columns: 160, rows: 60 } });
    await app.waitFor('total 1');
    await app.press(KEYS.enter);
    const frame = await app.waitFor('Attempts timeline');
    expect(frame).toContain('reason \\x1b]0;PWNED\\x07\\x1b[31mexhausted\\nforged: reason line');
    expect(frame).toContain('second line of the message');
    expect(findUnsafe(frame)).toEqual([]);
    expect(lines(frame).filter((l) => l.trim().startsWith('forged'))).toEqual([]);
  });
});

describe('loading failures and reloading', () => {
  it('a failed load is said in the body (wrapped, sanitised), never "the DLQ is empty"', async () => {
    const message = `Redis at 127.0.0.1:6390 is unavailable: connect ECONNREFUSED \x1b[31m${' and more'.repeat(30)} END`;
    const source = {
      // eslint-disable-next-line require-yield
      async *pages(): AsyncGenerator<never> {
        throw new Error(message);
      },
      get: async () => null,
    };
    const app = renderApp({ ...base, source, clock: new ManualClock(T0), size: { columns: 80, rows: 20 } });
    const f = await app.waitFor('The DLQ is not loaded: reading it failed.');
    expect(f).not.toContain('the DLQ is empty');
    expect(f).toContain('LOAD FAILED');
    expect(f).toContain('END');
    expect(f).toContain('\\x1b[31m');
    expect(findUnsafe(f)).toEqual([]);
    expect(Math.max(...lines(f).map((l) => [...l].length))).toBeLessThanOrEqual(80);
  });

  it('r reloads from the store: new failures appear, the cursor stays on its job, and the header says when it was loaded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const ids = await seedDlq(backend, clock, 'research', Array.from({ length: 5 }, () => ({ errorCode: 'PROVIDER_429' })));
      const app = renderApp({ ...base, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 5 · shown 5');
      const first = await app.waitFor((f) => /loaded \d\d:\d\d:\d\d/.test(f));
      const firstAt = /loaded (\d\d:\d\d:\d\d)/.exec(first)![1];
      await app.press('j', 'j');
      await app.waitForState((st) => st.list.cursor === 2);
      const onJob = app.state.rows[app.state.visible[2]!]!.jobId;
      clock.advance(61_000);
      await seedDlq(backend, clock, 'research', [{ errorCode: 'TOOL_TIMEOUT' }]);
      await app.press('r');
      const f = await app.waitFor('total 6 · shown 6');
      expect(f).toContain('TOOL_TIMEOUT');
      await app.waitFor((fr) => /loaded (\d\d:\d\d:\d\d)/.exec(fr)?.[1] !== firstAt);
      const after = await app.waitForState((st) => !st.isLoading && st.reloadAnchor === null);
      expect(after.rows[after.visible[after.list.cursor]!]!.jobId).toBe(onJob);
      expect(ids).toContain(onJob);
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('text filter on a real SQLite store', () => {
  it('/ finds text past the start of long error messages, as --grep does (the backend searches the whole message)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const long = (tail: string) => `${'tool call failed after retries; '.repeat(8)}${tail}`;
      await seedDlq(backend, clock, 'research', [
        ...Array.from({ length: 3 }, () => ({ errorMessage: long('upstream said: quota-exhausted-7731') })),
        ...Array.from({ length: 4 }, () => ({ errorMessage: long('upstream said: bad gateway') })),
        { errorMessage: 'quota-exhausted-7731 right away' },
      ]);
      const app = renderApp({ ...base, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 8 · shown 8');
      await app.press('/', ...'QUOTA-exhausted-7731');
      // While typing: what the rows hold (the first 160 characters of the message).
      await app.waitFor('shown 1 ');
      await app.press(KEYS.enter);
      const f = await app.waitFor('shown 4 ');
      expect(f).not.toContain('searching whole messages');
      const grep = await backend.dlqRows({ queue: 'research', grep: 'QUOTA-exhausted-7731' }, { limit: 100 });
      const st = await app.waitForState((x) => x.visible.length === 4, 'the state to follow the frame');
      expect(new Set(st.visible.map((i) => st.rows[i]!.jobId))).toEqual(new Set(grep.items.map((r) => r.job_id)));
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('searching whole messages on a real SQLite store', () => {
  it('gives way to the keys between pages: a newer filter (the abort) stops the search there, not once every page is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      await seedDlq(backend, clock, 'research', Array.from({ length: 6 }, () => ({ errorMessage: 'quota exhausted' })));
      // Pages of two: the search takes three reads.
      const source = backendSource(backend, { queue: 'research' }, 2);
      // SQLite answers synchronously: the search held every key and frame until its last page.
      const abort = new AbortController();
      setImmediate(() => abort.abort());
      const outcome = await source.grepIds!('quota', abort.signal).then(
        (ids) => `found ${ids.size}`,
        (e: unknown) => (e as Error).name,
      );
      expect(outcome).toBe('AbortError');
      expect((await source.grepIds!('quota', new AbortController().signal)).size).toBe(6);
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('redrive through the DLQ engine (real SQLite store)', () => {
  it('the run records the in-app filter and the selection in its filters, and the reason typed in the dialog', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      await seedDlq(backend, clock, 'research', [
        ...Array.from({ length: 2 }, () => ({ errorCode: 'TOOL_TIMEOUT' })),
        ...Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })),
      ]);
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null },
      );
      const app = renderApp({ ...base, redrive, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 5 · shown 5');
      await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
      await app.press('E');
      await app.waitFor('Pick an error code');
      await app.waitForState((st) => st.mode === 'picker');
      const at = app.state.picker!.options.findIndex((o) => o.value === 'TOOL_TIMEOUT');
      await app.press(...Array(at).fill('j'), KEYS.enter);
      await app.waitFor('shown 2');
      await app.press('a', 'R');
      await app.waitFor('Redrive plan for queue research: 2 selected');
      await app.press(KEYS.tab, KEYS.tab, ...'provider fixed the tool', KEYS.enter);
      await app.waitFor('provider fixed the tool');
      await app.press(KEYS.tab, KEYS.enter);
      const done = await app.waitFor('Redrive finished: run run_');
      const runId = /run (run_[0-9A-Z]{26})/.exec(done)![1]!;
      const run = (await backend.getRun(runId))!;
      expect(run.reason).toBe('provider fixed the tool');
      expect(run.filters).toMatchObject({ queue: 'research', via: 'agentq dlq browse', selected: 2, in_app_filter: { error_code: 'TOOL_TIMEOUT' }, selection: 'all 2 matching error=TOOL_TIMEOUT' });
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Esc then Enter in one read on a focused Redrive cancels: it never redrives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      await seedDlq(backend, clock, 'research', Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null },
      );
      const app = renderApp({ ...base, redrive, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitForState((st) => !st.isLoading && st.rows.length === 3, 'the load to complete');
      await app.press('a', 'R');
      await app.waitFor('Redrive plan for queue research: 3 selected');
      await app.press(KEYS.tab);
      await app.waitForState((st) => st.redrive?.step === 'confirm' && st.redrive.focus === 'redrive', 'Redrive focused');
      // The operator changes their mind: Esc, then Enter (to open an entry), sent together.
      await app.press('\x1b\r');
      await app.waitForState((st) => st.mode === 'detail', 'the dialog cancelled, then the entry opened');
      expect(app.state.redrive).toBeNull();
      expect((await backend.listRuns({}, { limit: 10 })).items).toEqual([]);
      expect((await backend.dlqRows({ queue: 'research' }, { limit: 10 })).items.length).toBe(3);
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('building a plan gives way to the keys between reads: Esc stops it there, not once the whole selection is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      // More jobs than one read takes (they are fetched 32 at a time).
      const ids = await seedDlq(backend, clock, 'research', Array.from({ length: 40 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null },
      );
      // SQLite answers synchronously: a walk that never gave the event loop a turn held every key
      // (Esc, Ctrl-C) and every frame until the whole plan was built (seconds for 30,000 jobs).
      const abort = new AbortController();
      setImmediate(() => abort.abort());
      const outcome = await redrive.plan(ids, abort.signal).then(
        () => 'built',
        (e: unknown) => (e as Error).name,
      );
      expect(outcome).toBe('AbortError');
      // Not aborted, the same plan is built whole.
      const planned = await redrive.plan(ids, new AbortController().signal);
      expect(planned.split).toMatchObject({ total: 40, redrive: 40 });
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a redrive refused by a lock a dead process left says what the CLI says to do about it (resume that run, or --break-lock)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const ids = await seedDlq(backend, clock, 'research', Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const deps = { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' }, probe: () => false };
      const settings = { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null };
      // A `dlq redrive` killed with SIGKILL on this host: its run is recorded, its lock stays, its pid is gone.
      const other = engineRedrive(deps, settings);
      const stopped = new AbortController();
      stopped.abort();
      const killed = await other.apply(await other.plan([ids[2]!], new AbortController().signal), () => undefined, stopped.signal);
      await backend.acquireLock('research', { owner: 'ops@test pid 4242', host: 'test', pid: 4242, run_id: killed.runId, acquired_at: new Date(T0).toISOString() });
      const app = renderApp({ ...base, redrive: engineRedrive(deps, settings), source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitForState((st) => !st.isLoading && st.rows.length > 0, 'the load to complete');
      await app.press('a', 'R');
      await app.waitFor('Redrive plan for queue research: 3 selected');
      await app.press(KEYS.tab, KEYS.enter);
      const f = (await app.waitFor('holds the research DLQ lock')).replace(/[│\s]+/g, ' ');
      expect(f).toContain(`is no longer running on this host: resume its run with --resume ${killed.runId}, or break the lock with --break-lock`);
      // Kept for the exit's hint (the state follows the frame: waited for, not read at once).
      await app.waitForState((st) => st.cutShort.length === 1 && (st.cutShort[0]!.hint ?? '').includes('break the lock with --break-lock'), 'the hint kept for the exit');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('jobs redriven from another shell after they were selected show as "no longer in the DLQ", not malformed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const ids = await seedDlq(backend, clock, 'research', Array.from({ length: 5 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const deps = { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } };
      const settings = { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null };
      const app = renderApp({ ...base, redrive: engineRedrive(deps, settings), source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 5 · shown 5');
      await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
      await app.press('a');
      await app.waitFor('selected 5');
      // Another operator redrives two of them meanwhile.
      const other = engineRedrive(deps, settings);
      await other.apply(await other.plan(ids.slice(0, 2), new AbortController().signal), () => undefined, new AbortController().signal);
      await app.press('R');
      const dialog = await app.waitFor('Redrive plan for queue research: 5 selected');
      expect(dialog).toMatch(/redrive\s+3/);
      expect(dialog).toMatch(/skip: no longer in the DLQ\s+2/);
      expect(dialog).not.toContain('malformed');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: the title took the queue from the jobs the plan found; with every selected job gone
  // it said "Redrive plan for queue (none)", as if the app had lost which queue it was showing.
  it('with every selected job redriven from another shell, the dialog still names their queue (with or without --queue)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const ids = await seedDlq(backend, clock, 'research', Array.from({ length: 3 }, () => ({ errorCode: 'PROVIDER_429' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const deps = { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } };
      for (const queue of ['research', undefined]) {
        const settings = { baseFilter: queue === undefined ? {} : { queue }, given: queue === undefined ? {} : { queue }, rate: null };
        const app = renderApp({ ...base, info: { ...info, queue: queue ?? null }, redrive: engineRedrive(deps, settings), source: backendSource(backend, queue === undefined ? {} : { queue }), clock, size: { columns: 160, rows: 30 } });
        await app.waitFor('total 3 · shown 3');
        await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
        await app.press('a');
        await app.waitFor('selected 3');
        // Another operator redrives all of them meanwhile.
        const other = engineRedrive(deps, settings);
        await other.apply(await other.plan(ids, new AbortController().signal), () => undefined, new AbortController().signal);
        await app.press('R');
        const dialog = await app.waitFor('skip: no longer in the DLQ');
        expect(dialog, String(queue)).toContain('Redrive plan for queue research: 3 selected');
        app.unmount();
        if (queue === 'research') {
          // In the DLQ again for the second round (browsing every queue): they fail once more.
          for (;;) {
            const leases = await backend.claim({ queue: 'research', workerId: 'again', max: 10, leaseMs: 60_000 });
            if (leases.length === 0) break;
            for (const l of leases) await backend.fail(l, { code: 'PROVIDER_429', message: 'again', retryable: false });
          }
        }
      }
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('filter → select all → R → type the count → Redrive moves exactly the planned jobs and shows the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const specs = [
        ...Array.from({ length: 26 }, () => ({ errorCode: 'PROVIDER_429' })),
        ...Array.from({ length: 2 }, () => ({ errorCode: 'PROVIDER_429', deadlineInMs: 1000 })),
        ...Array.from({ length: 2 }, () => ({ errorCode: 'PROVIDER_429', isPartial: true })),
        ...Array.from({ length: 5 }, () => ({ errorCode: 'SCHEMA_INVALID' })),
      ];
      const ids = await seedDlq(backend, clock, 'research', specs);
      clock.advance(60_000); // the two short deadlines pass
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: null },
      );
      const app = renderApp({ ...base, redrive, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 35 · shown 35 · expired 2 · partial 2');
      await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
      await app.press('/', ...'429', KEYS.enter, 'a', 'R');
      const dialog = await app.waitFor('Redrive plan for queue research: 30 selected');
      expect(dialog).toMatch(/redrive\s+26/);
      expect(dialog).toMatch(/skip: expired\s+2/);
      expect(dialog).toMatch(/skip: partial effects\s+2/);
      expect(dialog).toMatch(/skip: quarantined\s+0/);
      expect(dialog).toContain('> Cancel <');
      expect(dialog).toContain('Type 26 to confirm');
      await app.press(KEYS.tab, KEYS.enter);
      await app.waitFor('type 26 to confirm');
      await app.press('2', '6', KEYS.enter);
      const done = await app.waitFor('Redrive finished: run run_');
      expect(done).toMatch(/moved 26 · skipped 4 · failed 0 · status completed/);
      const runId = /run (run_[0-9A-Z]{26})/.exec(done)![1]!;

      const run = await backend.getRun(runId);
      expect(run).toMatchObject({ queue: 'research', action: 'redrive', status: 'completed', counts: { moved: 26, skipped: 4, failed: 0, planned: 0 } });
      const left = await backend.dlqList({ queue: 'research' }, { limit: 100 });
      expect(left.items.length).toBe(9); // 2 expired + 2 partial + 5 SCHEMA_INVALID stay in the DLQ
      for (const id of ids.slice(0, 26)) {
        const job = await backend.get(id);
        expect(job).toMatchObject({ state: 'queued', lineage: { redrive_count: 1, redrive_run: runId } });
      }

      // Back to the list: it reloads from the store.
      await app.press(KEYS.enter);
      await app.waitFor('total 9 · shown 4');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('redrive progress and stopping (real engine, paced by an injected sleep)', () => {
  it('shows progress per batch; Esc stops after the current batch and shows the resume command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(3) });
    try {
      await seedDlq(backend, clock, 'research', Array.from({ length: 15 }, () => ({})));
      // The engine paces batches with deps.sleep: here each pause waits until the test lets it go.
      const pauses: Array<() => void> = [];
      const sleep = (_ms: number, signal?: AbortSignal) =>
        new Promise<void>((resolve) => {
          pauses.push(resolve);
          signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      const newId = createIdFactory(clock, seededRandom(4));
      const redrive = engineRedrive(
        { backend, clock, sleep, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: null } },
        { baseFilter: { queue: 'research' }, given: { queue: 'research' }, rate: 5, batchSize: 5 },
      );
      const app = renderApp({ ...base, redrive, source: backendSource(backend, { queue: 'research' }), clock, size: { columns: 160, rows: 30 } });
      await app.waitFor('total 15');
      await app.waitForState((st) => !st.isLoading, 'the load to complete (a waits for it)');
      await app.press('a', 'R');
      await app.waitFor('Redrive plan for queue research: 15 selected');
      await app.press(KEYS.tab, KEYS.enter);
      // First batch of 5 is applied at once, then the engine waits for its pacing pause.
      const running = await app.waitFor('moved 5 · skipped 0 · failed 0');
      expect(running).toMatch(/\[#{6}\.{14}\] 33% 5\/15/);
      await pollUntil(() => pauses.length === 1, { what: 'the engine to pause between batches' });
      await app.press(KEYS.esc);
      await app.waitFor('stopping after the current batch');
      const stopped = await app.waitFor('Redrive stopped: run run_');
      expect(stopped).toMatch(/moved 5 · skipped 0 · failed 0 · status interrupted/);
      const runId = /run (run_[0-9A-Z]{26})/.exec(stopped)![1]!;
      expect(stopped).toContain(`resume with: agentq dlq redrive --resume ${runId}`);
      const run = await backend.getRun(runId);
      expect(run).toMatchObject({ status: 'interrupted', counts: { moved: 5, planned: 10 } });
      expect(await backend.readLock('research')).toBeNull();
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});


describe('browsing every queue (no --queue), real SQLite store', () => {
  it('a plan of jobs from two queues (selected jobs not loaded yet, during a reload) is refused with what to do in the app, not "Add --queue"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      const a = await seedDlq(backend, clock, 'research', [{ errorCode: 'PROVIDER_429' }]);
      const b = await seedDlq(backend, clock, 'support', [{ errorCode: 'TOOL_TIMEOUT' }]);
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: {}, given: {}, rate: null },
      );
      const refused = await redrive.plan([...a, ...b], new AbortController().signal).then(
        () => null,
        (e: unknown) => e as { message: string; hint?: string },
      );
      expect(refused!.message).toContain('the selection spans 2 queues');
      expect(refused!.hint).not.toContain('--queue');
      expect(refused!.hint).toContain('Q narrows');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows a QUEUE column, and R on a selection spanning two queues narrows to the chosen one and redrives it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tui-'));
    const clock = new ManualClock(T0);
    const backend = new SqliteBackend({ path: join(dir, 'agentq.db'), clock, random: seededRandom(7) });
    try {
      await seedDlq(backend, clock, 'research', Array.from({ length: 2 }, () => ({ errorCode: 'PROVIDER_429' })));
      await seedDlq(backend, clock, 'support', Array.from({ length: 3 }, () => ({ errorCode: 'TOOL_TIMEOUT' })));
      const newId = createIdFactory(clock, seededRandom(9));
      const redrive = engineRedrive(
        { backend, clock, sleep: async () => undefined, newRunId: () => newId(RUN_ID_PREFIX), identity: { user: 'ops', host: 'test', pid: 1, context: 'prod' } },
        { baseFilter: {}, given: {}, rate: null },
      );
      const app = renderApp({ ...base, info: { ...info, queue: null }, redrive, source: backendSource(backend, {}), clock, size: { columns: 160, rows: 30 } });
      const f = await app.waitFor('total 5 · shown 5');
      expect(lines(f).find((l) => l.includes('JOB'))).toMatch(/JOB\s+QUEUE\s+WORKFLOW/);
      expect(lines(f).filter((l) => /job_\S+\s+support\s/.test(l)).length).toBe(3);
      await app.waitForState((st) => !st.isLoading);
      await app.press('g');
      const groups = await app.waitFor('QUEUE');
      expect(groups).toMatch(/support\s+TOOL_TIMEOUT\s+research_report:v3\s+3/);
      // As wide as the longest queue name: not cut to the shortest.
      expect(groups).toMatch(/research PROVIDER_429\s+research_report:v3\s+2/);
      await app.press('g');
      await app.waitForState((st) => st.mode === 'list');
      await app.press('a', 'R');
      const picker = await app.waitFor('Redrive: pick the queue');
      expect(picker).toContain('the selection spans 2 queues');
      expect(picker).toMatch(/support\s+3/);
      await app.press(KEYS.enter);
      const narrowed = await app.waitFor('3 selected in queue support kept');
      expect(narrowed).toContain('shown 3');
      // The queue it narrowed to is in the header's first line, not only at the cut end of the second.
      expect(lines(narrowed)[0]).toContain('queue support (Q; of all)');
      await app.press('R');
      await app.waitFor('Redrive plan for queue support: 3 selected');
      await app.press(KEYS.tab, KEYS.enter);
      const done = await app.waitFor('Redrive finished: run run_');
      const runId = /run (run_[0-9A-Z]{26})/.exec(done)![1]!;
      // The label recorded is what a says on the narrowed list, not the first label wrapped in a longer one.
      expect((await backend.getRun(runId))!.filters).toMatchObject({ in_app_filter: { queue: 'support' }, selected: 3, selection: 'all 3 matching queue=support' });
      expect((await backend.dlqRows({ queue: 'research' }, { limit: 10 })).items.length).toBe(2);
      expect((await backend.dlqRows({ queue: 'support' }, { limit: 10 })).items.length).toBe(0);
      // Back to the list: support's DLQ is empty now, so the header stops naming it and the list shows every queue.
      await app.press(KEYS.enter);
      const after = await app.waitFor("queue support's DLQ is empty now");
      expect(lines(after)[0]).toContain('queue (all)');
      expect(after).toContain('total 2 · shown 2');
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
