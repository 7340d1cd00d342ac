/**
 * read: snapshots of up to 1000 jobs of one shard (a page), for get/list/DLQ.
 * KEYS[1] routes to the shard; ARGV[5..] are job ids. Missing jobs are false.
 */
export const READ_JOBS = String.raw`
local out = {}
for i = 5, #ARGV do out[#out + 1] = snapshot(ARGV[i]) end
return out
`;

/**
 * history: a job's recent events (the per-job list is trimmed, so bounded).
 * KEYS[1] the job's history list.
 */
export const HISTORY = String.raw`
return redis.call('LRANGE', KEYS[1], 0, -1)
`;
