/**
 * Entry points of the `agentq dlq …` commands, as registered in
 * `cli/program.ts`: each adapts the CLI context and calls the command's
 * module. Kept tiny so a `dlq` invocation loads only what it runs.
 */
import type { CommandContext } from '../context.js';
import { dlqIoFrom } from './dlq-context.js';
import type { BulkOptions } from './dlq-bulk.js';
import type { DlqListOptions } from './dlq-list.js';
import type { DlqRunsOptions, DlqRunShowOptions } from './dlq-runs.js';
import type { DlqShowOptions } from './dlq-show.js';
import type { DlqSummaryOptions } from './dlq-summary.js';
import type { SelectorInput } from '../../dlq/filter.js';

export async function list(opts: DlqListOptions, ctx: CommandContext): Promise<void> {
  const { dlqList } = await import('./dlq-list.js');
  await dlqList(opts, dlqIoFrom(ctx));
}

export async function exportEntries(opts: SelectorInput, ctx: CommandContext): Promise<void> {
  const { dlqExport } = await import('./dlq-list.js');
  await dlqExport(opts, dlqIoFrom(ctx));
}

export async function show(opts: DlqShowOptions & { job: string }, ctx: CommandContext): Promise<void> {
  const { dlqShow } = await import('./dlq-show.js');
  await dlqShow(opts.job, opts, dlqIoFrom(ctx));
}

export async function summary(opts: DlqSummaryOptions, ctx: CommandContext): Promise<void> {
  const { dlqSummary } = await import('./dlq-summary.js');
  await dlqSummary(opts, dlqIoFrom(ctx));
}

export async function redrive(opts: BulkOptions, ctx: CommandContext): Promise<void> {
  const { dlqBulk } = await import('./dlq-bulk.js');
  await dlqBulk('redrive', opts, dlqIoFrom(ctx));
}

export async function purge(opts: BulkOptions, ctx: CommandContext): Promise<void> {
  const { dlqBulk } = await import('./dlq-bulk.js');
  await dlqBulk('purge', opts, dlqIoFrom(ctx));
}

export async function expire(opts: BulkOptions, ctx: CommandContext): Promise<void> {
  const { dlqBulk } = await import('./dlq-bulk.js');
  await dlqBulk('expire', opts, dlqIoFrom(ctx));
}

export async function runs(opts: DlqRunsOptions, ctx: CommandContext): Promise<void> {
  const { dlqRuns } = await import('./dlq-runs.js');
  await dlqRuns(opts, dlqIoFrom(ctx));
}

export async function runShow(opts: DlqRunShowOptions & { run: string }, ctx: CommandContext): Promise<void> {
  const { dlqRunShow } = await import('./dlq-runs.js');
  await dlqRunShow(opts.run, opts, dlqIoFrom(ctx));
}
