/**
 * Custody of what is found in an SQS DLQ. SQS cannot look a message up,
 * filter, or move it atomically, and receiving changes it (the receive count
 * goes up, the message hides for the visibility timeout). So the DLQ is
 * swept: each message is received once, written to the store byte-exact
 * with its attributes (one transaction), and only then deleted from SQS. A
 * sweep killed between the two finds the message again and, seeing it
 * already in custody (by message id), just deletes it.
 *
 * - our own DLQ copies (error attributes set): a mirror of a store entry,
 *   kept while the store entry is dead (so SQS alarms see it), deleted once
 *   the entry left the DLQ (redriven, purged, expired); a copy of a job the
 *   store never had is the only record of it here, so it is kept
 *   byte-exact like a foreign message (custody kind `orphan`); a second copy of one entry
 *   (a DLQ send whose answer was lost, sent again when the job's message came back) is
 *   deleted, so the DLQ holds each dead entry once (`duplicate_copies`);
 * - agentq envelopes without them: moved by the native backstop
 *   (maxReceiveCount); the job goes dead in the store, reason `custody`;
 * - foreign or malformed bodies: kept byte-exact as DLQ entries listed as
 *   malformed, which the bulk engine never redrives or purges.
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SqsDataPlane } from './data-plane.js';
import type { SqsStore, StoreState } from './store.js';
import { toAgentqError } from './client.js';
import { allAttributes, parseMessage } from './envelope.js';

/**
 * Concurrent receive → persist → delete loops of one sweep (and the deletes of
 * held copies, as many at once). Each loop waits on two round trips per 10
 * messages, and SQS serves concurrent receivers. With the SDK's CPU per call
 * gone (wire.ts, http1.ts) the sweep waits on round trips: 16 instead of 4
 * was part of a 10% shorter redrive on the 5,000-copy bench (BENCHMARKS.md, "SQS").
 */
export const SWEEP_LANES = 16;

export interface SweepOptions {
  /** Stop after receiving this many messages (default 1000). */
  max?: number;
  /** Seconds a received message stays hidden while it is handled (default 30). */
  visibilitySeconds?: number;
  /** Keep foreign and malformed messages in SQS too (custody records a copy; nothing is deleted). */
  leaveForeign?: boolean;
  /**
   * Only remove agentq's DLQ copies of jobs the store has and no longer holds dead (the sweep
   * that follows `agentq dlq redrive`): nothing is taken into custody, and every other message
   * (copies of still-dead or unknown jobs, backstop-moved envelopes, foreign, malformed) is put
   * back visible, unchanged, for `agentq sqs sweep` to judge.
   */
  copiesOnly?: boolean;
  /** Stops receiving (between batches); what was received is still handled and put back. */
  signal?: AbortSignal;
  /**
   * With `copiesOnly`: a copy whose job is still dead when received is held (hidden, not put
   * back) until this settles, then judged again — so a sweep can run beside a redrive's moves
   * and still receive each message once. Settle it when the moves are over (also on failure).
   */
  holdUntil?: Promise<unknown>;
  /**
   * With `holdUntil`: subscribes to the jobs moved meanwhile (each committed redrive batch);
   * the copies held for them are judged and deleted then, beside the later moves, instead of
   * all at the end. Returns the unsubscribe.
   */
  onMoved?: (listener: (jobIds: string[]) => void) => () => void;
}

export interface SweepReport {
  received: number;
  custody: Array<{ job_id: string; kind: string; message_id: string; recorded: string; why: string }>;
  /**
   * Of `custody`, the messages found in custody already (`recorded: already_kept`): a foreign or
   * malformed message an earlier sweep left in SQS (`leaveForeign`), or one whose delete a killed
   * sweep never made. Not taken into custody again; a repeated sweep counted them every time.
   */
  already_in_custody: number;
  /**
   * Of `custody`, the envelopes of running jobs under a live lease (`recorded: requeued`): not taken
   * into custody, the job left running; put back in their source queue (or, when that failed, left
   * in the DLQ for the next sweep).
   */
  requeued: number;
  deleted: number;
  /**
   * Foreign/malformed messages left in SQS (with `leaveForeign`); with `copiesOnly`, every
   * message left in SQS other than the copies counted in `mirror_kept`.
   */
  kept_in_sqs: number;
  /** Our own DLQ copies of entries still dead in the store, left in place (one per entry). */
  mirror_kept: number;
  /**
   * Further copies of an entry still dead, found beside the one kept (`mirror_kept`): deleted (and
   * counted in `deleted`). A DLQ send whose answer never came (a worker stopped while SQS was
   * frozen, a connection cut) may have been carried out by SQS, and the copy is sent again when the
   * job's message comes back: SQS cannot tell, and only a sweep sees both.
   */
  duplicate_copies: number;
  /** Stopped by `signal` before the DLQ was drained: later sweeps remove what is left. */
  interrupted?: boolean;
  /** Stopped at `max` received before a receive came back empty: more messages may remain. */
  max_reached?: boolean;
}

/**
 * Puts a job's envelope, taken out of the DLQ, back in the job's source queue (`requeued`); true
 * once SQS confirmed it. Without one (or when it fails) the message is put back in the DLQ,
 * visible, for the next sweep.
 */
export type Requeue = (jobId: string, m: Message) => Promise<boolean>;

export async function sweepDlq(
  client: SqsDataPlane,
  store: SqsStore,
  dlq: { url: string; name: string; queue: string; maxReceiveCount: number },
  opts: SweepOptions = {},
  requeue?: Requeue,
): Promise<SweepReport> {
  const report: SweepReport = { received: 0, custody: [], already_in_custody: 0, requeued: 0, deleted: 0, kept_in_sqs: 0, mirror_kept: 0, duplicate_copies: 0 };
  const max = opts.max ?? 1000;
  const seen = new Set<string>();
  const putBack: Array<{ Id: string; ReceiptHandle: string; VisibilityTimeout: number }> = [];
  /** Jobs one of whose DLQ copies this sweep keeps in place: any other copy of theirs is a duplicate. */
  const mirrored = new Set<string>();
  /** Copies held (their jobs were dead when received) by job id, until their job moves or `holdUntil` settles. */
  const held = new Map<string, string[]>();
  /** Judgements of held copies started when their jobs moved (onMoved); the first failure fails the sweep. */
  const judging = new Set<Promise<void>>();
  let judgeError: unknown = null;
  // Deletes of one received batch go out together (DeleteMessageBatch), after every
  // message of the batch is safely in the store.
  const flushDeletes = async (receipts: string[]) => {
    if (receipts.length === 0) return;
    const out = await client.deleteMessageBatch({ QueueUrl: dlq.url, Entries: receipts.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r })) });
    // A failed delete leaves the message in SQS; the next sweep finds it already in custody and deletes it then.
    report.deleted += out.Successful?.length ?? 0;
  };
  /**
   * Handles one received message; returns its receipt when it is to be deleted. `state` is the
   * store's state of the job of an agentq DLQ copy (read for the whole received batch at once).
   */
  const handle = async (m: Message, parsed: ReturnType<typeof parseMessage>, state: StoreState | null | undefined): Promise<string | null> => {
    const keepInPlace = () => {
      putBack.push({ Id: `p${putBack.length}`, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 });
      return null;
    };
    if (parsed.kind === 'agentq' && parsed.isAppDlqCopy) {
      if (state === 'dead' && opts.copiesOnly && opts.holdUntil) {
        const receipts = held.get(parsed.jobId);
        if (receipts) receipts.push(m.ReceiptHandle!);
        else held.set(parsed.jobId, [m.ReceiptHandle!]);
        return null;
      }
      if (state === 'dead') {
        // One copy per entry stays; this sweep received every visible message once, so it sees them all.
        if (mirrored.has(parsed.jobId)) {
          report.duplicate_copies++;
          return m.ReceiptHandle!;
        }
        mirrored.add(parsed.jobId);
        report.mirror_kept++;
        return keepInPlace();
      }
      // After a redrive, only a job the store has and no longer holds dead lets its copy go;
      // a copy of a job the store does not know is left for `agentq sqs sweep`.
      if (opts.copiesOnly && (state === null || state === undefined)) {
        report.kept_in_sqs++;
        return keepInPlace();
      }
      // The store has the job and it left the DLQ (or a purge removed it): the mirror has nothing left to say.
      if (state !== null && state !== undefined) return m.ReceiptHandle!;
      // A copy of a job this store never had (another store wrote it, or the URL names the wrong
      // store) is the only record of that job here: taken into custody byte-exact below, like a
      // foreign message, never deleted unrecorded.
    }
    if (opts.copiesOnly) {
      report.kept_in_sqs++;
      return keepInPlace();
    }
    // The count survives the move to the DLQ, and this sweep's own receive added one.
    const receiveCount = Number(m.Attributes?.ApproximateReceiveCount ?? NaN) - 1;
    const why =
      parsed.kind === 'agentq' && parsed.isAppDlqCopy
        ? `agentq's DLQ copy of job ${parsed.jobId} found in ${dlq.name}, but this job store has no such job (another store wrote it, or this URL names another store): kept byte-exact`
        : parsed.kind === 'agentq'
        ? `SQS moved the message to ${dlq.name} by its RedrivePolicy (maxReceiveCount ${dlq.maxReceiveCount}) after ${Number.isFinite(receiveCount) ? receiveCount : 'several'} receives without a delete: a consumer kept crashing or stalling on it`
        : parsed.kind === 'malformed'
          ? `malformed message found in ${dlq.name}: ${parsed.why}`
          : `foreign message found in ${dlq.name}: ${parsed.why}`;
    const r = await store.takeCustody({
      kind: parsed.kind,
      jobId: parsed.kind === 'foreign' ? null : parsed.jobId,
      messageId: m.MessageId!,
      sourceQueue: dlq.name,
      queue: dlq.queue,
      body: m.Body ?? '',
      attributes: allAttributes(m),
      receiveCount: Number.isFinite(receiveCount) ? receiveCount : null,
      why,
    });
    if (r.recorded === 'requeued') {
      // A running job under a live lease: its message goes back to its source queue, not the job to its end.
      const back = requeue !== undefined && (await requeue(r.jobId, m).catch(() => false));
      const said = back
        ? `a running job under a live lease (its worker alive): left running, its message put back in its source queue (${why})`
        : `a running job under a live lease (its worker alive): left running; its message could not be put back in its source queue, so it stays in ${dlq.name} for the next sweep (${why})`;
      report.custody.push({ job_id: r.jobId, kind: parsed.kind, message_id: m.MessageId!, recorded: r.recorded, why: said });
      report.requeued++;
      return back ? m.ReceiptHandle! : keepInPlace();
    }
    report.custody.push({ job_id: r.jobId, kind: parsed.kind, message_id: m.MessageId!, recorded: r.recorded, why });
    if (r.recorded === 'already_kept') report.already_in_custody++;
    if (parsed.kind !== 'agentq' && opts.leaveForeign) {
      report.kept_in_sqs++;
      return keepInPlace();
    }
    return m.ReceiptHandle!;
  };
  // Messages asked for by receives in flight: lanes reserve before they ask, so the sweep
  // never receives more than `max` (a receive raises receive counts; do not overshoot).
  let reserved = 0;
  /** A receive came back empty: nothing visible was left (else the sweep stopped at `max`). */
  let emptied = false;
  // Several receivers at once: SQS serves concurrent receives, and one at a time is latency-bound.
  const lane = async () => {
    while (reserved < max) {
      if (opts.signal?.aborted) {
        report.interrupted = true;
        return;
      }
      const want = Math.min(10, max - reserved);
      reserved += want;
      const out = await client.receiveMessage({
        QueueUrl: dlq.url,
        MaxNumberOfMessages: want,
        VisibilityTimeout: opts.visibilitySeconds ?? 30,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        // Custody records every system attribute; copiesOnly judges by body and message attributes alone.
        ...(opts.copiesOnly ? {} : { MessageSystemAttributeNames: ['All'] as const }),
      });
      reserved -= want - (out.Messages?.length ?? 0);
      const msgs = (out.Messages ?? []).filter((m) => !seen.has(m.MessageId!));
      if (msgs.length === 0) {
        emptied = true;
        return;
      }
      for (const m of msgs) seen.add(m.MessageId!);
      report.received += msgs.length;
      const parsed = msgs.map(parseMessage);
      // The store state of every agentq DLQ copy of the batch in one read (one query on SQLite).
      const copyIds: string[] = [];
      for (const p of parsed) if (p.kind === 'agentq' && p.isAppDlqCopy) copyIds.push(p.jobId);
      const states = new Map<string, StoreState | null>();
      if (copyIds.length > 0) {
        const got = await store.statesOf(copyIds);
        copyIds.forEach((id, i) => states.set(id, got[i] ?? null));
      }
      const receipts: string[] = [];
      for (let i = 0; i < msgs.length; i++) {
        const p = parsed[i]!;
        const r = await handle(msgs[i]!, p, p.kind === 'agentq' ? states.get(p.jobId) : undefined);
        if (r !== null) receipts.push(r);
      }
      await flushDeletes(receipts);
    }
  };
  /**
   * Held copies judged again (taken out of `held` first): deleted when the store has their job
   * and no longer holds it dead, put back otherwise. 500 per store read, deleted 10 per call,
   * several calls at once. If it fails, what it did not delete is put back.
   */
  const judge = async (copies: Array<{ jobId: string; receipt: string }>) => {
    let done = 0;
    try {
      while (done < copies.length) {
        const chunk = copies.slice(done, done + 500);
        const states = await store.statesOf(chunk.map((h) => h.jobId));
        const receipts: string[] = [];
        chunk.forEach((h, i) => {
          const st = states[i] ?? null;
          if (st !== null && st !== 'dead') receipts.push(h.receipt);
          else if (st === 'dead' && mirrored.has(h.jobId)) {
            report.duplicate_copies++;
            receipts.push(h.receipt);
          } else {
            if (st === 'dead') {
              mirrored.add(h.jobId);
              report.mirror_kept++;
            } else report.kept_in_sqs++;
            putBack.push({ Id: `p${putBack.length}`, ReceiptHandle: h.receipt, VisibilityTimeout: 0 });
          }
        });
        await inLanes(receipts, flushDeletes);
        done += chunk.length;
      }
    } catch (e) {
      for (const h of copies.slice(done)) putBack.push({ Id: `p${putBack.length}`, ReceiptHandle: h.receipt, VisibilityTimeout: 0 });
      throw e;
    }
  };
  const takeHeld = (jobIds: Iterable<string>) => {
    const out: Array<{ jobId: string; receipt: string }> = [];
    for (const jobId of jobIds) {
      const receipts = held.get(jobId);
      if (!receipts) continue;
      held.delete(jobId);
      for (const receipt of receipts) out.push({ jobId, receipt });
    }
    return out;
  };
  // A redrive batch committed: the copies held for its jobs go now, beside the next moves.
  const unsubscribe = opts.holdUntil && opts.onMoved
    ? opts.onMoved((jobIds) => {
        const copies = takeHeld(jobIds);
        if (copies.length === 0) return;
        const p: Promise<void> = judge(copies).then(
          () => void judging.delete(p),
          (e: unknown) => {
            judging.delete(p);
            judgeError ??= e;
          },
        );
        judging.add(p);
      })
    : null;
  try {
    await Promise.all(Array.from({ length: SWEEP_LANES }, lane));
    if (!emptied && !report.interrupted && report.received >= max) report.max_reached = true;
    if (opts.holdUntil) {
      await opts.holdUntil.catch(() => undefined);
      unsubscribe?.();
      while (judging.size > 0) await Promise.all(judging);
      if (judgeError !== null) throw judgeError;
      // What is still held (its job had not moved when told, or nobody told): judged now.
      await judge(takeHeld([...held.keys()]));
    }
  } catch (e) {
    throw toAgentqError(e, `sweeping ${dlq.name}`, dlq.queue);
  } finally {
    unsubscribe?.();
    // Held copies not judged (the sweep failed) go back too, once the judgements under way are over.
    while (judging.size > 0) await Promise.all(judging);
    for (const h of takeHeld([...held.keys()])) putBack.push({ Id: `p${putBack.length}`, ReceiptHandle: h.receipt, VisibilityTimeout: 0 });
    // Put back what stays in SQS at once, not after the visibility timeout.
    await inLanes(putBack, (entries) => client.changeMessageVisibilityBatch({ QueueUrl: dlq.url, Entries: entries.map((e, i) => ({ ...e, Id: `p${i}` })) }).catch(() => undefined));
  }
  return report;
}

/** `fn` over `items` 10 at a time (an SQS batch), SWEEP_LANES calls in flight. */
async function inLanes<T>(items: T[], fn: (batch: T[]) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: SWEEP_LANES }, async () => {
      while (next < items.length) {
        const batch = items.slice(next, next + 10);
        next += 10;
        await fn(batch);
      }
    }),
  );
}
