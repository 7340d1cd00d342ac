/**
 * submit: a batch of new jobs of one shard, each with its idempotency check
 * and insert, in one script call. Submits issued in the same turn of the
 * event loop are sent together (RedisBackend.submit): the script's fixed cost
 * and the writes that take many members at once are paid once per batch, not
 * once per job.
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
 * Returns per job, in order, '' when it was created or '<job id>|<fingerprint>' of the
 * job its idempotency key already names.
 * Jobs are handled in order, so a key repeated within a batch finds the
 * first job.
 *
 * What is per job stays per job: the idempotency check, the job hash (with its
 * first event, h0, for the history) and the event. The writes `move(id, nil,
 * state)` and `enqueue` (prelude) make for a new job are deferred and sent
 * merged for the whole batch (prelude: deferred writes): one ZADD per index,
 * one increment per counter field. Nothing in this script reads those keys,
 * so the end state is the same as the per-job writes'.
 */
export const SUBMIT_FIELDS = 13;

export const SUBMIT = String.raw`
local n, writeLoc = tonumber(ARGV[5]), ARGV[6] == '1'
local out, locs, created = {}, {}, 0
-- The counters move, enqueue and total write for these jobs, checked before anything is written.
do
  local want = {}
  local function need(kind, key, field)
    local w = want[key]
    if not w then
      w = { kind = kind, fields = {} }
      want[key] = w
    end
    if field then w.fields[field] = true end
  end
  for i = 0, n - 1 do
    local b = 7 + i * ${SUBMIT_FIELDS}
    local st, cls, ten = ARGV[b + 4], ARGV[b + 7], ARGV[b + 8]
    need('i', K_COUNT, cls .. ':' .. st)
    need('f', P .. 'blc', cls)
    need('f', P .. 'blt', ten)
    need('z', K_STEN)
    if st == 'scheduled' then need('i', K_SSCH, ten) end
  end
  need('i', K_TOTAL, 'submitted')
  need('i', K_SACT, math.floor(NOW / 60000) .. ':s')
  checkCounters(want)
end
DEFER = n > 1
for i = 0, n - 1 do
  local b = 7 + i * ${SUBMIT_FIELDS}
  local id, idem, fp, env, st, runAt, dl, cls, ten, maxAtt, wf, est, shard =
    ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6], ARGV[b + 7], ARGV[b + 8], ARGV[b + 9], ARGV[b + 10], ARGV[b + 11], ARGV[b + 12]
  local existing = nil
  if idem ~= '' then
    existing = redis.call('HGET', KEYS[1], idem)
    if not existing then redis.call('HSET', KEYS[1], idem, id .. '|' .. fp) end
  end
  if existing then
    out[#out + 1] = existing
  else
    local h0 = streamEvent(id, 'submitted', nil, st, '0', ten, (st == 'scheduled') and { run_at = tonumber(runAt) } or nil)
    -- (strings, not Lua numbers: Redis formats every number argument with %.17g, which is not free.
    -- Fields that start at zero or empty are not written: att, fen, nef and rc read as 0 when
    -- absent, dl as no deadline; the creation time is the envelope's. Each field is an entry of
    -- its own in a hash this size.)
    if dl == '' then
      redis.call('HSET', KEYS[2 + i], 'env', env, 'max', maxAtt, 'cls', cls, 'ten', ten, 'wf', wf,
        'upd', NOWS, 'est', est, 'st', st, 'run', runAt, 'h0', h0)
    else
      redis.call('HSET', KEYS[2 + i], 'env', env, 'max', maxAtt, 'cls', cls, 'ten', ten, 'wf', wf,
        'upd', NOWS, 'est', est, 'st', st, 'run', runAt, 'h0', h0, 'dl', dl)
    end
    META[id] = { cls = cls, ten = ten, est = tonumber(est) }
    if writeLoc then
      locs[#locs + 1] = KEYS[2 + n + i]
      locs[#locs + 1] = QUEUE .. '\t' .. shard
    end
    -- move(id, nil, st) and enqueue(id, runAt): 'st', 'upd' and 'run' went into the HSET above
    move(id, nil, st, true)
    enqueue(id, runAt, true, true)
    out[#out + 1] = ''
    created = created + 1
  end
end
if created > 0 then total('submitted', created) end
flushDeferred()
if #locs > 0 then redis.call('MSET', unpack(locs)) end
return out
`;
