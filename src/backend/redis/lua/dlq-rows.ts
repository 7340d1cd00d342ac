/**
 * dlqRows: the light DLQ rows of some jobs of one shard, for `dlqRows`.
 * KEYS: the job hashes (all of one shard, so one slot; at most
 * `ROWS_PER_CALL` of them: the work of one call is bounded).
 * ARGV[1]: how many bytes of the error message to return (0: all of it).
 *
 * Per key, one fixed-size tuple:
 *   { state or false (the hash is gone; 'not a hash' for a key of another type), readable ('1' or '0'),
 *     envelope job_id, queue, tenant_id, workflow, deadline_at, max_attempts (false when unreadable),
 *     att, max, dr, dat, upd, dec, dem (cut), err, nef, rc, ten, wf }
 * The envelope is decoded here so it never crosses the wire (it may carry up
 * to 64 KiB of inline input); `readable` is the test `jobFrom` makes before
 * it reads a job (an envelope that is JSON with a job_id and a workflow).
 */
export const DLQ_ROWS = String.raw`
local cut = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS do
  local h = redis.pcall('HMGET', KEYS[i], 'st', 'env', 'att', 'max', 'dr', 'dat', 'upd', 'dec', 'dem', 'err', 'nef', 'rc', 'ten', 'wf')
  -- a key of another type than a hash (WRONGTYPE; a foreign write): a row that cannot be read,
  -- instead of an error that ended the whole listing
  if h.err then h = { 'not a hash' } end
  local t = { h[1] or false, '0', false, false, false, false, false, false }
  if h[1] then
    if h[2] then
      local ok, env = pcall(cjson.decode, h[2])
      if ok and type(env) == 'table' and type(env.job_id) == 'string' and type(env.workflow) == 'string' then
        local function s(v) if type(v) == 'string' then return v end return false end
        t[2] = '1'
        t[3] = env.job_id
        t[4] = s(env.queue)
        t[5] = s(env.tenant_id)
        t[6] = env.workflow
        t[7] = s(env.deadline_at)
        if type(env.max_attempts) == 'number' then t[8] = tostring(env.max_attempts) end
      end
    end
    local dem = h[9]
    if dem and cut > 0 and #dem > cut then dem = string.sub(dem, 1, cut) end
    h[9] = dem
  end
  for j = 3, 14 do t[#t + 1] = h[j] or false end
  out[#out + 1] = t
end
return out
`;
