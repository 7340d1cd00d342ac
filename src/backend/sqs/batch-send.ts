/**
 * SendMessageBatch with the rules a mover needs: at most 10 entries per call
 * (the SQS limit), success decided per entry from the batch's own report
 * (a batch can partly fail), failed entries retried with exponential
 * backoff, and the caller told exactly which entries SQS confirmed.
 */
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { isConnectionError, toAgentqError } from './client.js';
import type { SqsDataPlane } from './data-plane.js';

export const SQS_BATCH_MAX = 10;

export interface OutgoingMessage {
  /** The caller's key for this message (reported back). */
  key: string;
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  delaySeconds?: number;
  /** FIFO queues only: the message group, kept on a move. */
  groupId?: string;
  /** FIFO queues only: a new id per move so the 5-minute dedup window cannot swallow it. */
  dedupId?: string;
}

export interface BatchOutcome {
  sent: Array<{ key: string; messageId: string }>;
  failed: Array<{ key: string; error: string }>;
}

export interface BatchSendOptions {
  /** Tries per entry, the first included (default 4). */
  tries?: number;
  /** First backoff pause in ms, doubled per try (default 100). */
  backoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Batches in flight at once: SQS scales with concurrent callers; one at a time is latency-bound. */
export const SEND_CONCURRENCY = 16;

export async function sendBatch(client: SqsDataPlane, queueUrl: string, messages: OutgoingMessage[], opts: BatchSendOptions = {}): Promise<BatchOutcome> {
  const out: BatchOutcome = { sent: [], failed: [] };
  const batches: OutgoingMessage[][] = [];
  for (let i = 0; i < messages.length; i += SQS_BATCH_MAX) batches.push(messages.slice(i, i + SQS_BATCH_MAX));
  let next = 0;
  const lane = async () => {
    while (next < batches.length) {
      const r = await sendOneBatch(client, queueUrl, batches[next++]!, opts);
      out.sent.push(...r.sent);
      out.failed.push(...r.failed);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, batches.length) }, lane));
  return out;
}

async function sendOneBatch(client: SqsDataPlane, queueUrl: string, batch: OutgoingMessage[], opts: BatchSendOptions): Promise<BatchOutcome> {
  const tries = opts.tries ?? 4;
  const sleep = opts.sleep ?? realSleep;
  const out: BatchOutcome = { sent: [], failed: [] };
  let pending = batch;
  let lastErrors = new Map<string, string>();
  for (let t = 0; t < tries && pending.length > 0; t++) {
    if (t > 0) await sleep((opts.backoffMs ?? 100) * 2 ** (t - 1));
    // Batch entry ids must be unique within a call and [A-Za-z0-9_-]{1,80}: use positions.
    const entries = pending.map((m, i) => ({
      Id: `m${i}`,
      MessageBody: m.body,
      MessageAttributes: m.attributes,
      ...(m.delaySeconds ? { DelaySeconds: m.delaySeconds } : {}),
      ...(m.groupId ? { MessageGroupId: m.groupId } : {}),
      ...(m.dedupId ? { MessageDeduplicationId: m.dedupId } : {}),
    }));
    try {
      const res = await client.sendMessageBatch({ QueueUrl: queueUrl, Entries: entries });
      const retry: OutgoingMessage[] = [];
      for (const ok of res.Successful ?? []) {
        const m = pending[Number(ok.Id!.slice(1))]!;
        out.sent.push({ key: m.key, messageId: ok.MessageId! });
      }
      lastErrors = new Map();
      for (const bad of res.Failed ?? []) {
        const m = pending[Number(bad.Id!.slice(1))]!;
        const why = `${bad.Code ?? 'Error'}: ${bad.Message ?? ''}`;
        // SenderFault entries (bad attributes, too large) will fail the same way again.
        if (bad.SenderFault) out.failed.push({ key: m.key, error: why });
        else {
          retry.push(m);
          lastErrors.set(m.key, why);
        }
      }
      pending = retry;
    } catch (e) {
      // The whole call failed: nothing in it is confirmed, so all of it is retried.
      const err = toAgentqError(e, 'SendMessageBatch');
      lastErrors = new Map(pending.map((m) => [m.key, err.message]));
      if (!isConnectionError(e) && !/RETRY|BUSY/.test(err.code)) break;
      // A call SQS never answered was already tried again by the client (3 attempts of 30 s);
      // trying the batch 4 times over made a silent endpoint hold a send for 6 minutes.
      if ((e as { name?: string })?.name === 'TimeoutError') break;
    }
  }
  for (const m of pending) out.failed.push({ key: m.key, error: lastErrors.get(m.key) ?? 'not confirmed by SQS' });
  return out;
}
