/**
 * Registration of the operability commands (issue 8): `stats`, `metrics
 * serve`, `dlq check`, `completion` and the hidden `__complete`. Imported by
 * `cli/program.ts`; it imports nothing but commander, and every action is
 * lazy, so it adds nothing to start-up.
 */
import { Argument, Option, type Command } from 'commander';
import { jsonConflict } from '../output-formats.js';
import type { CommandModule, LazyOptions } from '../program.js';
import { ALL_QUEUES_FLAG, ALL_QUEUES_HELP, scopedQueueHelp } from '../queue-scope.js';

type Lazy = (load: () => Promise<CommandModule>, o?: LazyOptions) => (...args: unknown[]) => Promise<void>;

function ex(...lines: Array<[string, string]>): string {
  return '\nExamples:\n' + lines.map(([cmd, what]) => `  # ${what}\n  $ ${cmd}\n`).join('');
}

/**
 * `-o prometheus` is a global `-o` value that only `stats` understands: the
 * root parses `-o` wherever it appears, so take it back off the globals
 * before the command runs and hand it to `stats` as its own option.
 */
function claimPrometheusOutput(program: Command) {
  return (_self: Command, action: Command): void => {
    if (program.opts().output === 'prometheus') {
      // (the rule of resolveFormat, which never sees this -o: it is taken off the globals here)
      if (program.opts().json) throw jsonConflict('prometheus');
      program.setOptionValueWithSource('output', undefined, 'default');
      action.setOptionValue('prometheus', true);
    }
  };
}

export function registerOps(program: Command, lazy: Lazy): void {
  program
    .command('stats')
    .description('queue health: depth, oldest age, time in queue and execution p50/p95, retry and DLQ rates, backlog, throughput')
    .option('-q, --queue <queue>', scopedQueueHelp('read'))
    .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
    .addOption(new Option('--by <dimension>', 'break the figures down by service class or tenant, or list failed attempts by error code').choices(['class', 'tenant', 'code']))
    .option('-w, --watch', 'refresh on a terminal, with sparklines of depth and oldest age')
    .option('--interval <duration>', 'with --watch: time between refreshes', '2s')
    .hook('preAction', claimPrometheusOutput(program))
    .addHelpText(
      'after',
      '\nOutput: a table on a terminal, plain lines otherwise; -o json for scripts (an array, one object per queue);\n' +
        '-o prometheus for the Prometheus text format (see also `agentq metrics serve`).\n' +
        ex(
          ['agentq stats --queue research', 'age of oldest, time-in-queue p95, DLQ rate, backlog seconds'],
          ['agentq stats --by tenant', 'who is queued where'],
          ['agentq stats --by code', 'failed attempts by error code (retried 429s included), largest first'],
          ['agentq stats --watch', 'live view with sparklines (Ctrl-C to stop)'],
          ['agentq stats -o json | jq ".[] | {queue, dlq_rate}"', 'for scripts'],
          ['agentq stats -o prometheus > /var/lib/node_exporter/agentq.prom', 'for the node_exporter textfile collector'],
        ),
    )
    .action(lazy(() => import('./stats.js'), { queueScope: 'read' }));

  const metrics = program.command('metrics').description('expose queue statistics to Prometheus');
  metrics
    .command('serve')
    .description('serve /metrics in the Prometheus text format (loopback only unless --listen says otherwise)')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:9464')
    .addHelpText(
      'after',
      '\nEach scrape reads maintained counters and bounded samples from the backend (no scans), for every queue.\n' +
        'Binding to a non-loopback address exposes queue names and tenant ids: put it behind your network policy.\n' +
        ex(['agentq metrics serve', 'http://127.0.0.1:9464/metrics'], ['agentq metrics serve --listen 0.0.0.0:9464', 'reachable from other hosts (think first)']),
    )
    .action(lazy(() => import('./metrics.js')));

  const dlq = program.commands.find((c) => c.name() === 'dlq') ?? program.command('dlq').description('triage the dead-letter queue');
  dlq
    .command('check')
    .description('alert check for cron and CI: exit 0 when the DLQ is within limits, 1 with a one-line reason when not')
    .option('-q, --queue <queue>', scopedQueueHelp('read'))
    .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
    .option('--max-size <n>', 'at most this many jobs in the DLQ')
    .option('--max-age <duration>', 'no DLQ entry older than this (e.g. 1h, 2d)')
    .option('--max-rate <rate>', 'at most this share of the jobs that ended over --window went to the DLQ (0.05 or 5%): clearing the DLQ does not lower it')
    .option('--window <duration>', "what --max-rate (and dlq_rate in -o json) is over: 1m to 24h, or all for the queue's whole life (default: 1h)")
    .option('--min-ended <n>', 'judge --max-rate only when at least this many jobs ended over --window (a quiet queue does not page on one death)')
    .addHelpText(
      'after',
      '\nA DLQ needs an owner and an alert on growth. With no limit given, any entry fails the check (--max-size 0).\n' +
        ex(
          ['agentq dlq check --queue research --max-size 100 --max-age 6h', 'in cron: mail the reason when it fails'],
          ['agentq dlq check --max-rate 2% --window 15m', 'page when more than 2% of the jobs that ended in the last 15 minutes died'],
          ['agentq dlq check --max-rate 5% --window 1h --min-ended 50', 'the same, judged only once 50 jobs ended in the hour'],
          ['agentq dlq check --max-rate 2% --window all', 'fail CI when more than 2% of all jobs ever ended in the DLQ'],
        ),
    )
    .action(lazy(() => import('./dlq-check.js'), { queueScope: 'read' }));

  program
    .command('prune')
    .description('delete finished jobs (succeeded, cancelled, expired) that ended longer ago than --older-than: plan, dry run, confirm, ledger')
    .option('--older-than <duration>', 'required: only jobs that ended longer ago than this, e.g. 7d, 36h')
    .option('-q, --queue <queue>', scopedQueueHelp('read'))
    .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
    .option('--state <states>', 'comma-separated: succeeded, cancelled, expired (default: all three; dead jobs are DLQ entries: dlq purge)')
    .option('--max <n>', 'at most N jobs this time (those that ended longest ago, across the queues covered); run again for the rest')
    .option('--dry-run', 'print the plan (jobs per queue and state, oldest and newest end) and change nothing')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .option('--reason <text>', 'why: recorded in the audit record of each run (agentq dlq runs)')
    .option('--rate <rate>', 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: unlimited, in batches)')
    .option('--batch-size <n>', 'jobs per batch, each deleted in one short step (1-1000; default: 100)')
    .option('--resume <run>', 'continue an interrupted prune run from its ledger (only --rate, --batch-size and the lock options may be given)')
    .option('--break-lock', "break the queue's bulk-action lock of a dead process (checked by pid and its start time on this host)")
    .option('--force', '--break-lock of a holder on another host, or (with a warning) of a running pid')
    .addHelpText(
      'after',
      '\nDeletes each job with its attempts, effects, history and idempotency key (a later submit with that key makes a new job).\n' +
        'The state counts of `agentq stats` drop; the outcome totals stay. One run per queue, listed by `agentq dlq runs`.\n' +
        ex(
          ['agentq prune --older-than 7d --dry-run', 'what would go: jobs per queue and state, oldest and newest end'],
          ['agentq prune --older-than 30d --queue research --state succeeded --yes', 'in a nightly job'],
          ['agentq prune --resume run_01JD…', 'continue after Ctrl-C or a crash'],
        ),
    )
    .action(lazy(() => import('./prune.js'), { queueScope: 'read' }));

  program
    .command('completion')
    .description('print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText('after', () => INSTALL_TEXT)
    .action(lazy(() => import('./completion.js'), { args: (shell) => ({ shell, program }) }));

  // Hidden: what the completion scripts call for live values. Not for people.
  program
    .command('__complete', { hidden: true })
    .argument('<kind>', 'queues, contexts, dlq-jobs, error-codes, tenants')
    .argument('[words...]', 'the command line typed so far (after --)')
    .action(lazy(() => import('./completion.js'), { fn: 'complete', args: (kind, words) => ({ kind, words }) }));
}

// Kept here (not in the completion module) so `--help` needs no extra import.
const INSTALL_TEXT = `
Examples:
  # bash, for good (for this shell only: source <(agentq completion bash))
  $ agentq completion bash > ~/.local/share/bash-completion/completions/agentq
  # zsh: into a directory of your fpath, then restart zsh (or, in ~/.zshrc after compinit: source <(agentq completion zsh))
  $ agentq completion zsh > "\${fpath[1]}/_agentq"
  # fish
  $ agentq completion fish > ~/.config/fish/completions/agentq.fish

The same scripts ship in the npm package, under completions/ in $(npm root -g)/agentq.
Queue names, contexts, DLQ job ids and error codes are completed live from the
configured backend (a hidden \`agentq __complete\` call that gives up after ~500 ms).
`;
