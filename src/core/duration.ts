import { ValidationError } from './errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses `90s`, `15m`, `2h`, `1d`, `1h30m`, `500ms` into milliseconds.
 * A bare number is refused: `--deadline 30` is ambiguous (seconds? minutes?).
 */
export function parseDuration(text: string, what = 'duration'): number {
  const s = text.trim();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let matched = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (s.length === 0 || matched !== s.length) {
    throw new ValidationError(
      `${what} ${JSON.stringify(text)} is not a duration: use a number with a unit (ms, s, m, h, d, w), e.g. 90s, 15m, 2h, 1d, 1h30m`,
    );
  }
  // (a time this far from now is past what a date can hold: `--deadline 99999999999h` ended in
  // "internal error: Invalid time value")
  if (total > MAX_DURATION_MS) throw new ValidationError(`${what} ${JSON.stringify(text)} is too long: at most 100 years (36500d)`);
  return Math.round(total);
}

/** The longest duration agentq accepts: 100 years. */
export const MAX_DURATION_MS = 36_500 * 86_400_000;

/** Formats milliseconds compactly: `1h30m`, `45s`, `120ms`. Negative values get a `-`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return sign + parts.join('');
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Parses an absolute ISO-8601 time. A time without a zone is refused: it means different instants on different machines. */
export function parseIsoTime(text: string, what = 'time'): number {
  const s = text.trim();
  if (!ISO_RE.test(s)) {
    throw new ValidationError(`${what} ${JSON.stringify(text)} is not an ISO-8601 time (e.g. 2026-11-29T10:00:00Z)`);
  }
  if (s.includes('T') && !/(Z|[+-]\d{2}:?\d{2})$/.test(s)) {
    throw new ValidationError(`${what} ${JSON.stringify(text)} has no time zone: add Z or an offset like +01:00`);
  }
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new ValidationError(`${what} ${JSON.stringify(text)} is not a valid date`);
  return ms;
}

function looksAbsolute(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}/.test(s.trim());
}

/** `--deadline 2h` (from now) or `--deadline 2026-12-01T00:00:00Z`. Must be in the future. */
export function parseDeadline(text: string, now: number): number {
  const at = looksAbsolute(text) ? parseIsoTime(text, 'deadline') : now + parseDuration(text, 'deadline');
  if (at <= now) throw new ValidationError(`deadline ${JSON.stringify(text)} is not in the future`);
  return at;
}

/** `--since 6h` (6 hours ago) or an absolute ISO-8601 time. */
export function parsePastTime(text: string, now: number, what = 'since'): number {
  return looksAbsolute(text) ? parseIsoTime(text, what) : now - parseDuration(text, what);
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
