/**
 * The Lua of the SQS backend's Redis job store (redis-store.ts). Each script
 * runs with the Redis adapter's shard PRELUDE (src/backend/redis/lua/prelude.ts:
 * ARGV[1..4] = shard prefix, now, events cap, queue) and its helpers (move,
 * enqueue, dequeue, finish, endAttempt, expire, emit, snapshot), so the
 * indexes, counters and stats hooks stay exactly as the adapter keeps them.
 * KEYS[1] is the job's hash: every key touched shares its shard's hash tag.
 *
 * Keys of this store, per shard (under the same hash tag):
 *   sqs:dlv  hash job id → JSON {m: message id, r: receipt, u: queue URL, at: received ms, ds: DLQ copy sent ms or 0}
 *   sqs:pub  hash job id → the generation (redrive count) last published: see redis-store.ts "outbox"
 *   sqs:cus  hash job id → JSON custody record (messages taken out of an SQS DLQ)
 *   sqs:cmi  hash SQS message id → job id (custody is idempotent on the message id)
 */

/** Retry-policy helpers, as in the adapter's claim script (lua/claim.ts), for reaping one lease. */
const REAP_HELPERS = String.raw`
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
local function countTraffic(field)
  local rb = P .. 'rb:' .. math.floor(NOW / 60000)
  if redis.call('HINCRBY', rb, field, 1) == 1 then redis.call('EXPIRE', rb, 900) end
end
local K_DLV = P .. 'sqs:dlv'
local function delivery(id)
  local raw = redis.call('HGET', K_DLV, id)
  if raw then return cjson.decode(raw) end
  return nil
end
`;

/**
 * consider: judges one received message against the store and, when the job
 * may run, takes the lease for that exact job id — one atomic step, the same
 * decisions as SqliteSqsStore.consider (src/backend/sqlite/outbox.ts).
 *
 * ARGV[5] job id, [6] message id, [7] receipt, [8] queue URL, [9] lease ms,
 * [10] worker id, [11] worker version (''), [12] classes taken (comma list, '' = all),
 * [13] default tenant cap (-1 = none), [14] cap overrides ('t=1,…'), [15] retry policy, [16] random in [0, 1).
 *
 * Returns { kind, a, b }: 'unknown'; 'delete', why; 'hide', until ms, why;
 * 'bury', snapshot; 'claimed', { fence, expiry, snapshot }.
 */
export const CONSIDER = REAP_HELPERS + String.raw`
local id, mid, rcpt, qurl = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local leaseMs, worker, wver, classes = tonumber(ARGV[9]), ARGV[10], ARGV[11], ARGV[12]
local capDefault, rand = tonumber(ARGV[13]), tonumber(ARGV[16])

local st = hget(id, 'st')
if not st then return { 'unknown' } end
local cur = delivery(id)

local function record()
  local ds = 0
  if cur and cur.m == mid then ds = cur.ds end
  redis.call('HSET', K_DLV, id, cjson.encode({ m = mid, r = rcpt, u = qurl, at = NOW, ds = ds }))
end
local function refresh()
  if cur and cur.m == mid then
    cur.r, cur.at = rcpt, NOW
    redis.call('HSET', K_DLV, id, cjson.encode(cur))
  end
end

if st == 'running' then
  local le = tonumber(hget(id, 'le') or '0')
  if le > NOW then
    if cur and cur.m ~= mid then return { 'delete', 'a duplicate of the message that carries this running job' } end
    refresh()
    return { 'hide', tostring(le), 'a live lease holds the job' }
  end
  -- The message came back because the lease ran out: the worker crashed or stalled.
  -- Reaped as the adapter's claim reaps (lua/claim.ts, "Reclaim expired leases").
  redis.call('ZREM', K_LEASES, id)
  local att, ten, fence, lw = tonumber(hget(id, 'att')), hget(id, 'ten'), tonumber(hget(id, 'fen')), hget(id, 'lw')
  local dl = deadlineOf(id)
  local msg = 'lease of ' .. (lw or 'a worker') .. ' expired without a heartbeat'
  endAttempt(id, 'lease_lost', 'LEASE_EXPIRED', msg)
  redis.call('HSET', jk(id), 'err', cjson.encode({ code = 'LEASE_EXPIRED', message = msg, retryable = true }))
  emit(id, 'lease_expired', 'running', nil, att, ten, { worker_id = lw or cjson.null, fence = fence })
  redis.call('HDEL', jk(id), 'lw', 'le')
  local kind, runAt, over = nil, nil, false
  if redis.call('HGET', jk(id), 'cra') then kind = 'cancelled'
  elseif dl and NOW >= dl then kind = 'expired'
  elseif att >= tonumber(hget(id, 'max')) then kind = 'dead'
  else
    parsePolicy(ARGV[15])
    local delay = backoff(att, rand)
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
    emit(id, 'expired', 'running', 'expired', att, ten, { why = 'lease expired and the deadline leaves no room for a retry' })
  elseif kind == 'dead' then
    local lastAtt = cjson.decode(redis.call('LINDEX', ak(id), -1) or '{}')
    redis.call('HSET', jk(id), 'dr', 'lease_lost', 'dat', NOW, 'dec', 'LEASE_EXPIRED', 'dem', msg)
    if lastAtt.worker_version and lastAtt.worker_version ~= cjson.null then redis.call('HSET', jk(id), 'dwv', lastAtt.worker_version) else redis.call('HDEL', jk(id), 'dwv') end
    move(id, 'running', 'dead')
    finish(id, 'dead')
    redis.call('ZADD', K_DLQ, NOW, id)
    total('dead')
    emit(id, 'dead', 'running', 'dead', att, ten, { reason = 'lease_lost', error_code = 'LEASE_EXPIRED' })
  else
    move(id, 'running', 'scheduled')
    enqueue(id, runAt)
    total('retried')
    countTraffic('r')
    emit(id, 'retry_scheduled', 'running', 'scheduled', att, ten, { run_at = runAt, error_code = 'LEASE_EXPIRED', over_budget = over })
  end
  st = hget(id, 'st')
end

if st == 'dead' then
  if cur and cur.m == mid and tonumber(cur.ds) == 0 then
    refresh()
    return { 'bury', snapshot(id) }
  end
  return { 'delete', 'the job is in the DLQ (store)' }
end
if st ~= 'queued' and st ~= 'scheduled' then return { 'delete', 'the job is ' .. st } end

-- queued or scheduled. The recorded message may still arrive unless its DLQ copy was sent
-- (then it was deleted, and a redriven job has a new message): any other is a duplicate.
if cur and cur.m ~= mid and tonumber(cur.ds) == 0 then return { 'delete', 'a duplicate of the message that carries this job' } end
local runAt = tonumber(hget(id, 'run'))
if runAt > NOW then
  record()
  return { 'hide', tostring(runAt), 'not due yet' }
end
local dl = deadlineOf(id)
if dl and dl <= NOW then
  expire(id, st)
  return { 'delete', 'the deadline passed before it was claimed' }
end
local cls, ten = hget(id, 'cls'), hget(id, 'ten')
if classes ~= '' and not string.find(',' .. classes .. ',', ',' .. cls .. ',', 1, true) then
  return { 'hide', tostring(NOW), 'class ' .. cls .. ' is not taken by this worker' }
end
local cap = nil
for t, w in string.gmatch(ARGV[14], '([^,=]+)=([^,]+)') do if t == ten then cap = tonumber(w) end end
if not cap and capDefault >= 0 then cap = capDefault end
if cap and tonumber(redis.call('HGET', P .. 'rt', ten) or '0') >= cap then
  record()
  return { 'hide', tostring(NOW + 1000), 'tenant ' .. ten .. ' is at its concurrency cap' }
end

record()
-- Start the attempt as the adapter's claim does (lua/claim.ts, "Fair picks").
dequeue(id)
local fence = tonumber(hget(id, 'fen') or '0') + 1
local att = tonumber(hget(id, 'att') or '0') + 1
local exp = NOW + leaseMs
if dl and dl < exp then exp = dl end
if wver ~= '' then
  redis.call('HSET', jk(id), 'fen', fence, 'att', att, 'lw', worker, 'le', exp, 'wv', wver, 'st', 'running', 'upd', NOW)
else
  redis.call('HSET', jk(id), 'fen', fence, 'att', att, 'lw', worker, 'le', exp, 'st', 'running', 'upd', NOW)
  redis.call('HDEL', jk(id), 'wv')
end
move(id, st, 'running', true)
redis.call('ZADD', K_LEASES, exp, id)
local rec = cjson.encode({ attempt = att, worker_id = worker, worker_version = (wver ~= '' and wver) or cjson.null,
  started_at = NOW, ended_at = cjson.null, outcome = cjson.null, error_code = cjson.null, error_message = cjson.null })
local natt = redis.call('RPUSH', ak(id), rec)
if natt > ATTEMPTS_KEEP then redis.call('LTRIM', ak(id), -ATTEMPTS_KEEP, -1) end
total('attempts')
countTraffic('a')
if redis.call('RPUSH', P .. 'tiq', NOW - runAt) > 2 * SAMPLES_KEEP then redis.call('LTRIM', P .. 'tiq', -SAMPLES_KEEP, -1) end
emit(id, 'claimed', st, 'running', att, ten, { worker_id = worker, fence = fence, lease_expires_at = exp })
return { 'claimed', { fence, exp, snapshot(id) } }
`;

/**
 * custody_bury: a live job whose message SQS moved to the DLQ by its
 * RedrivePolicy goes dead with reason `custody`, and its custody record is
 * written in the same step. ARGV[5] job id, [6] error code, [7] why,
 * [8] SQS message id, [9] custody record (JSON).
 * Returns 'job_dead', 'already_ended', 'kept' (message already in custody) or 'unknown'.
 */
export const CUSTODY_BURY = REAP_HELPERS + String.raw`
local id, code, why, mid, recJson = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
if redis.call('HEXISTS', P .. 'sqs:cmi', mid) == 1 then return 'kept' end
local st = hget(id, 'st')
if not st then return 'unknown' end
if st ~= 'queued' and st ~= 'scheduled' and st ~= 'running' then return 'already_ended' end
local att, ten = hget(id, 'att'), hget(id, 'ten')
if st == 'running' then endAttempt(id, 'lease_lost', code, why) end
if st ~= 'running' then dequeue(id) end
local lastAtt = cjson.decode(redis.call('LINDEX', ak(id), -1) or '{}')
redis.call('HSET', jk(id), 'dr', 'custody', 'dat', NOW, 'dec', code, 'dem', why)
if lastAtt.worker_version and lastAtt.worker_version ~= cjson.null then redis.call('HSET', jk(id), 'dwv', lastAtt.worker_version) else redis.call('HDEL', jk(id), 'dwv') end
move(id, st, 'dead')
finish(id, 'dead')
redis.call('ZADD', K_DLQ, NOW, id)
total('dead')
emit(id, 'dead', st, 'dead', att, ten, { reason = 'custody', error_code = code })
redis.call('HDEL', K_DLV, id)
redis.call('HSET', P .. 'sqs:cus', id, recJson)
redis.call('HSET', P .. 'sqs:cmi', mid, id)
return 'job_dead'
`;

/**
 * custody_keep: a foreign, malformed or orphan message kept as a dead entry
 * whose record never parses as a job (the DLQ lists it as malformed, so the
 * bulk engine never redrives or purges it), with its byte-exact custody record.
 * KEYS[1] the new entry's job hash. ARGV[5] job id, [6] error code, [7] why,
 * [8] SQS message id, [9] custody record (JSON), [10] the message body.
 * Returns { 'kept', job id } (the existing one when the message is already in custody).
 */
export const CUSTODY_KEEP = String.raw`
local id, code, why, mid, recJson, body = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local existing = redis.call('HGET', P .. 'sqs:cmi', mid)
if existing then return { 'kept', existing } end
redis.call('HSET', jk(id), 'env', 'sqs-custody:' .. body, 'st', 'dead', 'cls', 'batch', 'ten', 'unknown', 'wf', 'unknown:v0',
  'att', 0, 'max', 0, 'dat', NOW, 'upd', NOW, 'run', NOW, 'dr', 'custody', 'dec', code, 'dem', why, 'nef', 0, 'rc', 0, 'fen', 0)
redis.call('ZADD', sk('dead'), 0, id)
redis.call('ZADD', K_ALL, 0, id)
redis.call('ZADD', K_DLQ, NOW, id)
redis.call('HINCRBY', K_COUNT, 'batch:dead', 1) -- [stats] as the adapter counts a dead entry (see injectMalformedDlqEntryForTests)
redis.call('ZINCRBY', P .. 'stn', 1, 'unknown')
redis.call('HSET', P .. 'sqs:cus', id, recJson)
redis.call('HSET', P .. 'sqs:cmi', mid, id)
return { 'kept', id }
`;

/**
 * dlq_sent: marks a job's delivery as having its SQS DLQ copy sent, in one
 * step (a concurrent `consider` may be rewriting the same record's receipt).
 * KEYS[1] the shard's `sqs:dlv`. ARGV[1] job id, [2] now (ms). No prelude.
 */
export const DLQ_SENT = String.raw`
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local d = cjson.decode(raw)
d.ds = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(d))
return 1
`;
