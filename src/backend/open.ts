/**
 * Chooses and opens a backend from a connection URL:
 *   sqlite:PATH, sqlite:///abs/path, sqlite::memory:   the embedded default
 *   redis://, rediss://                                 the Redis adapter (lazy-loaded)
 *   redis+cluster://H:P[,H:P…], rediss+cluster://      the Redis adapter on a Redis Cluster
 *   sqs://REGION/PREFIX?endpoint=&store=                SQS broker + SQLite job store (lazy-loaded)
 * Adapters are imported lazily so a command only loads the driver it uses.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { AdmissionLimits } from '../core/admission.js';
import type { Clock, Random } from '../core/clock.js';
import { AgentqError, ConfigError, ExitCode, isAgentqError } from '../core/errors.js';
import type { FairnessOptions } from '../core/fairness.js';
import type { Backend } from './contract.js';

export interface OpenOptions {
  clock?: Clock;
  random?: Random;
  admission?: AdmissionLimits;
  fairness?: FairnessOptions;
  /** SQLite: how long to wait for another process's write lock (default 10 s; Tab completion uses a short one). */
  busyTimeoutMs?: number;
  /**
   * SQLite (also the SQS backend's SQLite job store): create a missing database file and its
   * directories (the default). A reading command passes false, so a mistyped path fails naming it
   * instead of answering from a new, empty store as if all were well (exit 78, NO_STORE).
   */
  create?: boolean;
}

/** A reading command pointed at a SQLite file that does not exist (see OpenOptions.create). */
export function noStoreError(path: string): AgentqError {
  return new AgentqError(
    'NO_STORE',
    `no agentq store at ${path}: a mistyped path? \`agentq submit\` creates it`,
    ExitCode.config,
    'Check --url / AGENTQ_URL / the context\'s url; only commands that add jobs (submit, worker, demo, sqs setup/sweep, outbox relay) create a store.',
  );
}

/** `sqlite:$XDG_DATA_HOME/agentq/agentq.db`, falling back to ~/.local/share (XDG base directory spec). */
export function defaultDataUrl(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  // The spec says a relative XDG path is invalid and must be ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'share');
  return `sqlite:${join(base, 'agentq', 'agentq.db')}`;
}

const SECRET_PARAM = /pass|secret|token|key|credential|auth|sig/i;

/**
 * The URL with credentials hidden, safe to print in any message: the
 * password of `user:password@`, a lone userinfo that may be a token
 * (`redis://TOKEN@host`), and query parameters that look secret.
 */
export function redactUrl(url: string): string {
  // Up to the last @ of the authority (greedy): an unencoded @ in a password is hidden whole.
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon >= 0) return `${scheme}${userinfo.slice(0, colon)}:***@`;
    return `${scheme}***@`;
  });
  out = out.replace(/([?&])([^=&#]+)=([^&#]*)/g, (m, sep: string, name: string) => (SECRET_PARAM.test(name) ? `${sep}${name}=***` : m));
  return out;
}

function sqlitePath(rest: string): string {
  if (rest === ':memory:') return ':memory:';
  // sqlite:///abs/path and sqlite://relative are accepted as well as sqlite:PATH.
  let p = rest.startsWith('//') ? rest.slice(2) : rest;
  if (p.startsWith('~/')) p = join(homedir(), p.slice(2));
  return p;
}

/**
 * `mkdir -p`, one level at a time. Node's own `mkdirSync(dir, { recursive: true })` never
 * returns for a path under /proc (mkdir there fails with ENOENT although the parent exists);
 * here the first level that cannot be made throws at once.
 */
function makeDirs(dir: string): void {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeDirs(parent);
  try {
    mkdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // another process made it meanwhile
  }
}

export async function openBackend(url: string, opts: OpenOptions = {}): Promise<Backend> {
  const shown = redactUrl(url);
  // `AGENTQ_URL="sqlite:./x.db "`, a line read from a file with its newline: taken as it is, a
  // submit would create a store named `x.db ` (or `x.db\n`) that no worker ever reads.
  if (/^\s|\s$/.test(url)) {
    throw new ConfigError(`the backend URL ${JSON.stringify(shown)} begins or ends with a space or line break`, 'Remove it (check --url, AGENTQ_URL or the context\'s url; a value read from a file may keep its newline).');
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'sqlite') {
    const path = sqlitePath(url.slice('sqlite:'.length));
    if (path === '') throw new ConfigError(`the URL ${shown} names no database file`, 'Use sqlite:PATH, e.g. sqlite:./agentq.db, or sqlite::memory:.');
    // `sqlite:/x.db?mode=ro` would otherwise create a file named `x.db?mode=ro` (and not be read-only).
    if (path.includes('?')) {
      throw new ConfigError(`the URL ${shown}: sqlite: URLs take no parameters`, 'Use sqlite:PATH with no "?..." part; for read-only access use a context with "readOnly": true.');
    }
    if (path !== ':memory:' && statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      // (SQLite says only "unable to open database file")
      throw new ConfigError(`the URL ${shown} names a directory, not a database file`, `Give the database file's path, e.g. sqlite:${join(path, 'agentq.db')}.`);
    }
    if (opts.create === false && path !== ':memory:' && !existsSync(path)) throw noStoreError(path);
    try {
      if (path !== ':memory:') makeDirs(dirname(path));
      const { SqliteBackend } = await import('./sqlite/index.js');
      return new SqliteBackend({ path, ...opts });
    } catch (e) {
      if (isAgentqError(e)) throw e;
      throw new ConfigError(`cannot open ${shown}: ${(e as Error).message}`);
    }
  }
  if (scheme === 'redis' || scheme === 'rediss' || scheme === 'redis+cluster' || scheme === 'rediss+cluster') {
    // Lazy: only commands that use Redis load ioredis.
    const { RedisBackend, parseRedisUrl } = await import('./redis/index.js');
    return new RedisBackend(parseRedisUrl(url), opts);
  }
  if (scheme === 'sqs') {
    // SQS as the broker, a SQLite job store with an outbox (src/backend/sqs); the AWS SDK loads only here.
    const { parseSqsUrl, defaultStorePath } = await import('./sqs/url.js');
    const parsed = parseSqsUrl(url, shown);
    // A store= path someone typed must exist for a reading command; the default one is created as ever.
    if (opts.create === false && parsed.redisStore === null && parsed.storePath !== defaultStorePath(parsed.region, parsed.prefix) && !existsSync(parsed.storePath)) {
      throw noStoreError(parsed.storePath);
    }
    const { SqsBackend } = await import('./sqs/index.js');
    return new SqsBackend({ url: parsed, shown, ...opts });
  }
  throw new ConfigError(
    `unsupported backend URL ${shown}`,
    'Use sqlite:PATH (the embedded default), redis://HOST:PORT, rediss://HOST:PORT, redis+cluster://HOST:PORT or sqs://REGION/PREFIX.',
  );
}
