/**
 * A small hand-written SQS client for the data-plane calls on agentq's hot
 * paths (see data-plane.ts): AWS JSON 1.0 (`POST /`, `X-Amz-Target:
 * AmazonSQS.<Op>`, `Content-Type: application/x-amz-json-1.0`), SigV4
 * (sigv4.ts), keep-alive connections of its own (http1.ts).
 *
 * Why: the AWS SDK v3 spends about 1.2 ms of CPU per SendMessageBatch of 10
 * and 1.8 ms per ReceiveMessage(10) + DeleteMessageBatch on its middleware
 * stack, schema serde and signer (BENCHMARKS.md, "SQS"); a redrive plus sweep
 * of 5,000 entries makes 1,500 such calls, and that was most of agentq's
 * CPU. The inputs and outputs here are the SDK's own JSON shapes (AWS JSON
 * 1.0 uses the member names as they are), so a request body is one
 * JSON.stringify and a response one JSON.parse.
 *
 * What it keeps from the SDK, on purpose:
 * - credentials: the SDK's default chain (credentials.ts, without the SQS
 *   client; or a given SDK client's own, `client.config.credentials()`),
 *   re-resolved when they are about to expire; never from flags or the URL;
 * - the endpoint: `endpoint=` of the URL (then the SDK is never loaded), else
 *   the SDK client's (loaded then) configured endpoint
 *   (AWS_ENDPOINT_URL_SQS, shared config), else the SDK's endpoint ruleset for
 *   the region (FIPS and dual-stack settings included), and, as the SDK does
 *   by default (`useQueueUrlAsEndpoint`), the queue URL's own origin when it
 *   differs from the resolved regional endpoint;
 * - MD5 checks of message bodies, sent and received: custody persists bodies
 *   byte-exact, and the MD5 is the only check that the body is what SQS held;
 * - errors: an Error whose `name` is the short AWS error type (as the SDK's
 *   error classes), so toAgentqError / isQueueMissing / isConnectionError
 *   (client.ts) treat both clients alike;
 * - retries as the SDK's standard mode: up to 3 attempts for throttling, 5xx,
 *   time-outs and connection errors, exponential backoff with full jitter.
 * Not here: clock-skew correction (the SDK's `systemClockOffset`); a machine
 * whose clock is off by more than 5 minutes gets SignatureDoesNotMatch /
 * RequestTimeTooSkewed, a permission error with its hint (or use client=sdk).
 */
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import type {
  ChangeMessageVisibilityBatchRequest,
  ChangeMessageVisibilityBatchResult,
  ChangeMessageVisibilityRequest,
  DeleteMessageBatchRequest,
  DeleteMessageBatchResult,
  DeleteMessageRequest,
  GetQueueAttributesRequest,
  GetQueueAttributesResult,
  GetQueueUrlRequest,
  GetQueueUrlResult,
  Message,
  MessageAttributeValue,
  ReceiveMessageRequest,
  ReceiveMessageResult,
  SendMessageBatchRequest,
  SendMessageBatchRequestEntry,
  SendMessageBatchResult,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SqsDataPlane } from './data-plane.js';
import { Http1Pool } from './http1.js';
import type { Identity, IdentityProvider } from './credentials.js';
import { signRequest } from './sigv4.js';
import { isHttpUrl } from './url.js';
import { ConfigError } from '../../core/errors.js';

export interface WireOptions {
  region: string;
  /** `endpoint=` of the URL (an emulator, a VPC endpoint); null: as the SDK resolves it. */
  endpoint: string | null;
  /** Attempts per call, the first included (default 3, as the SDK's standard mode). */
  maxAttempts?: number;
  /** Idle socket time-out of a call, ms, on top of a receive's long-poll wait (default 30 s). */
  socketTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * Where the wire client gets what it does not do itself: credentials, and
 * the SDK client for the endpoint settings when the URL has no `endpoint=`
 * (asked for only then, so the SDK is loaded only then).
 */
export interface WireSource {
  credentials: IdentityProvider;
  sdk: () => Promise<SQSClient>;
}

const isSdkClient = (x: SQSClient | WireSource): x is SQSClient => typeof (x as SQSClient).send === 'function';

interface Target {
  /** For the connection pool (http1.ts). */
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** The Host header (and the signed host). */
  host: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Credentials are re-resolved this long before they expire (the SDK's own refresh window). */
const EXPIRY_MARGIN_MS = 5 * 60_000;
const RETRY_BASE_MS = 100;
const THROTTLE_BASE_MS = 500;
const MAX_BACKOFF_MS = 20_000;

const THROTTLING = new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'PriorRequestNotComplete',
  'KmsThrottled',
]);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'InternalError', 'InternalFailure', 'ServiceUnavailable']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);

const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
/** MD5 of a body as SQS computes it (of its UTF-8 bytes); crypto.hash where Node has it (20.12+). */
const md5Hex: (s: string) => string = oneShot ? (s) => oneShot('md5', s, 'hex') : (s) => createHash('md5').update(s, 'utf8').digest('hex');
const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** An SQS error as the rest of agentq expects it (see client.ts): `name` is the short AWS type. */
export class SqsWireError extends Error {
  /** The query-compatible code (`AWS.SimpleQueueService.NonExistentQueue`) when SQS sent one, else the name. */
  readonly Code: string;
  readonly $fault: 'client' | 'server';
  readonly $metadata: { httpStatusCode: number; requestId?: string };
  constructor(name: string, message: string, status: number, code: string, fault: 'client' | 'server', requestId?: string) {
    super(message || name);
    this.name = name;
    this.Code = code;
    this.$fault = fault;
    this.$metadata = { httpStatusCode: status, ...(requestId ? { requestId } : {}) };
  }
}

/**
 * Parses an SQS JSON error response (`__type`, `message`, `x-amzn-query-error`). A response that
 * names no SQS error at all (another server at the endpoint: a web server's HTML page) is a
 * `NotSqsResponse` naming `from` (the endpoint) and the start of its body on one line.
 */
export function parseWireError(status: number, headers: Record<string, string | string[] | undefined>, text: string, from?: string): SqsWireError {
  let type = '';
  let message = '';
  try {
    const j = JSON.parse(text) as { __type?: string; code?: string; message?: string; Message?: string };
    type = j.__type ?? j.code ?? '';
    message = j.message ?? j.Message ?? '';
  } catch {
    message = text.slice(0, 200);
  }
  const header = headers['x-amzn-query-error'];
  const [queryCode, queryFault] = (typeof header === 'string' ? header : '').split(';');
  // As the SDK: `com.amazonaws.sqs#QueueDoesNotExist` or `QueueDoesNotExist:http://…` → QueueDoesNotExist.
  const short = type.split(':')[0]!.slice(type.lastIndexOf('#') + 1);
  const fault = queryFault === 'Sender' ? 'client' : queryFault === 'Receiver' || status >= 500 ? 'server' : 'client';
  const requestId = headers['x-amzn-requestid'];
  if (!short && !queryCode) {
    const start = text.replace(/\s+/g, ' ').trim().slice(0, 80);
    message = `HTTP ${status}${from ? ` from ${from}` : ''}${start ? `; the body starts: ${start}` : ''}`;
    return new SqsWireError('NotSqsResponse', message, status, 'NotSqsResponse', fault, typeof requestId === 'string' ? requestId : undefined);
  }
  const name = short || queryCode!;
  return new SqsWireError(name, message, status, queryCode || name, fault, typeof requestId === 'string' ? requestId : undefined);
}

function isRetryable(e: unknown, status: number | null): { retry: boolean; throttle: boolean } {
  const err = e as { name?: string; code?: string };
  const name = err?.name ?? '';
  if (status === 429 || THROTTLING.has(name)) return { retry: true, throttle: true };
  if (status !== null && TRANSIENT_STATUS.has(status)) return { retry: true, throttle: false };
  if (TRANSIENT_NAMES.has(name) || NETWORK_CODES.has(err?.code ?? '')) return { retry: true, throttle: false };
  return { retry: false, throttle: false };
}

/** Binary attribute values travel base64-encoded in AWS JSON; the SDK's shapes hold bytes. */
function encodeAttributes(attrs: Record<string, MessageAttributeValue> | undefined): Record<string, unknown> | undefined {
  if (!attrs) return attrs;
  let copy: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(attrs)) {
    if (v.BinaryValue === undefined && v.BinaryListValues === undefined) continue;
    copy ??= { ...attrs };
    copy[k] = {
      ...v,
      ...(v.BinaryValue !== undefined ? { BinaryValue: Buffer.from(v.BinaryValue).toString('base64') } : {}),
      ...(v.BinaryListValues !== undefined ? { BinaryListValues: v.BinaryListValues.map((b) => Buffer.from(b).toString('base64')) } : {}),
    };
  }
  return copy ?? attrs;
}

const bytes = (b64: string) => {
  const buf = Buffer.from(b64, 'base64');
  // A plain Uint8Array, as the SDK returns (a Buffer would serialise differently in custody's JSON).
  return new Uint8Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
};

function decodeMessage(m: Message): Message {
  const attrs = m.MessageAttributes as Record<string, { BinaryValue?: unknown; BinaryListValues?: unknown[] }> | undefined;
  if (attrs) {
    for (const v of Object.values(attrs)) {
      if (typeof v.BinaryValue === 'string') v.BinaryValue = bytes(v.BinaryValue);
      if (Array.isArray(v.BinaryListValues)) v.BinaryListValues = v.BinaryListValues.map((b) => (typeof b === 'string' ? bytes(b) : b));
    }
  }
  return m;
}

export class SqsWireClient implements SqsDataPlane {
  readonly kind = 'wire' as const;
  private readonly pool = new Http1Pool(50);
  private readonly targets = new Map<string, Target>();
  private regional: Promise<{ url: URL; custom: boolean }> | null = null;
  private identity: Identity | null = null;
  private identityPending: Promise<Identity> | null = null;
  private readonly maxAttempts: number;
  private readonly socketTimeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly source: WireSource;

  constructor(
    /**
     * An SDK client whose credentials and endpoint settings this client uses (its
     * owner closes it), or the credential provider and a lazily built SDK client.
     */
    source: SQSClient | WireSource,
    private readonly opts: WireOptions,
  ) {
    this.source = isSdkClient(source)
      ? { credentials: () => (source.config.credentials as () => Promise<Identity>)(), sdk: () => Promise.resolve(source) }
      : source;
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.socketTimeoutMs = opts.socketTimeoutMs ?? 30_000;
    this.sleep = opts.sleep ?? realSleep;
    this.random = opts.random ?? Math.random;
  }

  // ------------------------------------------------------------ operations

  async sendMessageBatch(input: SendMessageBatchRequest): Promise<SendMessageBatchResult> {
    const entries = input.Entries ?? [];
    const wireEntries = entries.map((e: SendMessageBatchRequestEntry) => {
      const attrs = encodeAttributes(e.MessageAttributes);
      return attrs === e.MessageAttributes ? e : { ...e, MessageAttributes: attrs };
    });
    const out = await this.call<SendMessageBatchResult>('SendMessageBatch', input.QueueUrl!, { ...input, Entries: wireEntries });
    // As the SDK: every confirmed entry's MD5 must be that of the body sent.
    const byId = new Map(entries.map((e) => [e.Id, e]));
    const bad: string[] = [];
    for (const ok of out.Successful ?? []) {
      const sent = byId.get(ok.Id);
      if (sent && ok.MD5OfMessageBody !== md5Hex(sent.MessageBody ?? '')) bad.push(ok.MessageId ?? ok.Id ?? '?');
    }
    if (bad.length > 0) throw checksumError(bad);
    return out;
  }

  async receiveMessage(input: ReceiveMessageRequest): Promise<ReceiveMessageResult> {
    const out = await this.call<ReceiveMessageResult>('ReceiveMessage', input.QueueUrl!, input, (input.WaitTimeSeconds ?? 0) * 1000);
    if (out.Messages) {
      const bad: string[] = [];
      for (const m of out.Messages) {
        if (m.MD5OfBody !== md5Hex(m.Body ?? '')) bad.push(m.MessageId ?? '?');
        decodeMessage(m);
      }
      if (bad.length > 0) throw checksumError(bad);
    }
    return out;
  }

  async deleteMessage(input: DeleteMessageRequest): Promise<void> {
    await this.call('DeleteMessage', input.QueueUrl!, input);
  }

  deleteMessageBatch(input: DeleteMessageBatchRequest): Promise<DeleteMessageBatchResult> {
    return this.call('DeleteMessageBatch', input.QueueUrl!, input);
  }

  async changeMessageVisibility(input: ChangeMessageVisibilityRequest): Promise<void> {
    await this.call('ChangeMessageVisibility', input.QueueUrl!, input);
  }

  changeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest): Promise<ChangeMessageVisibilityBatchResult> {
    return this.call('ChangeMessageVisibilityBatch', input.QueueUrl!, input);
  }

  getQueueUrl(input: GetQueueUrlRequest): Promise<GetQueueUrlResult> {
    return this.call('GetQueueUrl', null, input);
  }

  getQueueAttributes(input: GetQueueAttributesRequest): Promise<GetQueueAttributesResult> {
    return this.call('GetQueueAttributes', input.QueueUrl!, input);
  }

  destroy(): void {
    this.pool.destroy();
  }

  // ------------------------------------------------------------ transport

  /** `queueUrl` null: a call about no queue yet (GetQueueUrl), sent to the regional endpoint. */
  private async call<T>(op: string, queueUrl: string | null, input: object, extraTimeoutMs = 0): Promise<T> {
    const target = await this.target(queueUrl);
    const body = Buffer.from(JSON.stringify(input), 'utf8');
    const length = String(body.length);
    for (let attempt = 1; ; attempt++) {
      let status: number | null = null;
      let error: unknown;
      try {
        const identity = await this.credentials();
        const headers = signRequest({
          method: 'POST',
          host: target.host,
          path: '/',
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': `AmazonSQS.${op}`,
            // Error codes of the query protocol in x-amzn-query-error (AWS.SimpleQueueService.NonExistentQueue), as the SDK asks.
            'x-amzn-query-mode': 'true',
          },
          body,
          region: this.opts.region,
          service: 'sqs',
          identity,
        });
        headers['content-length'] = length;
        const res = await this.post(target, headers, body, this.socketTimeoutMs + extraTimeoutMs);
        status = res.status;
        if (res.status >= 200 && res.status < 300) return (res.text === '' ? {} : JSON.parse(res.text)) as T;
        error = parseWireError(res.status, res.headers, res.text, `${target.protocol}//${target.host}`);
      } catch (e) {
        error = e;
      }
      const r = isRetryable(error, status);
      if (!r.retry || attempt >= this.maxAttempts) throw error;
      // The SDK's standard mode: full jitter over an exponential cap, a longer base for throttling.
      const cap = Math.min(MAX_BACKOFF_MS, (r.throttle ? THROTTLE_BASE_MS : RETRY_BASE_MS) * 2 ** (attempt - 1));
      await this.sleep(Math.floor(this.random() * cap));
    }
  }

  private async post(target: Target, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<RawResponse> {
    const res = await this.pool.post(target, '/', headers, body, timeoutMs);
    return { status: res.status, headers: res.headers, text: res.body.toString('utf8') };
  }

  /** Where a queue's calls go (see the header: as the SDK resolves it). Cached per queue URL ('' for no queue). */
  private async target(queueUrl: string | null): Promise<Target> {
    const key = queueUrl ?? '';
    const cached = this.targets.get(key);
    if (cached) return cached;
    // A failed resolution (an unreadable shared config, say) is not cached: the next call tries again.
    const { url: regional, custom } = await (this.regional ??= this.resolveEndpoint().catch((e: unknown) => {
      this.regional = null;
      throw e;
    }));
    let url = regional;
    if (!custom && queueUrl !== null) {
      try {
        const q = new URL(queueUrl);
        if (q.origin !== regional.origin) url = new URL(q.origin);
      } catch {
        // Not a URL: SQS answers with its own error for the QueueUrl field.
      }
    }
    const protocol = url.protocol === 'http:' ? 'http:' : 'https:';
    const port = url.port ? Number(url.port) : protocol === 'https:' ? 443 : 80;
    const target: Target = { protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port, host: url.host };
    this.targets.set(key, target);
    return target;
  }

  private async resolveEndpoint(): Promise<{ url: URL; custom: boolean }> {
    if (this.opts.endpoint) return { url: new URL(this.opts.endpoint), custom: true };
    const config = (await this.source.sdk()).config as unknown as {
      ignoreConfiguredEndpointUrls?: boolean;
      serviceConfiguredEndpoint?: () => Promise<string | undefined>;
      useFipsEndpoint: () => Promise<boolean>;
      useDualstackEndpoint: () => Promise<boolean>;
      endpointProvider: (params: Record<string, unknown>, ctx: Record<string, unknown>) => { url: URL };
    };
    // AWS_ENDPOINT_URL_SQS / endpoint_url in the shared config: a custom endpoint, as the SDK treats it.
    const configured = config.ignoreConfiguredEndpointUrls ? undefined : await config.serviceConfiguredEndpoint?.();
    if (configured) {
      // The environment was checked when the URL was parsed (url.ts); this is the shared config's endpoint_url.
      if (!isHttpUrl(configured)) throw new ConfigError(`the SQS endpoint configured for the AWS SDK (endpoint_url in the AWS config, or AWS_ENDPOINT_URL_SQS) must be an http(s):// URL, got ${JSON.stringify(configured)}`, 'Fix it, or give the endpoint in the URL: sqs://REGION/PREFIX?endpoint=http%3A%2F%2FHOST%3APORT');
      return { url: new URL(configured), custom: true };
    }
    const endpoint = config.endpointProvider(
      { Region: this.opts.region, UseFIPS: await config.useFipsEndpoint(), UseDualStack: await config.useDualstackEndpoint() },
      {},
    );
    return { url: new URL(endpoint.url.href), custom: false };
  }

  /** The resolved identity (see WireSource), cached until it is about to expire. */
  private async credentials(): Promise<Identity> {
    const id = this.identity;
    if (id && (!id.expiration || id.expiration.getTime() - Date.now() > EXPIRY_MARGIN_MS)) return id;
    this.identityPending ??= (async () => {
      try {
        const c = await this.source.credentials();
        this.identity = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}), ...(c.expiration ? { expiration: c.expiration } : {}) };
        return this.identity;
      } finally {
        this.identityPending = null;
      }
    })();
    return this.identityPending;
  }
}

function checksumError(ids: string[]): Error {
  const e = new Error(`Invalid MD5 checksum on messages: ${ids.join(', ')} (the body SQS reports is not the body sent or received)`);
  e.name = 'InvalidChecksumError';
  return e;
}
