/**
 * The Lua of the SQS backend's Redis job store (redis-store.ts). Each script
 * runs with the Redis adapter's shard PRELUDE (src/backend/redis/lua/prelude.ts:
 * ARGV[1..4] = shard prefix, now, events cap, queue) and its helpers (move,
 * enqueue, dequeue, finish, endAttempt, expire, emit, snapshot), so the
 * indexes, counters and stats hooks stay exactly as the adapter keeps them.
 * KEYS[1] is the job's hash: every key touched shares its shard's hash tag.
 * consider reaps and starts leases with the adapter's Lua (src/backend/redis/lua/lease.ts).
 *
 * Keys of this store, per shard (under the same hash tag):
 *   sqs:dlv  hash job id → JSON {m: message id, r: receipt, u: queue URL, at: received ms, ds: DLQ copy sent ms or 0}
 *   sqs:pub  hash job id → the generation (redrive count) last published: see redis-store.ts "outbox"
 *   sqs:rep  hash job id → 'GEN:N': `agentq sqs republish` gave generation GEN of the job N new messages (part of their FIFO deduplication ids)
 *   sqs:cus  hash job id → JSON custody record (messages taken out of an SQS DLQ)
 *   sqs:cmi  hash SQS message id → job id (custody is idempotent on the message id)
 */
import { LEASE_LUA } from '../redis/lua/lease.js';

/**
 * The hashes above that hold a field per job for as long as the job exists: a purge removes the
 * job's field from each, in the adapter's apply script (RedisBackendDeps.jobFieldHashes). Custody
 * (sqs:cus, sqs:cmi) is not among them: it records what was taken out of the SQS DLQ.
 */
export const SQS_JOB_HASHES = ['sqs:pub', 'sqs:dlv', 'sqs:rep'] as const;

/** The delivery record of a job (the `sqs:dlv` hash above). */
const DELIVERY = String.raw`
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
export const CONSIDER = LEASE_LUA + DELIVERY + String.raw`
local id, mid, rcpt, qurl = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local leaseMs, worker, wver, classes = tonumber(ARGV[9]), ARGV[10], ARGV[11], ARGV[12]
local capDefault, rand = tonumber(ARGV[13]), tonumber(ARGV[16])

local st = hget(id, 'st')
if not st then return { 'unknown' } end
local cur = delivery(id)

-- The message now carries the job: no DLQ copy of it sent yet, even when it is the message recorded
-- with its copy sent (a redriven job run again by its old message: SqliteSqsStore.recordDelivery).
local function record()
  redis.call('HSET', K_DLV, id, cjson.encode({ m = mid, r = rcpt, u = qurl, at = NOW, ds = 0 }))
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
    -- No message on record (the DLQ sweep put it back, requeued): this one carries the job now.
    if not cur then record() else refresh() end
    return { 'hide', tostring(le), 'a live lease holds the job' }
  end
  -- The message came back because the lease ran out: the worker crashed or stalled.
  -- Reaped as the adapter's claim reaps (lua/claim.ts, "Reclaim expired leases"), by the same Lua.
  redis.call('ZREM', K_LEASES, id)
  reapLease(id, ARGV[15], rand)
  st = hget(id, 'st')
end

if st == 'dead' then
  -- Dead with no message on record (the one that carried it renewed, put back by a DLQ sweep, or
  -- forgotten by republish, and the job died before the new one was received): this message
  -- carries the death to the SQS DLQ, as the job's own message does (SqliteSqsStore.consider).
  -- Not a death by custody: SQS itself moved that job's message to the DLQ.
  if not cur and hget(id, 'dr') ~= 'custody' then
    record()
    return { 'bury', snapshot(id) }
  end
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
-- Start the attempt as the adapter's claim does, by the same Lua (lua/lease.ts startAttempt).
dequeue(id)
local fence = tonumber(hget(id, 'fen') or '0') + 1
local att = tonumber(hget(id, 'att') or '0') + 1
-- (the job hash is not read whole here: its worker version is cleared unconditionally)
local prev = redis.call('HMGET', jk(id), 'ar', 'hn')
local exp = startAttempt(id, st, ten, fence, att, dl, runAt, worker, wver, leaseMs, true, prev[1], prev[2])
return { 'claimed', { fence, exp, snapshot(id) } }
`;

/**
 * custody_bury: a live job whose message SQS moved to the DLQ by its
 * RedrivePolicy goes dead with reason `custody`, and its custody record is
 * written in the same step. ARGV[5] job id, [6] error code, [7] why,
 * [8] SQS message id, [9] custody record (JSON).
 * A running job under a live lease is left running instead ('requeued', its delivery forgotten).
 * Returns 'job_dead', 'already_ended', 'requeued', 'kept' (message already in custody) or 'unknown'.
 */
export const CUSTODY_BURY = DELIVERY + String.raw`
local id, code, why, mid, recJson = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
if redis.call('HEXISTS', P .. 'sqs:cmi', mid) == 1 then return 'kept' end
local st = hget(id, 'st')
if not st then return 'unknown' end
if st ~= 'queued' and st ~= 'scheduled' and st ~= 'running' then return 'already_ended' end
-- A live lease: the worker is alive; only the message was received too often. Left running, its
-- delivery forgotten: the sweep puts the message back (SqliteSqsStore.takeCustody, requeued).
if st == 'running' and tonumber(hget(id, 'le') or '0') > NOW then
  redis.call('HDEL', K_DLV, id)
  return 'requeued'
end
local att, ten = hget(id, 'att'), hget(id, 'ten')
if st == 'running' then endAttempt(id, 'lease_lost', code, why) end
if st ~= 'running' then dequeue(id) end
local lastAtt = cjson.decode(lastAttempt(id) or '{}')
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

/**
 * `agentq sqs republish` on one job (KEYS: the job hash, the shard's sqs:pub, sqs:dlv and sqs:rep; ARGV[1]
 * the job id, ARGV[2] now): a waiting job (or a running one whose lease has expired) whose message is published forgets that message (delivery and
 * published mark), which makes it pending in the outbox again (the outbox is derived, see
 * redis-store.ts), and counts the republish: the count is part of the message's FIFO
 * deduplication id, so SQS does not drop the new message as a copy of the one it replaces
 * (sent moments ago, within SQS's 5-minute window).
 * Returns the state and what was done: republished | pending | not_waiting | unknown.
 */
export const REPUBLISH = String.raw`
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'', 'unknown'} end
local lapsed = st == 'running' and tonumber(redis.call('HGET', KEYS[1], 'le') or '0') <= tonumber(ARGV[2])
if st ~= 'queued' and st ~= 'scheduled' and not lapsed then return {st, 'not_waiting'} end
local gen = redis.call('HGET', KEYS[1], 'rc') or '0'
if redis.call('HGET', KEYS[2], ARGV[1]) ~= gen then return {st, 'pending'} end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local rep = redis.call('HGET', KEYS[4], ARGV[1])
local n = 1
if rep then
  local rgen, rn = string.match(rep, '^(%d+):(%d+)$')
  if rgen == gen then n = tonumber(rn) + 1 end
end
redis.call('HSET', KEYS[4], ARGV[1], gen .. ':' .. n)
return {st, 'republished'}
`;
