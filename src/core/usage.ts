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

/**
 * A queue's usage totals as reported: dollars to 15 significant digits. The stores add each report
 * as a float, so 0.1 + 0.2 dollars read 0.30000000000000004 on SQLite and 0.3 on Redis (which sums
 * in long double): the same spend, two figures. No real sum has more digits than that.
 */
export function usageFigure(u: Usage): Usage {
  return { tokens: u.tokens, cost_usd: Number(u.cost_usd.toPrecision(15)) };
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

/** A job's ceiling (`budget` on the envelope): either figure may be null (no ceiling on it). */
export interface BudgetCeiling {
  tokens: number | null;
  cost_usd: number | null;
}

/**
 * What of its budget a job's spend breaks, in words for the failure message ("it spent 210000
 * tokens of its 200000"), or null while within it. `strict` (while an attempt runs): over means
 * beyond the ceiling, so an attempt whose last call lands exactly on it still finishes; not strict
 * (before an attempt starts): a job that spent its whole ceiling has nothing left to run on.
 */
export function budgetBreach(spent: Usage | null, budget: BudgetCeiling | null | undefined, strict: boolean): string | null {
  if (!budget || !spent) return null;
  // dollars summed from many reports carry float noise (0.1 + 0.2 > 0.3): a nano-dollar is equal
  const over = (used: number, ceiling: number | null, slack: number): boolean =>
    ceiling !== null && (strict ? used - ceiling > slack : used - ceiling >= -slack);
  const parts: string[] = [];
  if (over(spent.tokens, budget.tokens, 0)) parts.push(`${spent.tokens} tokens of its ${budget.tokens}`);
  if (over(spent.cost_usd, budget.cost_usd, 1e-9)) parts.push(`${formatUsd(spent.cost_usd)} of its ${formatUsd(budget.cost_usd!)}`);
  return parts.length === 0 ? null : `it spent ${parts.join(' and ')}`;
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
