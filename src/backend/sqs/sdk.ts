/**
 * The AWS SDK client, in a module of its own so that only what needs the SDK
 * loads it (client.ts imports this file lazily): `@aws-sdk/client-sqs` and its
 * smithy dependencies cost about 150-200 ms of CPU to load, a large share of a
 * short CLI run such as `dlq redrive`, whose SQS calls all go through the wire
 * client (wire.ts). The SDK is still what `sqs setup`, `client=sdk`, queue
 * auto-creation and the endpoint ruleset (no `endpoint=`) use.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SqsUrl } from './url.js';
import { SDK_LOGGER } from './credentials.js';

/**
 * How long an SDK call waits for a connection, and then on a silent socket, before it fails (and
 * is retried, `maxAttempts`): without them an endpoint that accepts and never answers held
 * `sqs setup` for ever. As the wire client's socket timeout (wire.ts).
 */
export const SDK_CONNECTION_TIMEOUT_MS = 10_000;
export const SDK_REQUEST_TIMEOUT_MS = 30_000;

export function createSqsClient(url: Pick<SqsUrl, 'region' | 'endpoint'>, timeouts: { connectionMs?: number; requestMs?: number } = {}): SQSClient {
  // The SDK prints a Node-20 end-of-support warning on the first client. The CLI turns it off for
  // itself (bin/agentq.js); here, in a host application's process, it is the host's to decide
  // (README "Library API"): a library does not change its caller's environment.
  return new SQSClient({
    region: url.region,
    // the SDK's warnings (its credential chain's among them) one line each, in agentq's format
    logger: SDK_LOGGER,
    ...(url.endpoint ? { endpoint: url.endpoint } : {}),
    // Our own loops retry with backoff where it is safe; the SDK's retries stay modest.
    maxAttempts: 3,
    requestHandler: { connectionTimeout: timeouts.connectionMs ?? SDK_CONNECTION_TIMEOUT_MS, socketTimeout: timeouts.requestMs ?? SDK_REQUEST_TIMEOUT_MS },
    // Resolve each command class's middleware stack once per client instead of on every
    // send (the SDK rebuilds and sorts the whole stack per call otherwise): about 15-20%
    // less client CPU per SQS call (bench/sqs-client-cpu.mjs). Safe here because agentq
    // never adds middleware to a single command and never passes per-call options.
    cacheMiddleware: true,
    // The SQS MD5 checks of message bodies stay on (the SDK default): they are the only
    // check that a received body, which custody persists byte-exact, is what SQS held, and
    // they cost little (the SDK uses Node's native MD5): `md5: false` measured 0.91x of the
    // default's CPU per call, inside the run-to-run spread, so no other check is needed.
  });
}
