/**
 * Group publishing for submit: every submit waits until its own job is
 * published (or the attempt failed and the outbox keeps it), but submits made
 * while a publish is in flight are sent together in the next round, as
 * SendMessageBatch of 10. Sequential submits pay one round trip each;
 * concurrent ones share them.
 *
 * A submit waits for its publish only so long (`waitMs`): an SQS endpoint that
 * accepts connections and never answers held a submit for the transport's
 * time-outs and retries (3 × 30 s) although its job was already stored, and
 * the outbox relay publishes it later anyway.
 */
import type { OutboxRelay } from './relay.js';

export class GroupPublisher {
  private waiting: Array<{ jobId: string; done: (error: string | null) => void }> = [];
  private inFlight: Promise<void> | null = null;
  /** Submits not yet answered (published, failed, or given up on), and who waits for none to be left. */
  private unanswered = 0;
  private allAnswered: Array<() => void> = [];

  constructor(private readonly relay: OutboxRelay) {}

  /**
   * Resolves once a publish round that included `jobId` ended, or after `waitMs` (the round goes
   * on): null when it was published (or had nothing to publish), else why not. Never rejects (the
   * outbox keeps failures).
   */
  publish(jobId: string, waitMs?: number): Promise<string | null> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let answered = false;
      const done = (error: string | null) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        resolve(error);
        if (--this.unanswered === 0) for (const wake of this.allAnswered.splice(0)) wake();
      };
      if (waitMs !== undefined) timer = setTimeout(() => done(`SQS did not answer within ${waitMs / 1000} s`), waitMs);
      this.unanswered++;
      this.waiting.push({ jobId, done });
      if (!this.inFlight) this.inFlight = this.drain();
    });
  }

  /** Waits for every publish round started so far (before closing the client). */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /**
   * Waits until every submit has had its answer; then true when no round is still running, false
   * when one is that its submits gave up on (SQS silent), which close() does not wait for.
   */
  async settle(): Promise<boolean> {
    if (this.unanswered > 0) await new Promise<void>((r) => this.allAnswered.push(r));
    return this.inFlight === null;
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const round = this.waiting;
      this.waiting = [];
      let failed: Map<string, string>;
      try {
        const r = await this.relay.publishJobs(round.map((w) => w.jobId));
        failed = new Map(r.failed.map((f) => [f.job_id, f.error]));
      } catch (e) {
        // The jobs are committed with their outbox rows; the relay publishes them later.
        const why = e instanceof Error ? e.message : String(e);
        failed = new Map(round.map((w) => [w.jobId, why]));
      }
      for (const w of round) w.done(failed.get(w.jobId) ?? null);
    }
    this.inFlight = null;
  }
}
