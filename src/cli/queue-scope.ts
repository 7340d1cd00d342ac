/**
 * A context's `queue` scopes every command that takes `--queue`, as a
 * kubectl context's namespace does: with no `--queue`, the command works on
 * the context's queue. Without this, `agentq --context staging dlq redrive
 * --error-code X --yes` redrove whichever queue had matching entries, not the
 * one the context names.
 *
 * Reading commands that can look at every queue take `-A, --all-queues` to
 * leave the context's queue aside. A bulk action given `--plan` or `--resume`
 * acts on the queue its plan or run names, and `tail --job` follows its job
 * wherever it is, so they are not scoped.
 */
import { ValidationError } from '../core/errors.js';

/** How a command is scoped: `read` commands may look at every queue with `--all-queues`. */
export type QueueScope = 'read' | 'bulk';

export interface ScopedOptions {
  queue?: unknown;
  /** Set when `queue` came from the context, so a command can say where it came from. */
  queueFromContext?: boolean;
  allQueues?: unknown;
  plan?: unknown;
  resume?: unknown;
  job?: unknown;
}

/** Fills `options.queue` from the context's queue where the command got none; checks `--all-queues`. */
export function scopeToContextQueue(options: ScopedOptions, scope: QueueScope, contextQueue: () => string | undefined): void {
  if (options.allQueues === true) {
    if (options.queue !== undefined) throw new ValidationError('--queue and --all-queues exclude each other: give one');
    return;
  }
  if (options.queue !== undefined) return;
  if (scope === 'bulk' && (options.plan !== undefined || options.resume !== undefined)) return;
  // `tail --job J`: the job names its own queue; the context's would only hide its events.
  if (options.job !== undefined) return;
  // Read only when needed: a command given --queue works even where the config cannot be read.
  const queue = contextQueue();
  if (queue !== undefined) {
    options.queue = queue;
    options.queueFromContext = true;
  }
}

/** The help of `--queue` on a scoped command. */
export function scopedQueueHelp(scope: QueueScope, only = 'only this queue'): string {
  return scope === 'read' ? `${only} (default: the context's queue; else, or with --all-queues, every queue)` : `${only} (default: the context's queue)`;
}

export const ALL_QUEUES_FLAG = '-A, --all-queues';
export const ALL_QUEUES_HELP = "every queue, even when the context names one";
