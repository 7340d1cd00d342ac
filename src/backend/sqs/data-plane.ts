/**
 * The SQS calls on agentq's hot paths (relay and redrive sends, worker
 * receives and visibility changes, the DLQ sweep), behind one small
 * interface with two implementations:
 * - `SqsWireClient` (wire.ts, the default): AWS JSON 1.0 over a keep-alive
 *   agent, signed by sigv4.ts; a fraction of the SDK's CPU per call.
 * - `SdkDataPlane` (here): the same calls through the AWS SDK (`client=sdk` in
 *   the URL), the way back if the wire client ever misbehaves against some
 *   SQS-compatible endpoint.
 * Inputs and outputs are the SDK's own shapes, so the call sites do not care
 * which one they talk to. The queue look-ups every command makes
 * (GetQueueUrl, GetQueueAttributes) are here too, so the wire client's
 * commands never load the SDK; setup (CreateQueue, SetQueueAttributes)
 * always goes through the SDK client (queues.ts).
 */
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
  ReceiveMessageRequest,
  ReceiveMessageResult,
  SendMessageBatchRequest,
  SendMessageBatchResult,
  SQSClient,
} from '@aws-sdk/client-sqs';

export interface SqsDataPlane {
  /** Which implementation (for messages and tests). */
  readonly kind: 'wire' | 'sdk';
  sendMessageBatch(input: SendMessageBatchRequest): Promise<SendMessageBatchResult>;
  receiveMessage(input: ReceiveMessageRequest): Promise<ReceiveMessageResult>;
  deleteMessage(input: DeleteMessageRequest): Promise<void>;
  deleteMessageBatch(input: DeleteMessageBatchRequest): Promise<DeleteMessageBatchResult>;
  changeMessageVisibility(input: ChangeMessageVisibilityRequest): Promise<void>;
  changeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest): Promise<ChangeMessageVisibilityBatchResult>;
  /** The queue look-ups of every command (queues.ts): through this client so that they need no SDK either. */
  getQueueUrl(input: GetQueueUrlRequest): Promise<GetQueueUrlResult>;
  getQueueAttributes(input: GetQueueAttributesRequest): Promise<GetQueueAttributesResult>;
  /** Closes idle connections (the SDK client itself is closed by its owner). */
  destroy(): void;
}

type Sdk = typeof import('@aws-sdk/client-sqs');
let sdkModule: Promise<Sdk> | null = null;
/** The SDK's command classes, loaded with the first call (this file is on every SQS path; the SDK is not). */
const commands = (): Promise<Sdk> => (sdkModule ??= import('@aws-sdk/client-sqs'));

/** The data plane through the AWS SDK client (`client=sdk`; also whenever a test injects its own client). */
export class SdkDataPlane implements SqsDataPlane {
  readonly kind = 'sdk' as const;
  private readonly client: () => Promise<SQSClient>;
  constructor(client: SQSClient | (() => Promise<SQSClient>)) {
    this.client = typeof client === 'function' ? client : () => Promise.resolve(client);
  }
  private async send<T>(call: (c: SQSClient, m: Sdk) => Promise<T>): Promise<T> {
    const [m, client] = await Promise.all([commands(), this.client()]);
    return call(client, m);
  }
  sendMessageBatch(input: SendMessageBatchRequest): Promise<SendMessageBatchResult> {
    return this.send((c, m) => c.send(new m.SendMessageBatchCommand(input)));
  }
  receiveMessage(input: ReceiveMessageRequest): Promise<ReceiveMessageResult> {
    return this.send((c, m) => c.send(new m.ReceiveMessageCommand(input)));
  }
  async deleteMessage(input: DeleteMessageRequest): Promise<void> {
    await this.send((c, m) => c.send(new m.DeleteMessageCommand(input)));
  }
  deleteMessageBatch(input: DeleteMessageBatchRequest): Promise<DeleteMessageBatchResult> {
    return this.send((c, m) => c.send(new m.DeleteMessageBatchCommand(input)));
  }
  async changeMessageVisibility(input: ChangeMessageVisibilityRequest): Promise<void> {
    await this.send((c, m) => c.send(new m.ChangeMessageVisibilityCommand(input)));
  }
  changeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest): Promise<ChangeMessageVisibilityBatchResult> {
    return this.send((c, m) => c.send(new m.ChangeMessageVisibilityBatchCommand(input)));
  }
  getQueueUrl(input: GetQueueUrlRequest): Promise<GetQueueUrlResult> {
    return this.send((c, m) => c.send(new m.GetQueueUrlCommand(input)));
  }
  getQueueAttributes(input: GetQueueAttributesRequest): Promise<GetQueueAttributesResult> {
    return this.send((c, m) => c.send(new m.GetQueueAttributesCommand(input)));
  }
  destroy(): void {}
}
