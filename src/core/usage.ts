/**
 * What an attempt spent (cost per job, DESIGN.md §2): tokens and US dollars a handler reports with
 * `ctx.reportUsage` or `agentq job usage`. Added to the attempt's record (`AttemptRecord.usage`)
 * and to its queue's cumulative totals (`QueueStats.usage`), fenced like a checkpoint.
 */
import { ValidationError } from './errors.js';

export interface Usage {
  /** Tokens (prompt + completion, as the handler counts them): a whole number. */
  tokens: number;
  /** US dollars. */
  cost_usd: number;
}

/** What a handler may report in one call: either figure may be left out (counted as 0). */
export interface UsageReport {
  tokens?: number;
  cost_usd?: number;
}

/** The largest figure one report may carry: far above any real attempt, and exact as a double. */
export const USAGE_MAX = 1e12;

/**
 * A report as the usage it adds: both figures, checked. Throws `ValidationError` for anything but
 * non-negative finite numbers (tokens a whole number), a report with neither figure, or an unknown key.
 */
export function checkUsage(report: unknown): Usage {
  if (report === null || typeof report !== 'object' || Array.isArray(report)) {
    throw new ValidationError('usage must be an object: { tokens?: number, cost_usd?: number }');
  }
  const r = report as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (key !== 'tokens' && key !== 'cost_usd') throw new ValidationError(`usage has no field ${JSON.stringify(key)}: only tokens and cost_usd`);
  }
  if (r.tokens === undefined && r.cost_usd === undefined) throw new ValidationError('usage must give tokens, cost_usd or both');
  const figure = (name: 'tokens' | 'cost_usd'): number => {
    const v = r[name];
    if (v === undefined) return 0;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ValidationError(`usage ${name} must be a non-negative finite number, got ${describe(v)}`);
    if (v > USAGE_MAX) throw new ValidationError(`usage ${name} must be at most ${USAGE_MAX}, got ${v}`);
    if (name === 'tokens' && !Number.isInteger(v)) throw new ValidationError(`usage tokens must be a whole number, got ${v}`);
    return v;
  };
  return { tokens: figure('tokens'), cost_usd: figure('cost_usd') };
}

/** Adds two usages (a record's and a report's, or totals). */
export function addUsage(a: Usage | null | undefined, b: Usage): Usage {
  return { tokens: (a?.tokens ?? 0) + b.tokens, cost_usd: (a?.cost_usd ?? 0) + b.cost_usd };
}

/** A job's usage over all its attempts (as kept: the last attempts of a long history); null when none reported any. */
export function jobUsage(attempts: ReadonlyArray<{ usage?: Usage | null }>): Usage | null {
  let total: Usage | null = null;
  for (const a of attempts) if (a.usage) total = addUsage(total, a.usage);
  return total;
}

function describe(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  return v === null ? 'null' : typeof v;
}

/** Dollars for people: up to 6 significant digits, no float noise (0.30000000000000004 → $0.3). */
export function formatUsd(x: number): string {
  return `$${Number(x.toPrecision(6))}`;
}

/** `1500 tokens, $0.02` (for `inspect` and `stats`). */
export function formatUsage(u: Usage): string {
  return `${u.tokens} tokens, ${formatUsd(u.cost_usd)}`;
}
