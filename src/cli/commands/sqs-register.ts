/**
 * Registration of the SQS backend's commands: `sqs setup|sweep|custody` and
 * `outbox relay|status`. Imports nothing but commander; every action is lazy
 * (the AWS SDK loads only when an sqs:// backend is opened).
 */
import type { Command } from 'commander';
import type { CommandModule, LazyOptions } from '../program.js';

type Lazy = (load: () => Promise<CommandModule>, o?: LazyOptions) => (...args: unknown[]) => Promise<void>;

function ex(...lines: Array<[string, string]>): string {
  return '\nExamples:\n' + lines.map(([cmd, what]) => `  # ${what}\n  $ ${cmd}\n`).join('');
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function registerSqs(program: Command, lazy: Lazy): void {
  const sqs = program.command('sqs').description('the AWS SQS backend: create its queues, take its DLQ into custody');
  sqs
    .command('setup')
    .description('create or check the SQS queues agentq needs (one per class, the DLQ, RedrivePolicy) and print what it did')
    .option('-q, --queue <queue>', 'agentq queue to set up (repeatable; default: the context\'s queue)', collect)
    .addHelpText(
      'after',
      '\nFor each agentq queue Q: PREFIX-Q-dlq and PREFIX-Q-interactive|batch|maintenance (retention 14 days), each with a\n' +
        'RedrivePolicy to the DLQ (maxReceiveCount from max_receive_count= in the URL, default 10): a crash backstop above\n' +
        'the app\'s own max attempts. Safe to run again: existing queues are checked, a changed policy is fixed.\n' +
        ex(['agentq --url "sqs://eu-west-1/agentq" sqs setup --queue research', 'create the queues of "research"']),
    )
    .action(lazy(() => import('./sqs.js'), { fn: 'setup' }));
  sqs
    .command('sweep')
    .description('receive the SQS DLQ and take what is there into custody (persisted byte-exact, then deleted from SQS)')
    .option('-q, --queue <queue>', 'agentq queue whose DLQ to sweep (default: the context\'s queue)')
    .option('--max <n>', 'receive at most this many messages', '1000')
    .option('--leave-foreign', 'record foreign and malformed messages but leave them in SQS')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      '\nThis receives from SQS: each message\'s receive count goes up by one and it is hidden while handled.\n' +
        'Natively dead-lettered jobs become DLQ entries (reason custody, error SQS_MAX_RECEIVES), except a job running\n' +
        'under a live lease: left running, its message put back in its source queue (requeued). Foreign and malformed\n' +
        'messages become entries listed as malformed, never redriven or purged.\n' +
        ex(['agentq sqs sweep --queue research --yes', 'in cron, after an alarm on the SQS DLQ'], ['agentq dlq list --queue research --error-code SQS_MAX_RECEIVES', 'then triage as usual']),
    )
    .action(lazy(() => import('./sqs.js'), { fn: 'sweep' }));
  sqs
    .command('republish')
    .description('give waiting jobs a new SQS message when theirs was lost (SQS restarted empty, a queue purged or made again)')
    .option('-q, --queue <queue>', 'agentq queue whose waiting jobs to republish (default: the context\'s queue)')
    .option('--job <id>', 'only this job (repeatable)', collect)
    .option('--older-than <duration>', 'only jobs last changed longer ago than this (e.g. 15m, 2h)')
    .option('--dry-run', 'print the plan and change nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      '\nThe store keeps which SQS message carries each job; when SQS loses it, the job stays queued and a worker finds\n' +
        'nothing to claim. This forgets each selected job\'s message and publishes a new one through the outbox. If the old\n' +
        'message was not lost after all, whichever copy is received first runs the job and the other is deleted as a\n' +
        'duplicate: a job never runs twice. Waiting jobs are queued or scheduled, or running with an expired lease (its\n' +
        'worker gone: the new message reaps the lease). Jobs still waiting in the outbox are left to the relay. Exit 75 (4, 78) when\n' +
        'some could not be published: they wait in the outbox (`agentq outbox status`, `agentq outbox relay`).\n' +
        ex(
          ['agentq sqs republish --queue research --older-than 30m --dry-run', 'after SQS restarted empty: what would be republished'],
          ['agentq sqs republish --queue research --older-than 30m --yes', 'then do it'],
        ),
    )
    .action(lazy(() => import('./sqs.js'), { fn: 'republish' }));
  sqs
    .command('custody')
    .description('list the messages taken out of SQS DLQs (kind, source queue, receive count, body)')
    .option('-q, --queue <queue>', 'only what was taken from this agentq queue\'s SQS DLQ (default: every queue)')
    .option('--limit <n>', 'at most this many (1-1000)', '100')
    .option('--after <job-id>', 'continue after this job id')
    .addHelpText(
      'after',
      ex(
        ['agentq sqs custody --queue research', 'what a sweep took from research\'s SQS DLQ'],
        ['agentq sqs custody --after job_01JD3K…', 'the next page, after the last job id shown'],
      ),
    )
    .action(lazy(() => import('./sqs.js'), { fn: 'custody' }));

  const outbox = program.command('outbox').description('the SQS backend\'s transactional outbox');
  outbox
    .command('relay')
    .description('publish outbox rows a crash or a failed publish left unpublished, now (workers also do this before each claim, after each row\'s backoff)')
    .addHelpText(
      'after',
      '\nEvery pending row is tried now, also rows backing off after a failed publish. Exit 75 if some still could not be\n' +
        'published, 4 if SQS refused the credentials, 78 if a queue is missing (`agentq sqs setup`).\n' +
        ex(['agentq outbox relay', 'after an outage of SQS, or once the queues exist']),
    )
    .action(lazy(() => import('./outbox.js'), { fn: 'relay' }));
  outbox
    .command('status')
    .description('how many outbox rows are waiting, since when, when the next try is due and why the last one failed')
    .addHelpText('after', ex(['agentq outbox status', 'jobs stored but not yet published to SQS, and why'], ['agentq outbox status -o json', 'for scripts']))
    .action(lazy(() => import('./outbox.js'), { fn: 'status' }));
}
