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

export function isRunId(s: string): boolean {
  return s.startsWith(RUN_ID_PREFIX) && s.length === RUN_ID_PREFIX.length + 26 && isValid(s.slice(RUN_ID_PREFIX.length));
}
