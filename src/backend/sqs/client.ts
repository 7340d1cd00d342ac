/**
 * The SQS clients (the SDK client; the data plane of the hot calls, see
 * data-plane.ts) and the boundary where SQS errors, from the SDK or the wire
 * client alike, become agentq errors (one error shape for the rest of the
 * code, as sqs-consumer does it).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { AgentqError, BrokerUnavailableError, ConfigError, fromBroker, PermissionError, RetryLaterError } from '../../core/errors.js';
import type { SqsUrl } from './url.js';
import { SdkDataPlane, type SqsDataPlane } from './data-plane.js';
import { defaultCredentials } from './credentials.js';
import { SqsWireClient } from './wire.js';

/**
 * The AWS SDK client, built on first use (sdk.ts): the SDK costs ~150-200 ms
 * of CPU to load, and a `dlq redrive`, `sqs sweep`, worker or submit with the
 * default wire client never needs it when the URL has `endpoint=` (queue URLs
 * and depths go through the wire client too). Setup, queue auto-creation,
 * `client=sdk` and the endpoint ruleset (no `endpoint=`) load it.
 */
export class LazySqsSdk {
  private client: SQSClient | null;
  private pending: Promise<SQSClient> | null = null;
  constructor(
    private readonly url: Pick<SqsUrl, 'region' | 'endpoint'>,
    /** A client injected by a test: used as it is, never destroyed here. */
    injected?: SQSClient,
  ) {
    this.client = injected ?? null;
  }

  get(): Promise<SQSClient> {
    if (this.client) return Promise.resolve(this.client);
    return (this.pending ??= import('./sdk.js').then(
      (m) => (this.client = m.createSqsClient(this.url)),
      (e: unknown) => {
        this.pending = null;
        throw e;
      },
    ));
  }

  /** Whether the SDK was loaded (for tests and the bench). */
  get loaded(): boolean {
    return this.client !== null;
  }

  destroy(): void {
    this.client?.destroy();
  }
}

/**
 * The client of the hot data-plane calls and the queue look-ups
 * (data-plane.ts): agentq's wire client by default, with the default
 * credential chain (credentials.ts) and the SDK only for the endpoint
 * ruleset; the SDK for everything with `client=sdk`.
 */
export function createDataPlane(sdk: LazySqsSdk, url: SqsUrl): SqsDataPlane {
  if (url.client === 'sdk') return new SdkDataPlane(() => sdk.get());
  return new SqsWireClient({ credentials: defaultCredentials(url.region), sdk: () => sdk.get() }, { region: url.region, endpoint: url.endpoint });
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

/** How an answer from something other than SQS at the endpoint is named (toAgentqError). */
export const NOT_SQS = 'the SQS endpoint did not answer as SQS';
export const NOT_SQS_HINT = 'Check endpoint= in the URL (else AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL): it must be an SQS or SQS-compatible server.';

/**
 * Converts an SDK error into an agentq error carrying the right exit code. `queue`: the agentq
 * queue the call was for, so a missing SQS queue's hint is the exact setup command to run.
 */
export function toAgentqError(e: unknown, what: string, queue?: string): AgentqError {
  if (e instanceof AgentqError) return e;
  // Every error made here is SQS's (the broker's), refusals too: a worker names SQS for them, not its store.
  return fromBroker(sqsError(e, what, queue));
}

function sqsError(e: unknown, what: string, queue?: string): AgentqError {
  const err = e as { name?: string; message?: string };
  const name = err?.name ?? 'Error';
  const detail = `${what}: ${name}${err?.message && err.message !== name ? `: ${err.message}` : ''}`;
  if (isConnectionError(e)) return new BrokerUnavailableError(`SQS is unreachable (${detail})`, 'BACKEND_UNAVAILABLE', 'Check the endpoint and network, then try again.');
  // Something other than SQS answered (a wrong port, another service): the wire client's
  // NotSqsResponse, or the SDK failing to read the body. A gateway's 5xx page may pass; anything else is the URL.
  const status = (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  if (name === 'NotSqsResponse' || /Deserialization error/.test(err?.message ?? '')) {
    const what2 = name === 'NotSqsResponse' ? `${what}: ${err.message}` : `${what}: HTTP ${status ?? '?'}`;
    if (status !== undefined && status >= 500 && status !== 501) return new BrokerUnavailableError(`SQS is unreachable (${what2})`, 'BACKEND_UNAVAILABLE', 'Check the endpoint and network, then try again.');
    return new ConfigError(`${NOT_SQS} (${what2})`, NOT_SQS_HINT);
  }
  if (/AccessDenied|InvalidClientTokenId|UnrecognizedClient|SignatureDoesNotMatch|ExpiredToken|CredentialsProviderError/i.test(name + (err?.message ?? ''))) {
    return new PermissionError(`SQS refused the request (${detail})`, 'Check the AWS credentials (default chain) and the IAM permissions listed in the README, section "AWS SQS".');
  }
  if (isQueueMissing(e)) {
    return new ConfigError(`an SQS queue agentq needs does not exist (${detail})`, queue === undefined ? 'Create the queues with: agentq sqs setup --queue QUEUE' : `Run: agentq sqs setup --queue ${queue}`);
  }
  if (/Throttl|RequestThrottled|ServiceUnavailable|InternalError|OverLimit/i.test(name)) return new BrokerUnavailableError(`SQS is busy (${detail})`, 'BACKEND_BUSY');
  return new AgentqError('SQS_ERROR', detail, 1);
}

/**
 * The calls of a data plane that SQS has not answered yet, each with when its answer is due
 * (now, or after a receive's long-poll wait), on the real clock: they are network calls. A call
 * unanswered long past that is one SQS is silent on (an endpoint that accepts and never answers),
 * which `Backend.broker` reports so a worker does not take it for its store not answering.
 */
export class UnansweredCalls {
  private readonly calls = new Set<{ due: number }>();
  constructor(private readonly now: () => number = Date.now) {}
  start(waitMs: number): { due: number } {
    const c = { due: this.now() + waitMs };
    this.calls.add(c);
    return c;
  }
  end(c: { due: number }): void {
    this.calls.delete(c);
  }
  /** How long the most overdue unanswered call is past its due time (0: none). */
  silentMs(): number {
    const now = this.now();
    let most = 0;
    for (const c of this.calls) most = Math.max(most, now - c.due);
    return most;
  }
}

/**
 * `data` with every answer SQS gives counted by `answered` (`Backend.broker`): a result or a
 * refusal (a missing queue, denied credentials) is an answer; a call that did not reach SQS, or
 * found it busy, is not, nor one that failed before it was sent (an agentq error of its own).
 * `unanswered`: the calls in flight (see UnansweredCalls).
 */
export function countingAnswers(data: SqsDataPlane, answered: () => void, unanswered?: UnansweredCalls): SqsDataPlane {
  return new Proxy(data, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (!(r instanceof Promise)) return r;
        const waitSeconds = prop === 'receiveMessage' ? ((args[0] as { WaitTimeSeconds?: number } | undefined)?.WaitTimeSeconds ?? 0) : 0;
        return watchCall(r, answered, unanswered, waitSeconds * 1000);
      };
    },
  });
}

/**
 * One SQS call in flight, counted as `countingAnswers` counts the data plane's: in `unanswered`
 * until it settles (due after `waitMs`), and in `answered` when SQS answered it. For the calls
 * made through the SDK client (setup, auto-creation), so a command watching for a silent SQS
 * (`SqsBackend.answering`) sees them too.
 */
export function watchCall<T>(r: Promise<T>, answered: () => void, unanswered?: UnansweredCalls, waitMs = 0): Promise<T> {
  const call = unanswered?.start(waitMs);
  return r.then(
    (out) => {
      if (call) unanswered!.end(call);
      answered();
      return out;
    },
    (e: unknown) => {
      if (call) unanswered!.end(call);
      if (!(e instanceof AgentqError) && !(toAgentqError(e, '') instanceof RetryLaterError)) answered();
      throw e;
    },
  );
}
