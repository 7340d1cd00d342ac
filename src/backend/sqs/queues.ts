/**
 * The SQS queues agentq needs, found by name (cached) or created: one source
 * queue per (agentq queue, service class) and one app DLQ per agentq queue.
 * Each source queue has a RedrivePolicy to that DLQ whose maxReceiveCount is
 * above any sensible max attempts: a crash backstop, not the retry mechanism
 * (agentq decides retries and dead-lettering itself, from the store).
 *
 * With `fifo=` in the URL every queue is a FIFO queue (`….fifo`, FifoQueue
 * set at creation; SQS cannot convert a queue either way, and a FIFO source
 * needs a FIFO DLQ). Content-based deduplication stays off: agentq always
 * sends its own deduplication ids (see fifo.ts).
 *
 * The look-ups every command makes (GetQueueUrl, the DLQ depth) go through
 * the data plane (the wire client by default: no SDK loaded for them); setup
 * and auto-creation through the SDK client, loaded when they happen.
 */
import { JOB_CLASSES, type JobClass } from '../../core/schemas.js';
import { isQueueMissing, toAgentqError, type LazySqsSdk } from './client.js';
import type { SqsDataPlane } from './data-plane.js';
import { dlqName, sourceQueueName } from './names.js';

/** 14 days, the SQS maximum: a DLQ copy should outlive a long weekend of triage. */
const DLQ_RETENTION_SECONDS = 1_209_600;
/**
 * 14 days, the SQS maximum, on source queues too: a scheduled job's message
 * waits in SQS until it is due, and SQS drops messages older than this
 * whatever their visibility (see MAX_SCHEDULE_AHEAD_MS).
 */
export const SOURCE_RETENTION_SECONDS = 1_209_600;

export interface SetupAction {
  name: string;
  url: string;
  action: 'created' | 'exists' | 'updated';
  detail: string;
}

export class SqsQueues {
  private readonly urls = new Map<string, string>();

  constructor(
    /** GetQueueUrl and GetQueueAttributes. */
    private readonly data: Pick<SqsDataPlane, 'getQueueUrl' | 'getQueueAttributes'>,
    /** CreateQueue, SetQueueAttributes and setup's own look-ups. */
    private readonly sdk: LazySqsSdk,
    private readonly prefix: string,
    private readonly maxReceiveCount: number,
    private readonly autoCreate: boolean,
    /** FIFO queues (`fifo=` in the URL). */
    readonly fifo = false,
    /** Wraps each call made through the SDK client, so a watch for a silent SQS sees it (SqsBackend: watchCall). */
    private readonly watch: <T>(call: Promise<T>) => Promise<T> = (call) => call,
  ) {}

  sourceName(queue: string, cls: JobClass): string {
    return sourceQueueName(this.prefix, queue, cls, this.fifo);
  }

  dlqName(queue: string): string {
    return dlqName(this.prefix, queue, this.fifo);
  }

  /** The URL of a queue by name; null when it does not exist (and auto-create is off). */
  async url(name: string, create?: () => Promise<string>): Promise<string | null> {
    const cached = this.urls.get(name);
    if (cached) return cached;
    try {
      const out = await this.data.getQueueUrl({ QueueName: name });
      this.urls.set(name, out.QueueUrl!);
      return out.QueueUrl!;
    } catch (e) {
      if (!isQueueMissing(e)) throw toAgentqError(e, `GetQueueUrl ${name}`);
    }
    if (!this.autoCreate || !create) return null;
    const url = await create();
    this.urls.set(name, url);
    return url;
  }

  async sourceUrl(queue: string, cls: JobClass): Promise<string | null> {
    return this.url(this.sourceName(queue, cls), async () => {
      await this.setup([queue]);
      return this.urls.get(this.sourceName(queue, cls))!;
    });
  }

  async dlqUrl(queue: string): Promise<string | null> {
    return this.url(this.dlqName(queue), async () => {
      await this.setup([queue]);
      return this.urls.get(this.dlqName(queue))!;
    });
  }

  /** Creates or checks every queue of these agentq queues; says what it did for each. */
  async setup(queues: string[]): Promise<SetupAction[]> {
    const out: SetupAction[] = [];
    const fifo: Record<string, string> = this.fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {};
    const kind = this.fifo ? 'FIFO ' : '';
    for (const queue of queues) {
      const dlq = await this.ensure(this.dlqName(queue), { ...fifo, MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS) }, `${kind}app DLQ (retention 14 days)`);
      out.push(dlq);
      const arn = await this.arn(dlq.url);
      const policy = JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: String(this.maxReceiveCount) });
      for (const cls of JOB_CLASSES) {
        out.push(
          await this.ensure(
            this.sourceName(queue, cls),
            { ...fifo, RedrivePolicy: policy, MessageRetentionPeriod: String(SOURCE_RETENTION_SECONDS) },
            `${kind}${cls} jobs of ${queue}; RedrivePolicy maxReceiveCount ${this.maxReceiveCount} → ${dlq.name}`,
            'RedrivePolicy',
          ),
        );
      }
    }
    return out;
  }

  private async ensure(name: string, attributes: Record<string, string>, detail: string, checked?: string): Promise<SetupAction> {
    try {
      const [client, { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SetQueueAttributesCommand }] = await Promise.all([
        this.sdk.get(),
        import('@aws-sdk/client-sqs'),
      ]);
      let url: string | null = null;
      try {
        url = (await this.watch(client.send(new GetQueueUrlCommand({ QueueName: name })))).QueueUrl!;
      } catch (e) {
        if (!isQueueMissing(e)) throw e;
      }
      if (url === null) {
        url = (await this.watch(client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes })))).QueueUrl!;
        this.urls.set(name, url);
        return { name, url, action: 'created', detail };
      }
      this.urls.set(name, url);
      if (checked) {
        const have = (await this.watch(client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [checked as "RedrivePolicy"] })))).Attributes?.[checked as "RedrivePolicy"];
        if (!samePolicy(have, attributes[checked]!)) {
          await this.watch(client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { [checked]: attributes[checked]! } })));
          return { name, url, action: 'updated', detail: `${detail} (was ${have ?? 'none'})` };
        }
      }
      return { name, url, action: 'exists', detail };
    } catch (e) {
      throw toAgentqError(e, `setting up ${name}`);
    }
  }

  /** Messages visible in a queue now (ApproximateNumberOfMessages; SQS says it is approximate). `queue`: the agentq queue it belongs to. */
  async visibleDepth(url: string, name: string, queue?: string): Promise<number> {
    return this.count(url, name, 'ApproximateNumberOfMessages', queue);
  }

  /** Messages received by someone and not yet deleted or visible again. */
  async inFlight(url: string, name: string, queue?: string): Promise<number> {
    return this.count(url, name, 'ApproximateNumberOfMessagesNotVisible', queue);
  }

  private async count(url: string, name: string, attribute: 'ApproximateNumberOfMessages' | 'ApproximateNumberOfMessagesNotVisible', queue?: string): Promise<number> {
    try {
      const out = await this.data.getQueueAttributes({ QueueUrl: url, AttributeNames: [attribute] });
      return Number(out.Attributes?.[attribute] ?? 0) || 0;
    } catch (e) {
      throw toAgentqError(e, `GetQueueAttributes ${name}`, queue);
    }
  }

  private async arn(url: string): Promise<string> {
    const out = await this.data.getQueueAttributes({ QueueUrl: url, AttributeNames: ['QueueArn'] });
    return out.Attributes!.QueueArn!;
  }
}

function samePolicy(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  try {
    const x = JSON.parse(a) as { deadLetterTargetArn?: string; maxReceiveCount?: string | number };
    const y = JSON.parse(b) as { deadLetterTargetArn?: string; maxReceiveCount?: string | number };
    return x.deadLetterTargetArn === y.deadLetterTargetArn && String(x.maxReceiveCount) === String(y.maxReceiveCount);
  } catch {
    return false;
  }
}
