/**
 * The command tree: commander registration ONLY. No command logic lives here,
 * and nothing heavy is imported at the top, because this file is on the start
 * path of every invocation (`agentq --help` must stay close to bare `node`).
 *
 * HOW TO ADD A COMMAND (the pattern every engineer follows):
 *
 *   1. Write `src/cli/commands/<name>.ts` exporting
 *        export async function run(opts: <YourOptions>, ctx: CommandContext): Promise<void>
 *      It reads its options, talks to the backend through `await ctx.openBackend()`,
 *      prints records through `ctx.out` (see `output/format.ts`: `printRecords`,
 *      `RecordStream`, `printObject`), writes notes/progress with `ctx.note()` to
 *      stderr, calls `ctx.assertMutable('what')` before any mutation and
 *      `await ctx.confirm(...)` before a dangerous one, and THROWS typed errors
 *      from `core/errors.ts` (it never prints errors or calls process.exit —
 *      `main.ts` does). Every untrusted string it prints goes through
 *      `sanitize()` from `output/sanitize.ts` (records printed with columns are
 *      sanitised for you). Never import ink/react outside a TUI command module.
 *
 *   2. Register it below with `.action(lazy(() => import('./commands/<name>.js')))`.
 *      `lazy` loads the module only when the command runs. Positional arguments
 *      arrive as `opts.args` (an array, in declaration order; a variadic one is
 *      an array inside it) unless you pass `{ args: (a, b) => ({ a, b }) }` to
 *      name them. Use `{ fn: 'list' }` to call another export than `run`.
 *      Subcommand groups (`dlq list`, `context use`) are commands under a parent
 *      command, each with its own lazy action.
 *
 *   3. Give it `--help` text with examples: `.addHelpText('after', examples(...))`.
 *
 *   (The core job commands are wrapped in `if (want('<name>'))` and listed in
 *   CORE_COMMANDS, so that running one of them builds only its definition;
 *   commands registered elsewhere are built whenever anything else runs. A
 *   new command needs neither: it is always part of the full tree.)
 *
 * Global options (every command): --url, --context, -o/--output, --json,
 * --color, --no-input, --debug. Read them merged with the command's own via
 * `ctx.globals` / `ctx.format` rather than from opts.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Help, Option, type OutputConfiguration } from 'commander';
import { OUTPUT_CHOICES, OUTPUT_HELP } from './output-formats.js';
import { optionsAfterCommand, WORKER_DASH_DASH_HINT } from './worker-hint.js';
import type { CommandContext } from './context.js';
import { ALL_QUEUES_FLAG, ALL_QUEUES_HELP, scopedQueueHelp, scopeToContextQueue, type QueueScope } from './queue-scope.js';
import { registerDlq } from './commands/dlq-register.js';
import { registerOps } from './commands/ops-register.js';
import { registerBrowse } from './commands/dlq-browse-register.js';
import { registerSqs } from './commands/sqs-register.js';

/** A command module: `run(opts, ctx)` (or another named export, see `fn`). */
export type CommandModule = Record<string, unknown>;
export type CommandRunner = (opts: Record<string, unknown>, ctx: CommandContext) => Promise<unknown> | unknown;

/** How the program reaches `main` without importing it: main passes a host in. */
export interface ProgramHost {
  /** Builds the context for the command that is about to run, then runs it. */
  run(cmd: Command, opts: Record<string, unknown>, runner: CommandRunner): Promise<void>;
  /**
   * Where commander writes help and usage errors. Applied before any command
   * is added, because subcommands copy the setting when they are created.
   */
  output?: OutputConfiguration;
}

export interface LazyOptions {
  fn?: string;
  args?: (...positional: unknown[]) => Record<string, unknown>;
  /** The command takes `--queue`, which defaults to the context's queue (see cli/queue-scope.ts). */
  queueScope?: QueueScope;
}

/** `prometheus` is understood by `agentq stats` only (see commands/ops-register.ts); other commands refuse it. */
export { OUTPUT_CHOICES } from './output-formats.js';

let packageVersion: string | undefined;
/** The version from package.json (dist/cli/program.js → ../../package.json). */
export function agentqVersion(): string {
  if (packageVersion === undefined) {
    try {
      // import.meta.dirname (Node >= 20.11; `__dirname` in the bundle) spares a file-URL round trip
      // that was ~3% of `agentq --help`'s CPU profile; older Node 20 releases take the URL.
      const dir = import.meta.dirname ?? dirname(fileURLToPath(import.meta.url));
      packageVersion = (JSON.parse(readFileSync(join(dir, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      packageVersion = '0.0.0-unknown';
    }
  }
  return packageVersion;
}

/** `Examples:` help text from pairs of [command line, what it does]. */
export function examples(...lines: Array<[string, string]>): string {
  return '\nExamples:\n' + lines.map(([cmd, what]) => `  # ${what}\n  $ ${cmd}\n`).join('');
}

/**
 * The core commands, by name and alias: when one of them is what runs,
 * `buildProgram` registers only it (see `commandHint`).
 */
const CORE_COMMANDS: Record<string, string> = {
  submit: 'submit',
  inspect: 'inspect',
  list: 'list',
  ls: 'list',
  cancel: 'cancel',
  tail: 'tail',
  context: 'context',
  demo: 'demo',
};

/** Global options that take a value in the next word (`--url X`); `--color=X` is already joined by main. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['--url', '--context', '-o', '--output']);

/** The command word of an argv (`agentq -o json inspect J` → `inspect`), or undefined. */
export function firstOperand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (GLOBAL_OPTIONS_WITH_VALUE.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

export interface BuildOptions {
  /**
   * The command word about to run (`firstOperand(argv)`). When it names a
   * core command, only that command is registered: building the whole tree
   * (40-odd commands, 200-odd options) costs about as much start-up time as
   * the rest of `agentq inspect` before the backend. Anything else — no
   * command, `help`, another engineer's command, a typo that needs
   * suggestions — builds the full tree. Completions and tests build the full
   * tree by leaving this out.
   */
  commandHint?: string;
}

export function buildProgram(host: ProgramHost, build: BuildOptions = {}): Command {
  const only = build.commandHint === undefined ? undefined : CORE_COMMANDS[build.commandHint];
  const want = (name: string) => only === undefined || only === name;

  const lazy =
    (load: () => Promise<CommandModule>, o: LazyOptions = {}) =>
    async (...actionArgs: unknown[]): Promise<void> => {
      // commander calls action(...positionals, opts, command)
      const cmd = actionArgs[actionArgs.length - 1] as Command;
      const positional = actionArgs.slice(0, -2);
      const opts: Record<string, unknown> = { ...cmd.opts(), ...(o.args ? o.args(...positional) : { args: positional }) };
      await host.run(cmd, opts, async (options, ctx) => {
        if (o.queueScope) scopeToContextQueue(options, o.queueScope, () => ctx.config().context?.queue);
        const mod = await load();
        const fn = mod[o.fn ?? 'run'];
        if (typeof fn !== 'function') throw new Error(`command module has no export ${o.fn ?? 'run'}`);
        return (fn as CommandRunner)(options, ctx);
      });
    };

  const program = new Command('agentq');
  const rawArgs = (): string[] => (program as unknown as { rawArgs: string[] }).rawArgs;
  /**
   * A command run from an argv (worker's handler, job effect's command) given without `--`: the
   * options after it would be taken as agentq's, silently (`-q` switching the worker's queue,
   * `-o json` or `--url` meant for the command): refused, naming them (exit 2).
   */
  const refuseOptionsAfterCommand = (action: Command, operandsBefore: number, what: string, readAs: string): void => {
    const options = [...program.options, ...action.options];
    const takesValue = (t: string) => options.some((opt) => (opt.long === t || opt.short === t) && (opt.required || opt.optional));
    const after = optionsAfterCommand(rawArgs(), takesValue, operandsBefore);
    if (after.length > 0) action.error(`error: ${after.join(' ')} after ${what} would be read as ${readAs}`, { code: 'commander.optionsAfterCommand' });
  };
  // Settings subcommands inherit must be set before the first `.command()`.
  if (host.output) program.configureOutput(host.output);
  program
    .description('Queue layer and operator CLI for long, flaky, expensive AI-agent jobs.')
    .version(`agentq ${agentqVersion()} (node ${process.version})`, '-V, --version', 'show the agentq and Node versions')
    .option('--url <url>', 'backend URL (sqlite:PATH, redis://..., ...); overrides AGENTQ_URL and contexts')
    .option('--context <name>', 'use this context from the config file')
    .addOption(new Option('-o, --output <format>', OUTPUT_HELP).choices(OUTPUT_CHOICES))
    .option('--json', 'same as -o json')
    .addOption(new Option('--color <when>', 'colour: auto, always or never (a bare --color means always)').choices(['auto', 'always', 'never']).default('auto'))
    .option('--no-input', 'never prompt (mutations then need --yes)')
    .option('--debug', 'print stack traces for errors (also AGENTQ_DEBUG=1)')
    .helpCommand(false)
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      // -o's description lists its formats and which command takes which; commander's own
      // "(choices: ...)" would list prometheus as if every command took it.
      optionDescription(this: Help, option: Option): string {
        return option.long === '--output' ? option.description : Help.prototype.optionDescription.call(this, option);
      },
    })
    .showSuggestionAfterError(true)
    .exitOverride();

  program.addHelpText(
    'after',
    '\nRun `agentq help exit-codes` for the exit codes, `agentq <command> --help` for a command.\n' +
      examples(
        ['agentq demo', 'try it: a local queue with sample jobs, no configuration needed'],
        ['agentq submit research_report:v3 --tenant acme --input-ref s3://b/in.json --input-sha256 <hex> --deadline 2h', 'submit a job'],
        ['agentq list --state running --tenant acme', 'list running jobs of one tenant'],
      ),
  );

  // ------------------------------------------------------------ jobs
  if (want('submit')) {
    program
      .command('submit')
      .description('submit a job and print its id (validates, persists, returns at once); --file F: a job a line')
      .argument('[workflow]', 'workflow as name:vN, e.g. research_report:v3 (not with --file)')
      .option('-f, --file <path>', 'submit the jobs of an NDJSON file (- for stdin), one object a line with the submit request\'s fields; every line is checked before any is submitted, and the flags below are defaults for fields a line leaves out')
      .option('-q, --queue <queue>', 'queue name (default: the context\'s queue, else "default")')
      .option('--tenant <tenant>', 'tenant id', 'default')
      .addOption(new Option('--class <class>', 'service class').choices(['interactive', 'batch', 'maintenance']).default('batch'))
      .option('--operation <name>', 'operation within the workflow')
      .option('--deadline <when>', 'deadline: a duration from now (90s, 2h, 1d) or an ISO-8601 time with zone')
      .option('--idempotency-key <key>', 'the same key returns the same job instead of a duplicate')
      .option('--input <text>', 'inline input (at most 64 KiB; use --input-ref for documents)')
      .option('--input-file <path>', 'inline input read from a file (at most 64 KiB); with --input-ref, the local copy its sha256 is computed from')
      .option('--input-ref <ref>', 'reference to the input (s3://..., https://...), with --input-sha256')
      .option('--input-sha256 <hex>', 'sha256 of what --input-ref points to (64 hex digits)')
      .option('--max-attempts <n>', 'attempts before the job goes to the DLQ (1-100)', '3')
      .option('--trace-id <id>', 'trace id to correlate logs and spans')
      .option('--budget-tokens <n>', 'token ceiling for the job, over all its attempts (held against what its handler reports: beyond it, BUDGET_EXCEEDED)')
      .option('--budget-usd <amount>', 'cost ceiling for the job in USD, as --budget-tokens')
      .option('--allowed-tool <name>', 'a tool the agent may call (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .option('--estimated-seconds <n>', 'estimated seconds of work (for admission control)')
      .option('--run-at <when>', 'do not start before this time (duration from now or ISO-8601)')
      .option('--wait', 'follow the job until it ends; exit 0 succeeded, 1 ended otherwise, 124 timed out')
      .option('--timeout <duration>', 'with --wait: stop waiting after this long (the job is left as it is)')
      .addHelpText(
        'after',
        examples(
          ['agentq submit research_report:v3 --tenant acme --input-ref s3://bucket/in/doc.pdf --input-sha256 9f86d0…', 'a job whose input lives elsewhere'],
          ['agentq submit summarize:v1 --input "short text" --deadline 15m --class interactive', 'small inline input, due in 15 minutes'],
          ['agentq submit smoke:v1 --input-file in.json --wait --timeout 5m -o json', 'a CI smoke job: wait for the outcome'],
          ['agentq submit report:v2 --idempotency-key order-123', 'safe to repeat: the same key returns the same job'],
          ['agentq submit --file jobs.ndjson --queue research --deadline 2h -o ndjson', 'many jobs, one JSON object a line; the flags fill in what a line leaves out'],
        ),
      )
      .action(lazy(() => import('./commands/submit.js'), { args: (workflow) => ({ workflow }) }));
  }

  if (want('inspect')) {
    program
      .command('inspect')
      .description('show one job: state, outcome, attempts, lease, deadline, checkpoint, effects, errors, events')
      .argument('<job>', 'job id (job_...)')
      .option('--events <n>', 'how many recent events to show', '10')
      .addHelpText('after', examples(['agentq inspect job_01JD3K…', 'everything about one job'], ['agentq inspect job_01JD3K… -o json | jq .state', 'for scripts']))
      .action(lazy(() => import('./commands/inspect.js'), { args: (job) => ({ job }) }));
  }

  if (want('list')) {
    program
      .command('list')
      .alias('ls')
      .description('list jobs in creation order (oldest first), a page at a time')
      .option('-q, --queue <queue>', scopedQueueHelp('read'))
      .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
      .option('--state <states>', 'only these states (comma-separated: queued,scheduled,running,succeeded,dead,cancelled,expired)')
      .option('--tenant <tenant>', 'only this tenant')
      .addOption(new Option('--class <class>', 'only this class').choices(['interactive', 'batch', 'maintenance']))
      .option('--workflow <workflow>', 'only this workflow (name:vN)')
      .option('--since <when>', 'created at or after (duration ago, e.g. 6h, or ISO-8601)')
      .option('--until <when>', 'created before (duration ago or ISO-8601)')
      .option('--limit <n>', 'jobs per page (1-1000)', '50')
      .option('--cursor <cursor>', 'continue from the cursor printed by the previous page')
      .option('--all', 'stream every page (bounded memory)')
      .addHelpText(
        'after',
        examples(
          ['agentq list --state running --tenant acme', 'what is running for one tenant'],
          ['agentq list --queue research --since 1h -o wide', 'recent jobs with more columns'],
          ['agentq list --state dead --all -o ndjson | jq -r .job_id', 'every dead job id, streamed'],
        ),
      )
      .action(lazy(() => import('./commands/list.js'), { queueScope: 'read' }));
  }

  if (want('cancel')) {
    program
      .command('cancel')
      .description('cancel jobs: a queued job ends at once, a running job is asked to stop at its next heartbeat')
      .argument('<jobs...>', 'job ids')
      .option('--reason <text>', 'why (recorded on the job)')
      .addHelpText('after', examples(['agentq cancel job_01JD3K… --reason "customer withdrew"', 'cancel one job'], ['agentq list --state queued --tenant acme -o ndjson | jq -r .job_id | xargs -r agentq cancel', 'cancel many (-r: nothing to do when nothing matches)']))
      .action(lazy(() => import('./commands/cancel.js'), { args: (jobs) => ({ jobs }) }));
  }

  if (want('tail')) {
    program
      .command('tail')
      .description('print job events (submitted, claimed, retries, outcomes); --follow keeps waiting for new ones')
      .option('-q, --queue <queue>', scopedQueueHelp('read', 'only events of this queue'))
      .option(ALL_QUEUES_FLAG, ALL_QUEUES_HELP)
      .option('--job <job>', 'only events of this job')
      .option('--since <when>', 'events at or after (duration ago or ISO-8601); without it a queue tail starts with the last 20 events')
      .option('-n, --events <n>', 'how many past events to show: a number, or "all" (default: 20; all with --since or --job)')
      .option('-f, --follow', 'keep printing new events until Ctrl-C (which exits 0); with --job, until the job ends')
      .addHelpText(
        'after',
        examples(
          ['agentq tail --queue research --follow -o ndjson', 'the last 20 events, then new ones as JSON lines (each has a "type")'],
          ['agentq tail --job job_01JD3K… --follow', 'the history of one job, then follow it until it ends'],
          ['agentq tail --queue research --events all', 'the whole history of a queue'],
        ),
      )
      .action(lazy(() => import('./commands/tail.js'), { queueScope: 'read' }));
  }

  // ------------------------------------------------------------ help, config, demo
  if (only === undefined) {
    program
      .command('help')
      .description('show help for a command, or a topic: exit-codes')
      .argument('[topic...]', 'a command (e.g. "dlq redrive") or "exit-codes"')
      .addHelpText('after', examples(['agentq help exit-codes', 'the exit codes scripts can rely on'], ['agentq help submit', 'same as agentq submit --help']))
      .action(lazy(() => import('./commands/help.js'), { args: (topic) => ({ topic, program }) }));
  }

  if (want('context')) {
    const context = program.command('context').description('show and switch configuration contexts (kubectl-style)');
    context
      .command('list')
      .description('list contexts from the user and project config files')
      .action(lazy(() => import('./commands/context.js'), { fn: 'list' }));
    context
      .command('use')
      .description('make a context current (written to the user config file)')
      .argument('<name>', 'context name')
      .action(lazy(() => import('./commands/context.js'), { fn: 'use', args: (name) => ({ name }) }));
    context
      .command('show')
      .description('show the active context, backend URL (redacted) and where each setting comes from')
      .action(lazy(() => import('./commands/context.js'), { fn: 'show' }));
    context.addHelpText(
      'after',
      examples(['agentq context list', 'known contexts'], ['agentq context use prod', 'switch'], ['agentq --context staging list', 'one command against another context']),
    );
  }

  if (want('demo')) {
    program
      .command('demo')
      .description('try agentq: create a local queue on the embedded default, submit sample jobs and show them')
      .option('-q, --queue <queue>', 'queue for the sample jobs', 'demo')
      .option('--jobs <n>', 'how many sample jobs', '6')
      .option('--no-worker', 'only submit the sample jobs; do not process them with the demo worker')
      .addHelpText('after', examples(['agentq demo', 'works on a fresh machine, no configuration']))
      .action(lazy(() => import('./commands/demo.js')));
  }

  if (only !== undefined) return program;

  // ------------------------------------------------------------ other engineers' commands
  // (worker, job, dlq, stats, completion, ... register below with the same `lazy` pattern)
  registerDlq(program, lazy);
  registerOps(program, lazy); // stats, metrics serve, dlq check, completion (after dlq: adds `dlq check`)
  registerBrowse(program, lazy);
  registerSqs(program, lazy); // sqs setup|sweep|custody, outbox relay|status

  // ------------------------------------------------------------ worker and job (issue 3)
  // Without `--`, the handler's own options are read as the worker's (`bash -c …` sets
  // --concurrency): a usage error then says to put the command after `--`. Set as the worker's
  // options are about to be parsed, when the argv is known: with `--` given, a usage error is a
  // plain mistake (a misspelt option), and the hint would send the reader the wrong way.
  program.hook('preSubcommand', (_program, sub) => {
    if (sub.name() === 'worker') sub.showHelpAfterError(rawArgs().includes('--') ? false : `hint: ${WORKER_DASH_DASH_HINT}`);
  });
  program
    .command('worker')
    .description('run a handler command once per job: claims, heartbeats, graceful stop on SIGTERM/SIGINT/SIGHUP')
    .argument('<command...>', 'handler command and its arguments, after -- (run directly, never through a shell)')
    .option('-q, --queue <queue>', 'queue to work on (default: the context\'s queue, else "default")')
    .option('-c, --concurrency <n>', 'jobs in flight at once', '1')
    .option('--lease <duration>', 'lease per claim and heartbeat (never past a job\'s deadline)', '60s')
    .option('--heartbeat <duration>', 'how often all leases are extended (default: a quarter of --lease)')
    .option('--classes <list>', 'only these classes, comma-separated (interactive,batch,maintenance)')
    .option('--tenant-concurrency <n>', 'jobs one tenant may have running at once in the queue, across all workers (default: the context\'s fairness, else no cap)')
    .option('--tenant-cap <tenant=n>', 'a cap for one tenant, over --tenant-concurrency (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--worker-version <version>', 'recorded on every attempt and DLQ entry (default: $AGENTQ_WORKER_VERSION)')
    .option('--grace <duration>', 'on SIGTERM/SIGINT/SIGHUP: time for running jobs to finish before they are stopped and released', '30s')
    .option('--kill-grace <duration>', 'a stopped handler gets SIGTERM, then SIGKILL after this long', '10s')
    .option('--max-result-bytes <n>', 'stdout kept as the job result; the rest is cut with a marker', '65536')
    .option('--drain', 'exit once nothing is claimable and no job is running (CI, batch runs)')
    .option('--quiet', 'no per-job lines on stderr')
    .addHelpText(
      'after',
      '\nHandler protocol: the job envelope is JSON on stdin; AGENTQ_JOB_ID, AGENTQ_ATTEMPT, AGENTQ_DEADLINE_AT,\n' +
        'AGENTQ_TRACE_ID, AGENTQ_QUEUE, AGENTQ_TENANT are set; stdout is the result. Exit 0 = success,\n' +
        '75 = retryable failure, killed by a signal the worker did not send (or exit 128+N) = retried,\n' +
        'anything else = permanent (a #! interpreter that is missing stops the worker with exit 2\n' +
        'instead: checked at start-up, and again when the handler exits 127/126).\n' +
        'Inside the handler: agentq job checkpoint|usage|effect|error;\n' +
        'to resume: the last checkpoint is in the file $AGENTQ_CHECKPOINT_FILE (no file when there is none),\n' +
        'the effect ledger (JSON) in $AGENTQ_EFFECTS_FILE.\n' +
        'When the handler exits, what it left running in its process group is stopped too.\n' +
        examples(
          ['agentq worker --queue research --concurrency 4 -- ./run-agent.sh', 'four jobs at a time'],
          ['agentq worker --queue research --lease 2m --grace 1m --worker-version "$GIT_SHA" -- node agent.js', 'longer leases, tagged attempts'],
          ['agentq worker --queue smoke --drain -- ./check.sh', 'process what is queued, then exit'],
          ['agentq worker --queue research --concurrency 8 --tenant-concurrency 2 --tenant-cap acme=4 -- ./run-agent.sh', 'no tenant takes more than 2 slots (acme 4)'],
        ),
    )
    .hook('preAction', (_worker, action) => {
      action.setOptionValue('dashDash', rawArgs().includes('--'));
      refuseOptionsAfterCommand(action, 1, 'the handler command', "agentq worker's own (a handler's options go after --)");
    })
    .action(lazy(() => import('./commands/worker.js'), { args: (command) => ({ command }) }));

  const job = program.command('job').description('inside a handler run by agentq worker: checkpoint, report usage, record an effect, report an error code');
  // `job effect KEY ls -l`: an option agentq does not know is refused by the parser before the
  // preAction check below can name the missing `--`, so its usage error says it, as the worker's does.
  job.hook('preSubcommand', (_job, sub) => {
    if (sub.name() === 'effect') sub.showHelpAfterError(rawArgs().includes('--') ? false : 'hint: give the effect command after --, e.g. agentq job effect KEY -- curl -X POST …: before it, every option is read as agentq\'s own');
  });
  job
    .command('checkpoint')
    .description('save resumable progress for the current job (JSON if it parses, else text)')
    .argument('[data]', 'the checkpoint')
    .option('--file <path>', 'read the checkpoint from a file')
    .action(lazy(() => import('./commands/job.js'), { fn: 'checkpoint', args: (data) => ({ data }) }));
  job
    .command('usage')
    .description('add what this attempt spent (tokens, US dollars) to its record and its queue\'s totals: cost per job')
    .option('--tokens <n>', 'tokens used since the last report (a whole number)')
    .option('--cost-usd <amount>', 'US dollars spent since the last report (e.g. 0.042)')
    .action(lazy(() => import('./commands/job.js'), { fn: 'usage' }));
  job
    .command('effect')
    .description('run CMD as effect KEY unless already done; CMD gets AGENTQ_IDEMPOTENCY_KEY; its stdout is the recorded result')
    .argument('<key>', 'effect key, unique within the job (e.g. send-invoice)')
    .argument('<command...>', 'the command, after --')
    .hook('preAction', (_effect, action) => refuseOptionsAfterCommand(action, 3, 'the effect command', "agentq's own (the command's options go after --, e.g. agentq job effect KEY -- curl -X POST …)"))
    .action(lazy(() => import('./commands/job.js'), { fn: 'effect', args: (key, command) => ({ key, command }) }));
  job
    .command('error')
    .description('report the error code (and message) recorded when this handler exits non-zero')
    .argument('<code>', 'e.g. PROVIDER_429, VALIDATION, BUDGET_EXCEEDED (see README, Workers)')
    .argument('[message...]', 'what went wrong')
    .action(lazy(() => import('./commands/job.js'), { fn: 'error', args: (code, message) => ({ code, message }) }));
  job.addHelpText(
    'after',
    examples(
      ['agentq job checkpoint \'{"step":3}\'', 'save progress'],
      ['agentq job usage --tokens 1830 --cost-usd 0.0274', 'after a model call: what it spent'],
      ['agentq job effect send-invoice -- ./send-invoice.sh', 'an irreversible step, run once per job'],
      ['agentq job error PROVIDER_429 "rate limited"; exit 75', 'a retryable failure with its code'],
    ),
  );

  return program;
}
