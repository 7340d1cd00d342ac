/** Events kept in a job's history (the list is trimmed to these; the history reads the last these many). */
export const HISTORY_KEEP = 200;
/** Inline history slots in the job hash, h0 .. h3 (lua/prelude.ts emitInline; at most 9: the slot count is one digit there). */
export const HISTORY_INLINE = 4;

/**
 * historyLines(listKey, jobKey): a job's last HISTORY_KEEP history lines, oldest first. They are
 * in two places (lua/prelude.ts, emit and emitInline): the inline slots of the job hash, filled in
 * order, and the history list, trimmed to its last HISTORY_KEEP. Each line starts with its stream
 * id ('<ms>-<n>|<event JSON>'), which orders the events of a shard, so the two are merged by it.
 * The last HISTORY_KEEP of the merge are the job's last HISTORY_KEEP events: every one of those
 * that went to the list is among the list's last HISTORY_KEEP. Bounded: four fields and a list of
 * at most HISTORY_KEEP.
 */
export const HISTORY_LINES = String.raw`
local function historyBefore(a, b)
  local am, an = string.match(a, '^(%d+)-(%d+)')
  local bm, bn = string.match(b, '^(%d+)-(%d+)')
  am, bm = tonumber(am), tonumber(bm)
  return am < bm or (am == bm and tonumber(an) < tonumber(bn))
end
local function historyLines(listKey, jobKey)
  local list = redis.call('LRANGE', listKey, 0, -1)
  local slots = redis.call('HMGET', jobKey, ${Array.from({ length: HISTORY_INLINE }, (_v, i) => `'h${i}'`).join(', ')})
  local merged, i = {}, 1
  for _, line in ipairs(slots) do
    if not line then break end
    while i <= #list and historyBefore(list[i], line) do
      merged[#merged + 1] = list[i]
      i = i + 1
    end
    merged[#merged + 1] = line
  end
  for j = i, #list do merged[#merged + 1] = list[j] end
  if #merged <= ${HISTORY_KEEP} then return merged end
  local last = {}
  for j = #merged - ${HISTORY_KEEP} + 1, #merged do last[#last + 1] = merged[j] end
  return last
end
`;

/** history: a job's recent events (bounded). KEYS[1] the job's history list, KEYS[2] the job's hash. */
export const HISTORY = HISTORY_LINES + 'return historyLines(KEYS[1], KEYS[2])\n';

/**
 * ids: up to ARGV[2] ids from each of KEYS (lex-sorted id sets of one shard: a listing over several
 * states) from ARGV[1] on, all read in one step, so a job moving between the sets meanwhile is seen
 * once. A read-only script rather than MULTI: at maxmemory Redis refuses every command queued in a
 * MULTI, and an operator whose Redis is full still needs to list its jobs. Bounded: a few sets,
 * a page's worth of each.
 */
export const IDS = String.raw`
local out = {}
for i = 1, #KEYS do
  for _, id in ipairs(redis.call('ZRANGEBYLEX', KEYS[i], ARGV[1], '+', 'LIMIT', 0, tonumber(ARGV[2]))) do out[#out + 1] = id end
end
return out
`;
