/**
 * The Redis backend: ioredis + one Lua script per state transition, standalone
 * or Cluster. Pure rules (validation, fingerprints, retry decisions, redrive
 * verdicts) come from core/ exactly as in the SQLite adapter; the scripts only
 * make each transition atomic and check state and fence in the same step.
 *
 * Time is the injected Clock, passed into every script as ARGV: Redis TIME is
 * never read, so tests control time with a ManualClock.
 */
import { toEnvelope } from '../../core/envelope.js';
import { createHash, randomBytes } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { encodeTime } from 'ulid';
import { AgentqError, ExitCode, IdempotencyConflictError, JobStoppingError, LeaseLostError, MalformedJobError, NotFoundError, PermissionError, ValidationError } from '../../core/errors.js';
import { STORED_JSON_MAX_BYTES, storedJson } from '../../core/stored-json.js';
import { checkUsage } from '../../core/usage.js';
import { checkApplyRequest, checkCancelReason, checkClaim, checkCursor, checkDlqFilter, checkEffectKey, checkNewEffectKey, checkEventQuery, checkFailure, checkJobFilter, checkJobIdArg, checkLeaseMs, checkJobResult, checkLeaseRef, checkLeaseRefs, checkLedgerStatus, checkLockHolder, checkPageArg, checkQueueArg, checkRunFilter, checkRunRecord, checkRunIdArg, checkStatsOptions, checkQueuePage } from '../checks.js';
import { DEFAULT_ESTIMATED_SECONDS, admissionDecision, refusalError, type AdmissionLimits } from '../../core/admission.js';
import { classWeight, type FairnessOptions } from '../../core/fairness.js';
import { createIdFactory, JOB_ID_PREFIX } from '../../core/ids.js';
import { DEFAULT_ATTEMPTS_POLICY, type AttemptsPolicy } from '../../core/plan.js';
import { decideFailure, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../core/retry.js';
import { JOB_CLASSES, JOB_STATES, type DlqEntry, type Effect, type Job, type JobEvent, type JobState, type NormalizedSubmit, type SubmitRequest } from '../../core/schemas.js';
import { normalizeSubmit, requestFingerprint, sameRequest } from '../../core/submit.js';
import { isExpiredAt, runVerdictOptions, verdictFor, type VerdictOptions } from '../../core/verdict.js';
import { runPruneRule } from '../../core/prune.js';
import { systemClock, systemRandom, type Clock, type Random } from '../../core/clock.js';
import type {
  AbortOutcome,
  ApplyRequest,
  Backend,
  CancelResult,
  ClaimRequest,
  DlqFilter,
  EventQuery,
  Failure,
  FailureOutcome,
  HeartbeatResult,
  JobFilter,
  Lease,
  LeaseRef,
  LedgerItem,
  LedgerStatus,
  LockHolder,
  LockResult,
  JobPage,
  Page,
  PageRequest,
  PlanVerdict,
  QueueStats,
  StatsOptions,
  RunRecord,
  UsageReport,
} from '../contract.js';
import { MAX_PAGE_LIMIT } from '../contract.js';
import { allQueues } from '../queue-walk.js';
import { compareSeq, decodeEvent, dlqEntryFrom, effectFrom, isNotAHash, isWrongType, missingRecordEntry, NOT_A_HASH, flatToMap, hasAttemptsList, iso, JOB_FIELDS, jobFieldsFrom, jobFrom, ledgerItemFrom, ownJobFrom, type Snapshot } from './codec.js';
import { RedisConnection, settingWarnings, type Client } from './connection.js';
import { KeyLayout, shardOf } from './keys.js';
import { TurnBatches } from './turn-batches.js';
import { HISTORY_KEEP } from './lua/read.js';
import { readAfter, waitAfter, type StreamGap, type StreamPosition } from './stream-read.js';
import { seekSince } from './since-seek.js';
import type { CloseOptions, DlqRow } from '../contract.js';
import { redisDlqRows, stillDead, type DeadSetSource } from './dlq-rows.js';
import { callScript, registerScripts, type ScriptName } from './scripts.js';
import { readQueueStats, type ShardStatsReply } from './stats.js';
import { MAX_SHARDS, parseRedisUrl, redisStoreId, type RedisUrlOptions } from './url.js';

export interface RedisBackendDeps {
  clock?: Clock;
  random?: Random;
  retryPolicy?: RetryPolicy;
  /** Backlog limits for admission control; none when absent. */
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
  /**
   * Hashes of each queue shard (names under the shard prefix) holding one field per job id, kept
   * by a layer on this store (the SQS backend's `sqs:pub`, `sqs:dlv`, `sqs:rep`): a purge removes
   * the job's field from each in the script that removes the job, declared as its keys.
   */
  jobFieldHashes?: readonly string[];
  /** Events a following reading holds that its reader has not taken yet, at most (default FOLLOW_BUFFER). */
  followBuffer?: number;
}

/**
 * Events a following `events()` reads ahead of its reader, at most: a reader slower than the
 * queue (a `tail --follow` into a slow pipe) leaves the rest in the stream rather than in memory,
 * and if the cap trims them meanwhile, the gap is reported (stream-read.ts).
 */
export const FOLLOW_BUFFER = 2000;

/** The contract's promise-returning methods (events is an iterator, close is best effort). */
const GUARDED = [
  'storeIdentity', 'submit', 'get', 'list', 'cancel', 'queues', 'claim', 'heartbeat', 'checkpoint', 'addUsage', 'beginEffect', 'finishEffect', 'complete', 'completeAndClaim', 'fail', 'abort', 'release',
  'dlqList', 'dlqGet', 'dlqRaw', 'createRun', 'getRun', 'listRuns', 'updateRun', 'ledger', 'applyRunItems', 'acquireLock', 'releaseLock', 'readLock', 'breakLock', 'stats',
] as const;

/** Most effects a job may record: keeps its effects hash (read whole in a snapshot) bounded. */
export const MAX_EFFECTS_PER_JOB = 1000;
/** Expired leases reclaimed and scheduled jobs promoted per claim call, at most. */
const REAP_LIMIT = 100;
/** How many ids a filtered page scan looks at before returning a short page with a cursor. */
const SCAN_FACTOR = 10;
const LEDGER_CHUNK = 500;
/** Ledger items applied per script call: about a millisecond of Redis time each. */
const APPLY_SLICE = 50;
/** How many location keys left by an interrupted prune apply one apply call deletes per shard. */
const PRUNED_LOC_PAGE = 100;

const ALL_CLASSES = JOB_CLASSES.join(',');
/**
 * How long claims leave out a shard whose claim failed, first and at most (doubling while it keeps
 * failing): a call to a Cluster node that is down can take seconds to fail, which every claim
 * would otherwise wait for before asking the shards that answer.
 */
const SHARD_REST_MS = 1_000;
const SHARD_REST_MAX_MS = 30_000;

/** Jobs per submit script call: about a millisecond of Redis time at most. */
const SUBMIT_BATCH = 64;
/**
 * Completions per complete_claim script call (lua/worker.ts): each is one of its KEYS. Small
 * enough that a worker finishing 50 slots in one turn sends its first batch while it is still
 * finishing the rest (Redis and the worker overlap), large enough to merge most writes: at
 * concurrency 50, 16 gave 8,200 to 8,600 jobs/s against 7,200 to 8,000 for 8, 12, 25 and 64.
 */
const COMPLETE_BATCH = 16;
/** The scripts sent by the batching above, apart from ioredis's auto-pipeline. */
const BATCH_SCRIPTS: ScriptName[] = ['aqSubmit', 'aqCompleteClaim', 'aqApply'];

/**
 * A job as the claim script hands it out: fence, lease expiry, its snapshot with the job
 * fields by position (JOB_FIELDS' order, null where absent; the claim's own writes as numbers or
 * text), and the id it is stored under (the envelope's is checked against it).
 */
type ClaimedJob = [fence: number, expiresAt: number, snapshot: [fields: Array<string | number | null>, effects: string[], attempts: string[]], jobId: string];
/** A waiting job the claim script set aside into the DLQ instead of handing it out: its id, and why. */
type SetAside = [jobId: string, why: string];

/** A completeAndClaim waiting for the end of this turn of the event loop. */
interface PendingCompletion {
  lease: LeaseRef;
  /** The result as JSON. */
  result: string;
  max: number;
  resolve: (next: [ClaimedJob[], SetAside[]]) => void;
  reject: (e: unknown) => void;
}

interface PendingSubmit {
  jobKey: string;
  locKey: string;
  args: Array<string | number>;
  /** '' when created, else the stored '<job id>|<fingerprint>' of the key's job. */
  resolve: (r: string) => void;
  reject: (e: unknown) => void;
}

interface Loc {
  queue: string;
  shard: number;
}

/** A snapshot as the reads take it: the job hash's JOB_FIELDS as a field map. */
type ReadSnapshot = [hash: Record<string, string>, effects: string[], attempts: string[]];

/** Sorted sets of ids of one shard, walked together by `scanPages`. */
interface IdSource {
  loc: Loc;
  keys: string[];
}

export class RedisBackend implements Backend {
  readonly kind = 'redis' as const;
  readonly description: string;
  readonly storeId: string;
  private readonly conn: RedisConnection;
  private readonly client: Client;
  private readonly keys: KeyLayout;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly policy: RetryPolicy;
  private readonly newId: (prefix: string) => string;
  private readonly shardCounts = new Map<string, number>();
  /** job id → where it lives. Immutable once written, so safe to cache (bounded). */
  private readonly locCache = new Map<string, Loc>();
  private readonly followers = new Set<Client>();
  private readonly followBuffer: number;
  /** Event stream key → the queue and shard it belongs to, for gap reports. */
  private readonly streamNames = new Map<string, string>();
  /** The stop of every `events({follow})` running: close() ends them as an abort would, quietly. */
  private readonly followStops = new Set<() => void>();
  private readonly admission: AdmissionLimits | undefined;
  private readonly fairness: FairnessOptions;
  private readonly jobFieldHashes: readonly string[];

  constructor(
    private readonly opts: RedisUrlOptions,
    deps: RedisBackendDeps = {},
  ) {
    this.clock = deps.clock ?? systemClock;
    this.random = deps.random ?? systemRandom;
    this.policy = deps.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.admission = deps.admission;
    this.fairness = deps.fairness ?? {};
    this.jobFieldHashes = deps.jobFieldHashes ?? [];
    this.followBuffer = deps.followBuffer ?? FOLLOW_BUFFER;
    this.newId = createIdFactory(this.clock, this.random);
    this.keys = new KeyLayout(opts.prefix);
    this.description = `redis ${opts.redacted}`;
    this.storeId = redisStoreId(opts);
    // The batch scripts are sent as soon as they are made (a full batch while its caller is still
    // busy, so Redis works meanwhile): through the auto-pipeline they would wait for the end of the turn.
    this.conn = new RedisConnection(opts, BATCH_SCRIPTS);
    this.client = this.conn.client;
    registerScripts(this.client);
    // Every contract call reports a Redis it cannot reach, or that refuses it, the same way (connection.ts).
    for (const name of GUARDED) {
      const fn = (this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!;
      (this as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => this.guard(() => fn.apply(this, a));
    }
  }

  /**
   * Runs `call` as every contract call runs: after the URL's database is selected, its failure
   * reported as agentq's typed error, marked as never sent when it cannot have reached Redis.
   * Public for code on this store's data that uses the raw client (the SQS backend's Redis store).
   */
  guard<T>(call: () => Promise<T>): Promise<T> {
    const start = this.conn.callStart();
    this.conn.wake();
    const gate = this.conn.dbGate();
    return (gate ? gate.then(call) : call()).catch(async (e: unknown) => {
      await this.conn.settled(e);
      // (a call that cannot have reached Redis says so: a worker then knows its claim leased nothing)
      throw this.conn.unsent(this.conn.errorOf(e), start);
    });
  }

  /**
   * The identity this store keeps under its prefix (`<prefix>:store`): created once with SET NX by
   * the first caller (of any process; whoever loses the race reads the winner's), then read. Null
   * when there is none and this user may not write one (a read-only ACL user planning a dry run):
   * the plan then names the store by `storeId`. Plans only: never on a hot path.
   */
  async storeIdentity(): Promise<string | null> {
    this.identity ??= (async () => {
      const key = this.keys.storeIdentity();
      const found = await this.client.get(key);
      if (found !== null) return found;
      try {
        await this.client.set(key, randomBytes(12).toString('hex'), 'NX');
      } catch (e) {
        if (this.conn.errorOf(e) instanceof PermissionError) return null;
        throw e;
      }
      return this.client.get(key);
    })().catch((e: unknown) => {
      this.identity = null;
      throw e;
    });
    return this.identity;
  }
  private identity: Promise<string | null> | null = null;

  /**
   * Resolves once the URL's database is selected (`dbGate`); rejects with exit 78 when the server
   * lacks it. For code that uses the raw client (`redis`) rather than the guarded methods.
   */
  async dbReady(): Promise<void> {
    await this.conn.dbGate()?.catch((e: unknown) => Promise.reject(this.conn.errorOf(e)));
  }

  /** The raw client: for tests and benchmarks that need to look underneath. */
  get redis(): Client {
    return this.client;
  }

  // ------------------------------------------------------------ plumbing

  private now(): number {
    return this.clock.now();
  }

  private async call<T>(name: ScriptName, shardPrefix: string, keys: string[], queue: string, args: Array<string | number>): Promise<T> {
    try {
      return (await callScript(this.client, name, keys, [shardPrefix, this.now(), this.opts.eventsMaxLen, queue, ...args])) as T;
    } catch (e) {
      await this.conn.settled(e);
      throw this.conn.errorOf(e);
    }
  }

  // (Hot paths read shardCounts and locCache first and await these only on a miss: an await of an
  // async function costs a promise and a turn of the microtask queue per job even when cached.)
  private async shardsOf(queue: string, create: boolean): Promise<number> {
    const cached = this.shardCounts.get(queue);
    if (cached !== undefined) return cached;
    const meta = this.keys.queueMeta(queue);
    let v = await this.client.hget(meta, 'shards');
    if (v === null && create) {
      await this.client.hsetnx(meta, 'shards', this.opts.shards);
      await this.client.zadd(this.keys.queues(), 0, queue);
      v = await this.client.hget(meta, 'shards');
    }
    if (v === null) return this.opts.shards;
    // A count edited outside agentq ("abc", 0) sent every claim and stats read over no shard (the
    // queue's jobs invisible, a --drain worker done at once) and every submit to shard NaN, where
    // nothing looks: refused, naming the key, before anything is read or written by it.
    if (!/^[1-9]\d{0,3}$/.test(v) || Number(v) > MAX_SHARDS) {
      throw new AgentqError(
        'STORE_DAMAGED',
        `Redis at ${this.conn.where}: the shard count of queue ${queue} (${meta} field shards) is ${JSON.stringify(v.slice(0, 40))}, not a whole number from 1 to ${MAX_SHARDS} (changed outside agentq?); nothing was written`,
        ExitCode.config,
        `Set it back to the count the queue was created with: HSET ${meta} shards N, where N - 1 is the highest shard number in the queue's keys {${this.opts.prefix}:${queue}:N-1}.`,
      );
    }
    const n = Number(v);
    this.shardCounts.set(queue, n);
    return n;
  }

  private async locate(jobId: string): Promise<Loc | null> {
    const cached = this.locCache.get(jobId);
    if (cached) return cached;
    const v = await this.client.get(this.keys.loc(jobId));
    if (v === null) return null;
    const [queue, shard] = v.split('\t');
    const loc = { queue: queue!, shard: Number(shard) };
    this.rememberLoc(jobId, loc);
    return loc;
  }

  private rememberLoc(jobId: string, loc: Loc): void {
    if (this.locCache.size >= 100_000) this.locCache.delete(this.locCache.keys().next().value!);
    this.locCache.set(jobId, loc);
  }

  private sp(loc: Loc): string {
    return this.keys.shard(loc.queue, loc.shard);
  }

  /**
   * Snapshots of jobs of one shard for reads (get, list, DLQ pages). Plain
   * single-key commands (HMGET of the fixed-size job hash's JOB_FIELDS, all but
   * the history kept in it; then, for a job that has them, LRANGE of its
   * trimmed attempts list and HGETALL of its capped effects hash), auto-
   * pipelined: a page costs one round trip (two when some job has earlier
   * attempts or effects), yet Redis serves other clients between any two of
   * them, so walking a huge DLQ never holds Redis for more than one small
   * command. (Reading pages through a Lua script was measured three times and
   * rejected: 2 to 3 times the Redis CPU per entry, and calls of a millisecond
   * or more; one that only made the HMGETs halved a plan's client CPU but
   * doubled Redis's and the PING p99 of a 1,000,000-entry walk, which went no
   * faster; BENCHMARKS.md, "Redis".) Each
   * key is read atomically; the keys of one job are not (a read racing a
   * transition may see the new state with the old attempts), which a listing
   * tolerates. Transitions never rely on these snapshots alone: their scripts
   * re-check state and fence.
   */
  private async readSnapshot(loc: Loc, id: string): Promise<ReadSnapshot | null> {
    return (await this.readDecoded(loc, [id], (snap) => snap))[0] ?? null;
  }

  /** Snapshots decoded by the caller; jobs that do not exist, or that decode to null, are left out. */
  private async readDecoded<T>(loc: Loc, ids: string[], decode: (snap: ReadSnapshot, id: string) => T | null): Promise<T[]> {
    const p = this.sp(loc);
    const c = this.client;
    const hashes = await Promise.all(
      ids.map((id) =>
        (c.call('HMGET', `${p}j:${id}`, ...JOB_FIELDS) as Promise<Array<string | null>>).then(jobFieldsFrom, (e: unknown) => {
          if (isWrongType(e)) return { ...NOT_A_HASH };
          throw e;
        }),
      ),
    );
    // The second round trip, only for the jobs that need it: 'nef' counts the effects hash's
    // entries exactly (effects are only added, and go with the whole job) and 'na' the attempts
    // list's (codec.ts hasAttemptsList), so a job that has neither needs no read of them.
    const rest = await Promise.all(
      hashes.map((h, i) =>
        h === null
          ? NO_PARTS
          : Promise.all([
              (h.nef ?? '0') !== '0' ? (c.call('HGETALL', `${p}e:${ids[i]}`) as Promise<string[]>) : NO_EFFECTS,
              // (the first `na`: the records before the hash's ar, even if a claim has moved it in since)
              hasAttemptsList(h) ? c.lrange(`${p}a:${ids[i]}`, 0, h.na !== undefined ? Number(h.na) - 1 : -1) : NO_ATTEMPTS,
            ]),
      ),
    );
    const out: T[] = [];
    hashes.forEach((h, i) => {
      if (h === null) return;
      const [effects, attempts] = rest[i]!;
      const v = decode([h, effects, attempts], ids[i]!);
      if (v !== null) out.push(v);
    });
    return out;
  }

  private async readJob(jobId: string): Promise<{ loc: Loc; job: Job } | null> {
    const loc = await this.locate(jobId);
    if (!loc) return null;
    const snap = await this.readSnapshot(loc, jobId);
    return snap ? { loc, job: readableJob(jobId, loc.queue, snap) } : null;
  }

  // ------------------------------------------------------------ producers and operators

  async submit(raw: SubmitRequest): Promise<{ job: Job; created: boolean }> {
    const now = this.now();
    const req = normalizeSubmit(raw, now);
    // The body's fingerprint only matters next to an idempotency key (a same-key resend is compared with it).
    const fp = req.idempotency_key !== null ? requestFingerprint(req) : '';
    const jobId = this.newId(JOB_ID_PREFIX);
    const shards = this.shardCounts.get(req.queue) ?? (await this.shardsOf(req.queue, true));
    // A tenant's jobs share a shard: per-tenant order, caps and backlog stay exact on a sharded queue,
    // and a busy queue still spreads over the nodes by its tenants.
    const loc = { queue: req.queue, shard: shardOf(req.tenant_id, shards) };
    const p = this.sp(loc);
    // A queue of several shards scopes keys per (queue, tenant) (README): a key is looked up on its
    // tenant's shard only, so the tenant is part of it there, or tenants sharing a shard would
    // collide (and be told each other's job ids) while tenants on other shards would not.
    const idemField = req.idempotency_key === null ? '' : shards > 1 ? `${req.tenant_id}\u0000${req.idempotency_key}` : req.idempotency_key;
    if (req.idempotency_key !== null) {
      // A duplicate returns the existing job before admission control: resending is never refused.
      const existing = await this.client.hget(p + 'idem', idemField);
      if (existing !== null) return this.duplicateOf(req, existing, fp);
      if (shards > 1) {
        // A key stored before keys were scoped by tenant here (under the key alone): it is this
        // request's when its job is this tenant's.
        const legacy = await this.client.hget(p + 'idem', req.idempotency_key);
        if (legacy !== null && (await this.client.hget(`${p}j:${legacy.split('|')[0]!}`, 'ten')) === req.tenant_id) return this.duplicateOf(req, legacy, fp);
      }
    }
    const createdAt = iso(now)!;
    const estimated = req.estimated_seconds ?? DEFAULT_ESTIMATED_SECONDS;
    if (this.admission) await this.admit(req.queue, shards, req.class, req.tenant_id, estimated, now);
    const runAtMs = req.run_at !== null ? Math.max(Date.parse(req.run_at), now) : now;
    const state: JobState = req.run_at !== null && runAtMs > now ? 'scheduled' : 'queued';
    const env = {
      job_id: jobId,
      tenant_id: req.tenant_id,
      queue: req.queue,
      workflow: req.workflow,
      operation: req.operation,
      class: req.class,
      input: req.input,
      input_ref: req.input_ref,
      input_sha256: req.input_sha256,
      deadline_at: req.deadline_at,
      idempotency_key: req.idempotency_key,
      max_attempts: req.max_attempts,
      trace_id: req.trace_id,
      budget: req.budget,
      allowed_tools: req.allowed_tools,
      estimated_seconds: req.estimated_seconds,
      created_at: createdAt,
    };
    // The id → shard index: on a standalone server the submit script writes it
    // in the same step; on a Cluster it may live on another node, so it is
    // written first (a job is never stored without a way to find it) and
    // removed again if the submit turns out to be a duplicate.
    const locKey = this.keys.loc(jobId);
    if (this.opts.cluster) await this.client.set(locKey, `${loc.queue}\t${loc.shard}`);
    const res = await this.submitBatched(loc, p + 'j:' + jobId, locKey, [
      jobId,
      idemField,
      fp,
      JSON.stringify(env),
      state,
      runAtMs,
      req.deadline_at !== null ? Date.parse(req.deadline_at) : '',
      req.class,
      req.tenant_id,
      req.max_attempts,
      req.workflow,
      estimated,
      loc.shard,
    ]);
    if (res !== '') {
      if (this.opts.cluster) await this.client.del(locKey);
      return this.duplicateOf(req, res, fp);
    }
    // (The new job's location is not put in the location cache: a bulk producer would fill it with
    // ids it never reads back, at about 9% of its CPU per submit, measured; a later read of the job
    // costs one GET of its `loc` key. The claim that leases it caches it for the worker's calls.)
    // In the Job schema's field order, as every other read of a job prints it (`submit -o json`).
    // One literal, not `{ ...env, … }`: V8 builds the spread-then-extend object through
    // per-property transitions, which made this the single largest cost of a submit (~20 µs/job).
    const job: Job = {
      job_id: jobId,
      tenant_id: env.tenant_id,
      queue: env.queue,
      workflow: env.workflow,
      operation: env.operation,
      class: env.class,
      input: env.input,
      input_ref: env.input_ref,
      input_sha256: env.input_sha256,
      deadline_at: env.deadline_at,
      idempotency_key: env.idempotency_key,
      attempt: 0,
      max_attempts: env.max_attempts,
      trace_id: env.trace_id,
      budget: env.budget,
      allowed_tools: env.allowed_tools,
      estimated_seconds: env.estimated_seconds,
      created_at: createdAt,
      state,
      outcome: null,
      updated_at: createdAt,
      run_at: runAtMs === now ? createdAt : iso(runAtMs)!,
      ended_at: null,
      lease: null,
      cancel_requested_at: null,
      cancel_reason: null,
      checkpoint: null,
      effects: [],
      last_error: null,
      attempts: [],
      result: null,
      dead: null,
      lineage: { redrive_count: 0, redriven_at: null, redrive_run: null },
    };
    return { job, created: true };
  }

  /** Submits of this turn of the event loop, per shard prefix. */
  private readonly submits = new TurnBatches<Loc, PendingSubmit>(SUBMIT_BATCH, (loc, items) => this.sendSubmits(loc, items));

  /**
   * Queues one job's submit script arguments; submits issued in the same turn
   * of the event loop go to their shard together, SUBMIT_BATCH per script
   * call (lua/submit.ts). A batch that fills up is sent at once, so Redis
   * works on it while the caller is still preparing the next submits of the
   * turn (a bulk producer's 1,000 submits overlap with their inserts); the
   * rest go at the end of the turn. Each job is still checked and inserted
   * atomically, in the order the calls were made.
   */
  private submitBatched(loc: Loc, jobKey: string, locKey: string, args: Array<string | number>): Promise<string> {
    return new Promise((resolve, reject) => this.submits.add(this.sp(loc), loc, { jobKey, locKey, args, resolve, reject }));
  }

  private sendSubmits(loc: Loc, items: PendingSubmit[]): void {
    const p = this.sp(loc);
    const writeLoc = !this.opts.cluster;
    const keys = [p + 'idem', ...items.map((c) => c.jobKey), ...(writeLoc ? items.map((c) => c.locKey) : [])];
    const args: Array<string | number> = [items.length, writeLoc ? '1' : '0'];
    for (const c of items) args.push(...c.args);
    this.track(this.call<string[]>('aqSubmit', p, keys, loc.queue, args)).then(
      (res) => items.forEach((c, k) => c.resolve(res[k]!)),
      (e: unknown) => items.forEach((c) => c.reject(e)),
    );
  }

  /**
   * Refuses work over the backlog limit of its class or tenant, summed over
   * the queue's shards from their maintained counters. The check and the
   * insert are two steps, so concurrent producers can overshoot a limit by
   * the jobs in flight; the limit is a brake, not a ledger.
   */
  private async admit(queue: string, shards: number, cls: Job['class'], tenant: string, estimated: number, now: number): Promise<void> {
    let classBacklog = 0;
    let tenantBacklog = 0;
    const parts = await Promise.all(
      Array.from({ length: shards }, (_v, s) => {
        const p = this.keys.shard(queue, s);
        return this.call<[string, string]>('aqBacklog', p, [p + 'blc'], queue, [cls, tenant]);
      }),
    );
    for (const [c, t] of parts) {
      classBacklog += Number(c);
      tenantBacklog += Number(t);
    }
    const decision = admissionDecision(
      { queue, class: cls, tenant, estimatedSeconds: estimated, classBacklogSeconds: classBacklog, tenantBacklogSeconds: tenantBacklog },
      this.admission!,
    );
    if (!decision.admit) throw refusalError(decision, now);
  }

  private async duplicateOf(req: NormalizedSubmit, stored: string, fp: string): Promise<{ job: Job; created: boolean }> {
    const key = req.idempotency_key!;
    const [existingId, existingFp] = stored.split('|') as [string, string];
    if (!sameRequest(existingFp, req, fp)) throw new IdempotencyConflictError(key, existingId);
    const existing = await this.readJob(existingId);
    if (!existing) throw new NotFoundError(`${existingId} (the job of idempotency key ${JSON.stringify(key)}) no longer exists`, 'JOB_NOT_FOUND');
    return { job: existing.job, created: false };
  }

  async get(jobId: string): Promise<Job | null> {
    checkJobIdArg(jobId);
    return (await this.readJob(jobId))?.job ?? null;
  }

  async list(filter: JobFilter, page: PageRequest): Promise<JobPage> {
    checkJobFilter(filter);
    checkPageArg(page);
    const limit = pageLimit(page);
    const states = filter.states && filter.states.length > 0 && filter.states.length < JOB_STATES.length ? filter.states : null;
    const queues = filter.queue ? [filter.queue] : await this.allQueueNames();
    // A shard's jobs are its state indexes together (there is no index of all ids: one sorted-set
    // insert less per job), read in one MULTI so a job that changes state is seen exactly once.
    const sources: IdSource[] = [];
    for (const queue of queues) {
      const shards = await this.shardsOf(queue, false);
      for (let s = 0; s < shards; s++) {
        const p = this.keys.shard(queue, s);
        sources.push({ loc: { queue, shard: s }, keys: (states ?? JOB_STATES).map((st) => `${p}s:${st}`) });
      }
    }
    // (a whole ms within the ULID range: encodeTime threw a raw ULIDError for 1e15 or a fraction)
    const lower = filter.since !== undefined ? `${JOB_ID_PREFIX}${encodeTime(Math.min(Math.max(Math.floor(filter.since), 0), 2 ** 48 - 1), 10)}` : null;
    const keep = (j: Job) =>
      (!filter.tenant || j.tenant_id === filter.tenant) &&
      (!filter.class || j.class === filter.class) &&
      (!filter.workflow || j.workflow === filter.workflow) &&
      (filter.since === undefined || Date.parse(j.created_at) >= filter.since) &&
      (filter.until === undefined || Date.parse(j.created_at) < filter.until) &&
      (!states || states.includes(j.state));
    const unreadable: NonNullable<JobPage['unreadable']> = [];
    const out: JobPage = await this.scanPages(sources, page.cursor ?? null, lower, limit, (loc, ids) => this.readDecoded(loc, ids, (s, id) => {
      let j: Job;
      try {
        // (its own record only: one naming another job was listed as that job, and made the cursor)
        j = ownJobFrom(id, loc.queue, s);
      } catch (e) {
        // (a filter cannot be judged on it: reported whatever the filter, as the DLQ lists such entries)
        unreadable.push({ job_id: id, why: new MalformedJobError(id, (e as Error).message).message });
        return null;
      }
      return keep(j) ? j : null;
    }), (j) => j.job_id);
    if (unreadable.length > 0) out.unreadable = unreadable;
    return out;
  }

  /**
   * Walks several lex-sorted id sets in merged id order, a bounded batch at a
   * time, fetching and filtering each batch, until `limit` items are found or
   * SCAN_FACTOR × limit ids were looked at (then a short page with a cursor).
   */
  private async scanPages<T>(
    sources: IdSource[],
    cursor: string | null,
    lower: string | null,
    limit: number,
    fetch: (loc: Loc, ids: string[]) => Promise<T[]>,
    idOf: (t: T) => string,
  ): Promise<Page<T>> {
    const items: T[] = [];
    let after = cursor;
    if (lower !== null && (after === null || after < lower)) after = null;
    let scanned = 0;
    const budget = limit * SCAN_FACTOR;
    for (;;) {
      const want = limit - items.length;
      const min = after !== null ? `(${after}` : lower !== null ? `[${lower}` : '-';
      // One more than wanted from each source: if the merge has more than `want`, there is another page.
      const batches = await Promise.all(sources.map((s) => this.idsFrom(s.keys, min, want + 1)));
      const merged: Array<{ id: string; src: number }> = [];
      batches.forEach((b, i) => {
        for (const id of b) merged.push({ id, src: i });
      });
      merged.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const taken = merged.slice(0, want);
      const more = merged.length > want;
      if (taken.length === 0) return { items, next_cursor: null };
      // Fetch per source, then restore id order.
      const bySrc = new Map<number, string[]>();
      for (const t of taken) {
        const ids = bySrc.get(t.src);
        if (ids) ids.push(t.id);
        else bySrc.set(t.src, [t.id]);
      }
      const fetched = (await Promise.all([...bySrc].map(([src, ids]) => fetch(sources[src]!.loc, ids)))).flat();
      fetched.sort((a, b) => (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0));
      items.push(...fetched);
      after = taken[taken.length - 1]!.id;
      scanned += taken.length;
      if (!more) return { items, next_cursor: null };
      if (items.length >= limit || scanned >= budget) return { items, next_cursor: after };
    }
  }

  /** Up to `count` ids from each of one shard's sorted sets from `min` on; several sets in one read-only script (lua/read.ts `ids`: one snapshot of them all). */
  private async idsFrom(keys: string[], min: string, count: number): Promise<string[]> {
    if (keys.length === 1) return this.client.zrangebylex(keys[0]!, min, '+', 'LIMIT', 0, count);
    return (await callScript(this.client, 'aqIds', keys, [min, count])) as string[];
  }

  async cancel(jobId: string, reason: string | null = null): Promise<CancelResult> {
    checkJobIdArg(jobId);
    checkCancelReason(reason);
    const loc = await this.locate(jobId);
    if (!loc) throw new NotFoundError(`job ${jobId} not found`, 'JOB_NOT_FOUND');
    const p = this.sp(loc);
    const r = await this.call<[string, Snapshot?]>('aqCancel', p, [p + 'j:' + jobId], loc.queue, [jobId, reason ?? '']);
    if (r[0] === 'missing') throw new NotFoundError(`job ${jobId} not found`, 'JOB_NOT_FOUND');
    const job = readableJob(jobId, loc.queue, r[1]!);
    return { status: r[0] as CancelResult['status'], job } as CancelResult;
  }

  queues(page: PageRequest): Promise<Page<string>> {
    return this.queuePage(page);
  }

  /** `queues`, unguarded: for the guarded reads that walk every queue (their errors are mapped once, by them). */
  private async queuePage(page: PageRequest): Promise<Page<string>> {
    const limit = checkQueuePage(page);
    // (every member's score is 0, so the set is in name order: a lex range from the cursor on)
    const names = await this.client.zrangebylex(this.keys.queues(), page.cursor ? `(${page.cursor}` : '-', '+', 'LIMIT', 0, limit + 1);
    const items = names.slice(0, limit);
    return { items, next_cursor: names.length > limit ? items[items.length - 1]! : null };
  }

  /** Every queue, for the reads that merge all queues' shards: walked a bounded page at a time, never one read of the whole set. */
  private allQueueNames(): Promise<string[]> {
    return allQueues({ queues: (page) => this.queuePage(page) });
  }

  /** A generator, so not in GUARDED: its reads' failures are mapped here (a script refused by an ACL, a Redis gone mid-read). */
  async *events(query: EventQuery): AsyncIterable<JobEvent> {
    // As a guarded call does: a client that gave up its first connection tries again (a Cluster
    // client's read then waited for ever on an attempt that never came).
    this.conn.wake();
    try {
      yield* this.eventsUnguarded(query);
    } catch (e) {
      await this.conn.settled(e);
      throw this.conn.errorOf(e);
    }
  }

  private async *eventsUnguarded(query: EventQuery): AsyncIterable<JobEvent> {
    checkEventQuery(query);
    if (query.afterSeq !== undefined && query.afterSeq !== null && !/^\d{1,20}-\d{1,20}$/.test(query.afterSeq)) {
      throw new ValidationError(`event cursor ${JSON.stringify(query.afterSeq)} is not a sequence number of this backend (Redis stream ids look like 1767225600000-0)`);
    }
    await this.conn.dbGate()?.catch((e: unknown) => Promise.reject(this.conn.errorOf(e)));
    const keep = (e: JobEvent) => query.since === undefined || Date.parse(e.at) >= query.since;
    let last = query.afterSeq ?? null;
    if (query.jobId) {
      const loc = await this.locate(query.jobId);
      if (!loc) return;
      const p = this.sp(loc);
      const history = await this.jobHistory(p, query.jobId, query.onDamaged);
      // (a job's history is bounded: `last` keeps the end of it)
      const kept: JobEvent[] = [];
      for (const ev of history) {
        if (last !== null && compareSeq(ev.seq, last) <= 0) continue;
        last = ev.seq;
        if (keep(ev)) kept.push(ev);
      }
      const shown = query.last === undefined ? kept : kept.slice(kept.length - Math.min(query.last, kept.length));
      // A job keeps its last HISTORY_KEEP events: a history that full and not starting with the
      // job's first event (always `submitted`) lost its earliest ones, said when they would be shown.
      const earliest = history[0];
      if (history.length >= HISTORY_KEEP && query.afterSeq == null && earliest !== undefined && earliest.type !== 'submitted' && shown[0]?.seq === earliest.seq) query.onGap?.({ where: `job ${query.jobId}`, queue: loc.queue, shard: loc.shard, jobId: query.jobId, afterSeq: null, resumedSeq: earliest.seq, lost: null });
      yield* shown;
      if (!query.follow) return;
      // The shard's stream trimmed past this reading (it fell behind): the job's own history,
      // trimmed only to its last HISTORY_KEEP, holds the job's events it lost, its end too.
      let trimmed = false;
      for await (const ev of this.follow([{ key: `${p}ev`, from: { id: last, n: null } }], query.signal, () => (trimmed = true))) {
        if (trimmed) {
          trimmed = false;
          const again = await this.jobHistory(p, query.jobId, query.onDamaged);
          if (last !== null && again.length >= HISTORY_KEEP && compareSeq(again[0]!.seq, last) > 0) {
            query.onGap?.({ where: `job ${query.jobId}`, queue: loc.queue, shard: loc.shard, jobId: query.jobId, afterSeq: last, resumedSeq: again[0]!.seq, lost: null });
          }
          for (const e of again) {
            if (last !== null && compareSeq(e.seq, last) <= 0) continue;
            last = e.seq;
            if (keep(e)) yield e;
          }
        }
        if (ev.job_id !== query.jobId || (last !== null && compareSeq(ev.seq, last) <= 0)) continue;
        last = ev.seq;
        if (keep(ev)) yield ev;
      }
      return;
    }
    const streams = await this.eventStreams(query.queue);
    // Catch up: a k-way merge of the streams by seq, a page of each at a time.
    const position = query.position?.streams;
    // Going on from a reading before (see EventQuery.position): each stream from where it was;
    // streams it did not know (queues created since) from `afterSeq`, as before.
    const resumed = position !== undefined && position.size > 0;
    const starts = resumed
      ? streams.map((key) => (position.has(key) ? position.get(key)! : last))
      : query.last === undefined
        ? streams.map(() => last)
        : await this.cursorsBeforeLast(streams, query.last, last, query.since);
    if (position) streams.forEach((key, i) => position.set(key, starts[i]!));
    // A stream read from its start for the events from a time on starts at about that time instead
    // (since-seek.ts): a walk of the capped stream costs seconds at 100,000 events.
    const since = query.since;
    const cursors: StreamPosition[] = await Promise.all(
      starts.map(async (id, i) => (id === null && since !== undefined ? { id, n: null, floor: (await seekSince(this.client, streams[i]!, since)) ?? undefined } : { id, n: null })),
    );
    const buffers: Array<Array<[string, string[]]>> = streams.map(() => []);
    const gaps: Array<StreamGap | null> = streams.map(() => null);
    const done = streams.map(() => false);
    const refill = async (i: number) => {
      if (done[i] || buffers[i]!.length > 0) return;
      const read = await readAfter(this.client, streams[i]!, cursors[i]!, 500);
      if (read.entries.length < 500) done[i] = true;
      buffers[i] = read.entries;
      gaps[i] = read.gap;
      cursors[i] = read.position;
    };
    for (;;) {
      if (query.signal?.aborted) return;
      await Promise.all(streams.map((_s, i) => refill(i)));
      let best = -1;
      for (let i = 0; i < streams.length; i++) {
        const head = buffers[i]![0];
        if (head && (best < 0 || compareSeq(head[0], buffers[best]![0]![0]) < 0)) best = i;
      }
      if (best < 0) break;
      const [seq, fields] = buffers[best]!.shift()!;
      const gap = gaps[best];
      if (gap) {
        gaps[best] = null;
        this.reportGap(gap, query.onGap);
      }
      const ev = this.streamEvent(streams[best]!, seq, fields, query.onDamaged);
      position?.set(streams[best]!, seq);
      if (last === null || compareSeq(seq, last) > 0) last = seq;
      if (ev !== null && keep(ev)) yield ev;
    }
    if (!query.follow) return;
    // Streams that appear meanwhile are picked up: queues created since (following every queue), or
    // the other shards of a queue that did not exist yet, created with more shards than this
    // connection's URL says (a known queue's shard count is cached: no call).
    const discover = () => this.eventStreams(query.queue);
    const from = streams.map((key, i) => ({ key, from: cursors[i]! }));
    for await (const ev of this.follow(from, query.signal, query.onGap, discover, position, query.onDamaged)) if (keep(ev)) yield ev;
  }

  /** A job's last HISTORY_KEEP events, oldest first (lua/read.ts `history`). */
  private async jobHistory(shardPrefix: string, jobId: string, onDamaged: EventQuery['onDamaged']): Promise<JobEvent[]> {
    const raw = (await callScript(this.client, 'aqHistory', [`${shardPrefix}h:${jobId}`, `${shardPrefix}j:${jobId}`], [])) as string[];
    const events: JobEvent[] = [];
    for (const line of raw) {
      const i = line.indexOf('|');
      const ev = decodeEvent(line.slice(0, i), line.slice(i + 1));
      if ('problem' in ev) onDamaged?.({ where: `job ${jobId}`, seq: line.slice(0, i), problem: ev.problem });
      else events.push(ev);
    }
    return events;
  }

  /** The event of a stream entry; a damaged one (see decodeEvent) is told of and is null. */
  private streamEvent(stream: string, seq: string, fields: string[], onDamaged: EventQuery['onDamaged']): JobEvent | null {
    const ev = decodeEvent(seq, fields[1]);
    if (!('problem' in ev)) return ev;
    onDamaged?.({ where: this.streamNames.get(stream) ?? stream, seq, problem: ev.problem });
    return null;
  }

  private reportGap(gap: StreamGap, onGap: EventQuery['onGap']): void {
    const owner = this.keys.shardOfKey(gap.stream) ?? { queue: gap.stream, shard: 0 };
    onGap?.({ where: this.streamNames.get(gap.stream) ?? gap.stream, ...owner, jobId: null, afterSeq: gap.afterSeq, resumedSeq: gap.resumedSeq, lost: gap.lost });
  }

  /**
   * Where the catch-up starts on each stream so that it reads only the newest `n` events of them
   * all (of those after `after` and at or after `since`): each stream's newest n + 1 are read
   * backwards (XREVRANGE, bounded), the newest n of the lot are kept, and each stream starts after
   * its newest entry not kept (null: at its start, every entry of it kept).
   */
  private async cursorsBeforeLast(streams: string[], n: number, after: string | null, since: number | undefined): Promise<Array<string | null>> {
    const tails = await Promise.all(
      streams.map(async (key) => {
        const page = (await this.client.xrevrange(key, '+', after !== null ? `(${after}` : '-', 'COUNT', n + 1)) as Array<[string, string[]]>;
        // (older than `since`: never shown, so never one of the n; the stream starts after the newest of them)
        // (a damaged entry, skipped when read, is not older)
        const older = ([seq, f]: [string, string[]]) => {
          const ev = decodeEvent(seq, f[1]);
          return !('problem' in ev) && Date.parse(ev.at) < since!;
        };
        const shown = since === undefined ? page.length : page.findIndex(older);
        return { page, shown: shown < 0 ? page.length : shown };
      }),
    );
    // the seq of the n-th newest shown entry of all streams: the oldest kept
    const all = tails.flatMap((t) => t.page.slice(0, t.shown).map(([seq]) => seq)).sort((a, b) => compareSeq(b, a));
    const oldestKept = n > 0 && all.length > 0 ? all[Math.min(n, all.length) - 1]! : null;
    return tails.map(({ page }) => {
      const firstNotKept = page.find(([seq]) => oldestKept === null || compareSeq(seq, oldestKept) < 0);
      return firstNotKept ? firstNotKept[0] : after;
    });
  }

  /** The event streams of one queue's shards, or of every queue's. */
  private async eventStreams(queue?: string): Promise<string[]> {
    const queues = queue ? [queue] : await this.allQueueNames();
    const streams: string[] = [];
    for (const q of queues) {
      const n = await this.shardsOf(q, false);
      for (let s = 0; s < n; s++) {
        const key = `${this.keys.shard(q, s)}ev`;
        streams.push(key);
        if (this.streamNames.size < 10_000) this.streamNames.set(key, n > 1 ? `queue ${q} shard ${s}` : `queue ${q}`);
      }
    }
    return streams;
  }

  /**
   * Each stream followed on a dedicated connection (a waiting connection serves nothing else, and
   * in a Cluster the streams of different shards may live on different nodes): XREAD BLOCK only
   * waits for new entries, which are then read with the trim check of stream-read.ts. At most
   * `followBuffer` events are read ahead of the reader.
   */
  private async *follow(
    streams: Array<{ key: string; from: StreamPosition }>,
    signal: AbortSignal | undefined,
    onGap: EventQuery['onGap'],
    discover?: () => Promise<string[]>,
    position?: Map<string, string | null>,
    onDamaged?: EventQuery['onDamaged'],
  ): AsyncIterable<JobEvent> {
    // (a gap goes before the first event after it: sorted with it, ahead of it)
    // (an entry is decoded when its turn comes: a damaged one is told of there, in its place)
    const pending: Array<{ stream: string; seq: string; fields: string[] | null; gap: StreamGap | null }> = [];
    let wake: (() => void) | null = null;
    let roomWaiters: Array<() => void> = [];
    const room = () => {
      const w = roomWaiters;
      roomWaiters = [];
      for (const r of w) r();
    };
    let failure: unknown = null;
    let stopped = false;
    const conns: Client[] = [];
    const stop = () => {
      stopped = true;
      for (const c of conns) c.disconnect();
      wake?.();
      room();
    };
    if (signal?.aborted) return;
    signal?.addEventListener('abort', stop, { once: true });
    this.followStops.add(stop);
    const following = new Set<string>();
    const loops: Array<Promise<void>> = [];
    // Each stream from its own position: what the catch-up read last, or its start.
    const tail = (stream: string, start: StreamPosition) => {
      following.add(stream);
      loops.push(
        (async () => {
          const conn = this.client.duplicate();
          conn.on('error', () => {});
          conns.push(conn);
          this.followers.add(conn);
          let pos = start;
          try {
            while (!stopped) {
              if (pending.length >= this.followBuffer) {
                await new Promise<void>((r) => roomWaiters.push(r));
                continue;
              }
              const count = Math.min(500, this.followBuffer);
              const read = await readAfter(conn, stream, pos, count);
              if (stopped) break;
              pos = read.position;
              if (read.gap) pending.push({ stream, seq: read.gap.resumedSeq, fields: null, gap: read.gap });
              for (const [seq, fields] of read.entries) pending.push({ stream, seq, fields, gap: null });
              if (read.entries.length > 0) wake?.();
              // a full page: more may be there already
              if (read.entries.length === count) continue;
              // nothing new: wait for an entry after the position (what it returns is read above)
              // (a master that turns replica, a Cluster failover, ends the wait with UNBLOCKED:
              // nothing was read, and the next read finds the new master)
              await conn.xread('COUNT', 1, 'BLOCK', 1000, 'STREAMS', stream, waitAfter(pos)).catch((e: unknown) => {
                if (!(e instanceof Error && /^UNBLOCKED\b/.test(e.message))) throw e;
              });
            }
          } catch (e) {
            if (!stopped) failure = e;
            wake?.();
          } finally {
            this.followers.delete(conn);
            conn.disconnect();
          }
        })(),
      );
    };
    for (const s of streams) tail(s.key, s.from);
    // New streams (see `discover`) are followed from their start.
    const discovery = discover
      ? setInterval(() => {
          void discover().then(
            (keys) => {
              for (const k of keys) {
                if (stopped || following.has(k)) continue;
                if (position && !position.has(k)) position.set(k, null);
                tail(k, { id: position?.get(k) ?? null, n: null });
              }
            },
            () => {},
          );
        }, 1000)
      : null;
    try {
      while (!stopped) {
        if (pending.length === 0) {
          if (failure) {
            await this.conn.settled(failure);
            throw this.conn.errorOf(failure);
          }
          await new Promise<void>((r) => (wake = r));
          wake = null;
          continue;
        }
        pending.sort((a, b) => compareSeq(a.seq, b.seq) || (a.gap ? -1 : 0) - (b.gap ? -1 : 0));
        while (pending.length > 0 && !stopped) {
          const next = pending.shift()!;
          if (pending.length < this.followBuffer) room();
          if (next.gap) this.reportGap(next.gap, onGap);
          else {
            position?.set(next.stream, next.seq);
            const ev = this.streamEvent(next.stream, next.seq, next.fields!, onDamaged);
            if (ev !== null) yield ev;
          }
        }
      }
    } finally {
      if (discovery) clearInterval(discovery);
      stop();
      this.followStops.delete(stop);
      signal?.removeEventListener('abort', stop);
      await Promise.allSettled(loops);
    }
  }

  // ------------------------------------------------------------ workers

  private classWeights(): string {
    return JOB_CLASSES.map((c) => `${c}=${classWeight(c, this.fairness)}`).join(',');
  }

  private policyArg(): string {
    const p = this.policy;
    return [p.backoff.map((w) => `${w.minMs}:${w.maxMs}`).join(','), p.growth, p.maxDelayMs, p.retryBudgetRatio, p.retryBudgetMinRetries, p.overBudgetDelayMs].join('|');
  }

  /**
   * Per queue, the shard the next claim starts at: the one after the shard
   * that last served. Empty shards are skipped without taking a turn, so
   * tenants on different shards alternate like tenants within one shard.
   */
  private readonly claimTurn = new Map<string, number>();

  /** claim's arguments after the shard's (ARGV[5..16] of the claim script). */
  private claimArgs(req: ClaimRequest, want: number): Array<string | number> {
    return [
      Math.min(want, MAX_PAGE_LIMIT),
      Math.round(req.leaseMs),
      req.workerId,
      req.workerVersion ?? '',
      req.classes && req.classes.length > 0 ? req.classes.join(',') : ALL_CLASSES,
      ...this.claimConfig(),
      REAP_LIMIT,
      this.policyText,
      this.random(),
    ];
  }

  /** The claim arguments fixed for this backend's life (weights, caps, retry policy): built once, not per call. */
  private claimConfigArgs: [string, string, number, string] | null = null;
  private claimConfig(): [string, string, number, string] {
    return (this.claimConfigArgs ??= [
      this.classWeights(),
      pairs(this.fairness.tenantWeights),
      this.fairness.tenantConcurrency ?? -1,
      pairs(this.fairness.tenantConcurrencyOverrides),
    ]);
  }

  private get policyText(): string {
    return (this.policyArgText ??= this.policyArg());
  }
  private policyArgText: string | null = null;

  /**
   * The leases of a claim's jobs, under the ids they are stored under. A record the claim script
   * took but that does not read as that job (ownJobFrom: another job's envelope, one that does not
   * parse) is set aside into the DLQ rather than handed out (or thrown, which left the call's other
   * leases with no one until they expired); it and those the script set aside itself are told to
   * `report` (the worker logs them).
   */
  private async leasesFrom(loc: Loc, got: ClaimedJob[], aside: SetAside[], report: ((e: Error) => void) | undefined): Promise<Lease[]> {
    const leases: Lease[] = [];
    for (const [jobId, why] of aside) report?.(new MalformedJobError(jobId, why));
    for (const [fence, exp, [fields, effects, attempts], jobId] of got) {
      let job: Job;
      try {
        job = ownJobFrom(jobId, loc.queue, [jobFieldsFrom(fields)!, effects, attempts]);
      } catch (e) {
        const why = (e as Error).message;
        const p = this.sp(loc);
        const res = await this.call<[string]>('aqSetAside', p, [`${p}j:${jobId}`], loc.queue, [jobId, fence, why]);
        report?.(new MalformedJobError(jobId, res[0] === 'ok' ? `${why}; moved to the DLQ, not handed out` : `${why}; not handed out`));
        continue;
      }
      this.rememberLoc(jobId, loc);
      leases.push({ jobId, fence: Number(fence), job, envelope: toEnvelope(job), expiresAt: Number(exp) });
    }
    return leases;
  }

  /**
   * complete + claim in one script call on a queue of one shard (the common
   * case): one round trip per job for a busy worker. Calls made in the same
   * turn of the event loop with the same claim terms (a worker's slots that
   * finish together) share one script call, COMPLETE_BATCH at most: each
   * completion is still checked against its own fence, and the jobs claimed
   * are handed out in call order. On a sharded queue the next jobs may be on
   * any shard, so it is complete, then claim's rotation.
   */
  async completeAndClaim(lease: LeaseRef, result: string | null, next: ClaimRequest): Promise<{ next: Lease[] }> {
    checkLeaseRef(lease);
    checkClaim(next);
    const loc = this.locCache.get(lease.jobId) ?? (await this.locate(lease.jobId));
    if (!loc) throw new LeaseLostError(lease.jobId, 'the job does not exist');
    const shards = this.shardCounts.get(next.queue) ?? (await this.shardsOf(next.queue, false));
    if (loc.queue !== next.queue || shards !== 1) {
      await this.complete(lease, result);
      return { next: await this.claim(next) };
    }
    // batched per shard and claim terms: the calls of a batch differ only in how many jobs each wants
    const key = JSON.stringify([this.sp(loc), next.workerId, next.workerVersion ?? '', Math.round(next.leaseMs), next.classes ?? null]);
    const [got, aside] = await new Promise<[ClaimedJob[], SetAside[]]>((resolve, reject) =>
      this.completions.add(key, { loc, next }, { lease, result: JSON.stringify(result), max: next.max, resolve, reject }),
    );
    if (got.length > 0) this.claimTurn.set(next.queue, 0);
    return { next: await this.leasesFrom(loc, got, aside, next.onPartialFailure) };
  }

  /** The script calls of submit and completion batches whose answers have not come yet (close waits for them). */
  private readonly batchesInFlight = new Set<Promise<unknown>>();
  private track<T>(call: Promise<T>): Promise<T> {
    this.batchesInFlight.add(call);
    const done = () => this.batchesInFlight.delete(call);
    call.then(done, done);
    return call;
  }

  /** completeAndClaim calls of this turn, per shard and claim terms. */
  private readonly completions = new TurnBatches<{ loc: Loc; next: ClaimRequest }, PendingCompletion>(COMPLETE_BATCH, ({ loc, next }, items) =>
    this.sendCompletions(loc, next, items),
  );

  private sendCompletions(loc: Loc, next: ClaimRequest, items: PendingCompletion[]): void {
    const p = this.sp(loc);
    const wanted = items.reduce((n, c) => n + c.max, 0);
    const args: Array<string | number> = [...this.claimArgs(next, wanted), items.length];
    for (const c of items) args.push(c.lease.jobId, c.lease.fence, c.result, c.max);
    const keys = [p + 'leases', ...items.map((c) => `${p}j:${c.lease.jobId}`)];
    this.track(this.call<[string[], ClaimedJob[], SetAside[]]>('aqCompleteClaim', p, keys, loc.queue, args)).then(
      ([outcomes, claimed, aside]) => {
        let taken = 0;
        items.forEach((c, k) => {
          const outcome = outcomes[k]!;
          if (outcome === 'done') {
            // completed already by this fence (a re-sent call): done, and nothing was claimed for it
            c.resolve([[], []]);
            return;
          }
          if (outcome.startsWith('damaged:')) {
            c.reject(new MalformedJobError(c.lease.jobId, `${outcome.slice('damaged:'.length)}; not completed, left running until its lease expires`));
            return;
          }
          if (outcome !== 'ok') {
            const found = outcome.slice('lost:'.length);
            c.reject(new LeaseLostError(c.lease.jobId, found ? `the job is ${found} under another fence` : undefined));
            return;
          }
          // (the records set aside are told once, to the first completion that asked for jobs)
          c.resolve([claimed.slice(taken, taken + c.max), taken === 0 ? aside : []]);
          taken += c.max;
        });
      },
      (e: unknown) => items.forEach((c) => c.reject(e)),
    );
  }

  async claim(req: ClaimRequest): Promise<Lease[]> {
    checkClaim(req);
    const shards = this.shardCounts.get(req.queue) ?? (await this.shardsOf(req.queue, false));
    const leases: Lease[] = [];
    const first = (this.claimTurn.get(req.queue) ?? 0) % shards;
    const now = this.now();
    // Shards that failed lately are left out while others may answer (all of them resting: all are tried).
    const skip = (s: number) => shards > 1 && this.shardRests(req.queue, s, now) && !this.allRest(req.queue, shards, now);
    /** A shard's claim that failed in this call; `resting`, the last error of one left out. */
    let failure: Error | null = null;
    let resting: Error | null = null;
    // Two passes over the shards, starting at a rotating one: first each shard's
    // share of what is left, then whatever the others could not fill, asked
    // only of shards that filled their share (the others have nothing more).
    const mayHaveMore = new Set<number>();
    for (let k = 0; k < shards * 2 && leases.length < req.max; k++) {
      const loc = { queue: req.queue, shard: (first + k) % shards };
      const left = req.max - leases.length;
      if (k >= shards && !mayHaveMore.has(loc.shard)) continue;
      if (k < shards && skip(loc.shard)) {
        resting ??= this.shardDown.get(`${req.queue}\t${loc.shard}`)!.error;
        continue;
      }
      const want = k < shards ? Math.ceil(left / (shards - k)) : left;
      const p = this.sp(loc);
      let got: ClaimedJob[];
      let aside: SetAside[];
      try {
        [got, aside] = await this.call<[ClaimedJob[], SetAside[]]>('aqClaim', p, [p + 'leases'], req.queue, this.claimArgs(req, want));
      } catch (e) {
        // One shard's node down (or its keys refused) must not stop the others, nor drop the
        // leases they already gave this call: the shard rests and the turn moves past it.
        failure ??= e as Error;
        this.shardFailed(req.queue, loc.shard, now, e as Error);
        if ((this.claimTurn.get(req.queue) ?? 0) % shards === loc.shard) this.claimTurn.set(req.queue, (loc.shard + 1) % shards);
        continue;
      }
      this.shardDown.delete(`${req.queue}\t${loc.shard}`);
      if (got.length > 0) this.claimTurn.set(req.queue, (loc.shard + 1) % shards);
      if (k < shards && shards > 1 && got.length === Math.min(want, MAX_PAGE_LIMIT)) mayHaveMore.add(loc.shard);
      leases.push(...(await this.leasesFrom(loc, got, aside, req.onPartialFailure)));
    }
    // Nothing leased while a shard could not be asked: the error (a worker backs off, and --drain
    // does not take the queue for empty). With leases, they are returned and a new failure is told
    // apart (once per failed call, not for every claim that leaves the shard out).
    if (leases.length === 0 && (failure ?? resting)) throw failure ?? resting;
    if (failure) req.onPartialFailure?.(failure);
    return leases;
  }

  /** Per `queue\tshard`, a shard whose claim failed: claims leave it out until `until` (backing off while it keeps failing). */
  private readonly shardDown = new Map<string, { until: number; restMs: number; error: Error }>();

  private shardRests(queue: string, shard: number, now: number): boolean {
    const d = this.shardDown.get(`${queue}\t${shard}`);
    return d !== undefined && now < d.until;
  }

  private allRest(queue: string, shards: number, now: number): boolean {
    for (let s = 0; s < shards; s++) if (!this.shardRests(queue, s, now)) return false;
    return true;
  }

  private shardFailed(queue: string, shard: number, now: number, error: Error): void {
    const key = `${queue}\t${shard}`;
    const restMs = Math.min((this.shardDown.get(key)?.restMs ?? SHARD_REST_MS / 2) * 2, SHARD_REST_MAX_MS);
    this.shardDown.set(key, { until: now + restMs, restMs, error });
  }

  async heartbeat(leases: LeaseRef[], leaseMs: number): Promise<HeartbeatResult[]> {
    checkLeaseRefs(leases);
    checkLeaseMs(leaseMs);
    const byShard = new Map<string, { loc: Loc; refs: Array<{ ref: LeaseRef; index: number }> }>();
    const out: HeartbeatResult[] = leases.map((l) => ({ jobId: l.jobId, status: 'lost' as const }));
    await Promise.all(
      leases.map(async (ref, index) => {
        const loc = this.locCache.get(ref.jobId) ?? (await this.locate(ref.jobId));
        if (!loc) return;
        const k = `${loc.queue}\t${loc.shard}`;
        const g = byShard.get(k) ?? { loc, refs: [] };
        g.refs.push({ ref, index });
        byShard.set(k, g);
      }),
    );
    await Promise.all(
      [...byShard.values()].map(async ({ loc, refs }) => {
        const p = this.sp(loc);
        const args: Array<string | number> = [Math.round(leaseMs)];
        for (const { ref } of refs) args.push(ref.jobId, ref.fence);
        const res = await this.call<Array<[string, number?, number?, number?]>>('aqHeartbeat', p, [p + 'leases'], loc.queue, args);
        res.forEach((r, i) => {
          const { ref, index } = refs[i]!;
          out[index] =
            r[0] === 'ok'
              ? { jobId: ref.jobId, status: 'ok', expiresAt: Number(r[1]), cancelRequested: r[2] === 1, deadlineReached: r[3] === 1 }
              : { jobId: ref.jobId, status: 'lost' };
        });
      }),
    );
    return out;
  }

  private async leaseCall<T extends unknown[]>(lease: LeaseRef, name: ScriptName, extraKeys: string[], args: Array<string | number>): Promise<{ loc: Loc; res: T }> {
    const loc = this.locCache.get(lease.jobId) ?? (await this.locate(lease.jobId));
    if (!loc) throw new LeaseLostError(lease.jobId, 'the job does not exist');
    const p = this.sp(loc);
    const res = await this.call<T>(name, p, [p + 'j:' + lease.jobId, ...extraKeys.map((k) => p + k)], loc.queue, [lease.jobId, lease.fence, ...args]);
    if (res[0] === 'lost') throw new LeaseLostError(lease.jobId, res[1] ? `the job is ${String(res[1])} under another fence` : undefined);
    return { loc, res };
  }

  async checkpoint(lease: LeaseRef, data: unknown): Promise<void> {
    checkLeaseRef(lease);
    await this.leaseCall(lease, 'aqCheckpoint', [], [storedJson(data, 'the checkpoint', STORED_JSON_MAX_BYTES)]);
  }

  async addUsage(lease: LeaseRef, usage: UsageReport): Promise<void> {
    checkLeaseRef(lease);
    const { tokens, cost_usd } = checkUsage(usage);
    // (a job stored before `ar` existed keeps its open record in the attempts list)
    await this.leaseCall(lease, 'aqUsage', ['use', `a:${lease.jobId}`], [String(tokens), String(cost_usd)]);
  }

  async beginEffect(lease: LeaseRef, key: string): Promise<Effect> {
    checkLeaseRef(lease);
    checkNewEffectKey(key);
    const { res } = await this.leaseCall<[string, string?]>(lease, 'aqEffectBegin', [`e:${lease.jobId}`], [key, MAX_EFFECTS_PER_JOB]);
    if (res[0] === 'too_many') throw new ValidationError(`a job may record at most ${MAX_EFFECTS_PER_JOB} effects`);
    if (res[0] === 'stopping') throw new JobStoppingError(lease.jobId, res[1] === 'cancel' ? 'cancel' : 'deadline');
    return effectFrom(res[1]!);
  }

  async finishEffect(lease: LeaseRef, key: string, result: unknown): Promise<Effect> {
    checkLeaseRef(lease);
    checkEffectKey(key);
    const text = storedJson(result, `the result of effect ${JSON.stringify(key)}`, STORED_JSON_MAX_BYTES);
    const { res } = await this.leaseCall<[string, string?]>(lease, 'aqEffectFinish', [`e:${lease.jobId}`], [key, text]);
    return effectFrom(res[1]!);
  }

  async complete(lease: LeaseRef, result: string | null): Promise<Job> {
    checkLeaseRef(lease);
    checkJobResult(result);
    const { res } = await this.leaseCall<[string, Snapshot | string]>(lease, 'aqComplete', [], [JSON.stringify(result)]);
    if (res[0] === 'damaged') throw new MalformedJobError(lease.jobId, `${String(res[1])}; not completed, left running until its lease expires`);
    return jobFrom(res[1] as Snapshot);
  }

  async fail(lease: LeaseRef, failure: Failure): Promise<FailureOutcome> {
    checkFailure(failure);
    checkLeaseRef(lease);
    const found = await this.readJob(lease.jobId);
    if (!found || found.job.state !== 'running' || found.job.lease?.fence !== lease.fence) {
      // Maybe a re-sent call whose first try applied: the script answers that.
      if (!found) throw new LeaseLostError(lease.jobId, 'the job does not exist');
    }
    const job = found.job;
    const now = this.now();
    const p = this.sp(found.loc);
    const [attempts, retries] = await this.call<[number, number]>('aqTraffic', p, [p + 'n'], found.loc.queue, []);
    const decision = decideFailure(
      { retryable: failure.retryable, attempt: job.attempt, maxAttempts: job.max_attempts, deadlineAt: job.deadline_at ? Date.parse(job.deadline_at) : null },
      now,
      this.random,
      { attempts: Number(attempts), retries: Number(retries) },
      this.policy,
    );
    const { res } = await this.leaseCall<[string, Snapshot]>(lease, 'aqFail', [], [
      decision.kind,
      decision.kind === 'retry' ? decision.runAt : '',
      decision.kind === 'dead' ? decision.reason : '',
      JSON.stringify({ code: failure.code, message: failure.message, retryable: failure.retryable }),
      failure.code,
      failure.message,
      failure.workerVersion ?? '',
      decision.kind === 'retry' && decision.overBudget ? '1' : '0',
    ]);
    const after = jobFrom(res[1]);
    // (queued: a re-sent fail finding its retry already due and promoted)
    if (after.state === 'scheduled' || after.state === 'queued') return { kind: 'retry', runAt: Date.parse(after.run_at), job: after };
    if (after.state === 'dead') return { kind: 'dead', reason: after.dead!.reason, job: after };
    if (after.state === 'cancelled') return { kind: 'cancelled', job: after };
    return { kind: 'expired', job: after };
  }

  async abort(lease: LeaseRef, outcome: AbortOutcome): Promise<Job> {
    checkLeaseRef(lease);
    if (outcome !== 'cancelled' && outcome !== 'expired') throw new ValidationError(`abort outcome must be cancelled or expired, got ${String(outcome)}`);
    const { res } = await this.leaseCall<[string, Snapshot]>(lease, 'aqAbort', [], [outcome]);
    return jobFrom(res[1]);
  }

  async release(lease: LeaseRef): Promise<void> {
    checkLeaseRef(lease);
    await this.leaseCall(lease, 'aqRelease', [], []);
  }

  // ------------------------------------------------------------ DLQ

  async dlqList(filter: DlqFilter, page: PageRequest): Promise<Page<DlqEntry>> {
    checkDlqFilter(filter);
    checkPageArg(page);
    const limit = pageLimit(page);
    const queues = filter.queue ? [filter.queue] : await this.allQueueNames();
    const sources: IdSource[] = [];
    for (const queue of queues) {
      const shards = await this.shardsOf(queue, false);
      for (let s = 0; s < shards; s++) {
        if (await this.noDeadAtIn(this.keys.shard(queue, s), filter)) continue;
        sources.push({ loc: { queue, shard: s }, keys: [`${this.keys.shard(queue, s)}s:dead`] });
      }
    }
    const now = filter.now ?? this.now();
    const keep = dlqPredicate(filter, now);
    return this.scanPages(sources, page.cursor ?? null, null, limit, async (loc, ids) => {
      const found = new Set<string>();
      const read = await this.readDecoded(loc, ids, (s, id) => {
        found.add(id);
        return dlqEntryFrom(id, loc.queue, s);
      });
      await this.deadAtFromIndex(loc, read);
      const entries = read.filter((e) => {
        if (!keep(e)) return false;
        // a listed entry is often acted on next (a plan's apply): its location is known now
        this.rememberLoc(e.job_id, loc);
        return true;
      });
      // (a member whose hash is gone: a malformed entry, unless a purge took it since the ids were read)
      for (const [id, deadAt] of await stillDead(this.client, this.sp(loc), ids.filter((id) => !found.has(id)))) {
        const e = missingRecordEntry(id, loc.queue, deadAt);
        if (keep(e)) entries.push(e);
      }
      return entries;
    }, (e) => e.job_id);
  }

  /**
   * A malformed entry whose record gives no time of death (a key of another type, damaged times)
   * died when the DLQ index says, as a missing record does (`missingRecordEntry`): not in 1970,
   * which `dlq check --max-age` read as an entry 56 years old.
   */
  private async deadAtFromIndex(loc: Loc, entries: DlqEntry[]): Promise<void> {
    const timeless = entries.filter((e) => e.malformed !== null && Date.parse(e.dead_at) <= 0);
    if (timeless.length === 0) return;
    const at = await stillDead(this.client, this.sp(loc), timeless.map((e) => e.job_id));
    for (const e of timeless) {
      const ms = at.get(e.job_id) ?? 0;
      if (ms > 0) e.dead_at = new Date(ms).toISOString();
    }
  }

  /**
   * Whether a shard's DLQ certainly has no entry in the filter's dead_at range (since/until), read
   * from its dead_at index (the `dlq` sorted set) rather than by walking the entries: the walk goes
   * in job-id order, so a range that matches nothing read the whole DLQ (`dlq check --max-age` on a
   * healthy DLQ). Only when every entry is in the index (an entry the index lacks is walked, as before).
   */
  private async noDeadAtIn(prefix: string, f: DlqFilter): Promise<boolean> {
    if (f.since === undefined && f.until === undefined) return false;
    const min = f.since === undefined ? '-inf' : String(f.since);
    const max = f.until === undefined ? '+inf' : `(${f.until}`;
    const [inRange, indexed, dead] = await Promise.all([
      this.client.zcount(`${prefix}dlq`, min, max),
      this.client.zcard(`${prefix}dlq`),
      this.client.zcard(`${prefix}s:dead`),
    ]);
    return inRange === 0 && indexed >= dead;
  }

  /** Light rows (issue 6): see dlq-rows.ts. Errors are mapped here, not through GUARDED. */
  async dlqRows(filter: DlqFilter, page: PageRequest): Promise<Page<DlqRow>> {
    checkDlqFilter(filter);
    checkPageArg(page);
    checkCursor(page.cursor);
    try {
      await this.conn.dbGate();
      const queues = filter.queue ? [filter.queue] : await this.allQueueNames();
      const sources: DeadSetSource[] = [];
      for (const queue of queues) {
        const shards = await this.shardsOf(queue, false);
        for (let s = 0; s < shards; s++) sources.push({ queue, prefix: this.keys.shard(queue, s) });
      }
      return await redisDlqRows(this.client, sources, filter, this.now(), page);
    } catch (e) {
      await this.conn.settled(e);
      throw this.conn.errorOf(e);
    }
  }

  async dlqGet(jobId: string): Promise<DlqEntry | null> {
    checkJobIdArg(jobId);
    const loc = await this.locate(jobId);
    if (!loc) return null;
    const snap = await this.readSnapshot(loc, jobId);
    // (its hash gone while its id stays in the DLQ: what dlqList lists for it)
    if (!snap) {
      const deadAt = (await stillDead(this.client, this.sp(loc), [jobId])).get(jobId);
      return deadAt === undefined ? null : missingRecordEntry(jobId, loc.queue, deadAt);
    }
    if (isNotAHash(snap[0]) && (await stillDead(this.client, this.sp(loc), [jobId])).size === 0) return null;
    if (!isNotAHash(snap[0]) && snap[0].st !== 'dead') return null;
    const entry = dlqEntryFrom(jobId, loc.queue, snap);
    await this.deadAtFromIndex(loc, [entry]);
    return entry;
  }

  async dlqRaw(jobId: string): Promise<Uint8Array | null> {
    checkJobIdArg(jobId);
    const loc = await this.locate(jobId);
    if (!loc) return null;
    // The stored record exactly as kept: the whole job hash (its envelope unparsed), effects and attempts.
    const p = this.sp(loc);
    const key = `${p}j:${jobId}`;
    // A key of another type than a hash, still in the DLQ (a malformed entry): what it holds, as
    // `inspect`'s hint for a malformed record says to save it with `dlq show --raw`.
    const type = await this.client.type(key);
    if (type !== 'hash' && type !== 'none') {
      if ((await stillDead(this.client, p, [jobId])).size === 0) return null;
      const value = type === 'string' ? { value: await this.client.get(key) } : { dump_base64: (await this.client.dumpBuffer(key))?.toString('base64') ?? null };
      return Buffer.from(JSON.stringify({ job_id: jobId, state: null, stored: { type, ...value } }), 'utf8');
    }
    const [flat, effects, attempts] = await Promise.all([
      this.client.call('HGETALL', key) as Promise<string[]>,
      this.client.call('HGETALL', `${p}e:${jobId}`) as Promise<string[]>,
      this.client.lrange(`${p}a:${jobId}`, 0, -1),
    ]);
    const hash = flatToMap(flat);
    if (hash.st !== 'dead') return null;
    return Buffer.from(JSON.stringify({ job_id: jobId, state: hash.st, stored: { hash, effects: flatToMap(effects), attempts } }), 'utf8');
  }

  // ------------------------------------------------------------ runs

  private runKey(queue: string, runId: string): string {
    return `${this.keys.shard(queue, 0)}run:${runId}`;
  }

  async createRun(run: RunRecord, items: Array<{ job_id: string; verdict: PlanVerdict; detail: string | null }>): Promise<void> {
    checkRunRecord(run, items);
    await this.shardsOf(run.queue, true);
    // The record says `creating` until the last ledger item is in: the ledger takes many script
    // calls, and a run killed half way must not look resumable (a --resume would "complete" it
    // having moved nothing of what was never written).
    const record = { ...run, counts: undefined };
    await this.client.set(this.runKey(run.queue, run.run_id), JSON.stringify({ ...record, status: 'creating' }));
    await this.client.set(this.keys.runLoc(run.run_id), run.queue);
    await this.client.zadd(this.keys.runs(), 0, run.run_id);
    await this.client.zadd(`${this.keys.shard(run.queue, 0)}runs`, 0, run.run_id);
    // Ledger items go to the shard of their job (so apply is single-slot); unknown jobs to shard 0.
    const groups = new Map<number, Array<string | number>>();
    const shardOfItem = await this.runShards(run.queue, items.map((i) => i.job_id));
    items.forEach((it, i) => {
      const shard = shardOfItem[i]!;
      const g = groups.get(shard) ?? [];
      g.push(it.job_id, it.verdict, it.verdict.startsWith('skip:') ? 'skipped' : 'planned', JSON.stringify(it.detail));
      groups.set(shard, g);
    });
    await Promise.all(
      [...groups].map(async ([shard, flat]) => {
        const p = this.keys.shard(run.queue, shard);
        for (let i = 0; i < flat.length; i += LEDGER_CHUNK * 4) {
          await this.call('aqLedgerAdd', p, [`${p}L:${run.run_id}`], run.queue, [run.run_id, ...flat.slice(i, i + LEDGER_CHUNK * 4)]);
        }
      }),
    );
    await this.client.set(this.runKey(run.queue, run.run_id), JSON.stringify(record));
  }

  /**
   * The shard of each of a run's jobs: its own when it is a job of the run's queue, else shard 0
   * (an unknown job's ledger item has to sit somewhere). A queue of one shard has only shard 0, so
   * no job's location is looked up: a GET per job was a third of a 100,000-job prune's plan and
   * ledger on Redis, for an answer known in advance (BENCHMARKS.md, "Prune").
   */
  private async runShards(queue: string, jobIds: readonly string[]): Promise<number[]> {
    if ((await this.shardsOf(queue, false)) === 1) return jobIds.map(() => 0);
    const locs = await Promise.all(jobIds.map((id) => this.locate(id)));
    return locs.map((l) => (l && l.queue === queue ? l.shard : 0));
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    checkRunIdArg(runId);
    const queue = await this.client.get(this.keys.runLoc(runId));
    if (queue === null) return null;
    const raw = await this.client.get(this.runKey(queue, runId));
    if (raw === null) return null;
    const rec = JSON.parse(raw) as RunRecord;
    const counts: Record<LedgerStatus, number> = { planned: 0, moved: 0, skipped: 0, failed: 0 };
    const shards = await this.shardsOf(queue, false);
    const parts = await Promise.all(Array.from({ length: shards }, (_v, s) => this.client.hgetall(`${this.keys.shard(queue, s)}Lc:${runId}`)));
    for (const part of parts) for (const [k, v] of Object.entries(part)) if (k in counts) counts[k as LedgerStatus] += Number(v);
    return { ...rec, counts };
  }

  async listRuns(filter: { queue?: string }, page: PageRequest): Promise<Page<RunRecord>> {
    checkRunFilter(filter);
    checkPageArg(page);
    const limit = pageLimit(page, 'run');
    const key = filter.queue ? `${this.keys.shard(filter.queue, 0)}runs` : this.keys.runs();
    // Newest first: run ids are ULIDs, so reverse lex order is reverse creation order.
    const max = page.cursor ? `(${page.cursor}` : '+';
    const ids = await this.client.zrevrangebylex(key, max, '-', 'LIMIT', 0, limit + 1);
    const more = ids.length > limit;
    const chosen = ids.slice(0, limit);
    const runs = (await Promise.all(chosen.map((id) => this.getRun(id)))).filter((r): r is RunRecord => r !== null);
    return { items: runs, next_cursor: more ? chosen[chosen.length - 1]! : null };
  }

  async updateRun(runId: string, patch: Partial<Pick<RunRecord, 'status' | 'updated_at'>>): Promise<RunRecord> {
    checkRunIdArg(runId);
    const queue = await this.client.get(this.keys.runLoc(runId));
    if (queue === null) throw new NotFoundError(`run ${runId} not found`, 'RUN_NOT_FOUND');
    const key = this.runKey(queue, runId);
    const raw = await this.client.get(key);
    if (raw === null) throw new NotFoundError(`run ${runId} not found`, 'RUN_NOT_FOUND');
    const rec = { ...(JSON.parse(raw) as RunRecord), ...patch };
    await this.client.set(key, JSON.stringify({ ...rec, counts: undefined }));
    return (await this.getRun(runId))!;
  }

  async ledger(runId: string, page: PageRequest, status?: LedgerStatus): Promise<Page<LedgerItem>> {
    checkLedgerStatus(status);
    checkRunIdArg(runId);
    checkPageArg(page);
    const limit = pageLimit(page);
    const queue = await this.client.get(this.keys.runLoc(runId));
    if (queue === null) throw new NotFoundError(`run ${runId} not found`, 'RUN_NOT_FOUND');
    const shards = await this.shardsOf(queue, false);
    const sources = Array.from({ length: shards }, (_v, s) => ({ loc: { queue, shard: s }, keys: [`${this.keys.shard(queue, s)}Li:${runId}:${status ?? 'all'}`] }));
    return this.scanPages(sources, page.cursor ?? null, null, limit, async (loc, ids) => {
      const raws = await this.client.hmget(`${this.sp(loc)}L:${runId}`, ...ids);
      const out: LedgerItem[] = [];
      raws.forEach((r, i) => {
        if (r === null) return;
        const item = ledgerItemFrom(runId, ids[i]!, r);
        if (!status || item.status === status) out.push(item);
      });
      return out;
    }, (i) => i.job_id);
  }

  async applyRunItems(req: ApplyRequest): Promise<LedgerItem[]> {
    checkApplyRequest(req);
    const run = await this.getRun(req.runId);
    if (!run) throw new NotFoundError(`run ${req.runId} not found`, 'RUN_NOT_FOUND');
    const o = run.options ?? {};
    const verdictOpts = runVerdictOptions(run, req.now);
    const attempts = o.attempts ?? DEFAULT_ATTEMPTS_POLICY;
    const groups = new Map<number, string[]>();
    const shardOfItem = await this.runShards(run.queue, req.jobIds);
    req.jobIds.forEach((id, i) => {
      const shard = shardOfItem[i]!;
      const g = groups.get(shard);
      if (g) g.push(id);
      else groups.set(shard, [id]);
    });
    // In slices, so one script call never holds Redis for long (other clients are served between
    // them), all under way at once: while Redis moves one slice, this process reads and checks the
    // next (the check is client work, the move Redis work; one after the other, each waited on the
    // other). Each call is idempotent (planned items only), so re-sending one after a reconnect is safe.
    const slices: Array<Promise<{ p: string; res: Array<[string, string | null, number]> }>> = [];
    for (const [shard, ids] of groups) {
      const p = this.sp({ queue: run.queue, shard });
      for (let i = 0; i < ids.length; i += APPLY_SLICE) {
        const slice = ids.slice(i, i + APPLY_SLICE);
        const res = run.action === 'prune' ? this.pruneSlice(p, run, slice, req.runId) : this.applySlice(p, run, slice, verdictOpts, attempts, req.runId);
        slices.push(res.then((r) => ({ p, res: r })));
      }
    }
    const results = new Map<string, LedgerItem>();
    const pruned = new Map<string, string[]>();
    for (const { p, res } of await Promise.all(slices)) {
      for (const [id, raw, gone] of res) {
        if (raw) results.set(id, ledgerItemFrom(req.runId, id, raw));
        if (run.action === 'prune' && Number(gone) === 1) {
          const ids = pruned.get(p);
          if (ids) ids.push(id);
          else pruned.set(p, [id]);
        }
      }
    }
    if (run.action === 'prune') {
      // A pruned job's location key goes too (a purge keeps it, to tell a purged DLQ entry from one
      // never here; a pruned job is simply gone). It is a key of no shard, so not the script's to
      // delete on a Cluster: one DEL per key, after the script, then the job leaves its shard's
      // 'plc' set, where the script named it. A crash in between leaves both, and the next prune
      // apply of the queue (this run resumed, or a later run) deletes the key from that set.
      await Promise.all(
        [...pruned].map(async ([p, ids]) => {
          for (const id of ids) this.locCache.delete(id);
          await Promise.all(ids.map((id) => this.client.del(this.keys.loc(id))));
          await this.client.srem(`${p}plc`, ...ids);
        }),
      );
      await this.cleanPrunedLocations(run.queue);
    }
    return req.jobIds.map((id) => results.get(id)).filter((x): x is LedgerItem => x !== undefined);
  }

  /**
   * Deletes the location keys an earlier prune apply left when it stopped between its delete
   * script and its DELs (a crash, a lost connection): up to PRUNED_LOC_PAGE per shard of the
   * queue per call, so a prune run drains any number of them over its batches, a bounded read
   * each time (the set is empty but for such leftovers, and an empty set costs one command). A key
   * is deleted only while it still points at this shard and no job hash is there; the id leaves
   * the set either way.
   */
  private async cleanPrunedLocations(queue: string): Promise<void> {
    const shards = await this.shardsOf(queue, false);
    await Promise.all(
      Array.from({ length: shards }, async (_v, shard) => {
        const p = this.keys.shard(queue, shard);
        const ids = (await this.client.srandmember(`${p}plc`, PRUNED_LOC_PAGE)) as string[];
        if (ids.length === 0) return;
        const here = `${queue}\t${shard}`;
        await Promise.all(
          ids.map(async (id) => {
            const [where, exists] = await Promise.all([this.client.get(this.keys.loc(id)), this.client.exists(`${p}j:${id}`)]);
            if (where === here && exists === 0) {
              this.locCache.delete(id);
              await this.client.del(this.keys.loc(id));
            }
          }),
        );
        await this.client.srem(`${p}plc`, ...ids);
      }),
    );
  }

  /**
   * One slice of a shard's items: each job read and decoded in full, as `dlq list` / `dlq show`
   * read it (a record damaged since the plan is skip:malformed here, whatever the plan says), its
   * verdict checked again, and the verdicts sent to the apply script with the fingerprint of the
   * bytes read: the script moves a job only if its record is still exactly those bytes.
   */
  private async applySlice(p: string, run: RunRecord, ids: string[], verdictOpts: VerdictOptions, attempts: AttemptsPolicy, runId: string): Promise<Array<[string, string | null, number]>> {
    const records = await this.readForApply(p, ids);
    // (a job hash gone while its id stays in the DLQ is malformed, as dlqList and dlqGet say)
    // (and one whose key holds another type than a hash: the record cannot be read)
    const odd = (snap: Snapshot | null) => snap !== null && isNotAHash(hashOf(snap) as Record<string, string>);
    const missing = await stillDead(this.client, p, ids.filter((_, i) => records[i]!.snap === null || odd(records[i]!.snap)));
    const args: Array<string | number> = [runId, run.action, attempts.kind, attempts.kind === 'extra' ? attempts.n : 0];
    ids.forEach((id, i) => {
      const r = records[i]!;
      const entry = missing.has(id)
        ? r.snap === null
          ? missingRecordEntry(id, run.queue, missing.get(id)!)
          : dlqEntryFrom(id, run.queue, r.snap)
        : r.snap === null || odd(r.snap) || (hashOf(r.snap) as Record<string, string>).st !== 'dead'
          ? null
          : dlqEntryFrom(id, run.queue, r.snap);
      const v = verdictFor(entry, verdictOpts);
      args.push(id, v.verdict, JSON.stringify(v.detail), r.fingerprint);
    });
    return this.call<Array<[string, string | null, number]>>('aqApply', p, [`${p}L:${runId}`, ...this.jobFieldHashes.map((h) => p + h)], run.queue, args);
  }

  /**
   * One slice of a prune run's items: the script checks each job against the run's rule itself
   * (state and end time, read in the same step as the delete), so nothing is read here first.
   * ARGV[7] and [8], a redrive's attempts policy, carry the rule: its states and its cut-off.
   */
  private async pruneSlice(p: string, run: RunRecord, ids: string[], runId: string): Promise<Array<[string, string | null, number]>> {
    const rule = runPruneRule(run.options);
    const args: Array<string | number> = [runId, 'prune', rule ? rule.states.join(',') : '', rule ? rule.before : 0];
    for (const id of ids) args.push(id, 'prune', 'null', '');
    return this.call<Array<[string, string | null, number]>>('aqApply', p, [`${p}L:${runId}`, ...this.jobFieldHashes.map((h) => p + h)], run.queue, args);
  }

  /**
   * Jobs' whole stored records for apply, as bytes (each hash's JOB_FIELDS, effects, attempts
   * list): the snapshot `jobFrom` decodes (null when the job hash is gone) and the fingerprint the
   * apply script compares (lua/dlq.ts FINGERPRINT: the same parts, the same way). The effects and
   * the attempts list are read only for a job whose hash says it has them (`nef`, `na`, as
   * readDecoded does): most dead jobs have neither, so a job costs one command, not three. Should
   * a hash say none while the key exists (a damaged record), the script's fingerprint differs and
   * the job is left in the DLQ as changed: a wrong count can only keep a job, never move one
   * unchecked.
   */
  private async readForApply(p: string, ids: string[]): Promise<Array<{ snap: Snapshot | null; fingerprint: string }>> {
    const c = this.client;
    const all = await Promise.all(
      ids.map((id) =>
        c.hmgetBuffer(`${p}j:${id}`, ...JOB_FIELDS).catch((e: unknown) => {
          if (isWrongType(e)) return null;
          throw e;
        }),
      ),
    );
    return Promise.all(
      all.map(async (fields, i) => {
        // (a key of another type: no fingerprint, since nothing may move it; the caller judges it malformed)
        if (fields === null) return { snap: [{ ...NOT_A_HASH }, [], []] as Snapshot, fingerprint: '' };
        const hash = jobFieldsFrom(fields.map((b) => (b === null ? null : b.toString('utf8'))));
        const [effectMap, attempts] = await Promise.all([
          hash !== null && (hash.nef ?? '0') !== '0' ? c.hgetallBuffer(`${p}e:${ids[i]!}`) : NO_EFFECT_BYTES,
          hash !== null && hasAttemptsList(hash) ? c.lrangeBuffer(`${p}a:${ids[i]!}`, 0, -1) : NO_ATTEMPT_BYTES,
        ]);
        // Effects in key order (a hash has no order both sides can rely on): key, value, key, value.
        const effects = Object.keys(effectMap)
          .map((k) => [Buffer.from(k, 'utf8'), effectMap[k]!] as const)
          .sort((a, b) => Buffer.compare(a[0], b[0]))
          .flat();
        const fingerprint = recordFingerprint([fields, effects, attempts]);
        if (hash === null) return { snap: null, fingerprint };
        // The attempts list holds the records before the hash's last one (`ar`): its first `na`, as readDecoded reads it.
        const list = attempts.map((b) => b.toString('utf8'));
        const na = hash.na !== undefined ? Number(hash.na) : NaN;
        return { snap: [hash, effects.map((b) => b.toString('utf8')), Number.isInteger(na) && na >= 0 ? list.slice(0, na) : list] as Snapshot, fingerprint };
      }),
    );
  }

  private lockKey(queue: string): string {
    return `${this.keys.shard(queue, 0)}lock`;
  }

  async acquireLock(queue: string, holder: LockHolder): Promise<LockResult> {
    checkLockHolder(holder);
    checkQueueArg(queue);
    const r = (await callScript(this.client, 'aqLockAcquire', [this.lockKey(queue)], [JSON.stringify(holder)])) as [number, string?];
    if (Number(r[0]) === 1) return { acquired: true };
    return { acquired: false, holder: JSON.parse(r[1]!) as LockHolder };
  }

  async releaseLock(queue: string, runId: string | null): Promise<void> {
    checkQueueArg(queue);
    await callScript(this.client, 'aqLockRelease', [this.lockKey(queue)], [runId ?? '']);
  }

  async readLock(queue: string): Promise<LockHolder | null> {
    checkQueueArg(queue);
    const raw = await this.client.get(this.lockKey(queue));
    return raw === null ? null : (JSON.parse(raw) as LockHolder);
  }

  async breakLock(queue: string, expected?: LockHolder): Promise<LockHolder | null> {
    checkQueueArg(queue);
    if (expected === undefined) {
      const raw = await this.client.getdel(this.lockKey(queue));
      return raw === null ? null : (JSON.parse(raw) as LockHolder);
    }
    checkLockHolder(expected);
    // compared and deleted in one script: a holder that took the lock in between keeps it
    const raw = (await callScript(this.client, 'aqLockBreak', [this.lockKey(queue)], [expected.owner, expected.run_id ?? '', expected.acquired_at])) as string | null;
    return raw === null ? null : (JSON.parse(raw) as LockHolder);
  }

  // ------------------------------------------------------------ stats

  async stats(queue: string, opts: StatsOptions = {}): Promise<QueueStats> {
    checkQueueArg(queue);
    checkStatsOptions(opts);
    // [stats] the figures and how shards add up: ./stats.ts
    return readQueueStats({
      queue,
      now: this.now(),
      known: (await this.client.hget(this.keys.queueMeta(queue), 'shards')) !== null,
      shards: await this.shardsOf(queue, false),
      readShard: (s, tenants) => {
        const p = this.keys.shard(queue, s);
        return this.call<ShardStatsReply>('aqStats', p, [p + 'n'], queue, tenants);
      },
      endsWindowMs: opts.endsWindowMs,
      // (only when asked: a day of minutes is too much to read on every scrape)
      readEnds: (s) => this.client.hgetall(this.keys.shard(queue, s) + 'jend'),
    });
  }

  /**
   * For the conformance suite only: stores a DLQ entry whose job envelope does
   * not parse (as a damaged or foreign record would), through the normal key
   * layout, so bulk actions can be shown to leave it alone.
   */
  async injectMalformedDlqEntryForTests(queue: string): Promise<string> {
    await this.shardsOf(queue, true);
    const jobId = this.newId(JOB_ID_PREFIX);
    const loc = { queue, shard: 0 };
    const p = this.sp(loc);
    const now = this.now();
    await this.client.set(this.keys.loc(jobId), `${queue}\t0`);
    await this.client.hset(`${p}j:${jobId}`, { env: '{"job_id": broken', st: 'dead', cls: 'batch', ten: 'acme', wf: 'research_report:v3', att: 1, max: 1, dat: now, upd: now, dr: 'permanent', dec: 'VALIDATION', dem: 'x', nef: 0, rc: 0, fen: 1 });
    await this.client.zadd(`${p}s:dead`, 0, jobId);
    await this.client.zadd(`${p}dlq`, now, jobId);
    // [stats] counted per class, and in its tenant's rank, as a move to dead counts it (lua/stats.ts)
    await this.client.hincrby(`${p}n`, 'batch:dead', 1);
    await this.client.zincrby(`${p}stn`, 1, 'acme');
    return jobId;
  }

  /**
   * For the conformance suite only: damages a stored DLQ entry as a write outside agentq would (its
   * envelope loses its workflow, or names another job id or queue; nothing else moves), so bulk
   * actions can be shown to leave it alone.
   */
  async damageDlqEntryForTests(jobId: string, damage: 'no-workflow' | 'other-job-id' | 'other-queue' = 'no-workflow'): Promise<void> {
    const loc = await this.locate(jobId);
    if (!loc) throw new NotFoundError(`job ${jobId} not found`);
    const key = `${this.sp(loc)}j:${jobId}`;
    const env = JSON.parse((await this.client.hget(key, 'env'))!) as Record<string, unknown>;
    if (damage === 'no-workflow') delete env.workflow;
    else if (damage === 'other-job-id') env.job_id = 'job_01JF0RE1GNF0RE1GNF0RE1GNF0';
    else env.queue = 'elsewhere';
    await this.client.hset(key, 'env', JSON.stringify(env));
  }

  async serverWarnings(): Promise<string[]> {
    // Every master of a Cluster holds jobs: each is asked (one INFO each; a node's replicas follow
    // its settings). The masters are known once the client is ready, which a first command waits for.
    let nodes: Redis[] = [this.client as Redis];
    if (this.client instanceof Cluster) {
      await this.client.ping();
      nodes = this.client.nodes('master');
    }
    const warnings: string[] = [];
    for (const node of nodes) {
      const where = `${node.options.host ?? ''}:${node.options.port ?? ''}`;
      warnings.push(...settingWarnings(where, await node.info('memory')));
    }
    return warnings;
  }

  async close(opts: CloseOptions = {}): Promise<void> {
    // Batches still waiting for the end of the turn go out now, and the QUIT waits for the
    // answers of every batch sent (their callers are waiting for them). Closing `now` (a command
    // stopped by a signal at a safe point: nobody waits for them) sends them without waiting.
    this.submits.sendAll();
    this.completions.sendAll();
    if (!opts.now) await Promise.allSettled([...this.batchesInFlight]);
    // A follower ends as SQLite's does when its store closes: the iteration is over, not failed
    // (its blocked read would otherwise end in "Connection is closed" thrown to the reader).
    for (const stop of this.followStops) stop();
    for (const f of this.followers) f.disconnect();
    await this.conn.close(opts);
  }
}

// ------------------------------------------------------------ helpers

const NO_EFFECTS: string[] = [];
const NO_ATTEMPTS: string[] = [];
const NO_EFFECT_BYTES: Record<string, Buffer> = {};
const NO_ATTEMPT_BYTES: Buffer[] = [];
const NO_PARTS: [string[], string[]] = [NO_EFFECTS, NO_ATTEMPTS];


/** `a=1,b=2` for a script argument (names are validated: no `,` or `=` in them). */
function pairs(o: Record<string, number> | undefined): string {
  return o ? Object.entries(o).map(([k, v]) => `${k}=${v}`).join(',') : '';
}

/** lua/dlq.ts FINGERPRINT, over the same parts: each as length:bytes (`-` for a missing field), the parts separated by `|`, SHA-1 in hex. */
function recordFingerprint(parts: Array<Array<Buffer | null>>): string {
  const h = createHash('sha1');
  parts.forEach((list, i) => {
    if (i > 0) h.update('|');
    for (const b of list) {
      if (b === null) h.update('-');
      else {
        h.update(`${b.length}:`);
        h.update(b);
      }
    }
  });
  return h.digest('hex');
}

/** The field map of a snapshot's hash (flat or already a map). */
function hashOf(snap: Snapshot): Record<string, string> {
  return Array.isArray(snap[0]) ? flatToMap(snap[0]) : snap[0];
}

/** The page's limit, its cursor checked (a job id, a run id for the runs). */
function pageLimit(page: PageRequest, cursorKind: 'job' | 'run' = 'job'): number {
  checkCursor(page.cursor, cursorKind);
  const l = page.limit;
  if (!Number.isInteger(l) || l < 1 || l > MAX_PAGE_LIMIT) throw new ValidationError(`page limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${l}`);
  return l;
}


export function dlqPredicate(f: DlqFilter, now: number): (e: DlqEntry) => boolean {
  const grep = f.grep?.toLowerCase();
  const codes = f.errorCodes && f.errorCodes.length > 0 ? new Set(f.errorCodes) : null;
  return (e) => {
    if (f.tenant && e.tenant_id !== f.tenant) return false;
    if (f.workflow && e.workflow !== f.workflow) return false;
    if (codes && !codes.has(e.error_code)) return false;
    if (f.reason && e.reason !== f.reason) return false;
    const deadAt = Date.parse(e.dead_at);
    if (f.since !== undefined && deadAt < f.since) return false;
    if (f.until !== undefined && deadAt >= f.until) return false;
    if (f.minAttempts !== undefined && e.attempts < f.minAttempts) return false;
    if (f.maxAttempts !== undefined && e.attempts > f.maxAttempts) return false;
    if (f.expired !== undefined && isExpiredAt(e.deadline_at, now, f.minRemainingMs ?? 0) !== f.expired) return false;
    if (f.partial !== undefined && e.partial !== f.partial) return false;
    if (grep) {
      const hay = [e.error_code, e.error_message, e.workflow, e.tenant_id, e.job_id].join('\n').toLowerCase();
      if (!hay.includes(grep)) return false;
    }
    return true;
  };
}

/** Connection-level failures become RetryLaterError (exit 75); our own typed errors pass through. */
export function openRedis(url: string, deps: RedisBackendDeps = {}): RedisBackend {
  return new RedisBackend(parseRedisUrl(url), deps);
}

/** The job of a snapshot, or a MalformedJobError (exit 1, naming the job) when its record cannot be read. */
function readableJob(jobId: string, queue: string, snap: Snapshot): Job {
  try {
    return ownJobFrom(jobId, queue, snap);
  } catch (e) {
    throw new MalformedJobError(jobId, (e as Error).message);
  }
}
