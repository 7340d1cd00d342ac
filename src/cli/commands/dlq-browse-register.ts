/**
 * Registration of `agentq dlq browse` and its alias `agentq tui`. Imports
 * only commander types: the command module (and Ink, much later) load when
 * one of the two runs.
 */
import type { Command } from 'commander';
import type { CommandModule, LazyOptions } from '../program.js';
import { ALL_QUEUES_FLAG, ALL_QUEUES_HELP, scopedQueueHelp } from '../queue-scope.js';

type Lazy = (load: () => Promise<CommandModule>, o?: LazyOptions) => (...args: unknown[]) => Promise<void>;

const collect = (v: string, prev: string[] = []) => [...prev, v];
const load = () => import('./dlq-browse.js') as Promise<CommandModule>;

const KEYS_HELP = `
Keys (? inside shows them all):
  j/k ↑/↓ move   PgUp/PgDn page   Home/< top   End/>/G bottom   Enter open   Esc back
  / text filter (Esc restores)   e hide expired   p hide partial   E error code   T tenant   Q queue   x clear
  g group by error × workflow (Enter drills in)
  Space select   a select ALL matching the filter   c clear   R redrive (plan, confirm, apply)
  r / Ctrl-R reload   ? help (scrolls)   q / Ctrl-C quit
`;

const EXAMPLES = `
Examples:
  # triage one queue
  $ agentq dlq browse --queue research
  # only what died of 429s in the last 6 hours
  $ agentq dlq browse --queue research --error-code PROVIDER_429 --since 6h
  # the same app, shorter
  $ agentq tui -q research
`;

function browseOptions(cmd: Command): Command {
  return cmd
    .option('-q, --queue <queue>', `${scopedQueueHelp('read')}; a redrive needs one queue`)
    .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
    .option('--tenant <tenant>', 'only this tenant')
    .option('--workflow <workflow>', 'only this workflow (name:vN)')
    .option('--error-code <code>', 'only this error code (repeatable: any of them)', collect)
    .option('--since <when>', 'dead at or after (duration ago, e.g. 6h, or ISO-8601)')
    .option('--until <when>', 'dead before (duration ago or ISO-8601)')
    .option('--grep <text>', 'case-insensitive text in error code/message, workflow, tenant or job id')
    .option('--rate <rate>', 'redrive pace: 50, 20/s, 300/m, or 0/unlimited (default: 50/s)')
    .option('--batch-size <n>', 'redrive jobs per batch (1-1000)')
    .option('--max-redrives <n>', 'jobs redriven this many times already are quarantined (default: 3)')
    .addHelpText('after', KEYS_HELP + EXAMPLES);
}

export function registerBrowse(program: Command, lazy: Lazy): void {
  const dlq = program.commands.find((c) => c.name() === 'dlq');
  const description = 'interactive DLQ triage (full-screen): browse, filter, group by error, inspect, select and redrive safely';
  if (dlq !== undefined) browseOptions(dlq.command('browse').description(description)).action(lazy(load, { queueScope: 'read' }));
  browseOptions(program.command('tui').description(`${description} (same as dlq browse)`)).action(lazy(load, { queueScope: 'read' }));
}
