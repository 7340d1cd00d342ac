/**
 * Registration of `agentq dlq …` in the command tree. Imported by
 * `cli/program.ts`; it imports nothing but commander types, and every action
 * is lazy, so it adds nothing to start-up.
 */
import { Option, type Command } from 'commander';
import type { CommandModule, LazyOptions } from '../program.js';
import { ALL_QUEUES_FLAG, ALL_QUEUES_HELP, scopedQueueHelp } from '../queue-scope.js';

type Lazy = (load: () => Promise<CommandModule>, o?: LazyOptions) => (...args: unknown[]) => Promise<void>;

const collect = (v: string, prev: string[] = []) => [...prev, v];
const load = () => import('./dlq.js') as Promise<CommandModule>;

function ex(...lines: Array<[string, string]>): string {
  return '\nExamples:\n' + lines.map(([cmd, what]) => `  # ${what}\n  $ ${cmd}\n`).join('');
}

/** The selector flags, shared by list, summary, export and the bulk actions. */
function selectors(cmd: Command, o: { bulk: boolean }): Command {
  cmd.option('-q, --queue <queue>', scopedQueueHelp(o.bulk ? 'bulk' : 'read'));
  if (!o.bulk) cmd.option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP);
  cmd
    .option('--tenant <tenant>', 'only this tenant')
    .option('--workflow <workflow>', 'only this workflow (name:vN)')
    .option('--error-code <code>', 'only this error code (repeatable: any of them)', collect)
    .option(o.bulk ? '--dead-reason <reason>' : '--reason <reason>', 'only this dead reason: exhausted, permanent, lease_lost, custody')
    .option('--since <when>', 'dead at or after (duration ago, e.g. 6h, or ISO-8601)')
    .option('--until <when>', 'dead before (duration ago or ISO-8601)')
    .option('--min-attempts <n>', 'at least this many attempts made')
    .option('--max-attempts <n>', 'at most this many attempts made')
    .option('--expired', 'only entries whose deadline passed (or has less than --min-remaining left)')
    .option('--not-expired', 'only entries that can still finish before their deadline')
    .option('--min-remaining <duration>', 'less time than this before the deadline counts as expired (e.g. 30m)')
    .option('--partial', 'only entries whose effect ledger shows an external effect started')
    .option('--no-partial', 'only entries without started effects')
    .option('--grep <text>', 'case-insensitive text in error code/message, workflow, tenant or job id');
  // commander keeps one `partial` value for both flags, so `--partial --no-partial` would silently be
  // "last one wins"; each one given is recorded too, so the selector can refuse both (as it does
  // `--expired --not-expired`).
  const given = (flag: string) => () => cmd.setOptionValue('partialFlags', [...((cmd.getOptionValue('partialFlags') as string[] | undefined) ?? []), flag]);
  cmd.on('option:partial', given('--partial'));
  cmd.on('option:no-partial', given('--no-partial'));
  return cmd;
}

function bulk(cmd: Command, action: 'redrive' | 'purge' | 'expire'): Command {
  selectors(cmd, { bulk: true })
    .option('--all', 'act on the whole DLQ (required when no selector is given)')
    .option('--dry-run', 'print the plan (verdict per job, totals) and change nothing')
    .option('--plan-out <file>', 'save the frozen plan to a file for review (- : to stdout, with --dry-run; the table then goes nowhere, the totals to stderr)')
    .option('--plan <file>', 'apply exactly this saved plan (every job is re-checked; selectors and plan options are refused; - : read it from stdin)')
    .option('--resume <run>', 'continue an interrupted run from its ledger, with the options recorded when it was created (only --rate, --batch-size and the lock options may be given)')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .option('--rate <rate>', 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: 50/s; on --resume: the run\'s recorded rate)')
    .option('--batch-size <n>', 'jobs per batch (1-1000; default: one second of work at --rate, at most 100; never more than one second of --rate)')
    .option('--break-lock', "break the queue's bulk-action lock of a dead process (checked by pid and its start time on this host)")
    .option('--force', 'apply --include-partial, or a --plan with partial jobs; --break-lock of a holder on another host, or (with a warning) of a running pid')
    .option('--reason <text>', 'why: recorded in the audit record (agentq dlq runs)');
  return cmd;
}

export function registerDlq(program: Command, lazy: Lazy): void {
  const dlq = program
    .command('dlq')
    .description('triage the dead-letter queue and redrive it safely (plan, dry run, confirm, ledger, resume, audit)');

  selectors(dlq.command('list').description('list DLQ entries, a page at a time; --all streams them all (NDJSON)'), { bulk: false })
    .option('--limit <n>', 'entries per page (1-1000)', '50')
    .option('--cursor <cursor>', 'continue from the cursor printed by the previous page')
    .option('--all', 'stream every matching entry in bounded memory (NDJSON unless -o names another format)')
    .addHelpText(
      'after',
      ex(
        ['agentq dlq list --queue research --error-code PROVIDER_429 --since 6h', 'what died of 429s recently'],
        ['agentq dlq list --queue research --not-expired --no-partial', 'what a redrive could take'],
        ['agentq dlq list --queue research --all > dlq.ndjson', 'every entry, streamed'],
      ),
    )
    .action(lazy(load, { fn: 'list', queueScope: 'read' }));

  dlq
    .command('show')
    .description('everything in one DLQ entry: error, attempts, effects, checkpoint, payload preview (sanitised)')
    .argument('<job>', 'job id')
    .option('--raw', 'write the exact stored bytes (refused on a terminal unless --force)')
    .option('--force', 'with --raw: write to a terminal anyway')
    .addHelpText('after', ex(['agentq dlq show job_01JD3K…', 'one entry'], ['agentq dlq show job_01JD3K… --raw > entry.bin', 'the stored bytes, exactly']))
    .action(lazy(load, { fn: 'show', args: (job) => ({ job }) }));

  selectors(dlq.command('summary').description('counts per group, oldest/newest, and how many are expired or partial: triage by error'), { bulk: false })
    .option('--by <keys>', 'group by: error_code, workflow, tenant, queue, reason, worker_version, class (comma-separated)', 'error_code')
    .addHelpText('after', ex(['agentq dlq summary --queue research --by error_code,workflow', 'what is failing, and where']))
    .action(lazy(load, { fn: 'summary', queueScope: 'read' }));

  selectors(dlq.command('export').description('write the selection as NDJSON (archives, hand-off); -o json: one JSON array'), { bulk: false })
    .addHelpText('after', ex(['agentq dlq export --queue research --since 1d > dlq-research.ndjson', 'a day of one queue']))
    .action(lazy(load, { fn: 'exportEntries', queueScope: 'read' }));

  bulk(dlq.command('redrive').description('move DLQ entries back to their queue, safely: expired, partial and quarantined jobs are skipped'), 'redrive')
    .option('--include-partial', 'also redrive jobs that started an external effect (applying needs --force, a --dry-run does not; their effects are listed first)')
    .option('--max-redrives <n>', 'quarantine jobs already redriven this many times (default: 3)')
    .option('--reset-attempts', 'give redriven jobs their full max_attempts again')
    .option('--extra-attempts <n>', 'give redriven jobs N more attempts (default: 1)')
    .option('--no-sweep', "SQS: do not receive from the SQS DLQ after the moves (the moved jobs' copies stay there until `agentq sqs sweep`); other backends have no broker DLQ and ignore it")
    .addHelpText(
      'after',
      ex(
        ['agentq dlq redrive --queue research --error-code PROVIDER_429 --dry-run', 'the plan: N redrive, M skipped (expired), K skipped (partial)'],
        ['agentq dlq redrive --queue research --error-code PROVIDER_429 --dry-run --plan-out plan.json', 'save it for review'],
        ['agentq dlq redrive --plan plan.json --reason "provider quota raised" --rate 20/s', 'apply the reviewed plan'],
        ['agentq dlq redrive --resume run_01JD…', 'continue after Ctrl-C or a crash'],
      ) +
        '\nAttempts: by default a redriven job gets 1 more attempt (--extra-attempts 1); --reset-attempts restores the full budget.\n' +
        'SQS: along with the moves the redrive receives its SQS DLQ once through (each message\'s receive count +1), deletes the copies of jobs no longer dead and makes every other message visible again at the end (--no-sweep skips this).\n',
    )
    .action(lazy(load, { fn: 'redrive', queueScope: 'bulk' }));

  bulk(dlq.command('purge').description('delete DLQ entries for good (malformed entries are never deleted)'), 'purge')
    .addHelpText('after', ex(['agentq dlq purge --queue research --error-code VALIDATION --dry-run', 'what would be deleted']))
    .action(lazy(load, { fn: 'purge', queueScope: 'bulk' }));

  bulk(dlq.command('expire').description('move DLQ entries whose deadline passed to state expired (out of the DLQ)'), 'expire')
    .addHelpText('after', ex(['agentq dlq expire --queue research --dry-run', 'which entries are past their deadline']))
    .action(lazy(load, { fn: 'expire', queueScope: 'bulk' }));

  const runs = dlq
    .command('runs')
    .description('the audit trail of bulk actions: who, when, why, filters, counts')
    .option('-q, --queue <queue>', scopedQueueHelp('read', 'only runs on this queue'))
    .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
    .option('--limit <n>', 'runs per page (1-1000)', '50')
    .option('--cursor <cursor>', 'continue from the cursor printed by the previous page')
    .addHelpText('after', ex(['agentq dlq runs --queue research', 'recent bulk actions'], ['agentq dlq runs show run_01JD…', 'one run with its ledger']))
    .action(lazy(load, { fn: 'runs', queueScope: 'read' }));
  runs
    .command('show')
    .description('one run: its audit record and the ledger (one line per job)')
    .argument('<run>', 'run id')
    .addOption(new Option('--status <status>', 'only ledger items in this status').choices(['planned', 'moved', 'skipped', 'failed']))
    .option('--limit <n>', 'ledger items to print (1-1000), then the cursor to continue from; default: all')
    .option('--cursor <cursor>', 'continue the ledger from the cursor printed by the previous page')
    // `runs` has --limit and --cursor of its own, and commander gives them to it even when typed after
    // `show`: the values typed on the command line are this command's.
    .hook('preAction', (_self, action) => {
      for (const key of ['limit', 'cursor']) {
        if (action.parent?.getOptionValueSource(key) === 'cli') action.setOptionValue(key, action.parent.getOptionValue(key));
      }
    })
    .action(lazy(load, { fn: 'runShow', args: (run) => ({ run }) }));
}
