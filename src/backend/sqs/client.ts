/**
 * The SQS clients (the SDK client; the data plane of the hot calls, see
 * data-plane.ts) and the boundary where SQS errors, from the SDK or the wire
 * client alike, become agentq errors (one error shape for the rest of the
 * code, as sqs-consumer does it).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { AgentqError, ConfigError, PermissionError, RetryLaterError } from '../../core/errors.js';
import type { SqsUrl } from './url.js';
import { SdkDataPlane, type SqsDataPlane } from './data-plane.js';
import { SqsWireClient } from './wire.js';

export function createSqsClient(url: SqsUrl): SQSClient {
  // The SDK prints a Node-20 end-of-support warning on the first client; that is
  // noise in an operator's terminal and in `-o json` pipelines, so it is turned off
  // unless the user set the variable themselves.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new SQSClient({
    region: url.region,
    ...(url.endpoint ? { endpoint: url.endpoint } : {}),
    // Our own loops retry with backoff where it is safe; the SDK's retries stay modest.
    maxAttempts: 3,
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

/**
 * The client of the hot data-plane calls (data-plane.ts): agentq's wire client
 * by default, the SDK with `client=sdk`. Both use `client`'s credentials and
 * endpoint settings.
 */
export function createDataPlane(client: SQSClient, url: SqsUrl): SqsDataPlane {
  return url.client === 'sdk' ? new SdkDataPlane(client) : new SqsWireClient(client, { region: url.region, endpoint: url.endpoint });
}

const CONNECTION = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|socket hang up|TimeoutError|NetworkingError/i;

export function isConnectionError(e: unknown): boolean {
  const err = e as { name?: string; code?: string; message?: string };
  return CONNECTION.test(`${err?.name ?? ''} ${err?.code ?? ''} ${err?.message ?? ''}`);
}

export function isQueueMissing(e: unknown): boolean {
  const name = (e as { name?: string })?.name ?? '';
  return /QueueDoesNotExist|NonExistentQueue/i.test(name);
}

/** Converts an SDK error into an agentq error carrying the right exit code. */
export function toAgentqError(e: unknown, what: string): AgentqError {
  if (e instanceof AgentqError) return e;
  const err = e as { name?: string; message?: string };
  const name = err?.name ?? 'Error';
  const detail = `${what}: ${name}${err?.message && err.message !== name ? `: ${err.message}` : ''}`;
  if (isConnectionError(e)) return new RetryLaterError(`SQS is unreachable (${detail})`, 'BACKEND_UNAVAILABLE', 'Check the endpoint and network, then try again.');
  if (/AccessDenied|InvalidClientTokenId|UnrecognizedClient|SignatureDoesNotMatch|ExpiredToken|CredentialsProviderError/i.test(name + (err?.message ?? ''))) {
    return new PermissionError(`SQS refused the request (${detail})`, 'Check the AWS credentials (default chain) and the IAM permissions listed in the README, section "AWS SQS".');
  }
  if (isQueueMissing(e)) return new ConfigError(`an SQS queue agentq needs does not exist (${detail})`, 'Run `agentq sqs setup` to create the queues.');
  if (/Throttl|RequestThrottled|ServiceUnavailable|InternalError|OverLimit/i.test(name)) return new RetryLaterError(`SQS is busy (${detail})`, 'BACKEND_BUSY');
  return new AgentqError('SQS_ERROR', detail, 1);
}
