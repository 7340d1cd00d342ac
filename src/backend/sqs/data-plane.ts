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
 * which one they talk to. Control-plane calls (queue URLs, setup, attributes)
 * always go through the SDK client (queues.ts).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type ChangeMessageVisibilityBatchRequest,
  type ChangeMessageVisibilityBatchResult,
  type ChangeMessageVisibilityRequest,
  type DeleteMessageBatchRequest,
  type DeleteMessageBatchResult,
  type DeleteMessageRequest,
  type ReceiveMessageRequest,
  type ReceiveMessageResult,
  type SendMessageBatchRequest,
  type SendMessageBatchResult,
  type SQSClient,
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
  /** Closes idle connections (the SDK client itself is closed by its owner). */
  destroy(): void;
}

/** The data plane through the AWS SDK client (`client=sdk`; also whenever a test injects its own client). */
export class SdkDataPlane implements SqsDataPlane {
  readonly kind = 'sdk' as const;
  constructor(private readonly client: SQSClient) {}
  sendMessageBatch(input: SendMessageBatchRequest): Promise<SendMessageBatchResult> {
    return this.client.send(new SendMessageBatchCommand(input));
  }
  receiveMessage(input: ReceiveMessageRequest): Promise<ReceiveMessageResult> {
    return this.client.send(new ReceiveMessageCommand(input));
  }
  async deleteMessage(input: DeleteMessageRequest): Promise<void> {
    await this.client.send(new DeleteMessageCommand(input));
  }
  deleteMessageBatch(input: DeleteMessageBatchRequest): Promise<DeleteMessageBatchResult> {
    return this.client.send(new DeleteMessageBatchCommand(input));
  }
  async changeMessageVisibility(input: ChangeMessageVisibilityRequest): Promise<void> {
    await this.client.send(new ChangeMessageVisibilityCommand(input));
  }
  changeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest): Promise<ChangeMessageVisibilityBatchResult> {
    return this.client.send(new ChangeMessageVisibilityBatchCommand(input));
  }
  destroy(): void {}
}
