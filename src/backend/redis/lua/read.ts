/** Events kept in a job's history list (prelude's HISTORY_KEEP). */
export const HISTORY_KEEP = 200;

/**
 * history: a job's recent events (the per-job list is trimmed, so bounded).
 * KEYS[1] the job's history list, KEYS[2] the job's hash, whose field h0 holds
 * its first event ('submitted'; lua/submit.ts). The list holds the events
 * after it; once it holds HISTORY_KEEP of them the first one is no longer
 * among the last HISTORY_KEEP and is left out, as a single trimmed list would.
 */
export const HISTORY = String.raw`
local rest = redis.call('LRANGE', KEYS[1], 0, -1)
if #rest < ${HISTORY_KEEP} then
  local first = redis.call('HGET', KEYS[2], 'h0')
  if first then table.insert(rest, 1, first) end
end
return rest
`;

