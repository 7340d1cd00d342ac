/**
 * history: a job's recent events (the per-job list is trimmed, so bounded).
 * KEYS[1] the job's history list.
 */
export const HISTORY = String.raw`
return redis.call('LRANGE', KEYS[1], 0, -1)
`;
