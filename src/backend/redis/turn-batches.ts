/**
 * Calls made in the same turn of the event loop, gathered per key and sent
 * together (RedisBackend's submits and completions). A batch goes as soon as
 * it holds `max` items, so Redis works on it while the caller is still making
 * the rest of the turn's calls; what is left goes at the end of the turn
 * (`setImmediate`), or at once through `sendAll` (before a close).
 */
export class TurnBatches<C, T> {
  private readonly batches = new Map<string, { context: C; items: T[] }>();
  private endOfTurn: NodeJS.Immediate | null = null;

  constructor(
    private readonly max: number,
    private readonly send: (context: C, items: T[]) => void,
  ) {}

  /** Adds an item to the batch of `key` (`context` is kept from the batch's first item). */
  add(key: string, context: C, item: T): void {
    let batch = this.batches.get(key);
    if (!batch) {
      batch = { context, items: [] };
      this.batches.set(key, batch);
    }
    batch.items.push(item);
    if (batch.items.length >= this.max) {
      this.batches.delete(key);
      this.send(batch.context, batch.items);
    } else {
      this.endOfTurn ??= setImmediate(() => this.sendAll());
    }
  }

  /** Sends every batch still waiting. */
  sendAll(): void {
    if (this.endOfTurn) clearImmediate(this.endOfTurn);
    this.endOfTurn = null;
    const waiting = [...this.batches.values()];
    this.batches.clear();
    for (const b of waiting) this.send(b.context, b.items);
  }
}
