/**
 * The worker's writes. Each checks the fence (the job is running under the
 * caller's fence token) in the same step as the write; a mismatch returns
 * {'lost'} and the client throws LeaseLostError.
 *
 * An ending write (complete, fail, abort, release) re-sent after its reply was
 * lost finds the job already ended by the same fence with the same outcome
 * (`endedBy`): it is answered as done, with the job as the first write left it,
 * not as a lost lease. Any other write to a finished job is refused.
 */

/** heartbeat: KEYS[1] lease set; ARGV[5] lease ms, ARGV[6..] pairs of id, fence. Returns per lease {status, exp, cancel, deadline}. */
export const HEARTBEAT = String.raw`
local leaseMs = tonumber(ARGV[5])
local out = {}
local function beat(id, fence)
  if not leaseHeld(id, fence) then return { 'lost' } end
  local dl = deadlineOf(id)
  local exp = NOW + leaseMs
  if dl and dl < exp then exp = dl end
  -- (a lease end edited to text is no later end: this beat's stands)
  local cur = tonumber(hget(id, 'le') or '0') or 0
  if exp < cur then exp = cur end
  redis.call('HSET', jk(id), 'le', exp)
  redis.call('ZADD', K_LEASES, exp, id)
  local cancel = redis.call('HGET', jk(id), 'cra') and 1 or 0
  local reached = (dl and NOW >= dl) and 1 or 0
  return { 'ok', exp, cancel, reached }
end
for i = 6, #ARGV, 2 do
  -- one lease's damaged record (a key of another type, a field edited by hand) fails its own beat,
  -- as lost, never the beats of the other leases sent with it (their jobs would be reaped as dead
  -- workers' while they run)
  local ok, r = pcall(beat, ARGV[i], ARGV[i + 1])
  out[#out + 1] = (ok and r) or { 'lost' }
end
return out
`;

/** checkpoint: KEYS[1] job hash; ARGV[5] id, [6] fence, [7] checkpoint JSON. */
export const CHECKPOINT = String.raw`
local id, fence = ARGV[5], ARGV[6]
if not leaseHeld(id, fence) then return { 'lost' } end
redis.call('HSET', KEYS[1], 'cp', ARGV[7], 'upd', NOWS)
emit(id, 'checkpoint', 'running', 'running', hget(id, 'att'), hget(id, 'ten'), cjson.null)
return { 'ok' }
`;

/**
 * usage: adds what the attempt spent to its open record and to the shard's usage counters (hash
 * 'use': tokens, cost_usd), summed over shards by redis/stats.ts. KEYS[1] job hash, KEYS[2] the
 * shard's usage hash, KEYS[3] the job's attempts list (all under the shard's hash tag); ARGV[5] id,
 * [6] fence, [7] tokens, [8] cost_usd (checked by the client: non-negative, finite).
 * The record keeps the text openAttempt wrote: the usage goes between started_at and the open tail
 * (replaced by the next report), which closeAttempt knows, so no cjson round trip reformats it.
 */
export const USAGE = String.raw`
local id, fence = ARGV[5], ARGV[6]
if not leaseHeld(id, fence) then return { 'lost' } end
local tokens, cost = tonumber(ARGV[7]), tonumber(ARGV[8])
-- the shortest text that reads back as the same number (0.1, not 0.10000000000000001)
local function numText(x)
  if x == math.floor(x) and math.abs(x) < 2^53 then return string.format('%d', x) end
  for _, f in ipairs({ '%.15g', '%.16g' }) do
    local t = string.format(f, x)
    if tonumber(t) == x then return t end
  end
  return string.format('%.17g', x)
end
local inList = false
local raw = redis.call('HGET', KEYS[1], 'ar')
if not raw then
  raw = redis.call('LINDEX', KEYS[3], -1)
  inList = true
end
if raw then
  local rec
  local head = string.sub(raw, 1, #raw - #ATTEMPT_OPEN_TAIL)
  if string.sub(raw, #head + 1) == ATTEMPT_OPEN_TAIL and string.match(head, '^{"attempt":%d+,.*,"started_at":%d+') then
    local base, t0, c0 = string.match(head, '^(.*),"usage":{"tokens":([^,]+),"cost_usd":([^}]+)}$')
    if not base then base, t0, c0 = head, '0', '0' end
    rec = base .. ',"usage":{"tokens":' .. numText(tonumber(t0) + tokens) .. ',"cost_usd":' .. numText(tonumber(c0) + cost) .. '}' .. ATTEMPT_OPEN_TAIL
  else
    -- a record written by cjson (before openAttempt existed): decoded and encoded again
    local a = cjson.decode(raw)
    local u = (type(a.usage) == 'table' and a.usage) or { tokens = 0, cost_usd = 0 }
    a.usage = { tokens = (tonumber(u.tokens) or 0) + tokens, cost_usd = (tonumber(u.cost_usd) or 0) + cost }
    rec = cjson.encode(a)
  end
  if inList then redis.call('LSET', KEYS[3], -1, rec) else redis.call('HSET', KEYS[1], 'ar', rec) end
end
redis.call('HSET', KEYS[1], 'upd', NOWS)
if tokens > 0 then redis.call('HINCRBY', KEYS[2], 'tokens', ARGV[7]) end
if cost > 0 then redis.call('HINCRBYFLOAT', KEYS[2], 'cost_usd', ARGV[8]) end
return { 'ok' }
`;

/**
 * effect_begin: records an effect as started, or returns the existing record; {'stopping', why}
 * when the job's cancel was requested or its deadline passed (a done record is still returned).
 * KEYS[1] job hash, KEYS[2] effects hash; ARGV[5] id, [6] fence, [7] key, [8] effects cap.
 */
export const EFFECT_BEGIN = String.raw`
local id, fence, key, cap = ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8])
if not leaseHeld(id, fence) then return { 'lost' } end
local existing = redis.call('HGET', KEYS[2], key)
if existing and cjson.decode(existing).status == 'done' then return { 'ok', existing } end
-- a stopping job starts no effect, new or retried (a started one would call the system again)
if redis.call('HGET', KEYS[1], 'cra') then return { 'stopping', 'cancel' } end
local dl = deadlineOf(id)
if dl and NOW >= dl then return { 'stopping', 'deadline' } end
if existing then return { 'ok', existing } end
if tonumber(hget(id, 'nef') or '0') >= cap then return { 'too_many' } end
local att = hget(id, 'att')
local e = cjson.encode({ key = key, status = 'started', idempotency_key = id .. ':' .. key, attempt = tonumber(att),
  started_at = NOW, done_at = cjson.null, result = cjson.null })
redis.call('HSET', KEYS[2], key, e)
redis.call('HINCRBY', KEYS[1], 'nef', 1)
redis.call('HSET', KEYS[1], 'upd', NOWS)
emit(id, 'effect_started', 'running', 'running', att, hget(id, 'ten'), { key = key })
return { 'ok', e }
`;

/** effect_finish: KEYS[1] job hash, KEYS[2] effects hash; ARGV[5] id, [6] fence, [7] key, [8] result JSON. */
export const EFFECT_FINISH = String.raw`
local id, fence, key = ARGV[5], ARGV[6], ARGV[7]
if not leaseHeld(id, fence) then return { 'lost' } end
local raw = redis.call('HGET', KEYS[2], key)
local e
if raw then
  e = cjson.decode(raw)
  if e.status == 'done' then return { 'ok', raw } end
else
  -- finished without a recorded start: record it done at once
  e = { key = key, idempotency_key = id .. ':' .. key, attempt = tonumber(hget(id, 'att')), started_at = NOW }
  redis.call('HINCRBY', KEYS[1], 'nef', 1)
end
e.status = 'done'
e.done_at = NOW
e.result = cjson.decode(ARGV[8])
local enc = cjson.encode(e)
redis.call('HSET', KEYS[2], key, enc)
redis.call('HSET', KEYS[1], 'upd', NOWS)
emit(id, 'effect_done', 'running', 'running', hget(id, 'att'), hget(id, 'ten'), { key = key })
return { 'ok', enc }
`;

/**
 * completeJob: running → succeeded under the caller's fence, in one read and
 * one write of the job. Returns nil when done, '=' when this fence completed it
 * already (a re-sent completion), or the state the job was found in when the
 * lease is no longer held. The lease fields (lw, le) are left in
 * place: a job that is not running has no lease whatever they say (the codec
 * and every fence check look at 'st' first), and a claim rewrites them.
 */
const COMPLETE_JOB = String.raw`
local function completeJob(jobKey, id, fence, result)
  -- Everything this step reads of the job, in one command: the fence check's state and fence, the
  -- attempt, class, tenant and estimate the counters and the event need, the open attempt record
  -- and the inline history slots used.
  local v = redis.call('HMGET', jobKey, 'st', 'fen', 'att', 'cls', 'ten', 'est', 'ar', 'hn')
  local st = v[1]
  if st ~= 'running' or v[2] ~= fence then
    -- (only a completion ends a job succeeded: under this fence, it was this one)
    if st == 'succeeded' and v[2] == fence then return '=' end
    return st or ''
  end
  -- A record edited by hand while it ran (no class or tenant, an attempt record that does not
  -- parse) failed the script half way: in a batch, the completions before it kept their job's
  -- write but lost their deferred index and counter writes. It is refused before any write of its
  -- own ('damaged:<why>'); its lease runs out and the claim's reaping sets it aside.
  if not (v[4] and v[5]) then return 'damaged:the job record has no class or tenant' end
  META[id] = { cls = v[4], ten = v[5], est = tonumber(v[6] or '60') or 0 }
  -- result, state, end, the closed attempt record and the event's history line in one write
  -- (move is told it is done; a success's outcome is 'succeeded')
  local args = { 'res', result, 'st', 'succeeded', 'upd', NOWS, 'end', NOWS, 'out', 'succeeded' }
  if v[7] then
    -- (a record that does not parse fails in its decoding, before closeAttempt counts anything)
    local ok, closed = pcall(closeAttempt, v[7], 'succeeded', nil, nil)
    if not ok then return 'damaged:its attempt record (field ar) does not parse' end
    if closed then
      args[#args + 1] = 'ar'
      args[#args + 1] = closed
    end
  else
    endAttempt(id, 'succeeded', nil, nil)
  end
  emitInline(args, v[8], id, 'succeeded', 'running', 'succeeded', v[3], v[5], cjson.null)
  redis.call('HSET', jobKey, unpack(args))
  move(id, 'running', 'succeeded', true)
  zsetD(K_LEASES, id, false)
  total('succeeded')
  return nil
end
`;

/** complete: KEYS[1] job hash; ARGV[5] id, [6] fence, [7] result JSON (a string or null). Returns {'ok', snapshot}, {'lost', state} or {'damaged', why}. */
export const COMPLETE = COMPLETE_JOB + String.raw`
local lost = completeJob(KEYS[1], ARGV[5], ARGV[6], ARGV[7])
if lost and string.sub(lost, 1, 8) == 'damaged:' then return { 'damaged', string.sub(lost, 9) } end
if lost and lost ~= '=' then return { 'lost', lost } end
return { 'ok', snapshot(ARGV[5]) }
`;

/**
 * complete_claim: a batch of completions, then a claim from the same shard for
 * the jobs they ask for next, in one step (one round trip per job for a busy
 * worker, and one script call for up to COMPLETE_BATCH completions a worker
 * makes in the same turn: RedisBackend.completeAndClaim). The completions' writes to the
 * state indexes, the lease set and the counters are deferred and sent merged
 * (prelude: deferred writes); the claim's picks do the same.
 * KEYS[1] the shard's lease set, KEYS[2 .. n+1] the completed jobs' hashes;
 * ARGV[5..16] as claim's (ARGV[5] caps the jobs claimed), ARGV[17] n, then
 * per completion: job id, fence, result JSON, how many jobs it wants next.
 * Returns {outcomes, claimed, aside}: per completion 'ok', 'done' (completed already
 * by this fence: a re-sent call), 'lost:<state found>' or 'damaged:<why>' (those three ask for nothing), and the claimed jobs as claim returns them,
 * in order, for the caller to hand out to the completions that asked, and the records claim set
 * aside (lua/claim.ts).
 */
export const completeClaim = (claim: (maxExpr: string) => string): string =>
  COMPLETE_JOB +
  String.raw`
local outcomes, wanted = {}, 0
-- (one completion has nothing to merge: its writes go out at once, without the gathering's cost)
DEFER = tonumber(ARGV[17]) > 1
for i = 0, tonumber(ARGV[17]) - 1 do
  local b = 18 + i * 4
  local lost = completeJob(KEYS[2 + i], ARGV[b], ARGV[b + 1], ARGV[b + 2])
  if lost == '=' then
    outcomes[#outcomes + 1] = 'done'
  elseif lost and string.sub(lost, 1, 8) == 'damaged:' then
    outcomes[#outcomes + 1] = lost
  elseif lost then
    outcomes[#outcomes + 1] = 'lost:' .. lost
  else
    outcomes[#outcomes + 1] = 'ok'
    wanted = wanted + tonumber(ARGV[b + 3])
  end
end
flushDeferred()
` +
  claim('math.min(wanted, tonumber(ARGV[5]))') +
  String.raw`
return { outcomes, claimed, aside }
`;

/**
 * fail: applies the decision made in JS by core/retry.decideFailure from the
 * job snapshot (retry, dead or expired); the fence and state are checked here.
 * KEYS[1] job hash; ARGV[5] id, [6] fence, [7] kind (retry|dead|expired; cancelled when the job's cancel was requested),
 * [8] run_at (retry), [9] dead reason, [10] error JSON, [11] code, [12] message,
 * [13] worker version (''), [14] over the retry budget ('1'/'0').
 */
export const FAIL = String.raw`
local id, fence, kind = ARGV[5], ARGV[6], ARGV[7]
local v = redis.call('HMGET', KEYS[1], 'st', 'fen', 'att', 'ten', 'hn')
if v[1] ~= 'running' or v[2] ~= fence then
  if endedBy(id, fence, 'failed') then return { 'ok', snapshot(id) } end
  return { 'lost', v[1] or '' }
end
local code, msg, wv = ARGV[11], ARGV[12], ARGV[13]
local att, ten, hn = v[3], v[4], v[5]
-- the error, the outcome's fields and the event's history line go into one write of the job, at the end
local args = { 'err', ARGV[10] }
-- failed after its cancel was requested (often because of it): a retry or the DLQ would undo the
-- cancel, so it ends cancelled whatever the client decided from its snapshot
if redis.call('HGET', KEYS[1], 'cra') then kind = 'cancelled' end
if kind == 'cancelled' then
  endAttempt(id, 'failed', code, msg)
  move(id, 'running', 'cancelled')
  finish(id, 'cancelled')
  total('cancelled')
  emitInline(args, hn, id, 'cancelled', 'running', 'cancelled', att, ten, { why = 'failed after a cancel request', error_code = code })
elseif kind == 'retry' then
  local runAt = tonumber(ARGV[8])
  endAttempt(id, 'failed', code, msg)
  redis.call('HDEL', KEYS[1], 'lw', 'le')
  redis.call('ZREM', K_LEASES, id)
  move(id, 'running', 'scheduled')
  enqueue(id, runAt)
  total('retried')
  local rb = P .. 'rb:' .. math.floor(NOW / 60000)
  -- the bucket's expiry is set when a field is created in it (see lua/lease.ts countTraffic)
  if redis.call('HINCRBY', rb, 'r', 1) == 1 then redis.call('EXPIRE', rb, 900) end
  emitInline(args, hn, id, 'retry_scheduled', 'running', 'scheduled', att, ten, { run_at = runAt, error_code = code, over_budget = ARGV[14] == '1' })
elseif kind == 'dead' then
  endAttempt(id, 'failed', code, msg)
  args[#args + 1] = 'dr'
  args[#args + 1] = ARGV[9]
  args[#args + 1] = 'dat'
  args[#args + 1] = NOWS
  args[#args + 1] = 'dec'
  args[#args + 1] = code
  args[#args + 1] = 'dem'
  args[#args + 1] = msg
  if wv == '' then wv = hget(id, 'wv') or '' end
  if wv ~= '' then
    args[#args + 1] = 'dwv'
    args[#args + 1] = wv
  else
    redis.call('HDEL', KEYS[1], 'dwv')
  end
  move(id, 'running', 'dead')
  finish(id, 'dead')
  redis.call('ZADD', K_DLQ, NOWS, id)
  total('dead')
  emitInline(args, hn, id, 'dead', 'running', 'dead', att, ten, { reason = ARGV[9], error_code = code })
else
  endAttempt(id, 'failed', code, msg)
  move(id, 'running', 'expired')
  finish(id, 'expired')
  total('expired')
  emitInline(args, hn, id, 'expired', 'running', 'expired', att, ten, { error_code = code, why = 'no retry fits before the deadline' })
end
redis.call('HSET', KEYS[1], unpack(args))
return { 'ok', snapshot(id) }
`;

/** abort: ends a running job whose handler stopped for a cancel or a passed deadline. ARGV[5] id, [6] fence, [7] cancelled|expired. */
export const ABORT = String.raw`
local id, fence, to = ARGV[5], ARGV[6], ARGV[7]
local st = hget(id, 'st')
if not leaseHeld(id, fence) then
  if st == to and endedBy(id, fence, to) then return { 'ok', snapshot(id) } end
  return { 'lost', st or '' }
end
local lw = hget(id, 'lw')
endAttempt(id, to, nil, nil)
if to == 'expired' then
  move(id, 'running', 'expired')
  finish(id, 'expired')
  total('expired')
  -- (sqlite/worker.ts abort says the same)
  emit(id, 'expired', 'running', 'expired', hget(id, 'att'), hget(id, 'ten'), { why = "the job's deadline passed while it was running; worker " .. (lw or '?') .. ' stopped its handler' })
else
  move(id, 'running', 'cancelled')
  finish(id, 'cancelled')
  total('cancelled')
  local reason = hget(id, 'crr')
  emit(id, 'cancelled', 'running', 'cancelled', hget(id, 'att'), hget(id, 'ten'), reason and { reason = reason } or nil)
end
return { 'ok', snapshot(id) }
`;

/**
 * setAside: a job just claimed whose record the client cannot read as this job (codec.ts
 * ownJobFrom: an envelope that does not parse, a field of another shape; the claim script checks
 * only what it uses) goes into the DLQ instead of to a worker, which would be handed the same
 * record again after each lease expiry. KEYS[1] job hash; ARGV[5] id, [6] fence, [7] why.
 */
export const SET_ASIDE = String.raw`
local id, fence = ARGV[5], ARGV[6]
if not leaseHeld(id, fence) then return { 'lost', hget(id, 'st') or '' } end
endAttempt(id, 'failed', 'MALFORMED_ENTRY', ARGV[7])
redis.call('HDEL', KEYS[1], 'lw', 'le')
redis.call('ZREM', K_LEASES, id)
setAside(id, 'running', hget(id, 'att'), hget(id, 'ten'), ARGV[7])
return { 'ok' }
`;

/** release: gives a running job back without counting the attempt (graceful shutdown). ARGV[5] id, [6] fence. */
export const RELEASE = String.raw`
local id, fence = ARGV[5], ARGV[6]
if not leaseHeld(id, fence) then
  if endedBy(id, fence, 'released') then return { 'ok' } end
  return { 'lost', hget(id, 'st') or '' }
end
if redis.call('HGET', KEYS[1], 'cra') then
  -- given back after a cancel request: nothing left to run. The attempt ends
  -- 'cancelled' and counts (it is not handed out again), so a job's attempt
  -- number always equals its attempts that were not released.
  endAttempt(id, 'cancelled', nil, nil)
  move(id, 'running', 'cancelled')
  finish(id, 'cancelled')
  total('cancelled')
  emit(id, 'cancelled', 'running', 'cancelled', hget(id, 'att'), hget(id, 'ten'), { why = 'released after a cancel request' })
  return { 'ok' }
end
endAttempt(id, 'released', nil, nil)
redis.call('HINCRBY', KEYS[1], 'att', -1)
redis.call('HDEL', KEYS[1], 'lw', 'le')
redis.call('ZREM', K_LEASES, id)
move(id, 'running', 'queued')
enqueue(id, NOW)
emit(id, 'released', 'running', 'queued', hget(id, 'att'), hget(id, 'ten'), cjson.null)
return { 'ok' }
`;
