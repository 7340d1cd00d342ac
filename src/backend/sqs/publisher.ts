/**
 * Group publishing for submit: every submit waits until its own job is
 * published (or the attempt failed and the outbox keeps it), but submits made
 * while a publish is in flight are sent together in the next round, as
 * SendMessageBatch of 10. Sequential submits pay one round trip each;
 * concurrent ones share them.
 */
import type { OutboxRelay } from './relay.js';

export class GroupPublisher {
  private waiting: Array<{ jobId: string; done: (error: string | null) => void }> = [];
  private inFlight: Promise<void> | null = null;

  constructor(private readonly relay: OutboxRelay) {}

  /**
   * Resolves once a publish round that included `jobId` ended: null when it was published (or had
   * nothing to publish), else why not. Never rejects (the outbox keeps failures).
   */
  publish(jobId: string): Promise<string | null> {
    return new Promise((resolve) => {
      this.waiting.push({ jobId, done: resolve });
      if (!this.inFlight) this.inFlight = this.drain();
    });
  }

  /** Waits for every publish round started so far (before closing the client). */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
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
