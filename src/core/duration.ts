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
export function parseDuration(text: string, what = 'duration', orTime?: 'ago' | 'from now'): number {
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
    const why = whyNot(s);
    // A flag that takes a time as well (`--since 10:00`) says so: "use a number with a unit" alone
    // sent the user away from the ISO time that would have done.
    if (orTime !== undefined && why === DURATION_USAGE) {
      throw new ValidationError(`${what} ${JSON.stringify(text)} is neither a duration nor an ISO-8601 time: use a duration ${orTime} (90s, 15m, 2h, 1d, 1h30m) or a time with its zone (2026-11-29T10:00:00Z)`);
    }
    throw new ValidationError(`${what} ${JSON.stringify(text)} is not a duration: ${why}`);
  }
  // (a time this far from now is past what a date can hold: `--deadline 99999999999h` ended in
  // "internal error: Invalid time value")
  if (total > MAX_DURATION_MS) throw new ValidationError(`${what} ${JSON.stringify(text)} is too long: at most 100 years (36500d)`);
  return Math.round(total);
}

/**
 * What is wrong with a text that is not a duration. Units are case-sensitive, as in Go's
 * time.ParseDuration and kubectl: `M` could be minutes or months (`--rate 300/M`, a rate, can only
 * mean minutes and takes any case), so an upper-case unit is refused, not guessed; the message says
 * units are lower case, and gives the lower-case form when that reading is the only one.
 */
const DURATION_USAGE = 'use a number with a unit (ms, s, m, h, d, w), e.g. 90s, 15m, 2h, 1d, 1h30m';

function whyNot(s: string): string {
  const lower = s.toLowerCase();
  if (lower === s || !/^(\d+(?:\.\d+)?(ms|s|m|h|d|w))+$/.test(lower)) return DURATION_USAGE;
  if (/\dM(?![sS])/.test(s)) return 'units are lower case (ms, s, m, h, d, w); M is not one: m is minutes, and there is no month unit (write days, e.g. 30d)';
  return `units are lower case (ms, s, m, h, d, w): write ${lower}`;
}

/** The shortest time to a `--deadline` that a job could still meet. */
export const MIN_DEADLINE_MS = 1000;

/** The longest duration agentq accepts: 100 years. */
export const MAX_DURATION_MS = 36_500 * 86_400_000;

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
] as const;

/**
 * Formats milliseconds compactly, in at most two ADJACENT units, rounded to the smaller one:
 * `1h30m`, `1h0m` (never `1h39s`, which reads as 1 h 39 min), `1d0h`, `45s`, `120ms`. An exact
 * whole unit stays short (`1m`, `2h`). Rounded, not cut: 1,794 ms is `2s`, 1h59m59s is `2h`.
 * Negative values get a `-`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  const sign = ms < 0 ? '-' : '';
  const rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  return sign + formatPositive(rest);
}

/** `isExact`: `ms` is the value itself, not a rounding of it (then `2h` may be said `2h`, not `2h0m`). */
function formatPositive(ms: number, isExact = true): string {
  const i = UNITS.findIndex(([, size]) => ms >= size);
  const [unit, size] = UNITS[i]!;
  if (i === UNITS.length - 1) {
    const secs = Math.round(ms / size);
    return secs >= 60 ? formatPositive(secs * size, false) : `${secs}${unit}`;
  }
  const [smallUnit, smallSize] = UNITS[i + 1]!;
  const inSmall = Math.round(ms / smallSize);
  const rounded = inSmall * smallSize;
  // Rounding up can reach the next unit (23h59m40s is 1d): say it in that unit.
  if (i > 0 && rounded >= UNITS[i - 1]![1]) return formatPositive(rounded, false);
  const big = Math.floor(rounded / size);
  const small = (rounded - big * size) / smallSize;
  return small === 0 && isExact && ms === big * size ? `${big}${unit}` : `${big}${unit}${small}${smallUnit}`;
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
  if (Number.isNaN(ms) || !isCalendarTime(s)) throw new ValidationError(`${what} ${JSON.stringify(text)} is not a valid date`);
  return ms;
}

/**
 * Whether the date and clock time written exist: Date.parse rolls a day the month lacks over into
 * the next month (`2026-02-30` is 2 March), so `--since 2026-02-30` selected from another day than
 * the one typed. 24:00 (ISO's end of a day) is taken.
 */
function isCalendarTime(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(s)!;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  if (m[4] === undefined) return true;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (hour === 24) return minute === 0 && second === 0;
  return hour <= 23 && minute <= 59 && second <= 59;
}

function looksAbsolute(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}/.test(s.trim());
}

/** `--deadline 2h` (from now) or `--deadline 2026-12-01T00:00:00Z`. Must be in the future. `what` names the flag in errors. */
export function parseDeadline(text: string, now: number, what = '--deadline'): number {
  const at = looksAbsolute(text) ? parseIsoTime(text, what) : now + parseDuration(text, what, 'from now');
  if (at <= now) throw new ValidationError(`${what} ${JSON.stringify(text)} is not in the future`);
  // Less than this had often passed by the time the store checked it (`--deadline 1ms` failed there,
  // as "deadline_at … is not in the future"), and no worker could claim such a job in time anyway.
  if (at - now < MIN_DEADLINE_MS) {
    throw new ValidationError(`${what} ${JSON.stringify(text)} is less than ${formatDuration(MIN_DEADLINE_MS)} away: the job would expire before a worker could claim it`);
  }
  return at;
}

/** `--since 6h` (6 hours ago) or an absolute ISO-8601 time. */
export function parsePastTime(text: string, now: number, what = 'since'): number {
  return looksAbsolute(text) ? parseIsoTime(text, what) : now - parseDuration(text, what, 'ago');
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
