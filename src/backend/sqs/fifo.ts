/**
 * Message groups and deduplication ids for FIFO queues (`fifo=` in the URL).
 *
 * SQS FIFO rules this follows:
 * - every message needs a MessageGroupId; SQS delivers a group's messages
 *   in order and holds the rest of a group while one of its messages is in
 *   flight (received and not yet deleted or made visible again);
 * - a MessageDeduplicationId seen in the last 5 minutes makes SQS accept the
 *   send and drop the message. So an id names one publish intent: a retry of
 *   the same send reuses it (SQS drops the copy if the first got through), a
 *   new intent (a redrive, a second death) gets a new one, or the 5-minute
 *   window would swallow it;
 * - per-message DelaySeconds is refused on FIFO queues: a scheduled job's
 *   message is sent at once and hidden by the consumer until it is due.
 * Both ids allow 1-128 characters of ASCII letters, digits and punctuation.
 */
import { createHash } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { Job } from '../../core/schemas.js';
import type { FifoGrouping } from './url.js';

const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

/** An id SQS accepts: the value itself when it fits, else a hash of it (same input, same id). */
function fifoId(prefix: string, value: string): string {
  if (FIFO_ID.test(value)) return value;
  return `${prefix}${createHash('sha256').update(value).digest('hex').slice(0, 40)}`;
}

/**
 * The message group of a job on its source queue. `tenant`: a tenant's jobs
 * run one at a time in submit order (a retry or a scheduled job holds the
 * tenant's later jobs back: that is what FIFO order means). `job`: every job
 * its own group, so nothing waits on anything else.
 */
export function sourceGroupId(job: Pick<Job, 'job_id' | 'tenant_id'>, grouping: FifoGrouping): string {
  return grouping === 'tenant' ? fifoId('tenant-', job.tenant_id) : job.job_id;
}

/**
 * The group of agentq's own DLQ copy: the job id. DLQ copies have no order to
 * keep, and one group per copy means a copy kept in place (its entry is still
 * dead) never hides other copies from a sweep.
 */
export function dlqGroupId(job: Pick<Job, 'job_id'>): string {
  return job.job_id;
}

/**
 * One id per outbox row (or, on a store without stable row ids, per publish intent: `OutboxRow.dedup`):
 * relay retries of the row share it, a redrive or a republish (a new row) gets a new one.
 */
export function publishDedupId(jobId: string, outboxRow: number | string): string {
  return `${jobId}.p${outboxRow}`;
}

/**
 * One id per renewal of a waiting job's message (`fifo=job`: a copy replaces a message one receive
 * short of the backstop): named by the message it replaces, so a retried send of the copy shares it.
 * (SQS message ids are 36 characters: the id stays within the 128 allowed.)
 */
export function renewalDedupId(jobId: string, replacedMessageId: string): string {
  return fifoId('renewal-', `${jobId}.n${replacedMessageId}`);
}

/** One id per death of a job: a retried DLQ send shares it; the same job dying again after a redrive does not. */
export function dlqDedupId(job: Pick<Job, 'job_id' | 'lineage'>, deadAt: string): string {
  return `${job.job_id}.d${job.lineage.redrive_count}.${Date.parse(deadAt)}`;
}

/**
 * Splits one receive from a FIFO queue: the first message of each message
 * group is judged, the later ones of the same group are put back unjudged.
 * SQS may return several messages of one group in a single receive (in
 * order); running them side by side would break the one-at-a-time order a
 * group promises, and judging a later one while the first waits (not due,
 * tenant cap) would run it out of order. Put back, they stay behind the first
 * in the group and come round once it is done.
 */
export function firstOfEachGroup(messages: Message[]): { judge: Message[]; putBack: Message[] } {
  const groups = new Set<string>();
  const judge: Message[] = [];
  const putBack: Message[] = [];
  for (const m of messages) {
    const group = m.Attributes?.MessageGroupId;
    if (group === undefined) judge.push(m);
    else if (groups.has(group)) putBack.push(m);
    else {
      groups.add(group);
      judge.push(m);
    }
  }
  return { judge, putBack };
}
