/**
 * submit: idempotency check and insert in one step.
 * KEYS[1] job hash, KEYS[2] the shard's idempotency hash, KEYS[3] the job's
 * global location key (standalone only: a Cluster may keep it on another
 * node, so there the client writes it first, apart), or KEYS[1] again.
 * ARGV[5..]: id, idempotency key ('' for none), fingerprint, envelope JSON,
 * initial state (queued|scheduled), run_at, deadline ms (''), class, tenant,
 * max_attempts, workflow, estimated seconds (for the backlog counters).
 * Returns {'created'} or {'exists', '<job id>|<fingerprint>'}.
 */
export const SUBMIT = String.raw`
local id, idem, fp, env, st, runAt, dl, cls, ten, maxAtt, wf, est = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], tonumber(ARGV[10]), ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16]
if idem ~= '' then
  local existing = redis.call('HGET', KEYS[2], idem)
  if existing then return { 'exists', existing } end
  redis.call('HSET', KEYS[2], idem, id .. '|' .. fp)
end
redis.call('HSET', KEYS[1], 'env', env, 'att', 0, 'max', maxAtt, 'dl', dl, 'cls', cls, 'ten', ten, 'wf', wf,
  'cat', NOW, 'upd', NOW, 'fen', 0, 'nef', 0, 'rc', 0, 'est', est, 'st', st, 'run', runAt)
if KEYS[3] ~= KEYS[1] then redis.call('SET', KEYS[3], QUEUE .. '\t' .. ARGV[17]) end
META[id] = { cls = cls, ten = ten, est = tonumber(est) }
redis.call('ZADD', K_ALL, 0, id)
-- 'st', 'upd' and 'run' went into the HSET above: one write of the new hash instead of three.
move(id, nil, st, true)
enqueue(id, runAt, true)
total('submitted')
emit(id, 'submitted', nil, st, 0, ten, (st == 'scheduled') and { run_at = runAt } or nil)
return { 'created' }
`;
