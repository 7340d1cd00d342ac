/**
 * The SQS message of a job: body = the envelope (JSON, the wire fields of
 * DESIGN section 2, never a large payload), message attributes for routing
 * and triage without parsing the body. SQS allows at most 10 message
 * attributes; a DLQ copy uses all 10.
 */
import type { MessageAttributeValue, Message } from '@aws-sdk/client-sqs';
import { isJobId } from '../../core/ids.js';
import { envelopeIssues, type DeadInfo, type Job, type JobEnvelope } from '../../core/schemas.js';
import { toEnvelope } from '../sqlite/store.js';

export const FORMAT = 'agentq.envelope.v1';
export const ATTR = {
  format: 'agentq-format',
  jobId: 'agentq-job-id',
  tenant: 'agentq-tenant',
  class: 'agentq-class',
  attempt: 'agentq-attempt',
  traceId: 'agentq-trace-id',
  deadReason: 'agentq-dead-reason',
  errorCode: 'agentq-error-code',
  errorMessage: 'agentq-error-message',
  deadAt: 'agentq-dead-at',
} as const;

/**
 * SQS takes only the characters of XML 1.0 in a body or an attribute value (tab, newline, carriage
 * return, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF) and refuses the whole message otherwise
 * (InvalidMessageContents): an input with U+FFFF, or an error message with a colour escape, would
 * keep its job from ever being delivered.
 */
const NOT_SQS_TEXT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** An attribute value as SQS takes it: other characters become U+FFFD (the store keeps the exact text). */
const str = (v: string): MessageAttributeValue => ({ DataType: 'String', StringValue: v.replace(NOT_SQS_TEXT, '\uFFFD') });

/**
 * JSON.stringify escapes control characters and lone surrogates already; U+FFFE and U+FFFF (which
 * can only be inside strings) are written as \u escapes too, so the body decodes to the same text.
 */
export function messageBody(job: Job): string {
  return JSON.stringify(toEnvelope(job)).replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

export function messageAttributes(job: Job): Record<string, MessageAttributeValue> {
  const a: Record<string, MessageAttributeValue> = {
    [ATTR.format]: str(FORMAT),
    [ATTR.jobId]: str(job.job_id),
    [ATTR.tenant]: str(job.tenant_id),
    [ATTR.class]: str(job.class),
    [ATTR.attempt]: { DataType: 'Number', StringValue: String(job.attempt) },
  };
  if (job.trace_id) a[ATTR.traceId] = str(job.trace_id);
  return a;
}

/** The app's DLQ copy carries why it died, so SQS-side tools and alarms can see it without the store. */
export function dlqAttributes(job: Job, dead: DeadInfo): Record<string, MessageAttributeValue> {
  return {
    ...messageAttributes(job),
    [ATTR.deadReason]: str(dead.reason),
    [ATTR.errorCode]: str(dead.error_code),
    // Attribute values count toward the 256 KiB message size; the full message is in the store.
    [ATTR.errorMessage]: str(dead.error_message.slice(0, 1024) || '-'),
    [ATTR.deadAt]: str(dead.dead_at),
  };
}

export type ParsedMessage =
  | { kind: 'agentq'; jobId: string; isAppDlqCopy: boolean }
  | { kind: 'malformed'; jobId: string | null; why: string }
  | { kind: 'foreign'; why: string };

function attr(m: Message, name: string): string | undefined {
  return m.MessageAttributes?.[name]?.StringValue;
}

/**
 * What a received message is. A body that claims to be ours (our format
 * attribute, or a job_id field) but does not validate is `malformed`;
 * anything else we did not produce is `foreign`. Neither is ever run.
 */
export function parseMessage(m: Message): ParsedMessage {
  const body = m.Body ?? '';
  const marked = attr(m, ATTR.format) === FORMAT;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    return marked
      ? { kind: 'malformed', jobId: attr(m, ATTR.jobId) ?? null, why: `the body is not valid JSON: ${(e as Error).message}` }
      : { kind: 'foreign', why: 'the body is not an agentq envelope (not JSON)' };
  }
  const claimsOurs = marked || (typeof json === 'object' && json !== null && 'job_id' in json && 'workflow' in json);
  // The compiled check (schemas.ts envelopeIssues): a sweep checks thousands of bodies.
  const issues = envelopeIssues(json);
  const jobId = issues === null ? (json as JobEnvelope).job_id : null;
  if (jobId !== null && isJobId(jobId)) return { kind: 'agentq', jobId, isAppDlqCopy: attr(m, ATTR.deadReason) !== undefined };
  if (!claimsOurs) return { kind: 'foreign', why: 'the body is not an agentq envelope' };
  const why = issues ?? 'job_id is not an agentq job id';
  return { kind: 'malformed', jobId: attr(m, ATTR.jobId) ?? null, why: `the envelope does not validate: ${why}` };
}

/**
 * Every attribute of a message (system and message attributes), as JSON for custody. Binary
 * values (bytes, as both clients return them) are kept as base64, as SQS's JSON carries them:
 * JSON.stringify of the bytes wrote an object of numbered bytes ({"0":0,"1":1,…}).
 */
export function allAttributes(m: Message): Record<string, unknown> {
  const b64 = (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  let messageAttributes: Record<string, unknown> = m.MessageAttributes ?? {};
  for (const [k, v] of Object.entries(m.MessageAttributes ?? {})) {
    if (v.BinaryValue === undefined && v.BinaryListValues === undefined) continue;
    if (messageAttributes === m.MessageAttributes) messageAttributes = { ...m.MessageAttributes };
    messageAttributes[k] = {
      ...v,
      ...(v.BinaryValue !== undefined ? { BinaryValue: b64(v.BinaryValue) } : {}),
      ...(v.BinaryListValues !== undefined ? { BinaryListValues: v.BinaryListValues.map(b64) } : {}),
    };
  }
  return { attributes: m.Attributes ?? {}, message_attributes: messageAttributes, md5_of_body: m.MD5OfBody ?? null };
}
