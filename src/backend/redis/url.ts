/**
 * Connection URLs of the Redis backend:
 *   redis://[user:pass@]host:port[/db]            standalone
 *   rediss://…                                     standalone over TLS
 *   redis+cluster://host:port[,host:port…]         seed nodes of a Redis Cluster
 *   rediss+cluster://…                             Cluster over TLS
 * Query parameters:
 *   shards=N         shards of a queue created through this connection (default 1)
 *   prefix=P         key prefix (default `aq`), to share one Redis between deployments
 *   events_maxlen=N  cap of each shard's event stream (default 100000, approximate trim)
 */
import { ConfigError } from '../../core/errors.js';
import { refuseUnknownParams } from '../url-params.js';

export interface RedisUrlOptions {
  cluster: boolean;
  tls: boolean;
  nodes: Array<{ host: string; port: number }>;
  username: string | undefined;
  password: string | undefined;
  db: number;
  shards: number;
  prefix: string;
  eventsMaxLen: number;
  /** The URL with the password replaced: safe to print. */
  redacted: string;
}

const SCHEMES: Record<string, { cluster: boolean; tls: boolean }> = {
  'redis:': { cluster: false, tls: false },
  'rediss:': { cluster: false, tls: true },
  'redis+cluster:': { cluster: true, tls: false },
  'rediss+cluster:': { cluster: true, tls: true },
};

/** The most shards a queue may have (`shards=N`; a stored count above it is damaged). */
export const MAX_SHARDS = 1024;

export function isRedisUrl(url: string): boolean {
  return /^rediss?(\+cluster)?:\/\//.test(url);
}

export function parseRedisUrl(url: string): RedisUrlOptions {
  // The user-info runs to the LAST @ of the authority (`[^/?#]*@` is greedy): with the first one, an
  // unencoded @ in a password would leave part of it in the host, and in messages.
  const m = /^([a-z+]+:)\/\/(?:([^/?#]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  const scheme = m ? SCHEMES[m[1]!] : undefined;
  if (!m || !scheme) {
    throw new ConfigError(`not a Redis URL: ${redact(url)}`, 'Use redis://HOST:PORT, rediss://HOST:PORT or redis+cluster://HOST:PORT[,HOST:PORT...]');
  }
  const [, , auth, hostList, path, query] = m;
  let username: string | undefined;
  let password: string | undefined;
  if (auth) {
    // Refused rather than guessed: an @ in user-info is where a mistyped URL and a password that
    // was never percent-encoded look the same.
    if (auth.includes('@')) {
      throw new ConfigError(`the Redis URL ${redact(url)} has an unencoded "@" in its user name or password`, 'Percent-encode @ in the password as %40 (and % as %25, : in the user name as %3A).');
    }
    const i = auth.indexOf(':');
    if (i < 0) password = decodeUserinfo(auth, url);
    else {
      username = decodeUserinfo(auth.slice(0, i), url) || undefined;
      password = decodeUserinfo(auth.slice(i + 1), url);
    }
  }
  const nodes = (hostList ?? '').split(',').filter(Boolean).map((hp) => {
    // (no white space: a seed list pasted as "a:1, b:2" would look " b" up in DNS and fail as unreachable)
    const mm = /^(\[[^\]\s]+\]|[^:\s]+)(?::(\d+))?$/.exec(hp);
    if (!mm) {
      throw new ConfigError(
        `bad host:port ${JSON.stringify(hp)} in Redis URL`,
        /\s/.test(hp) ? 'A URL holds no spaces: separate seed nodes with a comma alone (redis+cluster://HOST:PORT,HOST:PORT).' : undefined,
      );
    }
    const port = mm[2] ? Number(mm[2]) : 6379;
    if (!(port > 0 && port < 65536)) throw new ConfigError(`port must be 1-65535 in Redis URL, got ${mm[2]}`);
    return { host: mm[1]!.replace(/^\[|\]$/g, ''), port };
  });
  if (nodes.length === 0) throw new ConfigError('a Redis URL needs at least one host');
  if (!scheme.cluster && nodes.length > 1) throw new ConfigError('several hosts need the cluster form: redis+cluster://HOST:PORT,HOST:PORT');
  const dbText = (path ?? '').replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw new ConfigError(`database must be a non-negative integer in Redis URL, got ${JSON.stringify(dbText)}`);
  if (scheme.cluster && db !== 0) throw new ConfigError('Redis Cluster has only database 0');
  const params = new URLSearchParams((query ?? '').replace(/^\?/, ''));
  refuseUnknownParams(params, ['shards', 'prefix', 'events_maxlen'], 'the Redis URL');
  const shards = intParam(params, 'shards', 1, 1, MAX_SHARDS);
  const eventsMaxLen = intParam(params, 'events_maxlen', 100_000, 100, 100_000_000);
  const prefix = params.get('prefix') ?? 'aq';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(prefix)) throw new ConfigError('prefix must be 1-64 characters of letters, digits and . _ -');
  return { ...scheme, nodes, username, password, db, shards, prefix, eventsMaxLen, redacted: redact(url) };
}

/** decodeURIComponent, with its URIError ("URI malformed") turned into the rule that was broken. */
function decodeUserinfo(text: string, url: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigError(
      `the Redis URL ${redact(url)} has a bad percent-escape in its user name or password (a % must be followed by two hex digits)`,
      'Percent-encode % in the password as %25 (and @ as %40).',
    );
  }
}

function intParam(p: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const v = p.get(name);
  if (v === null) return def;
  // Digits only: Number() would take 0x10, 1e1 or ' 2' (a queue keeps its shard count for good).
  const n = /^[0-9]{1,12}$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= min && n <= max)) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

/** Replaces the password (and anything that looks like one) with `***`. */
export function redact(url: string): string {
  // Up to the last @ of the authority: an unencoded @ in the password must not leave its tail visible.
  return url.replace(/^([a-z+]+:\/\/)([^/?#]*)@/, (_all, s: string, auth: string) => {
    const i = auth.indexOf(':');
    return i < 0 ? `${s}***@` : `${s}${auth.slice(0, i)}:***@`;
  });
}

/**
 * The store a Redis URL names (the backend's `storeId`): the servers (a Cluster by its seed nodes,
 * sorted), the database and the key prefix, which decide the keys read. Not the user, the TLS
 * scheme or the tuning parameters.
 */
export function redisStoreId(o: Pick<RedisUrlOptions, 'cluster' | 'nodes' | 'db' | 'prefix'>): string {
  const nodes = o.nodes.map((n) => `${n.host}:${n.port}`).sort().join(',');
  return `${o.cluster ? 'redis+cluster' : 'redis'}://${nodes}/${o.db}?prefix=${o.prefix}`;
}
