/**
 * submit: a batch of new jobs of one shard, each with its idempotency check
 * and insert, in one script call. Submits issued in the same turn of the
 * event loop are sent together (RedisBackend.submit): the script's fixed cost
 * and the writes that take many members at once (the id index, the location
 * keys, the submitted total) are paid once per batch, not once per job.
 *
 * KEYS[1] the shard's idempotency hash, KEYS[2 .. n+1] the jobs' hashes,
 * then on standalone KEYS[n+2 .. 2n+1] the jobs' global location keys (a
 * Cluster may keep those on other nodes, so there the client writes each
 * first, apart).
 * ARGV[5] n, ARGV[6] '1' to write the location keys; then per job
 * SUBMIT_FIELDS values: id, idempotency key ('' for none), fingerprint,
 * envelope JSON, initial state (queued|scheduled), run_at, deadline ms (''),
 * class, tenant, max_attempts, workflow, estimated seconds (for the backlog
 * counters), shard.
 * Returns per job {'created'} or {'exists', '<job id>|<fingerprint>'}, in order.
 * Jobs are handled in order, so a key repeated within a batch finds the
 * first job.
 *
 * The writes `move(id, nil, state)` and `enqueue` (prelude) make for one new
 * job are made here for the whole batch at once, merged by key: the state
 * index and the age index take every id in one ZADD, each (class, tenant) set
 * and each class's tenant index one ZADD, the counts and the backlog seconds
 * one increment per field. What is per job stays per job: the job hash, its
 * event, and the stats hooks' per-job counters (statsMove). Nothing reads
 * these keys between the jobs of a batch (the script is atomic), so the end
 * state is the same as the per-job calls'.
 */
export const SUBMIT_FIELDS = 13;

export const SUBMIT = String.raw`
local n, writeLoc = tonumber(ARGV[5]), ARGV[6] == '1'
local out, ids, locs = {}, {}, {}
local rank, scheduled = {}, {} -- [stats] per tenant
-- the batch's merged writes: key → flat ZADD arguments; hash key → field → delta
local zadds, zorder = {}, {}
local function zadd(key, score, member)
  local a = zadds[key]
  if not a then
    a = {}
    zadds[key] = a
    zorder[#zorder + 1] = key
  end
  a[#a + 1] = score
  a[#a + 1] = member
end
local incrs, iorder = {}, {}
local function incr(key, field, by)
  local k = key .. '\0' .. field
  local e = incrs[k]
  if not e then
    e = { key, field, 0 }
    incrs[k] = e
    iorder[#iorder + 1] = k
  end
  e[3] = e[3] + by
end
for i = 0, n - 1 do
  local b = 7 + i * ${SUBMIT_FIELDS}
  local id, idem, fp, env, st, runAt, dl, cls, ten, maxAtt, wf, est, shard =
    ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], tonumber(ARGV[b + 5]), ARGV[b + 6], ARGV[b + 7], ARGV[b + 8], ARGV[b + 9], ARGV[b + 10], ARGV[b + 11], ARGV[b + 12]
  local existing = nil
  if idem ~= '' then
    existing = redis.call('HGET', KEYS[1], idem)
    if not existing then redis.call('HSET', KEYS[1], idem, id .. '|' .. fp) end
  end
  if existing then
    out[#out + 1] = { 'exists', existing }
  else
    -- (strings, not Lua numbers: Redis formats every number argument with %.17g, which is not free)
    local h0 = streamEvent(id, 'submitted', nil, st, 0, ten, (st == 'scheduled') and { run_at = runAt } or nil)
    redis.call('HSET', KEYS[2 + i], 'env', env, 'att', '0', 'max', maxAtt, 'dl', dl, 'cls', cls, 'ten', ten, 'wf', wf,
      'cat', NOWS, 'upd', NOWS, 'fen', '0', 'nef', '0', 'rc', '0', 'est', est, 'st', st, 'run', ARGV[b + 5], 'h0', h0)
    META[id] = { cls = cls, ten = ten, est = tonumber(est) }
    ids[#ids + 1] = '0'
    ids[#ids + 1] = id
    if writeLoc then
      locs[#locs + 1] = KEYS[2 + n + i]
      locs[#locs + 1] = QUEUE .. '\t' .. shard
    end
    -- move(id, nil, st) and enqueue(id, runAt), merged over the batch (written below);
    -- 'st', 'upd' and 'run' went into the HSET above
    zadd(sk(st), '0', id)
    incr(K_COUNT, statsCountField(id, st), 1)
    incr(P .. 'blc', cls, META[id].est)
    incr(P .. 'blt', ten, META[id].est)
    -- statsMove(id, nil, st), merged per tenant -- [stats]
    rank[ten] = (rank[ten] or 0) + STATS_RANK[st]
    if st == 'scheduled' then scheduled[ten] = (scheduled[ten] or 0) + 1 end
    zadd(rk(cls, ten), ARGV[b + 5], id)
    zadd(tk(cls), '0', ten)
    zadd(qagek(cls), ARGV[b + 5], id) -- [stats] the class's age index
    out[#out + 1] = { 'created' }
  end
end
-- once per batch: the merged index and counter writes, the id index, the location keys, the total
for _, key in ipairs(zorder) do redis.call('ZADD', key, unpack(zadds[key])) end
for _, k in ipairs(iorder) do
  local e = incrs[k]
  if e[1] == K_COUNT then redis.call('HINCRBY', e[1], e[2], e[3]) else redis.call('HINCRBYFLOAT', e[1], e[2], e[3]) end
end
if #ids > 0 then
  redis.call('ZADD', K_ALL, unpack(ids))
  if #locs > 0 then redis.call('MSET', unpack(locs)) end
  total('submitted', #ids / 2)
  statsSubmitted(rank, scheduled, #ids / 2) -- [stats]
end
return out
`;
