/**
 * Group publishing for submit: every submit waits until its own job is
 * published (or the attempt failed and the outbox keeps it), but submits made
 * while a publish is in flight are sent together in the next round, as
 * SendMessageBatch of 10. Sequential submits pay one round trip each;
 * concurrent ones share them.
 */
import type { OutboxRelay } from './relay.js';

export class GroupPublisher {
  private waiting: Array<{ jobId: string; done: () => void }> = [];
  private inFlight: Promise<void> | null = null;

  constructor(private readonly relay: OutboxRelay) {}

  /** Resolves once a publish round that included `jobId` ended; never rejects (the outbox keeps failures). */
  publish(jobId: string): Promise<void> {
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
      try {
        await this.relay.publishJobs(round.map((w) => w.jobId));
      } catch {
        // The jobs are committed with their outbox rows; the relay publishes them later.
      }
      for (const w of round) w.done();
    }
    this.inFlight = null;
  }
}
