/**
 * The outbox relay: publishes outbox rows to SQS and marks published exactly
 * the rows SendMessageBatch confirmed. Run by submit (at once, for the new
 * job), by workers before they claim, and by `agentq outbox relay`. Safe to
 * run twice for the same row: consumers check every message against the
 * store, and a second message for a job is recognised and deleted.
 */
import { AgentqError, BrokerUnavailableError } from '../../core/errors.js';
import type { JobClass } from '../../core/schemas.js';
import { isTerminal } from '../../core/states.js';
import type { OutboxRow, SqsStore } from './store.js';
import { sendBatch, type OutgoingMessage } from './batch-send.js';
import type { SqsDataPlane } from './data-plane.js';
import { messageAttributes, messageBody } from './envelope.js';
import { publishDedupId, sourceGroupId } from './fifo.js';
import type { SqsQueues } from './queues.js';
import type { FifoGrouping } from './url.js';

export interface RelayResult {
  published: number;
  /** Rows with nothing left to deliver (job ended or gone): marked done without a message. */
  skipped: number;
  /**
   * `code`: the agentq error code of the failure, which says what mends it (`PERMISSION`: the
   * credentials or IAM; `CONFIG`: a missing queue; `BACKEND_UNAVAILABLE`: SQS unreachable), or
   * `SEND_FAILED` (SQS did not confirm the send).
   */
  failed: Array<{ job_id: string; error: string; code: string }>;
}

/** SQS caps DelaySeconds at 15 minutes. */
export const MAX_DELAY_SECONDS = 900;
/** Backoff of a row that failed to publish: 1 s, 2 s, 4 s … up to 5 min (store clock). */
const retryDelayMs = (tries: number) => Math.min(300_000, 1000 * 2 ** Math.max(0, tries - 1));

export class OutboxRelay {
  constructor(
    private readonly store: SqsStore,
    private readonly queues: SqsQueues,
    private readonly client: SqsDataPlane,
    /** The longest delay or visibility agentq asks SQS for (see SqsBackendOptions.maxVisibilitySeconds). */
    private readonly maxDelaySeconds: number,
    /** FIFO queues: how jobs map to message groups (null: standard queues). */
    private readonly fifo: FifoGrouping | null = null,
  ) {}

  /** Publishes the pending rows of these jobs now (submit, redrive). */
  async publishJobs(jobIds: string[]): Promise<RelayResult> {
    return this.publish(await this.store.pendingOutbox(0, jobIds));
  }

  /** Publishes everything pending and due, in bounded rounds. */
  /**
   * `background`: a catch-up on the side of other work (claim, redrive batches), which a store
   * may skip when a full search is costly and another one ran moments ago (SqsStore.pendingOutbox).
   */
  async catchUp(opts: { limit?: number; maxRounds?: number; background?: boolean } = {}): Promise<RelayResult> {
    const total: RelayResult = { published: 0, skipped: 0, failed: [] };
    for (let round = 0; round < (opts.maxRounds ?? 100); round++) {
      const rows = await this.store.pendingOutbox(opts.limit ?? 500, undefined, opts.background);
      if (rows.length === 0) break;
      const r = await this.publish(rows);
      total.published += r.published;
      total.skipped += r.skipped;
      total.failed.push(...r.failed);
      // Failed rows wait for their backoff; do not spin on them in this call.
      if (r.published + r.skipped === 0) break;
    }
    return total;
  }

  async publish(rows: OutboxRow[]): Promise<RelayResult> {
    const result: RelayResult = { published: 0, skipped: 0, failed: [] };
    const now = this.store.now;
    const done: Array<{ id: number; messageId: string | null }> = [];
    const byQueue = new Map<string, { queue: string; cls: JobClass; items: Array<{ row: OutboxRow; msg: OutgoingMessage }> }>();
    // The jobs of every row in one store read (one query on SQLite), not one read per row.
    const jobs = await this.store.jobsForPublish(rows.map((r) => r.job_id));
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const job = jobs[i];
      // A running job has its message, unless its lease ran out and `sqs republish` found it lost.
      const lapsed = job?.state === 'running' && (job.lease === null || Date.parse(job.lease.expires_at) <= now);
      if (!job || isTerminal(job.state) || (job.state === 'running' && !lapsed)) {
        // Cancelled (or otherwise ended) before it was published: nothing to deliver.
        done.push({ id: row.id, messageId: null });
        result.skipped++;
        continue;
      }
      const runAt = Date.parse(job.run_at);
      const delay = Math.max(0, Math.min(MAX_DELAY_SECONDS, this.maxDelaySeconds, Math.ceil((runAt - now) / 1000)));
      const key = `${job.queue}\u0000${job.class}`;
      let g = byQueue.get(key);
      if (!g) byQueue.set(key, (g = { queue: job.queue, cls: job.class, items: [] }));
      const msg: OutgoingMessage = { key: String(row.id), body: messageBody(job), attributes: messageAttributes(job) };
      if (this.fifo) {
        // FIFO queues refuse per-message delays: a scheduled job's message goes now and
        // the consumer hides it until it is due. The dedup id is the row's, so a retried
        // send of this row is dropped by SQS and a redrive (a new row) never is.
        msg.groupId = sourceGroupId(job, this.fifo);
        msg.dedupId = publishDedupId(job.job_id, row.dedup ?? row.id);
      } else msg.delaySeconds = delay;
      g.items.push({ row, msg });
    }
    if (done.length) await this.store.markPublished(done);
    /** SQS could not be reached (or did not answer) for one queue: the others' rows wait for their next try, not for time-outs of their own. */
    let unreachable: BrokerUnavailableError | null = null;
    for (const g of byQueue.values()) {
      let url: string | null;
      try {
        if (unreachable) throw unreachable;
        url = await this.queues.sourceUrl(g.queue, g.cls);
      } catch (e) {
        if (e instanceof BrokerUnavailableError) unreachable = e;
        await this.fail(g.items.map((i) => i.row), (e as Error).message, result, e instanceof AgentqError ? e.code : 'SEND_FAILED');
        continue;
      }
      if (url === null) {
        await this.fail(g.items.map((i) => i.row), `the SQS queue ${this.queues.sourceName(g.queue, g.cls)} does not exist; run \`agentq sqs setup --queue ${g.queue}\``, result, 'CONFIG');
        continue;
      }
      const out = await sendBatch(this.client, url, g.items.map((i) => i.msg));
      await this.store.markPublished(out.sent.map((s) => ({ id: Number(s.key), messageId: s.messageId })));
      result.published += out.sent.length;
      const rowsById = new Map(g.items.map((i) => [String(i.row.id), i.row]));
      for (const f of out.failed) await this.fail([rowsById.get(f.key)!], f.error, result, 'SEND_FAILED');
    }
    return result;
  }

  private async fail(rows: OutboxRow[], error: string, result: RelayResult, code: string): Promise<void> {
    const now = this.store.now;
    await this.store.markPublishFailed(rows.map((r) => ({ id: r.id, error })), (tries) => now + retryDelayMs(tries));
    for (const r of rows) result.failed.push({ job_id: r.job_id, error, code });
  }
}
