/**
 * SQS queue names for agentq's queues: `PREFIX-QUEUE-CLASS` per service
 * class and `PREFIX-QUEUE-dlq`. SQS allows 1-80 characters of letters,
 * digits, `-` and `_`; agentq queue names may also hold `.` and be longer,
 * so such names are shortened with a hash of the original (no collisions
 * between `a.b` and `a_b`).
 */
import { createHash } from 'node:crypto';
import type { JobClass } from '../../core/schemas.js';

const SQS_NAME = /^[A-Za-z0-9_-]{1,80}$/;

function fit(name: string): string {
  if (SQS_NAME.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 69)}-${hash}`;
}

export function sourceQueueName(prefix: string, queue: string, cls: JobClass): string {
  return fit(`${prefix}-${queue}-${cls}`);
}

export function dlqName(prefix: string, queue: string): string {
  return fit(`${prefix}-${queue}-dlq`);
}
