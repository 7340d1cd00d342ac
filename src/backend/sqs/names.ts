/**
 * SQS queue names for agentq's queues: `PREFIX-QUEUE-CLASS` per service
 * class and `PREFIX-QUEUE-dlq`, with `.fifo` appended for FIFO queues (SQS
 * requires the suffix, and a FIFO queue's DLQ must be FIFO too). SQS allows
 * 1-80 characters of letters, digits, `-` and `_` (the suffix included);
 * agentq queue names may also hold `.` and be longer, so such names are
 * shortened with a hash of the original (no collisions between `a.b` and `a_b`).
 */
import { createHash } from 'node:crypto';
import type { JobClass } from '../../core/schemas.js';

const SQS_NAME = /^[A-Za-z0-9_-]{1,80}$/;

export const FIFO_SUFFIX = '.fifo';

function fit(name: string, fifo: boolean): string {
  const suffix = fifo ? FIFO_SUFFIX : '';
  const room = 80 - suffix.length;
  if (SQS_NAME.test(name) && name.length <= room) return name + suffix;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, room - 11)}-${hash}${suffix}`;
}

export function sourceQueueName(prefix: string, queue: string, cls: JobClass, fifo = false): string {
  return fit(`${prefix}-${queue}-${cls}`, fifo);
}

export function dlqName(prefix: string, queue: string, fifo = false): string {
  return fit(`${prefix}-${queue}-dlq`, fifo);
}
