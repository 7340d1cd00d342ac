/**
 * Bulk DLQ runs. The ledger of a run is kept per queue shard, under the same
 * hash tag as the jobs it covers, so one script can check the ledger item,
 * move the job and update the item atomically (Cluster-safe):
 *   L:<run>            hash   job id → {verdict, status, detail, updated_at}
 *   Li:<run>:all       zset   job ids (lex, for paging in job-id order)
 *   Li:<run>:<status>  zset   job ids per ledger status
 *   Lc:<run>           hash   status → count
 */
import { JOB_FIELDS } from '../codec.js';
import { HISTORY_LINES } from './read.js';

/** The job fields apply reads in one HMGET: the fingerprinted ones (JOB_FIELDS), then what the move needs besides. */
const APPLY_FIELDS = [...JOB_FIELDS, 'est', 'hn'] as const;

/**
 * A ledger item as JSON text, put together here (as the events are) rather than by cjson, with its
 * status first, so apply reads the status with one match; an item stored by an older agentq (in
 * cjson's key order) is decoded instead. detailJson is JSON already (the client's, or cjson's).
 */
const LEDGER_ITEM = String.raw`
local function ledgerItem(status, verdict, detailJson)
  return '{"status":"' .. status .. '","verdict":' .. cjson.encode(verdict) .. ',"detail":' .. detailJson .. ',"updated_at":' .. NOWS .. '}'
end
local function ledgerStatus(raw)
  return string.match(raw, '^{"status":"([%w_]+)"') or cjson.decode(raw).status
end
`;

/**
 * The fingerprint of a job's stored record: every field of its hash that `jobFrom` reads
 * (codec.ts JOB_FIELDS), its effects (in key order) and its attempts list, each as length:bytes,
 * SHA-1'd. The
 * client computes the same from the bytes it decoded the job from (redis-backend.ts
 * recordFingerprint), so apply can tell, atomically with the move, that the record it moves is
 * the one the client checked in full.
 */
const FINGERPRINT = String.raw`
local FP_FIELDS, NFP = { ${APPLY_FIELDS.map((f) => `'${f}'`).join(', ')} }, ${JOB_FIELDS.length}
-- (each part pushed as is and joined once: a Lua string made per field would be copied and hashed)
local function fpAdd(parts, list, n)
  for i = 1, n or #list do
    local x = list[i]
    if x then
      parts[#parts + 1] = #x
      parts[#parts + 1] = ':'
      parts[#parts + 1] = x
    else
      parts[#parts + 1] = '-'
    end
  end
end
-- fields: the job hash's HMGET of FP_FIELDS (JOB_FIELDS first), which the caller reads anyway.
local function fingerprint(id, fields)
  local parts = {}
  fpAdd(parts, fields, NFP)
  parts[#parts + 1] = '|'
  local keys = redis.call('HKEYS', ek(id))
  if #keys > 0 then
    table.sort(keys)
    for _, k in ipairs(keys) do fpAdd(parts, { k, redis.call('HGET', ek(id), k) }) end
  end
  parts[#parts + 1] = '|'
  fpAdd(parts, redis.call('LRANGE', ak(id), 0, -1))
  return redis.sha1hex(table.concat(parts))
end
`;

/** ledger_add: KEYS[1] the run's ledger hash; ARGV[5] run id, ARGV[6..] quads of id, verdict, status, detail JSON. */
export const LEDGER_ADD = LEDGER_ITEM + String.raw`
local run = ARGV[5]
local L, LA, LC = P .. 'L:' .. run, P .. 'Li:' .. run .. ':all', P .. 'Lc:' .. run
-- with more than one item (ARGV[6..] holds quads), the indexes and counts are written merged at the
-- end (prelude: deferred writes); the item itself (HSETNX, whose answer decides the rest) per item
DEFER = (#ARGV - 5) / 4 > 1
for i = 6, #ARGV, 4 do
  local id, verdict, status, detail = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if redis.call('HSETNX', L, id, ledgerItem(status, verdict, detail)) == 1 then
    zsetD(LA, id, '0')
    zsetD(P .. 'Li:' .. run .. ':' .. status, id, '0')
    countD('i', LC, status, 1)
  end
end
flushDeferred()
return 0
`;

/**
 * apply: applies a run's action to planned ledger items of one shard. Per
 * item, atomically: the item must still be 'planned' (else it is returned
 * unchanged: a resumed run never doubles) and the job must still be 'dead'
 * (else it is skipped as no longer in the DLQ). The verdict was re-checked in
 * JS just before, from the job decoded in full as `dlq list` / `dlq show` do
 * and with core/verdict.verdictFor; a skip verdict is recorded here. An acting
 * verdict comes with the fingerprint of the record it was computed from: a
 * record that changed since (a write made between the check and this script)
 * is skipped as changed, never moved on a check of other bytes.
 *
 * KEYS[1] the run's ledger hash; KEYS[2..] the shard's hashes of per-job fields
 * kept by a layer on this store (RedisBackendDeps.jobFieldHashes: the SQS
 * backend's sqs:pub, sqs:dlv, sqs:rep), from which a purge removes the job's
 * field; ARGV[5] run id, [6] action, [7] attempts policy (reset|extra), [8]
 * extra n, [9..] quads of id, verdict, detail JSON, record fingerprint.
 * Returns per item {id, item JSON, purged 0|1}.
 */
export const APPLY = HISTORY_LINES + LEDGER_ITEM + FINGERPRINT + String.raw`
local run, action, policy, extra = ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8])
local L, LC = KEYS[1], P .. 'Lc:' .. run
local out = {}
local delta = {}
-- With more than one item (ARGV[9..] holds quads), the writes to the ledger's status indexes,
-- the DLQ index and the job indexes and counters are deferred and sent merged at the end
-- (prelude: deferred writes); nothing here reads them.
DEFER = (#ARGV - 8) / 4 > 1
-- Moves an item from status 'from' to 'status' with a new verdict and detail (JSON); returns the item.
local function setStatus(id, from, status, verdict, detailJson)
  zsetD(P .. 'Li:' .. run .. ':' .. from, id, false)
  delta[from] = (delta[from] or 0) - 1
  delta[status] = (delta[status] or 0) + 1
  zsetD(P .. 'Li:' .. run .. ':' .. status, id, '0')
  local enc = ledgerItem(status, verdict, detailJson)
  redis.call('HSET', L, id, enc)
  return enc
end
-- A purged job's idempotency key is free again, as a deleted row frees it on SQLite: a resubmit
-- with it makes a new job (left behind, it named a job that no longer exists, and every resubmit
-- was refused as not found). The field is the key alone, or tenant NUL key on a queue of several
-- shards (redis-backend submit); either is removed only while it still names this job.
local function freeIdempotencyKey(id, ten)
  local env = redis.call('HGET', jk(id), 'env')
  if not env then return end
  local ok, doc = pcall(cjson.decode, env)
  local key = ok and type(doc) == 'table' and doc.idempotency_key
  if type(key) ~= 'string' then return end
  local mine = id .. '|'
  for _, field in ipairs({ key, ten .. '\0' .. key }) do
    local cur = redis.call('HGET', P .. 'idem', field)
    if cur and string.sub(cur, 1, #mine) == mine then redis.call('HDEL', P .. 'idem', field) end
  end
end
-- A prune run (core/prune): ARGV[7] is its states (comma-separated) and ARGV[8] its cut-off (epoch
-- ms): a job is deleted only while it is in one of those states and ended before the cut-off.
local PRUNE_STATES = {}
-- The jobs this call deleted, named in the shard's set 'plc' in the same step: their location
-- keys are of no shard, deleted by the client after this script; should it crash in between, the
-- next prune apply of the queue finds them here (redis-backend cleanPrunedLocations). (A script
-- could delete them itself on a standalone server, as submit writes them there, but not on a
-- Cluster: one way for both.)
local PRUNED = {}
if action == 'prune' then for st in string.gmatch(policy, '[^,]+') do PRUNE_STATES[st] = true end end
local function pruneWhy(st, endv)
  if not st then return 'the job no longer exists' end
  if not PRUNE_STATES[st] then return 'the job is ' .. st .. ' now, not one of ' .. policy end
  local e = tonumber(endv or '')
  if not e then return 'the job has no end time' end
  if e >= extra then return 'the job ended at or after the cut-off' end
  return nil
end
-- Deletes a finished job with all it holds: its hash, attempts, effects, history (no history list
-- is kept, unlike a purge's: retention is what was asked), its idempotency key (a resubmit makes a
-- new job) and its fields in a layer's per-job hashes. Its state count drops; the outcome totals
-- stay (the job did end).
local function pruneItem(id, from)
  local f = redis.call('HMGET', jk(id), 'st', 'end', 'ten', 'cls', 'est')
  local why = pruneWhy(f[1], f[2])
  if why then
    out[#out + 1] = { id, setStatus(id, from, 'skipped', 'skip:not_prunable', cjson.encode(why)), 0 }
  elseif not f[3] or not f[4] or (f[5] and not tonumber(f[5])) then
    out[#out + 1] = { id, setStatus(id, from, 'skipped', 'skip:malformed', '"the job record is damaged: its tenant, class or estimate is missing or unreadable"'), 0 }
  else
    local st, ten = f[1], f[3]
    META[id] = { cls = f[4], ten = ten, est = tonumber(f[5] or '60') }
    freeIdempotencyKey(id, ten)
    zsetD(sk(st), id, false)
    countD('i', K_COUNT, statsCountField(id, st), -1) -- [stats]
    statsMove(id, st, nil) -- [stats]
    redis.call('DEL', jk(id), ak(id), ek(id), hk(id))
    for k = 2, #KEYS do redis.call('HDEL', KEYS[k], id) end
    PRUNED[#PRUNED + 1] = id
    out[#out + 1] = { id, setStatus(id, from, 'moved', 'prune', 'null'), 1 }
  end
end
local function applyItem(i)
  local id, verdict, detail, fp = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local raw = redis.call('HGET', L, id)
  local purged = 0
  if not raw then
    out[#out + 1] = { id, false, 0 }
  else
    local from = ledgerStatus(raw)
    if from ~= 'planned' then
      out[#out + 1] = { id, raw, 0 }
    elseif string.sub(verdict, 1, 5) == 'skip:' then
      out[#out + 1] = { id, setStatus(id, from, 'skipped', verdict, detail), 0 }
    elseif action == 'prune' then
      pruneItem(id, from)
    else
      -- everything this item reads of the job, in one command (the fingerprint's fields and the
      -- two more the move needs)
      local f = redis.call('HMGET', jk(id), unpack(FP_FIELDS))
      local v = { ${(['st', 'att', 'ten', 'cls', 'est', 'rc', 'hn'] as const).map((n) => `f[${APPLY_FIELDS.indexOf(n) + 1}]`).join(', ')} }
      -- the fields this item computes with, checked before anything is written: a missing or
      -- damaged one would stop the script half way through the batch (Redis keeps a failed
      -- script's writes)
      -- (no att: never claimed, as a job taken into custody from the SQS DLQ; that is 0 attempts)
      local damaged = (v[2] and not tonumber(v[2]) and 'att') or (not v[3] and 'ten') or (not v[4] and 'cls') or (v[5] and not tonumber(v[5]) and 'est') or (v[6] and not tonumber(v[6]) and 'rc')
      if v[1] ~= 'dead' then
        out[#out + 1] = { id, setStatus(id, from, 'skipped', 'skip:not_in_dlq', '"the job is no longer in the DLQ"'), 0 }
      elseif fingerprint(id, f) ~= fp then
        out[#out + 1] = { id, setStatus(id, from, 'skipped', 'skip:changed', '"the job record changed while it was being checked: left in the DLQ"'), 0 }
      elseif damaged then
        out[#out + 1] = { id, setStatus(id, from, 'skipped', 'skip:malformed', cjson.encode('the job record is damaged: its field ' .. damaged .. ' is missing or unreadable')), 0 }
      else
        local att, ten = v[2], v[3]
        META[id] = { cls = v[4], ten = ten, est = tonumber(v[5] or '60') }
        zsetD(K_DLQ, id, false)
        if action == 'redrive' then
          redis.call('HDEL', jk(id), 'dr', 'dat', 'dec', 'dem', 'dwv', 'end', 'out', 'wend', 'cra', 'crr')
          -- redrive count +1, lineage, attempts, state and run_at in one write (move and enqueue are told)
          local newAtt, maxF, maxV = att, 'max', nil
          if policy == 'reset' then
            newAtt, maxF, maxV = '0', 'att', 0
          else
            maxV = tonumber(att or '0') + extra
          end
          -- (and the event's history line, in an inline slot while one is free)
          local args = { 'rc', tonumber(v[6] or '0') + 1, 'rat', NOWS, 'rrun', run, maxF, maxV, 'st', 'queued', 'upd', NOWS, 'run', NOWS }
          emitInline(args, v[7], id, 'redriven', 'dead', 'queued', newAtt, ten, { run_id = run })
          redis.call('HSET', jk(id), unpack(args))
          move(id, 'dead', 'queued', true)
          enqueue(id, NOWS, true, true)
        elseif action == 'expire' then
          -- no total('expired'): the job ended when it died; a second end would lower the DLQ rate
          move(id, 'dead', 'expired')
          finish(id, 'expired')
          emit(id, 'expired', 'dead', 'expired', att, ten, { run_id = run })
        else
          emit(id, 'purged', 'dead', cjson.null, att, ten, { run_id = run })
          freeIdempotencyKey(id, ten)
          zsetD(sk('dead'), id, false)
          countD('i', K_COUNT, statsCountField(id, 'dead'), -1) -- [stats]
          statsMove(id, 'dead', nil) -- [stats]
          -- the events kept in the job hash (its inline history slots) join the list, in order,
          -- before the hash goes: the list is rewritten as the job's last HISTORY_KEEP events
          local lines = historyLines(hk(id), jk(id))
          redis.call('DEL', hk(id))
          if #lines > 0 then redis.call('RPUSH', hk(id), unpack(lines)) end
          redis.call('DEL', jk(id), ak(id), ek(id))
          -- and its fields in the hashes a layer on this store keeps per job (left, they grew for ever)
          for k = 2, #KEYS do redis.call('HDEL', KEYS[k], id) end
          -- the job's event history outlives it for a while (inspect shows 'purged'), then goes
          redis.call('EXPIRE', hk(id), 604800)
          purged = 1
        end
        out[#out + 1] = { id, setStatus(id, from, 'moved', verdict, 'null'), purged }
      end
    end
  end
end
-- Should an item still fail, the items before it keep their deferred index and counter writes
-- (their job hashes and ledger items are written already), then the error goes to the caller.
local ok, err = pcall(function()
  for i = 9, #ARGV, 4 do applyItem(i) end
end)
flushDeferred()
for status, n in pairs(delta) do
  if n ~= 0 then redis.call('HINCRBY', LC, status, n) end
end
-- (also when an item failed: the jobs deleted before it are gone, their location keys not yet)
if #PRUNED > 0 then redis.call('SADD', P .. 'plc', unpack(PRUNED)) end
if not ok then error(err) end
return out
`;

/** lock_acquire: KEYS[1] the queue's lock; ARGV[1] holder JSON. Returns {1} or {0, holder}. */
export const LOCK_ACQUIRE = String.raw`
local cur = redis.call('GET', KEYS[1])
if cur then return { 0, cur } end
redis.call('SET', KEYS[1], ARGV[1])
return { 1 }
`;

/** lock_release: KEYS[1] the queue's lock; ARGV[1] run id ('' = a holder without a run). Deletes only a lock held for that run. */
export const LOCK_RELEASE = String.raw`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local h = cjson.decode(cur)
local held = h.run_id
if held == cjson.null or held == nil then held = '' end
if held ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * lock_break: KEYS[1] the queue's lock; ARGV[1] owner, [2] run id ('' = none), [3] acquired_at of
 * the holder judged dead. Deletes the lock only while that holder holds it (contract
 * sameLockHolder); returns the holder deleted, or false.
 */
export const LOCK_BREAK = String.raw`
local cur = redis.call('GET', KEYS[1])
if not cur then return false end
local h = cjson.decode(cur)
local run = h.run_id
if run == cjson.null or run == nil then run = '' end
if h.owner ~= ARGV[1] or run ~= ARGV[2] or h.acquired_at ~= ARGV[3] then return false end
redis.call('DEL', KEYS[1])
return cur
`;

/** backlog: seconds of waiting work of a class and of a tenant, for admission control. KEYS[1] routes; ARGV[5] class, [6] tenant. */
export const BACKLOG = String.raw`
return { redis.call('HGET', P .. 'blc', ARGV[5]) or '0', redis.call('HGET', P .. 'blt', ARGV[6]) or '0' }
`;

/** traffic: the retry budget's window (attempts and retries this minute and the last). KEYS[1] routes. */
export const TRAFFIC = String.raw`
local b = math.floor(NOW / 60000)
local cur = redis.call('HMGET', P .. 'rb:' .. b, 'a', 'r')
local prev = redis.call('HMGET', P .. 'rb:' .. (b - 1), 'a', 'r')
return { (tonumber(cur[1]) or 0) + (tonumber(prev[1]) or 0), (tonumber(cur[2]) or 0) + (tonumber(prev[2]) or 0) }
`;
