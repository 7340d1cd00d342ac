/**
 * Shared Lua helpers, prepended to every script. A script runs against one
 * queue shard: ARGV[1] is the shard's key prefix `{aq:<queue>:<shard>}:` (one
 * hash tag, so every key below is in the same slot as KEYS[1], which routes
 * the call), ARGV[2] the caller's clock (epoch ms: tests control time; Redis
 * TIME is never read), ARGV[3] the events stream cap.
 *
 * Every read here is bounded: single fields, ZRANGE/ZRANGEBYSCORE with LIMIT,
 * per-job hashes whose size is capped (effects) or lists kept trimmed (attempts,
 * history).
 */
import { HISTORY_INLINE, HISTORY_KEEP } from './read.js';
import { STATS_HOOKS } from './stats.js';

export const PRELUDE = String.raw`
local P = ARGV[1]
local NOW = tonumber(ARGV[2])
local NOWS = ARGV[2] -- the same, as given: a string argument costs Redis no number formatting
local EVMAX = ARGV[3]
local QUEUE = ARGV[4]
-- A Cluster slot being migrated (CLUSTER SETSLOT MIGRATING/IMPORTING, then MIGRATE key by key, as
-- redis-cli --cluster reshard does) holds the shard's keys part on one node, part on the other.
-- Redis checks only the declared KEYS before a script runs: the script then failed half way (its
-- writes before kept) on the first key already moved, or, run on the importing node, found the
-- keys not moved yet empty and created them there (the migration then stopped on BUSYKEY, the
-- shard split between the nodes). Two keys that never exist, read first: on either node of a slot
-- in migration, Redis refuses that read (ASK or TRYAGAIN); on a stable slot (and standalone) it
-- costs one lookup. The script then stops before any write and answers TRYAGAIN, which the
-- Cluster client retries (retryDelayOnTryAgain, within maxRedirections) until the slot is moved.
if type(redis.pcall('EXISTS', P .. '~probe:1', P .. '~probe:2')) == 'table' then
  return redis.error_reply('TRYAGAIN the keys of ' .. P .. ' are being migrated between Cluster nodes')
end
local function jk(id) return P .. 'j:' .. id end
local function ak(id) return P .. 'a:' .. id end
local function ek(id) return P .. 'e:' .. id end
local function hk(id) return P .. 'h:' .. id end
local function rk(cls, ten) return P .. 'r:' .. cls .. ':' .. ten end
local function tk(cls) return P .. 't:' .. cls end
local function sk(st) return P .. 's:' .. st end
local K_LEASES = P .. 'leases'
local K_DLQ = P .. 'dlq'
local K_COUNT = P .. 'n'
local K_TOTAL = P .. 'tot'
local K_EVENTS = P .. 'ev'
local K_FAIR = P .. 'fair'
local ATTEMPTS_KEEP = 200
local HISTORY_KEEP = ${HISTORY_KEEP}
local SAMPLES_KEEP = 1000

local function hget(id, f) return redis.call('HGET', jk(id), f) end

-- Appends to a list kept to its last keep entries. RPUSH returns the new
-- length, so the LTRIM (a second command) is sent only when the list overflowed.
local function pushCapped(key, v, keep)
  if redis.call('RPUSH', key, v) > keep then redis.call('LTRIM', key, -keep, -1) end
end

-- A job's immutable class, tenant and estimate, read once per call (or handed in by submit).
local META = {}
local function meta(id)
  local m = META[id]
  if not m then
    local v = redis.call('HMGET', jk(id), 'cls', 'ten', 'est')
    m = { cls = v[1], ten = v[2], est = tonumber(v[3] or '60') }
    META[id] = m
  end
  return m
end

-- Appends an event to the shard's capped stream; returns its history line '<seq>|<event JSON>'.
-- data: a table, nil, or the data's JSON text already (the claim's, put together per pick).
-- The JSON is put together here rather than by cjson.encode of a table (a table per event, and
-- numbers formatted anew): the event type and states are fixed words, the job id a ULID, the time
-- the caller's clock as given; the queue and tenant names and the data go through cjson.
local QUEUE_JSON = cjson.encode(QUEUE)
local function jsonWord(w)
  if w and w ~= cjson.null then return '"' .. w .. '"' end
  return 'null'
end
local function streamEvent(id, typ, from, to, att, ten, data)
  local ev = '{"type":"' .. typ .. '","at":' .. NOWS .. ',"job_id":"' .. id .. '","queue":' .. QUEUE_JSON ..
    ',"tenant_id":' .. cjson.encode(ten) .. ',"from_state":' .. jsonWord(from) .. ',"to_state":' .. jsonWord(to) ..
    ',"attempt":' .. ((type(att) == 'string' and tonumber(att) and att) or tonumber(att) or 0) .. ',"data":' .. ((type(data) == 'string' and data) or (data and cjson.encode(data)) or 'null') .. '}'
  return redis.call('XADD', K_EVENTS, 'MAXLEN', '~', EVMAX, '*', 'e', ev) .. '|' .. ev
end

-- Appends an event to the shard's capped stream and to the job's short history list.
-- A job's first events are kept in its hash instead, in the inline slots h0 .. h3, by the scripts
-- that write the job hash anyway on the common path: submit ('submitted', h0), the claim, the
-- completion, a failure and a redrive (emitInline). They ride in that HSET, so a job that runs
-- once, or dies and is redriven once, needs no history list at all. Field
-- hn counts the slots used (absent: 1, h0 alone). Every history line starts with its stream id, so
-- the history script (lua/read.ts) merges the slots and the list by it, whichever an event went to.
local function emit(id, typ, from, to, att, ten, data)
  pushCapped(hk(id), streamEvent(id, typ, from, to, att, ten, data), HISTORY_KEEP)
end
-- The inline slot for a job's next event and the new slot count, from its hn (the hash field's
-- text; absent: 1); nil when all are used. hn is one digit while slots are free (HISTORY_INLINE
-- is at most 9), so both are made from its text (formatting a number costs more).
local function inlineSlot(hn)
  hn = hn or '1'
  if #hn == 1 and hn < '${HISTORY_INLINE}' then return 'h' .. hn, string.char(string.byte(hn) + 1) end
  return nil
end
-- An event of a script that writes the job hash itself: streamed at once; its history line is
-- added to the HSET arguments in args (an inline slot) or, with the slots used, pushed to the list.
local function emitInline(args, hn, id, typ, from, to, att, ten, data)
  local line = streamEvent(id, typ, from, to, att, ten, data)
  local slot, n = inlineSlot(hn)
  if slot then
    args[#args + 1] = slot
    args[#args + 1] = line
    args[#args + 1] = 'hn'
    args[#args + 1] = n
  else
    pushCapped(hk(id), line, HISTORY_KEEP)
  end
end

-- Deferred writes. While DEFER is on (a batch of submits, of completions, of claim's fair picks,
-- of redrive apply or ledger items; a batch of one writes at once), the writes made through zsetD, countD and pushD are gathered and then sent merged by
-- flushDeferred(): one ZADD and one ZREM per sorted set, one increment per counter field, one
-- RPUSH per sample list, instead of one command per job each. The script is atomic, so the end
-- state is the one the writes one by one would leave: a sorted-set member's last write is the one
-- that counts, and increments add up (a field whose increments cancel out is not written at all:
-- it keeps its value). The rule: while DEFER is on, a script never reads a key it defers.
-- The helpers take the state indexes (s:*), the lease set, the age indexes (qage:*), the counters
-- (n, tot, byatt, blc, blt, rt, stn, sts, act, the traffic buckets rb:*) and the sample lists
-- (exec, tiq). The picks read the waiting sets (r:*), the tenant indexes (t:*) and the job
-- hashes, so enqueue and dequeue write those at once; the one counter they read, running per
-- tenant (rt, for the caps), is read through pendingCount. The reaping of expired leases reads
-- the traffic buckets, so it runs with DEFER off. With DEFER off every helper writes at once.
local DEFER = false
local dZ, dCount, dList, dAct = {}, {}, {}, {}

-- A counter write, by kind: 'i' HINCRBY; 'f' HINCRBYFLOAT; 'h0' HINCRBY, the field removed at 0;
-- 'z0' ZINCRBY, the member removed at 0; 'ttl' HINCRBY, the hash given a 15-minute expiry when
-- the field is created (the traffic buckets).
local function countNow(kind, key, field, by)
  if kind == 'i' then redis.call('HINCRBY', key, field, by)
  elseif kind == 'f' then redis.call('HINCRBYFLOAT', key, field, by)
  elseif kind == 'h0' then
    if redis.call('HINCRBY', key, field, by) == 0 then redis.call('HDEL', key, field) end
  elseif kind == 'z0' then
    if tonumber(redis.call('ZINCRBY', key, by, field)) == 0 then redis.call('ZREM', key, field) end
  elseif redis.call('HINCRBY', key, field, by) == by then redis.call('EXPIRE', key, 900) end
end
local function countD(kind, key, field, by)
  if not DEFER then return countNow(kind, key, field, by) end
  local e = dCount[key]
  if not e then
    e = { kind = kind, f = {} }
    dCount[key] = e
  end
  e.f[field] = (e.f[field] or 0) + by
end
-- What deferred increments will add to a counter field (0 when none).
local function pendingCount(key, field)
  local e = dCount[key]
  return (e and e.f[field]) or 0
end

-- A sorted-set member added with a score, or removed (score false).
local function zsetD(key, member, score)
  if not DEFER then
    if score then redis.call('ZADD', key, score, member) else redis.call('ZREM', key, member) end
    return
  end
  local e = dZ[key]
  if not e then
    e = {}
    dZ[key] = e
  end
  e[member] = score
end

-- Appends a sample to a list trimmed back to its last keep entries once it holds more than trimAt.
local function pushD(key, v, trimAt, keep)
  if not DEFER then
    if redis.call('RPUSH', key, v) > trimAt then redis.call('LTRIM', key, -keep, -1) end
    return
  end
  local e = dList[key]
  if not e then
    e = { trimAt = trimAt, keep = keep }
    dList[key] = e
  end
  e[#e + 1] = v
end

${STATS_HOOKS}

-- Stops the script, before it writes anything, when a counter it is about to increment was damaged
-- (edited by hand: a field that is not a number, a key of another type). Redis would refuse the
-- increment itself only half way through the script, with the writes before it kept and no key
-- named. want: key -> { kind = 'i' (integer fields) | 'f' (number fields) | 'z' (a sorted set), fields = { name = true } }.
-- The error starts with AQDAMAGED (connection.ts turns it into a STORE_DAMAGED error).
local function checkCounters(want)
  for key, w in pairs(want) do
    local damaged = nil
    if w.kind == 'z' then
      local t = redis.call('TYPE', key).ok
      if t ~= 'zset' and t ~= 'none' then damaged = 'is a ' .. t .. ', not a sorted set' end
    else
      local names = {}
      for f in pairs(w.fields) do names[#names + 1] = f end
      local v = redis.pcall('HMGET', key, unpack(names))
      if v.err then
        damaged = 'is a ' .. redis.call('TYPE', key).ok .. ', not a hash'
      else
        for i, f in ipairs(names) do
          local x = v[i]
          if x and not ((w.kind == 'i' and string.match(x, '^-?%d+$')) or (w.kind == 'f' and tonumber(x))) then
            damaged = 'has field ' .. cjson.encode(f) .. ' = ' .. cjson.encode(string.sub(x, 1, 40)) .. ', not ' .. (w.kind == 'i' and 'an integer' or 'a number')
            break
          end
        end
      end
    end
    if damaged then error({ err = 'AQDAMAGED the counter ' .. key .. ' ' .. damaged }) end
  end
end

-- Sends the deferred writes and turns DEFER off.
local function flushDeferred()
  DEFER = false
  for key, e in pairs(dZ) do
    local add, rem = {}, {}
    for member, score in pairs(e) do
      if score then
        add[#add + 1] = score
        add[#add + 1] = member
      else
        rem[#rem + 1] = member
      end
    end
    if #rem > 0 then redis.call('ZREM', key, unpack(rem)) end
    if #add > 0 then redis.call('ZADD', key, unpack(add)) end
  end
  for key, e in pairs(dCount) do
    for field, by in pairs(e.f) do
      if by ~= 0 then countNow(e.kind, key, field, by) end
    end
  end
  for key, e in pairs(dList) do
    if redis.call('RPUSH', key, unpack(e)) > e.trimAt then redis.call('LTRIM', key, -e.keep, -1) end
  end
  for kind, n in pairs(dAct) do statsActivity(kind, n) end
  dZ, dCount, dList, dAct = {}, {}, {}, {}
end

local WAITING = { queued = true, scheduled = true }

-- Moves a job between state indexes and keeps the maintained counters right:
-- jobs per state (per class for the live states and dead), seconds of waiting work per class and tenant (admission
-- control, backlog), running jobs per tenant (concurrency caps).
-- (stateWritten: the caller already wrote 'st' and 'upd' in its own HSET of the job.)
local function move(id, from, to, stateWritten)
  if from then
    zsetD(sk(from), id, false)
    countD('i', K_COUNT, statsCountField(id, from), -1) -- [stats] per class for live and dead states
  end
  zsetD(sk(to), id, '0')
  countD('i', K_COUNT, statsCountField(id, to), 1) -- [stats]
  if not stateWritten then redis.call('HSET', jk(id), 'st', to, 'upd', NOWS) end
  local wasWaiting, isWaiting = from and WAITING[from] or false, WAITING[to] or false
  if wasWaiting ~= isWaiting then
    local m = meta(id)
    local est = m.est
    if wasWaiting then est = -est end
    -- (the queue's total is the sum of the class fields, added up by the reader: one float write less)
    countD('f', P .. 'blc', m.cls, est)
    countD('f', P .. 'blt', m.ten, est)
  end
  if (from == 'running') ~= (to == 'running') then
    countD('i', P .. 'rt', meta(id).ten, (to == 'running') and 1 or -1)
  end
  statsMove(id, from, to) -- [stats]
end

local JOB_ENDS = { succeeded = true, dead = true, expired = true, cancelled = true }
local function total(field, n)
  countD('i', K_TOTAL, field, n or 1)
  if JOB_ENDS[field] then statsJobEnded(field, n or 1) end -- [stats] per-minute job ends
end

-- Makes a waiting job (queued, or scheduled for later) a claim candidate: its (class, tenant) set scored by
-- run_at, the tenant in the class's tenant index, the age index.
-- (runWritten: the caller already wrote 'run' in its own HSET of the job. deferrable: the caller
-- does not read the waiting sets and tenant indexes before its flushDeferred(), so they may wait
-- too; claim reads them, so by default they are written at once.)
local function enqueue(id, runAt, runWritten, deferrable)
  local m = meta(id)
  local cls, ten = m.cls, m.ten
  if deferrable then
    zsetD(rk(cls, ten), id, runAt)
    zsetD(tk(cls), ten, '0')
  else
    redis.call('ZADD', rk(cls, ten), runAt, id)
    redis.call('ZADD', tk(cls), 0, ten)
  end
  zsetD(qagek(cls), id, runAt) -- [stats] the class's age index
  if not runWritten then redis.call('HSET', jk(id), 'run', runAt) end
end

-- Returns true when the tenant left the class's tenant index (its last waiting job).
-- (lastOfTenant: the caller knows the job was its tenant's last, and the ZCARD is skipped.)
local function dequeue(id, lastOfTenant)
  local m = meta(id)
  local cls, ten = m.cls, m.ten
  redis.call('ZREM', rk(cls, ten), id)
  local emptied = false
  if lastOfTenant == nil then lastOfTenant = redis.call('ZCARD', rk(cls, ten)) == 0 end
  if lastOfTenant then emptied = redis.call('ZREM', tk(cls), ten) == 1 end
  zsetD(qagek(cls), id, false) -- [stats]
  return emptied
end

local function outcome(id, st)
  local partial = tonumber(hget(id, 'nef') or '0') > 0
  if st == 'succeeded' then return 'succeeded' end
  if partial then return 'partially_completed' end
  if st == 'dead' then return 'failed' end
  return st
end

-- (endWritten: the caller already wrote 'end' and 'out' in its own HSET of the job.)
local function finish(id, st, endWritten)
  if not endWritten then redis.call('HSET', jk(id), 'end', NOWS, 'out', outcome(id, st)) end
  redis.call('HDEL', jk(id), 'lw', 'le')
  zsetD(K_LEASES, id, false)
end

-- Attempt records. A job's current (last) attempt record is kept in its hash, field ar, where
-- the claim that opens it and the completion that closes it write the hash anyway; the attempts
-- before it are in the attempts list (a:<id>), to which the next claim moves it. A job that runs
-- once has no attempts list. Readers show the list, then ar (codec.ts jobFrom).
-- (A job stored before ar existed has all its records in the list: lastAttempt and endAttempt
-- fall back to the list's last one.)

-- An open attempt record, put together as text (as the events are): startAttempt writes it, and
-- closeAttempt closes it by replacing its fixed open tail, without a cjson round trip.
local ATTEMPT_OPEN_TAIL = ',"ended_at":null,"outcome":null,"error_code":null,"error_message":null}'
local function openAttempt(att, workerJson, wver)
  return '{"attempt":' .. att .. ',"worker_id":' .. workerJson .. ',"worker_version":' ..
    ((wver ~= '' and cjson.encode(wver)) or 'null') .. ',"started_at":' .. NOWS .. ATTEMPT_OPEN_TAIL
end

-- Counts an attempt's end: the execution-time sample, the outcome per attempt number, the stats,
-- and, for an attempt that ended with an error code (a failure, LEASE_EXPIRED), that code.
-- (endAt: when the attempt ended, NOW unless given: a lost lease ended when it ran out)
local function attemptEnded(n, started, out, code, endAt)
  -- (a release gives the job back, ending no attempt that counts: no execution sample, as SQLite)
  if started and out ~= 'released' then
    -- samples are trimmed back to SAMPLES_KEEP once they reach twice that (one LTRIM per
    -- SAMPLES_KEEP attempts, not one per attempt); readers take the last SAMPLES_KEEP
    -- (at least 0: a clock stepped back between claim and end, as SQLite clamps it)
    pushD(P .. 'exec', math.max(0, (endAt or NOW) - started), 2 * SAMPLES_KEEP, SAMPLES_KEEP)
  end
  if out == 'succeeded' then countD('i', P .. 'byatt', n .. ':ok', 1)
  elseif out ~= 'released' then countD('i', P .. 'byatt', n .. ':fail', 1) end
  statsAttemptEnded(out) -- [stats]
  if code then statsAttemptFailed(code) end -- [stats] (a success has no code: no command)
end

-- Closes an attempt record (JSON) with an outcome and counts the attempt's end; returns the closed
-- record's JSON, or nil when it was closed already. A record openAttempt wrote has its open tail
-- replaced; any other (written by cjson before openAttempt existed) is decoded and encoded again.
-- (endAt: when it ended, NOW unless given)
local function closeAttempt(raw, out, code, msg, endAt)
  local cut = #raw - #ATTEMPT_OPEN_TAIL
  if cut > 0 and string.sub(raw, cut + 1) == ATTEMPT_OPEN_TAIL then
    local head = string.sub(raw, 1, cut)
    local n, started = string.match(head, '^{"attempt":(%d+),.*,"started_at":(%d+)$')
    -- (an attempt that reported usage has it after started_at: worker.ts USAGE)
    if not n then n, started = string.match(head, '^{"attempt":(%d+),.*,"started_at":(%d+),"usage":{[^}]*}$') end
    if n then
      attemptEnded(n, tonumber(started), out, code, endAt)
      return head .. ',"ended_at":' .. ((endAt and string.format('%d', endAt)) or NOWS) .. ',"outcome":"' .. out .. '","error_code":' ..
        ((code and cjson.encode(code)) or 'null') .. ',"error_message":' .. ((msg and cjson.encode(msg)) or 'null') .. '}'
    end
  end
  local a = cjson.decode(raw)
  if a.ended_at ~= cjson.null and a.ended_at ~= nil then return nil end
  a.ended_at = endAt or NOW
  a.outcome = out
  a.error_code = code or cjson.null
  a.error_message = msg or cjson.null
  attemptEnded(tostring(a.attempt), tonumber(a.started_at), out, code, endAt)
  return cjson.encode(a)
end

-- The job's last attempt record (JSON), or nil.
local function lastAttempt(id)
  return redis.call('HGET', jk(id), 'ar') or redis.call('LINDEX', ak(id), -1) or nil
end

-- Closes the job's open attempt record (the last one) with an outcome.
local function endAttempt(id, out, code, msg, endAt)
  local raw = redis.call('HGET', jk(id), 'ar')
  if raw then
    local closed = closeAttempt(raw, out, code, msg, endAt)
    if closed then redis.call('HSET', jk(id), 'ar', closed) end
    return
  end
  raw = redis.call('LINDEX', ak(id), -1)
  if not raw then return end
  local closed = closeAttempt(raw, out, code, msg, endAt)
  if closed then redis.call('LSET', ak(id), -1, closed) end
end

-- Ends a job as expired (from any live state), closing its attempt if running.
local function expire(id, from)
  if WAITING[from] then dequeue(id) end
  move(id, from, 'expired')
  finish(id, 'expired')
  total('expired')
  emit(id, 'expired', from, 'expired', hget(id, 'att'), hget(id, 'ten'), nil)
end

-- A job's whole record for the client: the fixed-size hash (with the last attempt record, ar), the
-- capped effects hash, the trimmed list of the attempts before it.
-- 'nef' counts the effects hash's entries exactly (effects are only added, and removed
-- with the whole job; absent: none), so a job without effects skips that read.
local function snapshot(id)
  local h = redis.call('HGETALL', jk(id))
  if #h == 0 then return false end
  local nef = nil
  for i = 1, #h, 2 do
    if h[i] == 'nef' then nef = h[i + 1] break end
  end
  local effects = {}
  if nef and nef ~= '0' then effects = redis.call('HGETALL', ek(id)) end
  return { h, effects, redis.call('LRANGE', ak(id), 0, -1) }
end

-- The fence check every worker write makes: the job is running under this fence.
local function leaseHeld(id, fence)
  return hget(id, 'st') == 'running' and hget(id, 'fen') == fence
end

-- A worker's ending write re-sent (its first reply was lost, e.g. across a Redis restart): the job
-- is no longer running, still under the caller's fence (no claim came since), and its last attempt
-- ended with the outcome this write gives. The write did apply: the re-send is answered as done.
local function endedBy(id, fence, outcome)
  if hget(id, 'st') == 'running' or hget(id, 'fen') ~= fence then return false end
  local raw = lastAttempt(id)
  return raw ~= nil and cjson.decode(raw).outcome == outcome
end

-- Why a waiting job's record cannot be handed to a worker as the job waiting under this id in this
-- queue (nil when it can): a hash copied or renamed by hand over another job's key holds that job's
-- envelope (its id, its queue), and a count edited to text stopped the claim script half way (the
-- picks before it kept as running, handed to no one, and the same head picked again by every
-- claim). v: the claim's HMGET of the job (field name -> value); cls, ten: the class and tenant of
-- the waiting set the id was found in. The envelope is checked by its start, as submit writes it
-- (JSON.stringify: job_id, tenant_id, queue first), and decoded only when that differs.
local function recordDamage(id, v, cls, ten)
  local env = v.env
  if not env then return 'the job record has no envelope' end
  if v.cls ~= cls or v.ten ~= ten then
    return 'the job record says class ' .. cjson.encode(v.cls or cjson.null) .. ' and tenant ' .. cjson.encode(v.ten or cjson.null) ..
      ' but it waits under class ' .. cjson.encode(cls) .. ' and tenant ' .. cjson.encode(ten)
  end
  local head = '{"job_id":"' .. id .. '","tenant_id":"' .. ten .. '","queue":' .. QUEUE_JSON .. ','
  if string.sub(env, 1, #head) ~= head then
    local ok, doc = pcall(cjson.decode, env)
    if not ok or type(doc) ~= 'table' then return 'the job envelope is not a JSON object' end
    if doc.job_id ~= id then return 'the job envelope is the record of ' .. cjson.encode(doc.job_id or cjson.null) .. ', not of ' .. id end
    if doc.queue ~= QUEUE then return 'the job envelope says queue ' .. cjson.encode(doc.queue or cjson.null) .. ' but it is stored in queue ' .. QUEUE end
  end
  for _, f in ipairs({ 'att', 'fen', 'na' }) do
    local x = v[f]
    if x and not string.match(x, '^%d+$') then return 'its field ' .. f .. ' = ' .. cjson.encode(string.sub(x, 1, 40)) .. ' is not a whole number' end
  end
  if v.est and not tonumber(v.est) then return 'its field est = ' .. cjson.encode(string.sub(v.est, 1, 40)) .. ' is not a number' end
  return nil
end

-- Moves a job whose record cannot be handed out (recordDamage) aside, into the DLQ, instead of to a
-- worker: out of the claim's way for good (a job left waiting would be picked again by every claim),
-- where dlq list/show report it as malformed and redrive leaves it (skip:malformed). Only the state
-- and the dead fields are written: the envelope and everything else stay as found, for
-- dlq show --raw. (from: its state, waiting or running; the caller took it out of the waiting
-- set, or out of the lease set with its attempt closed. notHash: the job key holds another type of
-- value, left as it is: the DLQ reads such a member as malformed.)
local function setAside(id, from, att, ten, why, notHash)
  move(id, from, 'dead', notHash)
  if not notHash then
    redis.call('HSET', jk(id), 'dr', 'permanent', 'dat', NOWS, 'dec', 'MALFORMED_ENTRY', 'dem', why, 'end', NOWS, 'out', 'failed')
  end
  redis.call('ZADD', K_DLQ, NOWS, id)
  total('dead')
  emit(id, 'dead', from, 'dead', att, ten, { reason = 'permanent', error_code = 'MALFORMED_ENTRY', why = why })
end

local function deadlineOf(id)
  local dl = hget(id, 'dl')
  if dl and dl ~= '' then return tonumber(dl) end
  return nil
end
`;
