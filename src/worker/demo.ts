/**
 * The worker part of `agentq demo`: an in-process library worker with a
 * deliberately flaky handler, so a first-time user sees every outcome on real
 * jobs: a success with a checkpoint, a provider rate limit that schedules a
 * retry, a validation error that goes straight to the DLQ, and an invoice
 * whose effect ran before a permission error (dead and partially completed,
 * which `dlq redrive` will refuse to retry blindly).
 */
import type { Backend } from '../backend/contract.js';
import type { Job } from '../core/schemas.js';
import { HandlerError } from './handler-error.js';
import type { Handler } from './types.js';
import { createWorker } from './worker.js';

export interface DemoOutcome {
  succeeded: number;
  retrying: number;
  dead: number;
  /** Stopped by `signal` before every job was handled: how many were not (they stay queued). */
  unprocessed: number;
}

/**
 * On a stop, how long the running handlers may finish (the demo's take milliseconds) before
 * their signals abort and their leases are released, as `agentq worker` does past --grace.
 */
const DEMO_GRACE_MS = 2_000;

const flakyHandler: Handler = async (job, ctx) => {
  await ctx.checkpoint({ step: 'started', workflow: job.workflow });
  switch (job.workflow.split(':')[0]) {
    case 'summarize':
      if (ctx.attempt === 1) throw new HandlerError('PROVIDER_429', 'model provider rate limit (demo)');
      return 'summary: (demo)';
    case 'triage_ticket':
      throw new HandlerError('VALIDATION', 'ticket has no subject (demo)');
    case 'send_invoice':
      await ctx.effect('send-invoice', (key) => ({ invoice: `inv-${key.slice(-6)}`, sent: true }));
      throw new HandlerError('PERMISSION', 'payment API refused the follow-up call: 403 (demo)');
    default:
      await ctx.checkpoint({ step: 'report drafted' });
      return JSON.stringify({ report: `report for ${job.tenant_id} (demo)` });
  }
};

/**
 * Processes `jobs` once each (retries are left scheduled) and returns what happened. `signal`
 * (Ctrl-C) stops the worker as `agentq worker` stops: no new claims, the running handlers finish
 * or are aborted and their leases released, so no job is left "running" until its lease expires.
 */
export async function runDemoWorker(backend: Backend, queue: string, jobs: readonly Job[], signal?: AbortSignal): Promise<DemoOutcome> {
  const pending = new Set(jobs.map((j) => j.job_id));
  const outcome: DemoOutcome = { succeeded: 0, retrying: 0, dead: 0, unprocessed: 0 };
  let allHandled!: () => void;
  const handled = new Promise<void>((r) => (allHandled = r));
  const settle = (jobId: string): void => {
    if (pending.delete(jobId) && pending.size === 0) allHandled();
  };
  const worker = createWorker({
    backend,
    queue,
    concurrency: 3,
    leaseMs: 30_000,
    gracefulMs: DEMO_GRACE_MS,
    workerVersion: 'demo',
    handler: flakyHandler,
    logger: (e) => {
      if (e.kind === 'succeeded' && pending.has(e.jobId)) {
        outcome.succeeded++;
        settle(e.jobId);
      } else if (e.kind === 'failed' && pending.has(e.jobId)) {
        if (e.outcome === 'retry') outcome.retrying++;
        else outcome.dead++;
        settle(e.jobId);
      } else if ((e.kind === 'aborted' || e.kind === 'lease_lost' || e.kind === 'released') && pending.has(e.jobId)) {
        settle(e.jobId);
      }
    },
  });
  if (pending.size === 0 || signal?.aborted) return { ...outcome, unprocessed: pending.size };
  await worker.start();
  // A safety net for a store that cannot serve the demo (the jobs stay where they are).
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const stopped = new Promise<void>((r) => signal?.addEventListener('abort', (onStop = () => r()), { once: true }));
  await Promise.race([handled, stopped, new Promise<void>((r) => (timer = setTimeout(r, 30_000)))]);
  clearTimeout(timer);
  if (onStop) signal?.removeEventListener('abort', onStop);
  await worker.stop();
  // (jobs finished during the stop were counted by the logger)
  return { ...outcome, unprocessed: signal?.aborted ? pending.size : 0 };
}
