/**
 * The figures behind `agentq stats` and `/metrics` for Redis (issue 8): the
 * per-class and per-tenant breakdowns and recent throughput, kept by the same
 * scripts that move the jobs (so no path can forget them and a read never
 * walks the jobs).
 *
 * STATS_HOOKS is spliced into the prelude (before `move`); the transition
 * scripts call it at three marked places: `move` (every state change),
 * `endAttempt` (an attempt's end) and the DLQ purge. Keys, all per shard
 * under the shard's hash tag and all of fixed name (see `statsKeySuffixes`):
 *   n              hash  the jobs-per-state counts `move` keeps anyway, with
 *                        the live states and dead counted per class
 *                        ('<class>:<state>'; terminal states stay '<state>'),
 *                        so the class breakdown costs no command of its own
 *   stn            zset  tenant → depth * 2^24 + DLQ entries (deepest first; a
 *                        tenant leaves when both are 0). Depth is queued +
 *                        scheduled + running; running per tenant is the
 *                        concurrency cap's `rt` hash, scheduled is `sts`, so
 *                        queued = depth - running - scheduled.
 *   sts            hash  tenant → scheduled jobs (field removed at 0)
 *   act            hash  '<minute>:s|f' → submissions and ended attempts other
 *                        than successes per minute; pruned to the last 16
 *                        minutes when a new minute's field is created
 *   jend           hash  '<minute>:ok|jx|jd' → jobs that succeeded, jobs that
 *                        ended otherwise (dead, expired, cancelled) and those
 *                        that went to the DLQ, per minute (prelude's total →
 *                        statsJobEnded); pruned to the last ${ENDS_MINUTES}
 *                        minutes (dlq check --window). A success ends its
 *                        attempt and its job, so 'ok' is also the recent
 *                        activity's successes: one count per job for both.
 *   qage:<class>   zset  waiting jobs of the class by run_at (oldest claimable
 *                        job per class; the queue's is the least of these)
 *   fc             hash  error code → attempts that ended with it (failures and
 *                        lost leases), at most 100 codes plus OTHER for
 *                        any code first seen after them (closeAttempt →
 *                        statsAttemptFailed; a success writes nothing)
 *   use            hash  tokens, cost_usd: what the shard's attempts reported
 *                        spending (the usage script, lua/worker.ts USAGE;
 *                        written only when a handler reports usage)
 * Cost per job (submit, claim, complete): 4 commands (a ZINCRBY and an
 * HINCRBY at submit and at the end), plus a ZREM / HDEL when a tenant's
 * figure reaches zero (BENCHMARKS.md, "Stats").
 *
 * The counters start with the scripts that keep them, and no migration is
 * written: on a Redis holding jobs from an older agentq, the queue's counts
 * stay right (old and new fields add up) but the class and tenant breakdowns
 * are off by those jobs, and their ages are not in the per-class age index.
 */
import { JOB_CLASSES } from '../../../core/schemas.js';
import { FAILURE_CODE_OTHER, STATS_ENDS_MAX_WINDOW_MS, STATS_MAX_FAILURE_CODES, STATS_MAX_TENANTS, STATS_SAMPLE_LIMIT } from '../../contract.js';

/** 2^24: a tenant's depth and DLQ size share one sorted-set score (exact while the DLQ part stays under 2^24 and the depth under 2^29). */
export const TENANT_DEPTH_UNIT = 16777216;
/** Minutes of per-minute activity kept (the recent window is 5 minutes; the rest is slack for pruning). */
const ACTIVITY_MINUTES = 16;
/** Minutes of per-minute job ends kept: the longest `dlq check --window`, and a minute of slack. */
const ENDS_MINUTES = STATS_ENDS_MAX_WINDOW_MS / 60_000 + 1;

const LUA_CLASSES = `{ ${JOB_CLASSES.map((c) => `'${c}'`).join(', ')} }`;

/** The per-shard keys these hooks write, after the shard prefix: every one has a fixed name. */
export function statsKeySuffixes(): string[] {
  return ['n', 'stn', 'sts', 'act', 'jend', 'fc', 'use', ...JOB_CLASSES.map((c) => `qage:${c}`)];
}

/** Lua spliced into the prelude, after `meta` and the deferred-write helpers, before `move` (which calls `statsMove`). */
export const STATS_HOOKS = String.raw`
-- [stats] per-class and per-tenant counters and recent activity (src/backend/redis/lua/stats.ts)
local K_STEN = P .. 'stn'
local K_SSCH = P .. 'sts'
local K_SACT = P .. 'act'
local K_SJEND = P .. 'jend'
-- activity kinds kept in jend (job ends, for a day) rather than act (attempts, for minutes)
local STATS_ENDS = { ok = true, jx = true, jd = true }
local function qagek(cls) return P .. 'qage:' .. cls end
local STATS_BY_CLASS = { queued = true, scheduled = true, running = true, dead = true }
-- what a job in a state adds to its tenant's rank score
local STATS_RANK = { queued = ${TENANT_DEPTH_UNIT}, scheduled = ${TENANT_DEPTH_UNIT}, running = ${TENANT_DEPTH_UNIT}, dead = 1 }

-- n (default 1) more events of this kind ('s' submitted, 'f' attempt ended other than succeeded in
-- act; 'ok' job succeeded, 'jx' job ended otherwise, 'jd' job went to the DLQ in jend) this minute. A field is created once per
-- kind and minute (HINCRBY returns n): only then is the hash pruned.
local function statsActivity(kind, n)
  n = n or 1
  if DEFER then
    dAct[kind] = (dAct[kind] or 0) + n
    return
  end
  local minute = math.floor(NOW / 60000)
  local key, keep, kinds = K_SACT, ${ACTIVITY_MINUTES}, 2
  if STATS_ENDS[kind] then key, keep, kinds = K_SJEND, ${ENDS_MINUTES}, 3 end
  if redis.call('HINCRBY', key, minute .. ':' .. kind, n) == n and redis.call('HLEN', key) > kinds * keep then
    local stale = {}
    for _, f in ipairs(redis.call('HKEYS', key)) do
      if tonumber(string.match(f, '^(%d+):') or '0') <= minute - keep then stale[#stale + 1] = f end
    end
    if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  end
end

-- n jobs ended with this outcome (succeeded, dead, expired, cancelled) this minute. Called where
-- the outcome totals count them (prelude's total), so a DLQ entry expired or purged later is no
-- second end. A success is one count (a job's success is its attempt's: the recent activity reads
-- it too), so the hot path's success costs one command here, as before job ends were counted.
local function statsJobEnded(out, n)
  if out == 'succeeded' then
    statsActivity('ok', n)
  else
    statsActivity('jx', n)
    if out == 'dead' then statsActivity('jd', n) end
  end
end

-- The field of the per-state counts hash (K_COUNT) that counts a job in this state.
local function statsCountField(id, st)
  if STATS_BY_CLASS[st] then return meta(id).cls .. ':' .. st end
  return st
end

-- A job moves from one state to another (from nil: submitted; to nil: purged).
local function statsMove(id, from, to)
  local m = meta(id)
  local rank = ((to and STATS_RANK[to]) or 0) - ((from and STATS_RANK[from]) or 0)
  if rank ~= 0 then countD('z0', K_STEN, m.ten, rank) end
  if from == 'scheduled' then countD('h0', K_SSCH, m.ten, -1) end
  if to == 'scheduled' then countD('h0', K_SSCH, m.ten, 1) end
  if from == nil then statsActivity('s') end
end

-- An attempt ended with this outcome (a release gives the job back without ending an attempt that
-- counts). A success is counted as its job's end (statsJobEnded), not here.
local function statsAttemptEnded(out)
  if out ~= 'succeeded' and out ~= 'released' then statsActivity('f') end
end

-- An attempt ended with this error code. Codes are the callers' strings, so the shard keeps its
-- first ${STATS_MAX_FAILURE_CODES} and counts any later one under ${FAILURE_CODE_OTHER}. Written at once, never deferred: the cap
-- reads the hash (HLEN, and HEXISTS once it is full). Only failures get here.
local function statsAttemptFailed(code)
  local K_FC = P .. 'fc'
  -- (HLEN alone answers while the hash is below the cap: one read per failure)
  if code ~= '${FAILURE_CODE_OTHER}' and redis.call('HLEN', K_FC) >= ${STATS_MAX_FAILURE_CODES} and redis.call('HEXISTS', K_FC, code) == 0
    and redis.call('HLEN', K_FC) - redis.call('HEXISTS', K_FC, '${FAILURE_CODE_OTHER}') >= ${STATS_MAX_FAILURE_CODES} then code = '${FAILURE_CODE_OTHER}' end
  redis.call('HINCRBY', K_FC, code, 1)
end
-- [/stats]
`;

/**
 * stats: one shard's maintained counters and bounded samples. KEYS[1] routes
 * (the shard's counts hash). ARGV[5..]: tenants to report; none = this
 * shard's deepest STATS_MAX_TENANTS.
 *
 * Returns { counts (per class for live states), totals, oldest run_at per
 * class (flat class, score), backlog per class, time-in-queue samples,
 * execution samples, attempt outcomes, activity, tenants, expired leases, tenant count, failures by code, usage } where tenants is a flat list
 * of (tenant, rank score, scheduled, running, backlog, oldest claimable
 * run_at or '') and expired leases is { count, then (class, tenant, lease end) of the
 * longest-expired, at most 64 }. Every read is bounded: fixed-size hashes, capped lists, at
 * most STATS_MAX_TENANTS tenants (or the ones asked for) with one seek per
 * class each.
 */
export const STATS_READ = String.raw`
local CLASSES = ${LUA_CLASSES}
local oldest = {}
for _, c in ipairs(CLASSES) do
  local head = redis.call('ZRANGEBYSCORE', qagek(c), '-inf', NOW, 'WITHSCORES', 'LIMIT', 0, 1)
  oldest[#oldest + 1] = c
  oldest[#oldest + 1] = head[2] or ''
end
local tenants = {}
if #ARGV >= 5 then
  for i = 5, #ARGV do tenants[#tenants + 1] = ARGV[i] end
else
  tenants = redis.call('ZREVRANGE', K_STEN, 0, ${STATS_MAX_TENANTS - 1})
end
-- The recent activity: act's fields, and the successes of its minutes, which jend keeps (a success
-- is counted once, as its job's end: statsJobEnded), as fields of the same form. Minutes ahead of
-- this clock too: a worker whose clock runs ahead writes them, and act's fields of them are read.
local activity = redis.call('HGETALL', K_SACT)
do
  local minute, fields = math.floor(NOW / 60000), {}
  for i = ${ACTIVITY_MINUTES} - 1, -${ACTIVITY_MINUTES}, -1 do fields[#fields + 1] = (minute - i) .. ':ok' end
  local oks = redis.call('HMGET', K_SJEND, unpack(fields))
  for i = 1, #fields do
    if oks[i] then
      activity[#activity + 1] = fields[i]
      activity[#activity + 1] = oks[i]
    end
  end
end
local rows = {}
for _, t in ipairs(tenants) do
  local first = ''
  for _, c in ipairs(CLASSES) do
    local head = redis.call('ZRANGE', rk(c, t), 0, 0, 'WITHSCORES')
    if head[2] and tonumber(head[2]) <= NOW and (first == '' or tonumber(head[2]) < tonumber(first)) then first = head[2] end
  end
  rows[#rows + 1] = t
  rows[#rows + 1] = redis.call('ZSCORE', K_STEN, t) or '0'
  rows[#rows + 1] = redis.call('HGET', K_SSCH, t) or '0'
  rows[#rows + 1] = redis.call('HGET', P .. 'rt', t) or '0'
  rows[#rows + 1] = redis.call('HGET', P .. 'blt', t) or '0'
  rows[#rows + 1] = first
end
-- running jobs whose lease ran out (reaped lazily, by the next claim): their count, and the
-- class, tenant and expiry of the longest-expired ones (at most 64 read, so a class seen only past
-- them is left out of its class's oldest age; the queue's oldest is always right)
local expired = { redis.call('ZCOUNT', K_LEASES, '-inf', NOW) }
if expired[1] > 0 then
  local head = redis.call('ZRANGEBYSCORE', K_LEASES, '-inf', NOW, 'WITHSCORES', 'LIMIT', 0, 64)
  for i = 1, #head, 2 do
    local m = meta(head[i])
    expired[#expired + 1] = m.cls or ''
    expired[#expired + 1] = m.ten or ''
    expired[#expired + 1] = head[i + 1]
  end
end
return {
  redis.call('HGETALL', K_COUNT),
  redis.call('HGETALL', K_TOTAL),
  oldest,
  redis.call('HGETALL', P .. 'blc'),
  redis.call('LRANGE', P .. 'tiq', -${STATS_SAMPLE_LIMIT}, -1),
  redis.call('LRANGE', P .. 'exec', -${STATS_SAMPLE_LIMIT}, -1),
  redis.call('HGETALL', P .. 'byatt'),
  activity,
  rows,
  expired,
  redis.call('ZCARD', K_STEN),
  redis.call('HGETALL', P .. 'fc'),
  redis.call('HGETALL', P .. 'use'),
}
`;
