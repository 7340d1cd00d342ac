/**
 * Drives the TUI app through ink-testing-library and waits for conditions
 * on the frame (never for a fixed time).
 */
import type { ReactElement } from 'react';
import { render } from 'ink-testing-library';
import { App, type AppProps } from '../../../src/tui/App.js';
import type { TriageState } from '../../../src/tui/state.js';
import { pollUntil } from '../../support/poll.js';

/** Raw bytes a terminal sends for named keys. */
export const KEYS = {
  down: '\x1b[B',
  up: '\x1b[A',
  left: '\x1b[D',
  right: '\x1b[C',
  pgdn: '\x1b[6~',
  pgup: '\x1b[5~',
  home: '\x1b[H',
  end: '\x1b[F',
  enter: '\r',
  esc: '\x1b',
  tab: '\t',
  backspace: '\x7f',
  space: ' ',
  ctrlC: '\x03',
} as const;

export interface AppHarness {
  instance: { rerender(tree: ReactElement): void };
  frames: string[];
  unmount(): void;
  frame(): string;
  readonly state: TriageState;
  press(...keys: string[]): Promise<void>;
  waitFor(cond: string | ((frame: string) => boolean), what?: string): Promise<string>;
  waitForState(cond: (s: TriageState) => boolean, what?: string): Promise<TriageState>;
}

export function renderApp(props: AppProps): AppHarness {
  let last: TriageState | null = null;
  const instance = render(<App {...props} onState={(s) => (last = s)} />);
  const frame = () => instance.lastFrame() ?? '';
  return {
    instance,
    frames: instance.frames,
    unmount: instance.unmount,
    frame,
    get state(): TriageState {
      if (last === null) throw new Error('no state yet');
      return last;
    },
    /** Sends each key as its own write, as a person typing would. */
    async press(...keys: string[]) {
      for (const k of keys) {
        instance.stdin.write(k);
        // Ink hands a lone ESC over on the next turn of the event loop (it might start a
        // sequence); two turns later every key has been dispatched and rendered. This
        // orders events, it does not wait for time.
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
      }
    },
    async waitFor(cond: string | ((frame: string) => boolean), what?: string) {
      const test = typeof cond === 'string' ? (f: string) => f.includes(cond) : cond;
      return pollUntil(() => (test(frame()) ? frame() : false), {
        timeoutMs: 20_000,
        what: what ?? (typeof cond === 'string' ? `frame to contain ${JSON.stringify(cond)}` : 'frame condition'),
      }).catch((e: Error) => {
        throw new Error(`${e.message}\n--- last frame ---\n${frame()}`);
      });
    },
    async waitForState(cond: (s: TriageState) => boolean, what = 'state condition') {
      return pollUntil(() => last !== null && cond(last) && last, { timeoutMs: 20_000, what });
    },
  };
}
