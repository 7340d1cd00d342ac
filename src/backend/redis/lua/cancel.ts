/**
 * cancel: queued/scheduled → cancelled at once; running → a cancel flag the
 * worker sees at its next heartbeat; terminal → unchanged.
 * KEYS[1] job hash. ARGV[5] id, ARGV[6] reason ('' for none).
 * Returns {status, snapshot}.
 */
export const CANCEL = String.raw`
local id, reason = ARGV[5], ARGV[6]
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return { 'missing' } end
if st == 'queued' or st == 'scheduled' then
  dequeue(id)
  redis.call('HSET', KEYS[1], 'cra', NOW)
  if reason ~= '' then redis.call('HSET', KEYS[1], 'crr', reason) end
  move(id, st, 'cancelled')
  finish(id, 'cancelled')
  total('cancelled')
  emit(id, 'cancelled', st, 'cancelled', hget(id, 'att'), hget(id, 'ten'), (reason ~= '' and { reason = reason }) or nil)
  return { 'cancelled', snapshot(id) }
end
if st == 'running' then
  if not redis.call('HGET', KEYS[1], 'cra') then
    redis.call('HSET', KEYS[1], 'cra', NOW, 'upd', NOW)
    if reason ~= '' then redis.call('HSET', KEYS[1], 'crr', reason) end
    emit(id, 'cancel_requested', 'running', 'running', hget(id, 'att'), hget(id, 'ten'), (reason ~= '' and { reason = reason }) or nil)
  end
  return { 'cancel_requested', snapshot(id) }
end
return { 'already_terminal', snapshot(id) }
`;
