import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { ManualClock } from '../../src/core/clock.js';
import { arraySource, makeEntry, T0 } from './support/entries.js';
import { KEYS, renderApp } from './support/harness.js';

afterEach(() => cleanup());

const info = { context: 'prod', backend: 'sqlite:/tmp/x.db', queue: 'research' };

describe('TUI app', () => {
  it('renders the header and the first rows', async () => {
    const entries = Array.from({ length: 50 }, (_, i) => makeEntry(i));
    const app = renderApp({ source: arraySource(entries), redrive: null, info, readOnlyReason: null, clock: new ManualClock(T0), size: { columns: 160, rows: 20 }, tickMs: 0 });
    const f = await app.waitFor('total 50');
    console.log(f);
    await app.press('j', 'j', KEYS.enter);
    console.log(await app.waitFor('Attempts timeline'));
    await app.press(KEYS.esc, '?');
    console.log(app.frame());
  });
});
