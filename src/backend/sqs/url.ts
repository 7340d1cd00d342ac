/**
 * `sqs://REGION/PREFIX?endpoint=http://127.0.0.1:4566&store=<url-encoded store URL>&fifo=1&client=sdk`
 *
 * REGION is the AWS region; PREFIX names every queue agentq owns
 * (`PREFIX-QUEUE-CLASS`, `PREFIX-QUEUE-dlq`). Credentials never come from the
 * URL: the AWS SDK's default chain (env, shared config, SSO, instance role).
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { isRedisUrl, parseRedisUrl, redact } from '../redis/url.js';
import { refuseUnknownParams } from '../url-params.js';

export interface SqsUrl {
  region: string;
  prefix: string;
  /** A local emulator or VPC endpoint; the SDK's regional endpoint when null. */
  endpoint: string | null;
  /** Path of the SQLite job store file (unused when `redisStore` is set). */
  storePath: string;
  /** A Redis job store (`store=redis://…`, `redis+cluster://…`, URL-encoded) instead of the SQLite file. */
  redisStore: string | null;
  /** Create missing queues on first use (handy for emulators; `agentq sqs setup` otherwise). */
  autoCreate: boolean;
  /** RedrivePolicy maxReceiveCount on every source queue: the crash backstop. */
  maxReceiveCount: number;
  /** Long-poll wait of a receive, seconds (0-20). */
  waitSeconds: number;
  /**
   * FIFO queues (`….fifo`) and what a message group is: `tenant` (`fifo=1`):
   * a tenant's jobs are delivered one at a time in submit order; `job`
   * (`fifo=job`): every job its own group, FIFO deduplication without the
   * ordering. Null: standard queues.
   */
  fifo: FifoGrouping | null;
  /**
   * How the hot data-plane calls (send, receive, delete, visibility) reach SQS:
   * `wire` (default): agentq's own AWS JSON 1.0 client (wire.ts), a fraction of
   * the SDK's CPU per call; `sdk` (`client=sdk`): the AWS SDK for everything, the
   * way back. Control-plane calls (queue URLs, setup) always use the SDK.
   */
  client: SqsClientKind;
}

export type SqsClientKind = 'wire' | 'sdk';

export type FifoGrouping = 'tenant' | 'job';

const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const PREFIX = /^[A-Za-z0-9_-]{1,40}$/;

export const DEFAULT_MAX_RECEIVE_COUNT = 10;

export function defaultStorePath(region: string, prefix: string, env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'agentq', `sqs-${region}-${prefix}.db`);
}

/**
 * A whole-number parameter: its default when absent, digits only when given. `Number` would read an
 * empty `wait=` as 0 (a worker polling SQS without a long poll) and `1e1` as 10; NaN fails every range check.
 */
function wholeParam(value: string | null, absent: number): number {
  if (value === null) return absent;
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
}

export function parseSqsUrl(url: string, shown: string, env: Record<string, string | undefined> = process.env): SqsUrl {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(`the URL ${shown} is not a valid sqs:// URL`, 'Use sqs://REGION/PREFIX, e.g. sqs://eu-west-1/agentq.');
  }
  const region = u.hostname;
  let prefix: string;
  try {
    prefix = decodeURIComponent(u.pathname.replace(/^\//, '').replace(/\/$/, ''));
  } catch {
    // URIError ("URI malformed") would surface as an internal error
    throw new ConfigError(`the queue prefix of ${shown} has a bad percent-escape (a % must be followed by two hex digits)`, 'Use sqs://REGION/PREFIX, e.g. sqs://eu-west-1/agentq.');
  }
  if (!REGION.test(region)) throw new ConfigError(`the URL ${shown} names no AWS region (got ${JSON.stringify(region)})`, 'Use sqs://REGION/PREFIX, e.g. sqs://eu-west-1/agentq.');
  if (!PREFIX.test(prefix)) throw new ConfigError(`the queue prefix of ${shown} must be 1-40 letters, digits, _ or - (got ${JSON.stringify(prefix)})`);
  refuseUnknownParams(u.searchParams, ['endpoint', 'store', 'autocreate', 'max_receive_count', 'wait', 'fifo', 'client'], 'the SQS URL');
  const endpoint = u.searchParams.get('endpoint');
  if (endpoint !== null && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) throw new ConfigError(`endpoint= must be http(s)://HOST[:PORT], got ${JSON.stringify(endpoint)}`);
  if (endpoint === null) checkConfiguredEndpoint(env);
  const store = u.searchParams.get('store');
  let storePath = defaultStorePath(region, prefix, env);
  let redisStore: string | null = null;
  if (store !== null && isRedisUrl(store)) {
    parseRedisUrl(store); // a bad Redis URL is a config error now, not at first use
    redisStore = store;
  } else if (store !== null) {
    if (!/^sqlite:/i.test(store)) throw new ConfigError('store= must be a sqlite: URL or a redis://, rediss://, redis+cluster:// URL (URL-encoded)', `got ${JSON.stringify(store.replace(/\/\/[^@/]*@/, '//***@'))}`);
    storePath = store.slice('sqlite:'.length).replace(/^\/\//, '');
    if (storePath === '' || storePath === ':memory:') {
      throw new ConfigError('the SQS job store must be a file (the outbox relay and workers share it)', 'Use store=sqlite:PATH.');
    }
    if (storePath.startsWith('~/')) storePath = join(env.HOME || homedir(), storePath.slice(2));
  }
  const mrc = wholeParam(u.searchParams.get('max_receive_count'), DEFAULT_MAX_RECEIVE_COUNT);
  if (!(mrc >= 1 && mrc <= 1000)) throw new ConfigError('max_receive_count must be an integer from 1 to 1000 (the SQS limit)');
  const wait = wholeParam(u.searchParams.get('wait'), 20);
  if (!(wait >= 0 && wait <= 20)) throw new ConfigError('wait= must be whole seconds from 0 to 20 (the SQS long-poll limit)');
  const fifoParam = (u.searchParams.get('fifo') ?? '').toLowerCase();
  let fifo: FifoGrouping | null;
  if (['', '0', 'false', 'no'].includes(fifoParam)) fifo = null;
  else if (['1', 'true', 'yes', 'tenant'].includes(fifoParam)) fifo = 'tenant';
  else if (fifoParam === 'job') fifo = 'job';
  else throw new ConfigError(`fifo= must be 1 (message group = tenant), job (one group per job) or 0, got ${JSON.stringify(u.searchParams.get('fifo'))}`);
  // A switch read as "off" unless it says on would take a typo (autocreate=on) for off without a word.
  const autoCreateParam = (u.searchParams.get('autocreate') ?? '').toLowerCase();
  let autoCreate: boolean;
  if (['', '0', 'false', 'no'].includes(autoCreateParam)) autoCreate = false;
  else if (['1', 'true', 'yes'].includes(autoCreateParam)) autoCreate = true;
  else throw new ConfigError(`autocreate= must be 1 (create missing queues on first use) or 0, got ${JSON.stringify(u.searchParams.get('autocreate'))}`);
  const clientParam = (u.searchParams.get('client') ?? 'wire').toLowerCase();
  if (clientParam !== 'wire' && clientParam !== 'sdk') {
    throw new ConfigError(`client= must be wire (agentq's own SQS client for sends, receives and deletes, the default) or sdk (the AWS SDK for every call), got ${JSON.stringify(u.searchParams.get('client'))}`);
  }
  return {
    region,
    prefix,
    endpoint: endpoint === null ? null : endpoint.replace(/\/$/, ''),
    storePath,
    redisStore,
    autoCreate,
    maxReceiveCount: mrc,
    waitSeconds: wait,
    fifo,
    client: clientParam,
  };
}

/**
 * Without `endpoint=`, the SQS endpoint may come from the environment (AWS_ENDPOINT_URL_SQS, else
 * AWS_ENDPOINT_URL, as the AWS SDK reads them, unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true). A
 * bad one is a config error now, like a bad `endpoint=`: found at the first SQS call it was a
 * "TypeError: Invalid URL", after a submit had already stored its job.
 */
export function checkConfiguredEndpoint(env: Record<string, string | undefined>): void {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true') return;
  const name = env.AWS_ENDPOINT_URL_SQS ? 'AWS_ENDPOINT_URL_SQS' : env.AWS_ENDPOINT_URL ? 'AWS_ENDPOINT_URL' : null;
  if (name === null) return;
  const value = env[name]!;
  if (!isHttpUrl(value)) {
    throw new ConfigError(
      `${name} must be an http(s):// URL (the SQS endpoint, e.g. http://127.0.0.1:4566), got ${JSON.stringify(value)}`,
      `Fix or unset ${name}, or give the endpoint in the URL: sqs://REGION/PREFIX?endpoint=http%3A%2F%2FHOST%3APORT`,
    );
  }
}

export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** The URL as shown to people: a Redis store's password hidden (the store URL is URL-encoded inside it). */
export function redactStoreCredentials(shown: string): string {
  return shown.replace(/([?&]store=)([^&#]*)/, (m, pre: string, enc: string) => {
    let store: string;
    try {
      store = decodeURIComponent(enc);
    } catch {
      return m;
    }
    return isRedisUrl(store) ? pre + encodeURIComponent(redact(store)) : m;
  });
}
