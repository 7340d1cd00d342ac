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

/** Jobs per snapshots call: a call reads at most this many small records, so it holds Redis well under a millisecond or so. */
export const SNAPSHOTS_PER_CALL = 50;

/**
 * snapshots: the records of up to SNAPSHOTS_PER_CALL jobs of one shard, for
 * reads (get, list, DLQ pages). KEYS: per job its hash, its effects hash and
 * its attempts list. Returns per job {hash, effects, attempts}, or false when
 * the job does not exist. The hash is returned without h0 (the first event,
 * which only the history reads); the effects hash is read only when the job
 * counts effects ('nef': effects are only added, and go with the whole job).
 * One call reads its jobs atomically, and each read is bounded: the job hash
 * has fixed fields, the effects hash and the attempts list are capped.
 */
export const SNAPSHOTS = String.raw`
local out = {}
for i = 1, #KEYS, 3 do
  local h = redis.call('HGETALL', KEYS[i])
  if #h == 0 then
    out[#out + 1] = false
  else
    local flat, nef = {}, nil
    for k = 1, #h, 2 do
      local f = h[k]
      if f == 'nef' then nef = h[k + 1] end
      if f ~= 'h0' then
        flat[#flat + 1] = f
        flat[#flat + 1] = h[k + 1]
      end
    end
    local effects = {}
    if nef ~= '0' then effects = redis.call('HGETALL', KEYS[i + 1]) end
    out[#out + 1] = { flat, effects, redis.call('LRANGE', KEYS[i + 2], 0, -1) }
  end
end
return out
`;
