/**
 * `agentq outbox relay | status`: the SQS backend's transactional outbox.
 * `relay` publishes what a crash between a store commit and its publish left
 * behind, or what failed to publish (workers do the same before each claim,
 * waiting out each row's backoff; by hand it is tried now); `status` says how
 * much is waiting, when the next try is due and why the last one failed.
 * Relaying twice is safe: consumers check every message against the store and
 * delete a second copy.
 */
import { NOT_SQS, NOT_SQS_HINT } from '../../backend/sqs/client.js';
import { AgentqError, ConfigError, PermissionError, RetryLaterError } from '../../core/errors.js';
import type { RelayResult } from '../../backend/sqs/relay.js';
import type { CommandContext } from '../context.js';
import { isMachineFormat, printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { requireSqs } from './sqs.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function relay(_o: Record<string, unknown>, ctx: CommandContext): Promise<void> {
  ctx.assertMutable('outbox relay');
  const backend = requireSqs(await ctx.openBackend({ create: true }), 'outbox relay');
  // By hand, rows backing off after a failed publish are tried now: the operator mended something.
  const r = await backend.relayOutbox({ now: true });
  const out = { ...r, next_try_at: iso(r.next_try_at) };
  if (isMachineFormat(ctx.out.format)) printObject(ctx.out, out);
  else {
    ctx.out.write(`published ${r.published}\nskipped ${r.skipped}\nfailed ${r.failed.length}\npending ${r.pending_after}\n`);
    if (r.pending_after > 0) ctx.out.write(`next_try_at ${out.next_try_at ?? '-'}\nlast_error ${r.last_error === null ? '-' : sanitize(r.last_error)}\n`);
  }
  for (const f of r.failed.slice(0, 10)) ctx.note(`failed: ${f.job_id}: ${sanitize(f.error)}`);
  if (r.failed.length > 0) throw relayFailure(r.failed);
}

/**
 * The error `outbox relay` ends with when rows could not be published: exit 4 when SQS refused
 * the credentials, 78 when a queue is missing (waiting mends neither), else 75 (retry later).
 */
export function relayFailure(failed: RelayResult['failed']): AgentqError {
  const n = `${failed.length} outbox row(s) could not be published`;
  const waits = 'the jobs are stored and wait in the outbox';
  const refused = failed.find((f) => f.code === 'PERMISSION');
  if (refused) return new PermissionError(`${n}: ${refused.error}`, `Check the AWS credentials (default chain) and IAM permissions, then run \`agentq outbox relay\` again; ${waits}.`);
  const missing = failed.find((f) => f.code === 'CONFIG');
  if (missing?.error.startsWith(NOT_SQS)) return new ConfigError(`${n}: ${missing.error}`, `${NOT_SQS_HINT} Then run \`agentq outbox relay\` again; ${waits}.`);
  if (missing) return new ConfigError(`${n}: ${missing.error}`, `Create the queues with \`agentq sqs setup --queue Q\`, then run \`agentq outbox relay\` again; ${waits}.`);
  return new RetryLaterError(`${n}; they are retried with backoff`, 'OUTBOX_PENDING', 'Run `agentq outbox relay` again later, or check SQS and `agentq sqs setup`.');
}

export async function status(_o: Record<string, unknown>, ctx: CommandContext): Promise<void> {
  const backend = requireSqs(await ctx.openBackend(), 'outbox status');
  const s = await backend.outboxStatus();
  const out = { ...s, oldest_pending_at: iso(s.oldest_pending_at), next_try_at: iso(s.next_try_at) };
  if (isMachineFormat(ctx.out.format)) printObject(ctx.out, out);
  else {
    ctx.out.write(
      `pending ${out.pending}\npublished ${out.published}\noldest_pending_at ${out.oldest_pending_at ?? '-'}\n` +
        `next_try_at ${out.next_try_at ?? '-'}\nlast_error ${out.last_error === null ? '-' : sanitize(out.last_error)}\n`,
    );
  }
}
