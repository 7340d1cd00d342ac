/**
 * `agentq metrics serve [--listen HOST:PORT]`: a Prometheus endpoint over the
 * same figures as `agentq stats`. Runs until Ctrl-C / SIGTERM, then closes
 * the listener and returns (exit 0). A failing collection is a 503 and it goes
 * on (a store that is down comes back), except when its SQLite store file was
 * removed or replaced: nothing but a restart reads the file now at that path,
 * so it answers that scrape's 503 with the reason, stops and exits 78
 * (STORE_REPLACED), as the worker, `tail --follow` and `stats --watch` do, and a
 * supervisor starts it again onto the right file.
 */
import { collectStats } from './stats.js';
import { renderPrometheus } from '../../metrics/prometheus.js';
import { DEFAULT_LISTEN, isLoopback, parseListen, startMetricsServer } from '../../metrics/server.js';
import { isStoreReplaced, StoreFile } from '../../backend/sqlite/store-file.js';
import { ConfigError, RetryLaterError, type AgentqError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';

export async function run(opts: { listen?: string }, ctx: CommandContext): Promise<void> {
  const listen = parseListen(opts.listen ?? DEFAULT_LISTEN);
  const backend = await ctx.openBackend();
  const storeFile = backend.kind === 'sqlite' ? StoreFile.watch(backend.description.slice('sqlite:'.length)) : null;
  // Set by the collection that finds the store file gone: the command stops and exits with it.
  let replaced: AgentqError | null = null;
  const storeGone = new AbortController();
  // Queues whose stats are damaged are served as agentq_queue_stats_up 0 (the others as usual):
  // said on stderr when the set changes, not once per scrape.
  let damagedBefore = '';
  const noteDamaged = (messages: string[]): void => {
    const now = messages.join('\n');
    if (now === damagedBefore) return;
    if (messages.length === 0) ctx.note('metrics: every queue\'s stats are readable again');
    for (const m of messages) ctx.warn(`${m} (served as agentq_queue_stats_up 0)`);
    damagedBefore = now;
  };
  const collect = async (): Promise<string> => {
    try {
      // Every scrape (a stat, microseconds): the backend's own read check runs at most once a
      // second, and a scrape served from the old file would show figures no process writes any more.
      storeFile?.check(
        'agentq metrics serve',
        'its figures would come from the old file, which no other process writes',
        'Start agentq metrics serve again (its supervisor does) to serve the store now at that path.',
      );
      const t0 = performance.now();
      const { stats, damaged } = await collectStats(backend, undefined);
      noteDamaged(damaged.map((d) => d.error.message));
      return renderPrometheus(stats, { scrapeSeconds: (performance.now() - t0) / 1000, damagedQueues: damaged.map((d) => d.queue) });
    } catch (e) {
      if (isStoreReplaced(e) && replaced === null) {
        replaced = e;
        storeGone.abort();
      }
      throw e;
    }
  };
  let server;
  try {
    server = await startMetricsServer({ listen, collect, log: {
        // (not for a store file gone: it does not work again, the command stops with the error instead)
        failing: (m) => void (replaced === null && ctx.warn(m)),
        recovered: (m) => ctx.note(m),
      }, });
  } catch (e) {
    throw listenError(e, opts.listen ?? DEFAULT_LISTEN, listen.host);
  }
  if (!isLoopback(listen.host)) ctx.warn(`listening on ${listen.host}, not loopback: queue names and tenant ids are visible to anyone who can reach it`);
  // The bound address goes to stdout (one line) so a script that asked for port 0 can read it.
  ctx.io.stdout.write(`${server.url}/metrics\n`);
  ctx.note(`agentq metrics: serving ${server.url}/metrics (Ctrl-C to stop)`);
  // The first Ctrl-C stops it cleanly (the scrapes in flight are answered).
  const releaseStops = ctx.handleStops();
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted || storeGone.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    storeGone.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // (a scrape waiting on a store that stopped answering is answered within its budget, 5 s or what
  // Prometheus allows: said at once, or a Ctrl-C looked ignored until then)
  const inFlight = server.unanswered();
  if (inFlight > 0 && ctx.signal.aborted) {
    const again = ctx.signal.reason instanceof Error && /^SIG[A-Z]+$/.test(ctx.signal.reason.message) && ctx.signal.reason.message !== 'SIGINT' ? `${ctx.signal.reason.message} again` : 'Ctrl-C again';
    ctx.note(`metrics: stopping — answering the ${inFlight === 1 ? 'scrape' : `${inFlight} scrapes`} in flight first (within ${inFlight === 1 ? 'its' : 'their'} budget; ${again} to exit at once)`);
  }
  try {
    // The scrape that found the file gone is answered first (its 503 says why).
    await server.close();
  } finally {
    releaseStops();
  }
  if (replaced !== null) throw replaced;
}

/** Why the listener could not bind, as the rule the --listen value broke (never an "internal error"). */
function listenError(e: unknown, shown: string, host: string): unknown {
  const code = (e as { code?: string }).code;
  const hint = 'Give --listen an address of this machine, e.g. 127.0.0.1:9464, [::1]:9464 or 0.0.0.0:9464.';
  switch (code) {
    case 'EADDRINUSE':
      return new RetryLaterError(`--listen ${shown}: the address is in use`, 'ADDRESS_IN_USE', 'Pick another port with --listen HOST:PORT.');
    case 'ENOTFOUND':
    case 'EAI_NONAME':
      return new ConfigError(`--listen ${shown}: the host ${JSON.stringify(host)} is not an address and does not resolve to one`, hint);
    case 'EAI_AGAIN':
      return new RetryLaterError(`--listen ${shown}: the name ${JSON.stringify(host)} could not be resolved now (DNS did not answer)`, 'DNS_UNAVAILABLE', 'Retry, or give an IP address.');
    case 'EADDRNOTAVAIL':
      return new ConfigError(`--listen ${shown}: ${host} is not an address of this machine`, hint);
    case 'EAFNOSUPPORT':
      return new ConfigError(`--listen ${shown}: this machine has no network of that address family`, hint);
    case 'EACCES':
    case 'EPERM':
      return new ConfigError(`--listen ${shown}: not allowed to listen there (ports below 1024 need privileges)`, 'Pick a port from 1024 up.');
    default:
      return e;
  }
}
