/**
 * The servers a test file starts in beforeAll, stopped in afterAll once they
 * are up — also when the set-up failed or timed out. `Promise.all([a(), b()])`
 * alone leaves a server that did start running when the other one failed, or
 * when the hook timed out before both were up: a Redis Cluster's three nodes
 * were found still running an hour after such a failure under load.
 */
export class TestServers {
  private readonly starts: Array<Promise<{ stop(): Promise<void> } | undefined>> = [];

  /** Registers a start; resolves with the server as the start does. */
  start<T extends { stop(): Promise<void> }>(starting: Promise<T>): Promise<T> {
    this.starts.push(starting.catch(() => undefined));
    return starting;
  }

  /** Waits for every registered start to settle and stops what came up. */
  async stopAll(): Promise<void> {
    await Promise.all(this.starts.map(async (s) => (await s)?.stop()));
  }
}
