/**
 * `agentq outbox relay | status`: the SQS backend's transactional outbox.
 * `relay` publishes what a crash between a store commit and its publish left
 * behind (workers do the same before each claim); `status` says how much is
 * waiting. Relaying twice is safe: consumers check every message against the
 * store and delete a second copy.
 */
import { RetryLaterError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';
import { isMachineFormat, printObject } from '../output/format.js';
import { sanitize } from '../output/sanitize.js';
import { requireSqs } from './sqs.js';

export async function relay(_o: Record<string, unknown>, ctx: CommandContext): Promise<void> {
  ctx.assertMutable('outbox relay');
  const backend = requireSqs(await ctx.openBackend(), 'outbox relay');
  const r = await backend.relayOutbox();
  if (isMachineFormat(ctx.out.format)) printObject(ctx.out, r);
  else ctx.out.write(`published ${r.published}\nskipped ${r.skipped}\nfailed ${r.failed.length}\npending ${r.pending_after}\n`);
  for (const f of r.failed.slice(0, 10)) ctx.note(`failed: ${f.job_id}: ${sanitize(f.error)}`);
  if (r.failed.length > 0) throw new RetryLaterError(`${r.failed.length} outbox row(s) could not be published; they are retried with backoff`, 'OUTBOX_PENDING', 'Run `agentq outbox relay` again later, or check SQS and `agentq sqs setup`.');
}

export async function status(_o: Record<string, unknown>, ctx: CommandContext): Promise<void> {
  const backend = requireSqs(await ctx.openBackend(), 'outbox status');
  const s = await backend.outboxStatus();
  const out = { ...s, oldest_pending_at: s.oldest_pending_at === null ? null : new Date(s.oldest_pending_at).toISOString() };
  if (isMachineFormat(ctx.out.format)) printObject(ctx.out, out);
  else ctx.out.write(`pending ${out.pending}\npublished ${out.published}\noldest_pending_at ${out.oldest_pending_at ?? '-'}\n`);
}
