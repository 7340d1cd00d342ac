/**
 * Colour decisions (DESIGN 3.3). The level is decided once, here, from the
 * flag, the environment and whether stdout is a terminal; `bin/agentq.js`
 * applies the same rules before chalk or Ink load (it sets FORCE_COLOR), and
 * the CLI builds its own chalk instance from the level so nothing depends on
 * chalk sniffing `process.argv` (it mis-reads `--color never` as "force colour").
 *
 * Precedence: `--color` > FORCE_COLOR > NO_COLOR > TERM=dumb > is stdout a terminal.
 *
 * Colour never carries meaning alone: every coloured word is also a word.
 */
import type { ChalkInstance } from 'chalk';

export type ColourWhen = 'auto' | 'always' | 'never';
export type ColourLevel = 0 | 1 | 2 | 3;

export interface ColourInputs {
  when: ColourWhen;
  env: Record<string, string | undefined>;
  isTTY: boolean;
}

/** The colour level for a stream. Precedence: `--color` flag, then FORCE_COLOR, NO_COLOR, TERM=dumb, then the terminal. */
export function resolveColourLevel({ when, env, isTTY }: ColourInputs): ColourLevel {
  if (when === 'never') return 0;
  const depth = terminalDepth(env);
  if (when === 'always') return depth === 0 ? 1 : depth;
  // FORCE_COLOR before NO_COLOR, as Node itself decides (it warns that NO_COLOR is ignored when both are set).
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '' || force === 'true') return depth === 0 ? 1 : depth;
    if (force === 'false') return 0;
    const n = Number.parseInt(force, 10);
    if (Number.isFinite(n)) return Math.max(0, Math.min(3, n)) as ColourLevel;
  }
  // https://no-color.org: present and not empty disables colour.
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  if (env.TERM === 'dumb') return 0;
  if (!isTTY) return 0;
  return depth === 0 ? 1 : depth;
}

function terminalDepth(env: Record<string, string | undefined>): ColourLevel {
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return 3;
  if (env.TERM && /-256(color)?$/i.test(env.TERM)) return 2;
  return env.TERM === 'dumb' ? 0 : 1;
}

/** Parses the value of `--color` (a bare `--color` means always). */
export function parseColourWhen(value: unknown): ColourWhen {
  if (value === undefined || value === null || value === false) return 'auto';
  if (value === true || value === '' ) return 'always';
  const v = String(value).toLowerCase();
  if (v === 'auto' || v === 'always' || v === 'never') return v;
  if (v === 'true' || v === 'yes' || v === 'on') return 'always';
  if (v === 'false' || v === 'no' || v === 'off' || v === 'none') return 'never';
  return 'auto';
}

/** The few styles the CLI uses, as plain functions so commands never import chalk themselves. */
export interface Palette {
  readonly level: ColourLevel;
  bold(s: string): string;
  dim(s: string): string;
  ok(s: string): string;
  warn(s: string): string;
  error(s: string): string;
  /** A job state, coloured by how it ended (the word itself carries the meaning). */
  state(s: string): string;
}

const identity = (s: string) => s;

export const NO_COLOUR: Palette = {
  level: 0,
  bold: identity,
  dim: identity,
  ok: identity,
  warn: identity,
  error: identity,
  state: identity,
};

export async function createPalette(level: ColourLevel): Promise<Palette> {
  if (level === 0) return NO_COLOUR;
  const { Chalk } = await import('chalk');
  const c: ChalkInstance = new Chalk({ level });
  return {
    level,
    bold: (s) => c.bold(s),
    dim: (s) => c.dim(s),
    ok: (s) => c.green(s),
    warn: (s) => c.yellow(s),
    error: (s) => c.red(s),
    state: (s) => {
      switch (s) {
        case 'succeeded':
          return c.green(s);
        case 'dead':
        case 'failed':
        case 'partially_completed':
          return c.red(s);
        case 'cancelled':
        case 'expired':
          return c.yellow(s);
        case 'running':
          return c.cyan(s);
        default:
          return s;
      }
    },
  };
}
