import { JOB_FIELDS } from '../codec.js';
import { LEASE_LUA } from './lease.js';

/**
 * The job fields a pick reads, in one HMGET: first the ones the worker gets (codec.ts JOB_FIELDS,
 * returned positionally as read, patched with the claim's writes), then the deadline, estimate,
 * worker version and history slot count the claim itself needs.
 */
const CLAIM_FIELDS = [...JOB_FIELDS, 'dl', 'est', 'wv', 'hn'] as const;
/** A claim field's position in the HMGET reply (Lua, from 1). */
const at = (f: (typeof CLAIM_FIELDS)[number]): number => CLAIM_FIELDS.indexOf(f) + 1;

/**
 * claim: reap expired leases, then pick up to `max` jobs with fairness, all
 * in one step.
 *
 * KEYS[1] the shard's lease set (routes the call).
 * ARGV[5] max, [6] lease ms, [7] worker id, [8] worker version (''),
 * [9] classes this worker takes (comma list), [10] class weights
 * ('interactive=6,batch=3,maintenance=1'), [11] tenant weights ('t=2,…' or ''),
 * [12] default tenant concurrency cap (-1 = none), [13] cap overrides ('t=1,…'),
 * [14] reap limit, [15] retry policy, [16] a uniform random number in [0, 1).
 *
 * Waiting jobs (queued, and scheduled retries/delays) sit in one sorted set
 * per (class, tenant) scored by run_at; a set's head is claimable when its
 * score <= now. Fairness is core/fairness.ts's nextPick, ported: smooth
 * weighted round robin across classes with candidates, then deficit round
 * robin across the class's tenants in name order. The tenants with waiting
 * work of a class are a lex-sorted set, so "the next tenant after the current
 * one" is a bounded ZRANGEBYLEX … LIMIT. As in the SQLite adapter, a tenant
 * whose head is not due yet, or which is at its concurrency cap, is dropped
 * from this call's candidates and the pick is asked again from the same state.
 *
 * Expired leases are decided by lua/lease.ts reapLease (core/retry.decideFailure,
 * ported, for a retryable LEASE_EXPIRED): retry after a jittered backoff, dead
 * with reason lease_lost when out of attempts, or expired at the deadline.
 *
 * Every loop is bounded: at most `reap` leases and `max * 4 + 32` picks per call.
 *
 * A waiting job whose record is not its own or cannot be handed out (prelude
 * recordDamage: another job's envelope or queue, a count that is not a number)
 * is set aside into the DLQ (prelude setAside) and listed in `aside` as
 * {id, why}, instead of stopping the claim or reaching a worker as another job.
 *
 * claimCore(max) leaves the picks in `claimed` as {fence, lease expiry, job,
 * id} (complete_claim runs it after a batch of completions, for as many jobs as
 * they asked for); CLAIM returns {claimed, aside}.
 * The picks' writes to indexes and counters they do not read are deferred and
 * sent merged after the loop (prelude: deferred writes).
 */
export const claimCore = (maxExpr: string): string =>
  LEASE_LUA +
  String.raw`
local max, leaseMs, worker, wver = ${maxExpr}, tonumber(ARGV[6]), ARGV[7], ARGV[8]
local reapLimit, rand = tonumber(ARGV[14]), tonumber(ARGV[16])
local CLAIM_FIELDS = { ${CLAIM_FIELDS.map((f) => `'${f}'`).join(', ')} }

-- Records set aside instead of handed out or reaped ({id, why}: the client reports them).
local aside = {}

-- 1. Reclaim expired leases.
local expiredLeases = redis.call('ZRANGEBYSCORE', K_LEASES, '-inf', NOW, 'LIMIT', '0', reapLimit)
for n, id in ipairs(expiredLeases) do
  redis.call('ZREM', K_LEASES, id)
  local st = redis.pcall('HGET', jk(id), 'st')
  if type(st) == 'table' then
    -- the job key holds another type of value: nothing to reap, and out of the lease set
    aside[#aside + 1] = { id, 'the job key holds a ' .. redis.call('TYPE', jk(id)).ok .. ', not a job hash; its lease was dropped' }
  elseif st == 'running' then
    -- A record edited by hand (att or max not a number, an attempt record that does not parse)
    -- failed the reaping, and with it every claim of the queue while its lease stayed expired:
    -- it is checked first, and a reaping that fails all the same is caught (its writes so far to
    -- this job are kept, as Redis keeps them); either way the job is set aside into the DLQ.
    local why = nil
    for _, f in ipairs({ 'att', 'max' }) do
      local x = hget(id, f)
      if not (x and string.match(x, '^%d+$')) then
        why = 'its field ' .. f .. ' = ' .. cjson.encode(x and string.sub(x, 1, 40) or cjson.null) .. ' is not a whole number'
        break
      end
    end
    if not why then
      -- each lease its own draw from the caller's one random number (golden-ratio steps)
      local ok, err = pcall(reapLease, id, ARGV[15], (rand + n * 0.6180339887) % 1)
      if not ok then why = 'its expired lease could not be ended: ' .. tostring(type(err) == 'table' and err.err or err) end
    end
    if why then
      why = why .. ' (found when its lease expired)'
      redis.call('HDEL', jk(id), 'lw', 'le')
      local ok, err = pcall(setAside, id, 'running', hget(id, 'att'), hget(id, 'ten'), why)
      if ok then why = why .. '; moved to the DLQ'
      else why = why .. '; it could not be moved to the DLQ either (' .. tostring(type(err) == 'table' and err.err or err) .. '): left running, out of the lease set' end
      aside[#aside + 1] = { id, why }
    end
  end
end

-- 2. Fair picks.
local classes = {}
for c in string.gmatch(ARGV[9], '[^,]+') do classes[#classes + 1] = c end
local weight = {}
for c, w in string.gmatch(ARGV[10], '([^,=]+)=([^,]+)') do weight[c] = tonumber(w) end
local tenantWeight = {}
for t, w in string.gmatch(ARGV[11], '([^,=]+)=([^,]+)') do tenantWeight[t] = math.max(1, math.floor(tonumber(w))) end
local capDefault = tonumber(ARGV[12])
local capOverride = {}
for t, w in string.gmatch(ARGV[13], '([^,=]+)=([^,]+)') do capOverride[t] = tonumber(w) end
local capped = capDefault >= 0 or ARGV[13] ~= ''
local function capOf(t)
  local c = capOverride[t]
  if c then return c end
  if capDefault >= 0 then return capDefault end
  return math.huge
end
local function atCap(t)
  if not capped then return false end
  return tonumber(redis.call('HGET', P .. 'rt', t) or '0') + pendingCount(P .. 'rt', t) >= capOf(t)
end

local fair = redis.call('HMGET', K_FAIR, 'credit:interactive', 'credit:batch', 'credit:maintenance',
  'turn:interactive', 'turn:batch', 'turn:maintenance', 'def:interactive', 'def:batch', 'def:maintenance')
local credit = { interactive = tonumber(fair[1]) or 0, batch = tonumber(fair[2]) or 0, maintenance = tonumber(fair[3]) or 0 }
local turn = { interactive = fair[4] or false, batch = fair[5] or false, maintenance = fair[6] or false }
local deficit = { interactive = tonumber(fair[7]) or 0, batch = tonumber(fair[8]) or 0, maintenance = tonumber(fair[9]) or 0 }
local ALL = { 'interactive', 'batch', 'maintenance' }
-- Candidates dropped for this call (nothing due, or at the cap), per class.
local dropped = { interactive = {}, batch = {}, maintenance = {} }
local ndropped = { interactive = 0, batch = 0, maintenance = 0 }
local function drop(c, t)
  if not dropped[c][t] then
    dropped[c][t] = true
    ndropped[c] = ndropped[c] + 1
  end
end
local allowed = {}
for _, c in ipairs(classes) do allowed[c] = true end

-- Windows on the classes' tenant indexes, as nextTenant reads them: per class, tenants in name
-- order (list, with each one's position in pos), contiguous in the index from just after start
-- (nil: from the index's first), atEnd once the index's end was read. During the picks the indexes
-- only lose tenants (marked in gone, and skipped), so the round robin walks one window from pick
-- to pick instead of reading the index again for each (a pick moves on to the next tenant).
local win, gone = {}, { interactive = {}, batch = {}, maintenance = {} }

-- The first candidate tenant of class c strictly after t (or from the start), skipping dropped ones.
local function nextTenant(c, after)
  local w, i = win[c], nil
  if w then
    if after then i = w.pos[after] elseif w.start == nil then i = 0 end
  end
  if not i then
    w = { list = {}, pos = {}, start = after, atEnd = false }
    if after then w.pos[after] = 0 end
    win[c] = w
    i = 0
  end
  for _ = 1, 9 do
    for k = i + 1, #w.list do
      local t = w.list[k]
      if not dropped[c][t] and not gone[c][t] then return t end
    end
    i = #w.list
    if w.atEnd then return nil end
    local from = w.list[i] or w.start
    local batch = redis.call('ZRANGEBYLEX', tk(c), (from and ('(' .. from)) or '-', '+', 'LIMIT', '0', '16')
    for _, t in ipairs(batch) do
      w.list[#w.list + 1] = t
      w.pos[t] = #w.list
    end
    if #batch < 16 then w.atEnd = true end
  end
  return nil
end

-- Which classes have waiting work, from the per-class counts move keeps in the counts hash
-- ('<class>:queued', '<class>:scheduled': lua/stats.ts statsCountField), in one read: a class
-- has waiting jobs exactly when its tenant index is not empty.
local waitingIn = {}
do
  local w = redis.call('HMGET', K_COUNT, 'interactive:queued', 'interactive:scheduled', 'batch:queued', 'batch:scheduled', 'maintenance:queued', 'maintenance:scheduled')
  for i, c in ipairs(ALL) do waitingIn[c] = (tonumber(w[2 * i - 1]) or 0) + (tonumber(w[2 * i]) or 0) > 0 end
end

-- Tenants in each class's index, read (once per call) only for a class some of whose tenants were
-- dropped, and kept current as picks empty tenants (nothing else changes these sets during the picks).
local tenantsIn = {}
local function tenantCount(c)
  local n = tenantsIn[c]
  if not n then
    n = redis.call('ZCARD', tk(c))
    tenantsIn[c] = n
  end
  return n
end
local function tenantLeft(c, t)
  gone[c][t] = true
  if tenantsIn[c] then tenantsIn[c] = tenantsIn[c] - 1 end
end

local claimed = {}
local budget = max * 4 + 32
-- the picks' index and counter writes go out merged after the loop (prelude: deferred writes);
-- a single pick has nothing to merge
DEFER = max > 1
while #claimed < max and budget > 0 do
  budget = budget - 1
  -- smooth weighted round robin over classes with candidates (computed on copies: committed only if used)
  local active, totalW, best = {}, 0, nil
  for _, c in ipairs(ALL) do
    if allowed[c] and (weight[c] or 0) > 0 and waitingIn[c] and (ndropped[c] == 0 or tenantCount(c) > ndropped[c]) then active[c] = true end
  end
  local nc = { interactive = credit.interactive, batch = credit.batch, maintenance = credit.maintenance }
  for _, c in ipairs(ALL) do
    if active[c] then
      totalW = totalW + weight[c]
      nc[c] = nc[c] + weight[c]
      if best == nil or nc[c] > nc[best] then best = c end
    end
  end
  if best == nil then break end
  nc[best] = nc[best] - totalW
  for _, c in ipairs(ALL) do if not active[c] then nc[c] = 0 end end
  -- deficit round robin over the class's tenants, in name order
  local ten, def = nil, nil
  local cur = turn[best]
  if cur and deficit[best] >= 1 and not dropped[best][cur] and redis.call('ZSCORE', tk(best), cur) then
    ten, def = cur, deficit[best]
  else
    ten = (cur and nextTenant(best, cur)) or nextTenant(best, nil)
    if ten then def = tenantWeight[ten] or 1 end
  end
  if not ten then
    -- every tenant counted in the index was dropped or stale: nothing more in this class
    ndropped[best] = math.huge
  elseif atCap(ten) then
    drop(best, ten)
  else
    -- the head and whether a second job follows it (so taking the head tells if the tenant is emptied)
    local head = redis.call('ZRANGE', rk(best, ten), '0', '1', 'WITHSCORES')
    if #head == 0 then
      if redis.call('ZREM', tk(best), ten) == 1 then tenantLeft(best, ten) else gone[best][ten] = true end
    elseif tonumber(head[2]) > NOW then
      drop(best, ten)
    else
      local id, runAt = head[1], tonumber(head[2])
      -- the job in one command: what the checks below read and what the lease hands to the worker
      -- (its values patched with this claim's writes instead of read again, and returned by
      -- position, JOB_FIELDS first); not the history kept in the hash
      local v = redis.pcall('HMGET', jk(id), unpack(CLAIM_FIELDS))
      local notHash = nil
      if v.err then
        -- the job key holds another type of value (a foreign write): no job to hand out, and
        -- the call must not fail on it (every claim would, with this id at the head)
        notHash = 'the job key holds a ' .. redis.call('TYPE', jk(id)).ok .. ', not a job hash'
      elseif not v[${at('st')}] and redis.call('EXISTS', jk(id)) == 0 then
        -- no record at all (evicted by Redis, or deleted outside agentq): it was dropped from the
        -- waiting set without a word, its job lost and still counted as waiting; the DLQ lists
        -- such a member as malformed (the job record is missing)
        notHash = 'the job record is missing (evicted by Redis, or deleted outside agentq): only its place in the waiting set was left'
      end
      if notHash then
        v = {}
        v[${at('st')}] = (redis.call('ZSCORE', sk('scheduled'), id) and 'scheduled') or 'queued'
      end
      local st = v[${at('st')}]
      local waiting = st == 'queued' or st == 'scheduled'
      local damage = notHash or waiting and recordDamage(id, { env = v[${at('env')}], cls = v[${at('cls')}], ten = v[${at('ten')}], att = v[${at('att')}],
        fen = v[${at('fen')}], na = v[${at('na')}], est = v[${at('est')}] }, best, ten)
      -- the class and tenant of the waiting set the id was found in: it leaves that set, whatever
      -- its record says (a record naming another class left the id at the head of this set, and
      -- every pick took it again until the claim's budget was spent)
      META[id] = { cls = best, ten = ten, est = tonumber(v[${at('est')}] or '60') or 0 }
      if dequeue(id, #head == 2) then tenantLeft(best, ten) end
      local dl = nil
      if v[${at('dl')}] and v[${at('dl')}] ~= '' then dl = tonumber(v[${at('dl')}]) end
      if not waiting then
        -- stale index entry: nothing to do
      elseif damage then
        setAside(id, st, v[${at('att')}], ten, damage, notHash ~= nil)
        aside[#aside + 1] = { id, damage .. '; moved to the DLQ, not handed out' }
      elseif dl and NOW >= dl then
        -- never start a job past its deadline: it ends expired instead
        move(id, st, 'expired')
        finish(id, 'expired')
        total('expired')
        emit(id, 'expired', st, 'expired', v[${at('att')}], ten, { why = 'deadline passed before it was claimed' })
      else
        credit.interactive, credit.batch, credit.maintenance = nc.interactive, nc.batch, nc.maintenance
        turn[best] = ten
        deficit[best] = def - 1
        -- fence and attempt +1, lease, worker version and state: one write (the script is atomic,
        -- so read-then-set is the same as HINCRBY)
        local fence = tonumber(v[${at('fen')}] or '0') + 1
        local att = tonumber(v[${at('att')}] or '0') + 1
        local prevAr = v[${at('ar')}]
        local exp, rec, natt = startAttempt(id, st, ten, fence, att, dl, runAt, worker, wver, leaseMs, v[${at('wv')}], prevAr, v[${at('hn')}])
        v[${at('fen')}], v[${at('att')}], v[${at('lw')}], v[${at('le')}], v[${at('st')}], v[${at('upd')}], v[${at('ar')}], v[${at('na')}] =
          fence, att, worker, exp, 'running', NOWS, rec, tostring(natt)
        -- the attempts before this one (natt: the list's length; a job on its first attempt has none)
        local atts = {}
        if natt > 1 then atts = redis.call('LRANGE', ak(id), 0, -1)
        elseif natt == 1 then atts = { prevAr or redis.call('LINDEX', ak(id), 0) } end
        local effects = {}
        local nef = v[${at('nef')}]
        if nef and nef ~= '0' then effects = redis.call('HGETALL', ek(id)) end
        -- the reply holds JOB_FIELDS only: a nil ends a Lua array, so the claim's own fields go
        for i = ${CLAIM_FIELDS.length}, ${JOB_FIELDS.length + 1}, -1 do v[i] = nil end
        claimed[#claimed + 1] = { fence, exp, { v, effects, atts }, id }
        if atCap(ten) then drop(best, ten) end
      end
    end
  end
end
flushDeferred()
local fairArgs = { 'credit:interactive', credit.interactive, 'credit:batch', credit.batch, 'credit:maintenance', credit.maintenance,
  'def:interactive', deficit.interactive, 'def:batch', deficit.batch, 'def:maintenance', deficit.maintenance }
for _, c in ipairs(ALL) do
  if turn[c] then
    fairArgs[#fairArgs + 1] = 'turn:' .. c
    fairArgs[#fairArgs + 1] = turn[c]
  end
end
redis.call('HSET', K_FAIR, unpack(fairArgs))
`;

export const CLAIM = claimCore('tonumber(ARGV[5])') + 'return { claimed, aside }\n';
