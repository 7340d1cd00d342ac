/**
 * `agentq metrics serve [--listen HOST:PORT]`: a Prometheus endpoint over the
 * same figures as `agentq stats`. Runs until Ctrl-C / SIGTERM, then closes
 * the listener and returns (exit 0).
 */
import { collectStats } from './stats.js';
import { renderPrometheus } from '../../metrics/prometheus.js';
import { DEFAULT_LISTEN, isLoopback, parseListen, startMetricsServer } from '../../metrics/server.js';
import { RetryLaterError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';

export async function run(opts: { listen?: string }, ctx: CommandContext): Promise<void> {
  const listen = parseListen(opts.listen ?? DEFAULT_LISTEN);
  const backend = await ctx.openBackend();
  const collect = async (): Promise<string> => {
    const t0 = performance.now();
    const stats = await collectStats(backend, undefined);
    return renderPrometheus(stats, { scrapeSeconds: (performance.now() - t0) / 1000 });
  };
  let server;
  try {
    server = await startMetricsServer({ listen, collect });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'EADDRINUSE') throw new RetryLaterError(`--listen ${opts.listen ?? DEFAULT_LISTEN}: the address is in use`, 'ADDRESS_IN_USE', 'Pick another port with --listen HOST:PORT.');
    throw e;
  }
  if (!isLoopback(listen.host)) ctx.warn(`listening on ${listen.host}, not loopback: queue names and tenant ids are visible to anyone who can reach it`);
  // The bound address goes to stdout (one line) so a script that asked for port 0 can read it.
  ctx.io.stdout.write(`${server.url}/metrics\n`);
  ctx.note(`agentq metrics: serving ${server.url}/metrics (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
}
