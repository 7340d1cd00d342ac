/**
 * A lease's start and its reaping, shared by the adapter's claim (lua/claim.ts,
 * which reaps every expired lease of its shard and starts its fair picks) and
 * the SQS Redis store's consider (src/backend/sqs/redis-lua.ts, which reaps or
 * starts the lease of the one job whose message came), so both keep a lease
 * the same way. Runs after the shard PRELUDE (lua/prelude.ts) and uses its helpers.
 *
 * Reaping (reapLease)
 * The decision is core/retry.decideFailure, ported, for a retryable failure
 * (LEASE_EXPIRED): cancelled when a cancel was requested, expired at the
 * deadline, dead with reason lease_lost when out of attempts, otherwise a retry
 * after a jittered backoff (plus the over-budget delay when retries outrun the
 * retry budget), or expired when that retry would land past the deadline.
 */
export const LEASE_LUA = String.raw`
-- the retry policy: 'min:max,min:max,...|growth|maxDelay|ratio|minRetries|overBudgetDelay',
-- parsed only when a reaped lease needs it (most calls reap nothing)
local windows, growth, maxDelay, ratio, minRetries, overDelay
local function parsePolicy(text)
  if windows then return end
  local pol = {}
  for part in string.gmatch(text, '[^|]+') do pol[#pol + 1] = part end
  windows = {}
  for a, b in string.gmatch(pol[1], '(%d+):(%d+)') do windows[#windows + 1] = { tonumber(a), tonumber(b) } end
  growth, maxDelay, ratio, minRetries, overDelay = tonumber(pol[2]), tonumber(pol[3]), tonumber(pol[4]), tonumber(pol[5]), tonumber(pol[6])
end

local function backoff(retry, r)
  local w = windows[math.min(retry, #windows)] or { 1000, 1000 }
  local lo, hi = w[1], w[2]
  if retry > #windows then
    local f = growth ^ (retry - #windows)
    lo, hi = lo * f, hi * f
  end
  return math.min(math.floor(lo + r * (hi - lo) + 0.5), maxDelay)
end

local function traffic()
  local b = math.floor(NOW / 60000)
  local cur = redis.call('HMGET', P .. 'rb:' .. b, 'a', 'r')
  local prev = redis.call('HMGET', P .. 'rb:' .. (b - 1), 'a', 'r')
  return (tonumber(cur[1]) or 0) + (tonumber(prev[1]) or 0), (tonumber(cur[2]) or 0) + (tonumber(prev[2]) or 0)
end

-- The minute's bucket gets its expiry when a field is created in it (countD's 'ttl': HINCRBY
-- returns what it added): the first write to a bucket always creates a field, so every bucket expires.
local function countTraffic(field)
  countD('ttl', P .. 'rb:' .. math.floor(NOW / 60000), field, 1)
end

-- Starts an attempt of a waiting job (already out of its waiting indexes) under a new lease
-- that ends at the deadline at the latest: fence, attempt, lease, worker version, state, the
-- attempt record (ar) and the 'claimed' event (an inline history slot while one is free) in one
-- write of the job (hadWv: the job may hold a worker version to clear). prevAr, hn: the job's ar
-- and hn fields as read (prevAr, the previous attempt's record, moves to the attempts list).
-- Returns the lease expiry, the attempt record and the attempts list's length (also written as na).
local leaseEndMs, leaseEndText, workerOf, workerJson
local function startAttempt(id, from, ten, fence, att, dl, runAt, worker, wver, leaseMs, hadWv, prevAr, hn)
  local exp = NOW + leaseMs
  if dl and dl < exp then exp = dl end
  -- the expiry as text, formatted once per call for the leases that end together (Redis would
  -- format a number argument anew for each command)
  if exp ~= leaseEndMs then leaseEndMs, leaseEndText = exp, string.format('%d', exp) end
  -- (and the worker id's JSON, once per call: every pick of a claim has the same worker)
  if worker ~= workerOf then workerOf, workerJson = worker, cjson.encode(worker) end
  local natt = 0
  if prevAr then
    -- the list and ar together keep the last ATTEMPTS_KEEP records
    natt = redis.call('RPUSH', ak(id), prevAr)
    if natt >= ATTEMPTS_KEEP then
      redis.call('LTRIM', ak(id), 1 - ATTEMPTS_KEEP, -1)
      natt = ATTEMPTS_KEEP - 1
    end
  elseif att > 1 then
    -- a job stored before ar existed keeps all its records in the list
    natt = redis.call('LLEN', ak(id))
  end
  -- the attempt and fence as text once: each is written three times (a Lua number is formatted
  -- anew each time it is joined to text or passed to Redis)
  local attText, fenceText = string.format('%d', att), string.format('%d', fence)
  local rec = openAttempt(attText, workerJson, wver)
  -- (na: the attempts list's length, so readers skip the list of a job that has none)
  local args = { 'fen', fenceText, 'att', attText, 'lw', worker, 'le', leaseEndText, 'st', 'running', 'upd', NOWS, 'ar', rec, 'na', tostring(natt) }
  if wver ~= '' then
    args[#args + 1] = 'wv'
    args[#args + 1] = wver
  end
  emitInline(args, hn, id, 'claimed', from, 'running', attText, ten,
    '{"worker_id":' .. workerJson .. ',"fence":' .. fenceText .. ',"lease_expires_at":' .. leaseEndText .. '}')
  redis.call('HSET', jk(id), unpack(args))
  if wver == '' and hadWv then redis.call('HDEL', jk(id), 'wv') end
  move(id, from, 'running', true)
  zsetD(K_LEASES, id, leaseEndText)
  total('attempts')
  countTraffic('a')
  -- samples are trimmed back to SAMPLES_KEEP only once they reach twice that (one LTRIM per
  -- SAMPLES_KEEP claims, not one per claim); readers take the last SAMPLES_KEEP
  -- (at least 0, as SQLite: a run_at written by a process whose clock runs ahead)
  pushD(P .. 'tiq', math.max(0, NOW - runAt), 2 * SAMPLES_KEEP, SAMPLES_KEEP)
  return exp, rec, natt
end

-- Ends the attempt of a running job whose lease expired (the caller has taken it out of
-- K_LEASES and checked it is running) and decides what becomes of the job.
-- policy: the retry policy text; r: a uniform random number in [0, 1) for the backoff's jitter.
local function reapLease(id, policy, r)
  local att, ten, fence, lw = tonumber(hget(id, 'att')), hget(id, 'ten'), tonumber(hget(id, 'fen')), hget(id, 'lw')
  local dl, le = deadlineOf(id), tonumber(hget(id, 'le'))
  -- a lease capped at the deadline ran out because the deadline came, not because its worker
  -- stopped heartbeating (sqlite/store.ts leaseExpiredError says the same)
  local msg
  if dl and le and le >= dl then
    msg = "the job's deadline passed while it was running (the lease of " .. (lw or 'a worker') .. ' ended at the deadline)'
  else
    msg = 'lease of ' .. (lw or 'a worker') .. ' expired without a heartbeat'
  end
  -- the attempt ended when its lease ran out, not now (sqlite/store.ts leaseEndedAt says the same)
  endAttempt(id, 'lease_lost', 'LEASE_EXPIRED', msg, le and math.min(le, NOW) or nil)
  redis.call('HSET', jk(id), 'err', cjson.encode({ code = 'LEASE_EXPIRED', message = msg, retryable = true }))
  emit(id, 'lease_expired', 'running', nil, att, ten, { worker_id = lw or cjson.null, fence = fence })
  redis.call('HDEL', jk(id), 'lw', 'le')
  -- core/retry.decideFailure, for a retryable failure
  local kind, runAt, over = nil, nil, false
  if redis.call('HGET', jk(id), 'cra') then kind = 'cancelled'
  elseif dl and NOW >= dl then kind = 'expired'
  elseif att >= tonumber(hget(id, 'max')) then kind = 'dead'
  else
    parsePolicy(policy)
    local delay = backoff(att, r)
    local a, rt = traffic()
    over = rt >= minRetries and rt + 1 > ratio * math.max(a, 1)
    if over then delay = delay + overDelay end
    runAt = NOW + delay
    if dl and runAt >= dl then kind = 'expired' else kind = 'retry' end
  end
  if kind == 'cancelled' then
    move(id, 'running', 'cancelled')
    finish(id, 'cancelled')
    total('cancelled')
    emit(id, 'cancelled', 'running', 'cancelled', att, ten, { why = 'cancel requested before the lease expired' })
  elseif kind == 'expired' then
    move(id, 'running', 'expired')
    finish(id, 'expired')
    total('expired')
    -- as specific as the attempt's error (sqlite/store.ts leaseExpiredWhy says the same)
    local why = msg
    if not (dl and le and le >= dl) then why = msg .. ', and the deadline leaves no room for a retry' end
    emit(id, 'expired', 'running', 'expired', att, ten, { why = why })
  elseif kind == 'dead' then
    local lastAtt = cjson.decode(lastAttempt(id) or '{}')
    redis.call('HSET', jk(id), 'dr', 'lease_lost', 'dat', NOWS, 'dec', 'LEASE_EXPIRED', 'dem', msg)
    if lastAtt.worker_version and lastAtt.worker_version ~= cjson.null then redis.call('HSET', jk(id), 'dwv', lastAtt.worker_version) else redis.call('HDEL', jk(id), 'dwv') end
    move(id, 'running', 'dead')
    finish(id, 'dead')
    redis.call('ZADD', K_DLQ, NOWS, id)
    total('dead')
    emit(id, 'dead', 'running', 'dead', att, ten, { reason = 'lease_lost', error_code = 'LEASE_EXPIRED' })
  else
    move(id, 'running', 'scheduled')
    enqueue(id, runAt)
    total('retried')
    countTraffic('r')
    emit(id, 'retry_scheduled', 'running', 'scheduled', att, ten, { run_at = runAt, error_code = 'LEASE_EXPIRED', over_budget = over })
  end
end
`;
