/**
 * The SQS backend's job store on Redis (standalone or Cluster): the Redis
 * adapter (RedisBackend) for every ordinary operation, and this SqsStore for
 * the SQS side, on the adapter's own keys plus a few per shard (redis-lua.ts).
 *
 * The outbox is derived from the job's state, so it is written atomically
 * with every change that makes a job claimable, by construction: a job is
 * waiting to be published when it is queued or scheduled and the shard's
 * `sqs:pub` hash does not hold its current generation (its redrive count).
 * Submit creates a waiting job of generation 0; a redrive moves a dead job
 * back to queued and raises its redrive count — each is a pending outbox
 * entry in the same script that made it, whoever ran it. Publishing records
 * the generation. A crash between the store write and the publish leaves the
 * job waiting and unrecorded, and the relay finds it by scanning the shard's
 * waiting-state indexes. The relay checks the job exists and is waiting
 * before it publishes, so a refused or duplicate submit never publishes.
 * A relay that publishes twice (a crash between send and record, or two
 * relays at once) is safe: consumers judge every message against the store.
 *
 * Costs: the relay's catch-up scans the waiting and running jobs (bounded pages, one
 * HMGET each) to find unpublished ones, so it is O(waiting + running jobs) per pass;
 * submit and redrive publish their own jobs at once and never scan, and the
 * catch-ups beside claims and redrive batches scan at most once per 5 s per
 * store (a Redis token), so a worker's claim does not grow with the backlog.
 */
import type { AdmissionLimits } from '../../core/admission.js';
import type { Clock, Random } from '../../core/clock.js';
import { toEnvelope } from '../../core/envelope.js';
import type { FairnessOptions } from '../../core/fairness.js';
import { createIdFactory, JOB_ID_PREFIX } from '../../core/ids.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../core/retry.js';
import { JOB_CLASSES, type Job, type JobState } from '../../core/schemas.js';
import { MAX_PAGE_LIMIT, type ClaimRequest } from '../contract.js';
import { jobFrom, type Snapshot } from '../redis/codec.js';
import { KeyLayout, shardOf } from '../redis/keys.js';
import { PRELUDE } from '../redis/lua/prelude.js';
import { RedisBackend } from '../redis/redis-backend.js';
import type { RedisUrlOptions } from '../redis/url.js';
import { CONSIDER, CUSTODY_BURY, CUSTODY_KEEP, DLQ_SENT, REPUBLISH } from './redis-lua.js';
import { misroutedWhy, type CustodyInput, type CustodyKind, type CustodyOutcome, type CustodyRecord, type Decision, type Delivery, type OutboxCounts, type OutboxRow, type ReceivedRef, type RepublishOutcome, type SqsStore, type StoreState } from './store.js';

type Client = RedisBackend['redis'];
interface Loc {
  queue: string;
  shard: number;
}

const SCRIPTS = {
  aqSqsConsider: PRELUDE + CONSIDER,
  aqSqsCustodyBury: PRELUDE + CUSTODY_BURY,
  aqSqsCustodyKeep: PRELUDE + CUSTODY_KEEP,
} as const;
type ScriptName = keyof typeof SCRIPTS;

/** The methods that talk to Redis (the raw client), run through RedisBackend.guard. */
const GUARDED = ['pendingOutbox', 'outboxCounts', 'jobsForPublish', 'markPublished', 'delivery', 'markDlqSent', 'forgetDelivery', 'republish', 'consider', 'pendingByClass', 'custody', 'listCustody', 'takeCustody', 'statesOf'] as const satisfies ReadonlyArray<keyof SqsStore>;

/** A background catch-up's scan runs at most once per this many ms per store (wall clock: it is about cost). */
const BACKGROUND_SCAN_MS = 5000;
/** Waiting jobs read per page while the relay scans for unpublished ones. */
const SCAN_PAGE = 500;

export interface RedisSqsStoreDeps {
  clock: Clock;
  random: Random;
  retryPolicy?: RetryPolicy;
  fairness?: FairnessOptions;
  admission?: AdmissionLimits;
}

export class RedisSqsStore implements SqsStore {
  private readonly client: Client;
  private readonly keys: KeyLayout;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly policyText: string;
  private readonly fairness: FairnessOptions;
  private readonly newId: (prefix: string) => string;
  private readonly locs = new Map<string, Loc>();
  /** Outbox row ids are handles of this process: id → the job and generation it publishes. */
  private readonly rows = new Map<number, { jobId: string; gen: string }>();
  private nextRow = 1;
  /** Publish failures of this process: job id → tries and when to try again (store clock). */
  private readonly backoff = new Map<string, { tries: number; at: number; error: string }>();

  constructor(
    readonly backend: RedisBackend,
    private readonly opts: RedisUrlOptions,
    deps: RedisSqsStoreDeps,
  ) {
    this.client = backend.redis;
    this.keys = new KeyLayout(opts.prefix);
    this.clock = deps.clock;
    this.random = deps.random;
    this.fairness = deps.fairness ?? {};
    const p = deps.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.policyText = [p.backoff.map((w) => `${w.minMs}:${w.maxMs}`).join(','), p.growth, p.maxDelayMs, p.retryBudgetRatio, p.retryBudgetMinRetries, p.overBudgetDelayMs].join('|');
    this.newId = createIdFactory(deps.clock, deps.random);
    for (const [name, lua] of Object.entries(SCRIPTS)) this.client.defineCommand(name, { lua });
    this.client.defineCommand('aqSqsDlqSent', { lua: DLQ_SENT });
    this.client.defineCommand('aqSqsRepublish', { lua: REPUBLISH });
    // Every call fails as the adapter's do (RedisBackend.guard): typed, and marked as never sent
    // when it cannot have reached Redis, so a worker whose claim was refused knows it leased nothing.
    for (const name of GUARDED) {
      const fn = (this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!;
      (this as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => backend.guard(() => fn.apply(this, a));
    }
  }

  get now(): number {
    return this.clock.now();
  }

  /** Calls one of this store's shard scripts: KEYS[1] routes it, ARGV[1..4] is the prelude's. */
  private run<T>(name: ScriptName, loc: Loc, key: string, args: Array<string | number>): Promise<T> {
    const fn = (this.client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[name]!;
    return fn.call(this.client, 1, key, this.sp(loc), this.now, this.opts.eventsMaxLen, loc.queue, ...args) as Promise<T>;
  }

  private sp(loc: Loc): string {
    return this.keys.shard(loc.queue, loc.shard);
  }

  private async locate(jobId: string): Promise<Loc | null> {
    const cached = this.locs.get(jobId);
    if (cached) return cached;
    const v = await this.client.get(this.keys.loc(jobId));
    if (v === null) return null;
    const [queue, shard] = v.split('\t');
    const loc = { queue: queue!, shard: Number(shard) };
    if (this.locs.size >= 100_000) this.locs.delete(this.locs.keys().next().value!);
    this.locs.set(jobId, loc);
    return loc;
  }

  private async shardCount(queue: string, create: boolean): Promise<number> {
    const meta = this.keys.queueMeta(queue);
    if (create) {
      await this.client.hsetnx(meta, 'shards', this.opts.shards);
      await this.client.zadd(this.keys.queues(), 0, queue);
    }
    const v = await this.client.hget(meta, 'shards');
    return v === null ? 0 : Number(v);
  }

  /** Every queue this store has made shards for, a bounded page at a time (never one read of the whole set). */
  private async allQueues(): Promise<string[]> {
    const out: string[] = [];
    for (let after = '-'; ; ) {
      const names = await this.client.zrangebylex(this.keys.queues(), after, '+', 'LIMIT', 0, MAX_PAGE_LIMIT);
      out.push(...names);
      if (names.length < MAX_PAGE_LIMIT) return out;
      after = `(${names[names.length - 1]!}`;
    }
  }

  private async allShards(queue?: string): Promise<Loc[]> {
    const queues = queue !== undefined ? [queue] : await this.allQueues();
    const out: Loc[] = [];
    for (const q of queues) {
      const n = await this.shardCount(q, false);
      for (let s = 0; s < n; s++) out.push({ queue: q, shard: s });
    }
    return out;
  }

  // ------------------------------------------------------------ outbox (derived: see the header)

  /** The outbox row of a job when it is waiting and its generation is unpublished; null otherwise. */
  private async pendingRow(jobId: string, loc: Loc, fields?: Array<string | null>, pub?: string | null): Promise<OutboxRow | null> {
    const p = this.sp(loc);
    const [st, cls, rc] = fields ?? (await this.client.hmget(`${p}j:${jobId}`, 'st', 'cls', 'rc'));
    // (running: only a republished job with an expired lease has no published mark; the relay checks the lease)
    if (st !== 'queued' && st !== 'scheduled' && st !== 'running') return null;
    const gen = rc ?? '0';
    const published = pub !== undefined ? pub : await this.client.hget(`${p}sqs:pub`, jobId);
    if (published === gen) return null;
    // Republished (`agentq sqs republish`): a new publish of the same generation, whose FIFO
    // deduplication id must differ from the last one's, or SQS drops it within its 5-minute window.
    const rep = /^(\d+):(\d+)$/.exec((await this.client.hget(`${p}sqs:rep`, jobId)) ?? '');
    const republished = rep && rep[1] === gen ? Number(rep[2]) : 0;
    const id = this.nextRow++;
    this.rows.set(id, { jobId, gen });
    return {
      id,
      job_id: jobId,
      queue: loc.queue,
      class: cls ?? 'batch',
      why: republished > 0 ? 'republish' : gen === '0' ? 'submit' : 'redrive',
      created_at: this.now,
      tries: this.backoff.get(jobId)?.tries ?? 0,
      dedup: republished > 0 ? `${gen}.r${republished}` : gen,
    };
  }

  private due(jobId: string): boolean {
    const b = this.backoff.get(jobId);
    return !b || b.at <= this.now;
  }

  async pendingOutbox(limit: number, jobIds?: string[], background = false): Promise<OutboxRow[]> {
    if (jobIds) {
      // In parallel: ioredis pipelines the reads of a batch of submits into few round trips.
      const rows = await Promise.all(
        jobIds.map(async (id) => {
          const loc = await this.locate(id);
          return loc ? this.pendingRow(id, loc) : null;
        }),
      );
      return rows.filter((r): r is OutboxRow => r !== null);
    }
    // A background catch-up scans at most once per BACKGROUND_SCAN_MS across every process on
    // this store (a token in Redis), so claims stay O(1) however long the backlog is; what a crash
    // left is found within that interval, or at once by `agentq outbox relay`.
    if (background && (await this.client.set(`${this.opts.prefix}:sqs:scan`, '1', 'PX', BACKGROUND_SCAN_MS, 'NX')) === null) return [];
    const rows: OutboxRow[] = [];
    await this.scanWaiting(async (loc, ids, fields, pubs) => {
      for (let i = 0; i < ids.length && rows.length < limit; i++) {
        if (!this.due(ids[i]!)) continue;
        const row = await this.pendingRow(ids[i]!, loc, fields[i]!, pubs[i]!);
        if (row) rows.push(row);
      }
      return rows.length < limit;
    });
    return rows;
  }

  /**
   * Walks every job that may wait for a message (queued, scheduled, and running: a running job
   * republished once its lease expired has a pending entry too) of every queue shard in pages;
   * stops when `each` returns false.
   */
  private async scanWaiting(each: (loc: Loc, ids: string[], fields: Array<Array<string | null>>, pubs: Array<string | null>) => Promise<boolean>): Promise<void> {
    for (const loc of await this.allShards()) {
      const p = this.sp(loc);
      for (const st of ['queued', 'scheduled', 'running']) {
        let after = '-';
        for (;;) {
          const ids = await this.client.zrangebylex(`${p}s:${st}`, after, '+', 'LIMIT', 0, SCAN_PAGE);
          if (ids.length === 0) break;
          const [fields, pubs] = await Promise.all([
            Promise.all(ids.map((id) => this.client.hmget(`${p}j:${id}`, 'st', 'cls', 'rc'))),
            this.client.hmget(`${p}sqs:pub`, ...ids),
          ]);
          if (!(await each(loc, ids, fields, pubs))) return;
          if (ids.length < SCAN_PAGE) break;
          after = `(${ids[ids.length - 1]}`;
        }
      }
    }
  }

  /** Next retry and last error come from this process's backoff (publish failures back off per process). */
  async outboxCounts(queue?: string): Promise<OutboxCounts> {
    let pending = 0;
    let published = 0;
    let oldest: number | null = null;
    // (assigned in the callback: typed by assertion, so the narrowing to null does not stick)
    let next = null as { at: number; error: string } | null;
    let latest = null as { at: number; error: string } | null;
    for (const loc of await this.allShards()) if (queue === undefined || loc.queue === queue) published += await this.client.hlen(`${this.sp(loc)}sqs:pub`);
    await this.scanWaiting(async (loc, ids, fields, pubs) => {
      if (queue !== undefined && loc.queue !== queue) return true;
      for (let i = 0; i < ids.length; i++) {
        if (pubs[i] === (fields[i]![2] ?? '0')) continue;
        pending++;
        const upd = Number(await this.client.hget(`${this.sp(loc)}j:${ids[i]}`, 'upd'));
        if (Number.isFinite(upd) && (oldest === null || upd < oldest)) oldest = upd;
        const b = this.backoff.get(ids[i]!);
        if (b && (next === null || b.at < next.at)) next = b;
        if (b && (latest === null || b.at >= latest.at)) latest = b;
      }
      return true;
    });
    return { pending, published, oldest_pending_at: oldest, next_try_at: next?.at ?? null, last_error: latest?.error ?? null };
  }

  retryOutboxNow(): void {
    for (const b of this.backoff.values()) b.at = 0;
  }

  async jobsForPublish(jobIds: string[]): Promise<Array<Job | null>> {
    // In parallel: ioredis pipelines the reads into few round trips.
    return Promise.all(jobIds.map((id) => this.backend.get(id)));
  }

  async markPublished(items: Array<{ id: number; messageId: string | null }>): Promise<void> {
    await Promise.all(
      items.map(async (it) => {
        const ref = this.rows.get(it.id);
        if (!ref) return;
        this.rows.delete(it.id);
        this.backoff.delete(ref.jobId);
        const loc = await this.locate(ref.jobId);
        if (loc) await this.client.hset(`${this.sp(loc)}sqs:pub`, ref.jobId, ref.gen);
      }),
    );
  }

  async markPublishFailed(items: Array<{ id: number; error: string }>, retryAt: (tries: number) => number): Promise<void> {
    for (const it of items) {
      const ref = this.rows.get(it.id);
      if (!ref) continue;
      this.rows.delete(it.id);
      const tries = (this.backoff.get(ref.jobId)?.tries ?? 0) + 1;
      this.backoff.set(ref.jobId, { tries, at: retryAt(tries), error: it.error.slice(0, 500) });
    }
  }

  // ------------------------------------------------------------ deliveries

  async delivery(jobId: string): Promise<Delivery | null> {
    const loc = await this.locate(jobId);
    if (!loc) return null;
    const raw = await this.client.hget(`${this.sp(loc)}sqs:dlv`, jobId);
    if (raw === null) return null;
    const d = JSON.parse(raw) as { m: string; r: string; u: string; at: number; ds: number };
    return { job_id: jobId, message_id: d.m, receipt: d.r, queue_url: d.u, received_at: d.at, dlq_sent_at: Number(d.ds) > 0 ? Number(d.ds) : null };
  }

  async markDlqSent(jobId: string): Promise<void> {
    const loc = await this.locate(jobId);
    if (!loc) return;
    const fn = (this.client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>).aqSqsDlqSent!;
    await fn.call(this.client, 1, `${this.sp(loc)}sqs:dlv`, jobId, this.now);
  }

  async forgetDelivery(jobId: string, keepPublished = false): Promise<void> {
    const loc = await this.locate(jobId);
    if (!loc) return;
    const p = this.sp(loc);
    // (the published mark is what tells the outbox this job has its message; the republish count
    // goes with it: only a job with no message left, its run over, forgets it)
    await Promise.all([this.client.hdel(`${p}sqs:dlv`, jobId), keepPublished ? 0 : this.client.hdel(`${p}sqs:pub`, jobId), keepPublished ? 0 : this.client.hdel(`${p}sqs:rep`, jobId)]);
  }

  /** `agentq sqs republish` (SqsStore.republish): one script per job, each atomic on its shard. */
  async republish(jobIds: string[]): Promise<RepublishOutcome[]> {
    const fn = (this.client as unknown as Record<string, (...a: Array<string | number>) => Promise<[string, RepublishOutcome['result']]>>).aqSqsRepublish!;
    return Promise.all(
      jobIds.map(async (id): Promise<RepublishOutcome> => {
        const loc = await this.locate(id);
        if (!loc) return { job_id: id, result: 'unknown' };
        const p = this.sp(loc);
        const [st, result] = await fn.call(this.client, 4, `${p}j:${id}`, `${p}sqs:pub`, `${p}sqs:dlv`, `${p}sqs:rep`, id, this.now);
        // a new try: this process's backoff of an earlier publish of the job no longer applies
        if (result === 'republished') this.backoff.delete(id);
        return st === '' ? { job_id: id, result } : { job_id: id, result, state: st as JobState };
      }),
    );
  }

  // ------------------------------------------------------------ consumers

  async consider(ref: ReceivedRef, req: ClaimRequest): Promise<Decision> {
    const loc = await this.locate(ref.jobId);
    if (!loc) return { kind: 'unknown' };
    // As SqliteSqsStore.consider: a message found in another queue's SQS queue never runs the job there.
    if (loc.queue !== req.queue) return { kind: 'delete', why: misroutedWhy(loc.queue, req.queue) };
    const f = this.fairness;
    const res = await this.run<[string, unknown?, string?]>('aqSqsConsider', loc, `${this.sp(loc)}j:${ref.jobId}`, [
      ref.jobId,
      ref.messageId,
      ref.receipt,
      ref.queueUrl,
      Math.round(req.leaseMs),
      req.workerId,
      req.workerVersion ?? '',
      req.classes && req.classes.length > 0 ? req.classes.join(',') : '',
      f.tenantConcurrency ?? -1,
      pairs(f.tenantConcurrencyOverrides),
      this.policyText,
      this.random(),
    ]);
    switch (res[0]) {
      case 'unknown':
        return { kind: 'unknown' };
      case 'delete':
        return { kind: 'delete', why: String(res[1]) };
      case 'hide':
        return { kind: 'hide', untilMs: Number(res[1]), why: String(res[2]) };
      case 'bury':
        return { kind: 'bury', job: jobFrom(res[1] as Snapshot) };
      default: {
        const [fence, exp, snap] = res[1] as [number, number, Snapshot];
        const job = jobFrom(snap);
        return { kind: 'claimed', lease: { jobId: job.job_id, fence: Number(fence), job, envelope: toEnvelope(job), expiresAt: Number(exp) } };
      }
    }
  }

  async pendingByClass(queue: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const fields = JOB_CLASSES.flatMap((c) => [`${c}:queued`, `${c}:scheduled`, `${c}:running`]);
    for (const loc of await this.allShards(queue)) {
      const v = await this.client.hmget(`${this.sp(loc)}n`, ...fields);
      JOB_CLASSES.forEach((c, i) => {
        const n = Number(v[i * 3] ?? 0) + Number(v[i * 3 + 1] ?? 0) + Number(v[i * 3 + 2] ?? 0);
        if (n > 0) out.set(c, (out.get(c) ?? 0) + n);
      });
    }
    return out;
  }

  // ------------------------------------------------------------ custody

  private custodyIndex(): string {
    return `${this.opts.prefix}:sqs:custody`;
  }

  async custody(jobId: string): Promise<CustodyRecord | null> {
    const loc = await this.locate(jobId);
    if (!loc) return null;
    const raw = await this.client.hget(`${this.sp(loc)}sqs:cus`, jobId);
    return raw === null ? null : (JSON.parse(raw) as CustodyRecord);
  }

  async listCustody(limit: number, after: string | null, sourceQueue?: string): Promise<CustodyRecord[]> {
    // One index for every queue: with `sourceQueue`, pages of it are read until `limit` match.
    const out: CustodyRecord[] = [];
    let cursor = after;
    for (;;) {
      const ids = await this.client.zrangebylex(this.custodyIndex(), cursor ? `(${cursor}` : '-', '+', 'LIMIT', 0, limit);
      const recs = await Promise.all(ids.map((id) => this.custody(id)));
      for (const r of recs) if (r !== null && (sourceQueue === undefined || r.source_queue === sourceQueue) && out.length < limit) out.push(r);
      if (ids.length < limit || out.length >= limit) return out;
      cursor = ids[ids.length - 1]!;
    }
  }

  /**
   * As SqliteSqsStore.takeCustody: a live job whose envelope came out of the
   * DLQ goes dead (reason custody) with its record, in one script; anything
   * else is kept byte-exact as an entry listed as malformed. Idempotent on
   * the SQS message id. The global custody index is written first: an index
   * entry without a record (a crash in between) is skipped by listCustody.
   */
  async takeCustody(msg: CustodyInput): Promise<CustodyOutcome> {
    const now = this.now;
    const record = (jobId: string, kind: CustodyKind): string =>
      JSON.stringify({ job_id: jobId, kind, message_id: msg.messageId, source_queue: msg.sourceQueue, body: msg.body, attributes: msg.attributes, receive_count: msg.receiveCount, taken_at: new Date(now).toISOString() } satisfies CustodyRecord);
    if (msg.kind === 'agentq' && msg.jobId !== null) {
      const loc = await this.locate(msg.jobId);
      if (loc) {
        await this.client.zadd(this.custodyIndex(), 0, msg.jobId);
        const r = await this.run<string>('aqSqsCustodyBury', loc, `${this.sp(loc)}j:${msg.jobId}`, [msg.jobId, 'SQS_MAX_RECEIVES', msg.why, msg.messageId, record(msg.jobId, 'backstop')]);
        if (r === 'job_dead' || r === 'already_ended' || r === 'requeued') {
          // (requeued: no record written; an index entry without one is skipped by listCustody, and
          // the job may hold an older custody record, from a death before a redrive, that it lists)
          if (r === 'already_ended') await this.client.zrem(this.custodyIndex(), msg.jobId);
          return { recorded: r, jobId: msg.jobId };
        }
        if (r === 'kept') return { recorded: 'already_kept', jobId: (await this.client.hget(`${this.sp(loc)}sqs:cmi`, msg.messageId)) ?? msg.jobId };
      }
    }
    const kind: CustodyKind = msg.kind === 'agentq' ? 'orphan' : msg.kind;
    const code = kind === 'foreign' ? 'SQS_FOREIGN' : kind === 'malformed' ? 'SQS_MALFORMED' : 'SQS_ORPHAN';
    const shards = (await this.shardCount(msg.queue, true)) || 1;
    const loc = { queue: msg.queue, shard: shardOf('unknown', shards) };
    const id = this.newId(JOB_ID_PREFIX);
    await this.client.set(this.keys.loc(id), `${loc.queue}\t${loc.shard}`);
    await this.client.zadd(this.custodyIndex(), 0, id);
    const [, kept] = await this.run<[string, string]>('aqSqsCustodyKeep', loc, `${this.sp(loc)}j:${id}`, [id, code, msg.why, msg.messageId, record(id, kind), msg.body]);
    if (kept === id) return { recorded: 'kept', jobId: kept };
    // The message was in custody already (the script returned its entry): the new id is not used.
    await Promise.all([this.client.del(this.keys.loc(id)), this.client.zrem(this.custodyIndex(), id)]);
    return { recorded: 'already_kept', jobId: kept };
  }

  /** A job whose location outlives its hash was removed by a purge (the location key is kept): `purged`. */
  async statesOf(jobIds: string[]): Promise<Array<StoreState | null>> {
    // In parallel: ioredis pipelines the lookups of a received batch into few round trips.
    return Promise.all(
      jobIds.map(async (id) => {
        const loc = await this.locate(id);
        if (!loc) return null;
        return ((await this.client.hget(`${this.sp(loc)}j:${id}`, 'st')) as JobState | null) ?? 'purged';
      }),
    );
  }

  /** The connection belongs to the Redis adapter, closed with it. */
  close(): void {}
}

function pairs(m: Record<string, number> | undefined): string {
  return m ? Object.entries(m).map(([k, v]) => `${k}=${v}`).join(',') : '';
}
