import { monotonicFactory, isValid } from 'ulid';
import type { Clock, Random } from './clock.js';

export const JOB_ID_PREFIX = 'job_';
export const RUN_ID_PREFIX = 'run_';

/**
 * Job ids are `job_` + a ULID: sortable by creation time, so cursor paging by
 * id is also paging by age.
 */
export function createIdFactory(clock: Clock, random: Random): (prefix: string) => string {
  // Monotonic within one millisecond so ids made in a burst still sort in order.
  const next = monotonicFactory(random);
  return (prefix: string) => prefix + next(clock.now());
}

export function isJobId(s: string): boolean {
  return s.startsWith(JOB_ID_PREFIX) && s.length === JOB_ID_PREFIX.length + 26 && isValid(s.slice(JOB_ID_PREFIX.length));
}

/**
 * A job id as the stores keep it: ULIDs are case-insensitive (Crockford base32), and ids get
 * retyped from chat and tickets in lower case, so `JOB_01jd…` means `job_01JD…`. Anything that
 * does not look like a job id is returned as it is, for the caller to refuse.
 */
export function canonicalJobId(s: string): string {
  if (s.length !== JOB_ID_PREFIX.length + 26 || s.slice(0, JOB_ID_PREFIX.length).toLowerCase() !== JOB_ID_PREFIX) return s;
  const canonical = JOB_ID_PREFIX + s.slice(JOB_ID_PREFIX.length).toUpperCase();
  return isJobId(canonical) ? canonical : s;
}

/**
 * The shape of a job id, `job_` and 26 letters or digits, without asking for a valid ULID. The
 * stores hold whatever id a record was written with, and a record another tool wrote (an old
 * version, a hand edit) may carry one that is no ULID (`job_01JMALFORMED…`). The CLI names such a
 * record (a page's next cursor, `list`'s warning about it) and must take that id back (`--cursor`,
 * `inspect`, `cancel`); a typo such as `garbage` is still refused as no job id.
 */
export function hasJobIdShape(s: string): boolean {
  return /^job_[0-9A-Za-z]{26}$/.test(s);
}

export function isRunId(s: string): boolean {
  return s.startsWith(RUN_ID_PREFIX) && s.length === RUN_ID_PREFIX.length + 26 && isValid(s.slice(RUN_ID_PREFIX.length));
}
