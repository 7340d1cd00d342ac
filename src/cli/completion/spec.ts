/**
 * The completion model: the live commander tree walked into plain data that
 * the bash, zsh and fish renderers turn into scripts. Walking the real tree
 * (not a hand-kept list) is what keeps completions in step with the
 * commands; the drift test compares the committed scripts with a fresh walk.
 *
 * Which values an option or argument takes comes from commander first
 * (`.choices()`), then from the domain (a `--queue` is a queue name, a
 * `--class` one of the service classes), so a command author gets good
 * completion without doing anything.
 */
import type { Argument, Command, Option } from 'commander';
import { DEAD_REASONS } from '../../core/model.js';
import { JOB_CLASSES, JOB_STATES } from '../../core/schemas.js';
import { SUMMARY_KEYS } from '../../dlq/summary.js';
import { HELP_TOPICS } from '../commands/help.js';
import { COMMAND_OUTPUTS, COMMON_OUTPUTS } from '../output-formats.js';

/** Values looked up at completion time through `agentq __complete KIND`. */
export const DYNAMIC_SOURCES = ['queues', 'contexts', 'dlq-jobs', 'error-codes', 'tenants'] as const;
export type DynamicSource = (typeof DYNAMIC_SOURCES)[number];

export type ValueSpec =
  /** Any text: nothing to offer. */
  | { kind: 'free' }
  | { kind: 'file' }
  | { kind: 'choices'; values: string[] }
  /** Comma-separated choices (`--state queued,running`): each item after a comma completes too. */
  | { kind: 'list'; values: string[] }
  | { kind: 'dynamic'; source: DynamicSource };

export interface OptionSpec {
  /** Without dashes: `o`. */
  short: string | null;
  /** Without dashes: `output`. */
  long: string | null;
  description: string;
  /** Null for a flag that takes no value. */
  value: ValueSpec | null;
}

export interface CommandSpec {
  /** Names from the root, e.g. `['dlq', 'list']`; empty for the root. */
  path: string[];
  name: string;
  aliases: string[];
  description: string;
  options: OptionSpec[];
  /** Positional arguments in order; the last one repeats when variadic. */
  args: ValueSpec[];
  variadic: boolean;
  subcommands: CommandSpec[];
}

/** What an option takes when commander does not list choices: by its long name, in the domain's words. */
function valueByName(long: string | null, placeholder: string, path: readonly string[]): ValueSpec {
  switch (long) {
    case 'queue':
      return { kind: 'dynamic', source: 'queues' };
    case 'context':
      return { kind: 'dynamic', source: 'contexts' };
    case 'tenant':
      return { kind: 'dynamic', source: 'tenants' };
    case 'error-code':
      return { kind: 'dynamic', source: 'error-codes' };
    case 'class':
      return { kind: 'choices', values: [...JOB_CLASSES] };
    case 'state':
      return { kind: 'list', values: [...JOB_STATES] };
    case 'classes':
      return { kind: 'list', values: [...JOB_CLASSES] };
    case 'dead-reason':
      return { kind: 'choices', values: [...DEAD_REASONS] };
    // `dlq list --reason <reason>` filters by dead reason; elsewhere `--reason <text>` is audit text.
    case 'reason':
      return placeholder === 'reason' ? { kind: 'choices', values: [...DEAD_REASONS] } : { kind: 'free' };
    case 'by':
      if (path.join(' ') === 'dlq summary') return { kind: 'list', values: [...SUMMARY_KEYS] };
      break;
    case 'output':
      return { kind: 'choices', values: outputsAt(path) };
    case 'color':
      return { kind: 'choices', values: ['auto', 'always', 'never'] };
  }
  if (/file|path|dir/i.test(placeholder) || (long !== null && /(^|-)(file|plan|plan-out|out)$/.test(long))) return { kind: 'file' };
  return { kind: 'free' };
}

/** The `-o` formats a command takes: the common ones, and any only it understands (stats: prometheus). */
function outputsAt(path: readonly string[]): string[] {
  return [...COMMON_OUTPUTS, ...(COMMAND_OUTPUTS[path.join(' ')] ?? [])];
}

function optionSpec(o: Option, path: readonly string[]): OptionSpec {
  const short = o.short ? o.short.replace(/^-/, '') : null;
  const long = o.long ? o.long.replace(/^--/, '') : null;
  let value: ValueSpec | null = null;
  if (o.required || o.optional) {
    const placeholder = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1] ?? '';
    // -o takes every format at parse time (the root reads it anywhere); offer each only where it works.
    if (long === 'output') value = { kind: 'choices', values: outputsAt(path) };
    else value = o.argChoices && o.argChoices.length > 0 ? { kind: 'choices', values: [...o.argChoices] } : valueByName(long, placeholder, path);
  }
  return { short, long, description: o.description ?? '', value };
}

function argSpec(a: Argument, path: string[]): ValueSpec {
  if (a.argChoices && a.argChoices.length > 0) return { kind: 'choices', values: [...a.argChoices] };
  const name = a.name().toLowerCase();
  // A job id under `dlq` names a DLQ entry: offer the DLQ's ids.
  if (/^job(s|-?ids?|_ids?)?$/.test(name) && path[0] === 'dlq') return { kind: 'dynamic', source: 'dlq-jobs' };
  if (name === 'queue' || name === 'queues') return { kind: 'dynamic', source: 'queues' };
  if (name === 'context' || name === 'name' && path[0] === 'context') return { kind: 'dynamic', source: 'contexts' };
  if (/file|path/.test(name)) return { kind: 'file' };
  return { kind: 'free' };
}

function isHidden(cmd: Command): boolean {
  return (cmd as unknown as { _hidden?: boolean })._hidden === true;
}

/** Walks `cmd` and every visible subcommand. Hidden commands (like `__complete`) are left out. */
export function buildCompletionSpec(cmd: Command, path: string[] = []): CommandSpec {
  const help = cmd.createHelp();
  const options = help
    .visibleOptions(cmd)
    .filter((o) => !o.hidden)
    .map((o) => optionSpec(o, path));
  // A command that takes more -o formats than the others gets an -o of its own, offering them too
  // (the scripts look a command's own options up before the global ones).
  if (path.length > 0 && COMMAND_OUTPUTS[path.join(' ')] && !options.some((o) => o.long === 'output')) {
    let root: Command = cmd;
    while (root.parent) root = root.parent;
    const global = root.options.find((o) => o.long === '--output');
    if (global) options.push(optionSpec(global, path));
  }
  const registered = cmd.registeredArguments ?? [];
  const subcommands = cmd.commands.filter((c) => !isHidden(c)).map((c) => buildCompletionSpec(c, [...path, c.name()]));
  // `help <TAB>`: the commands beside it, and the help topics (agentq's own help command takes both).
  const helpCmd = subcommands.find((c) => c.name === 'help');
  if (helpCmd && helpCmd.args.length > 0 && helpCmd.args[0]!.kind === 'free') {
    helpCmd.args = [{ kind: 'choices', values: [...subcommands.filter((c) => c !== helpCmd).map((c) => c.name), ...(path.length === 0 ? HELP_TOPICS : [])] }];
    helpCmd.variadic = false;
  }
  // commander's implicit `help [command]` is a real subcommand for the operator.
  if (subcommands.length > 0 && !subcommands.some((c) => c.name === 'help')) {
    subcommands.push({
      path: [...path, 'help'],
      name: 'help',
      aliases: [],
      description: 'display help for command',
      options: [],
      args: [{ kind: 'choices', values: subcommands.map((c) => c.name) }],
      variadic: false,
      subcommands: [],
    });
  }
  return {
    path,
    name: cmd.name(),
    aliases: cmd.aliases(),
    description: cmd.summary() || cmd.description().split('\n')[0] || '',
    options,
    args: registered.map((a) => argSpec(a, path)),
    variadic: registered.length > 0 && registered[registered.length - 1]!.variadic,
    subcommands,
  };
}

/** Every command in the tree, root first, depth first. */
export function flattenSpec(root: CommandSpec): CommandSpec[] {
  const out: CommandSpec[] = [];
  const walk = (c: CommandSpec): void => {
    out.push(c);
    c.subcommands.forEach(walk);
  };
  walk(root);
  return out;
}

/** Descriptions are our own text, but they land in shell source: one line, no controls, bounded. */
export function oneLine(text: string, max = 100): string {
  // eslint-disable-next-line no-control-regex
  const s = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** Quotes a string for POSIX sh / bash / zsh single quotes. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Value spec as a compact word the scripts switch on: `free`, `file`, `choices:a b`, `dyn:queues`. */
export function valueWord(v: ValueSpec): string {
  switch (v.kind) {
    case 'free':
      return 'free';
    case 'file':
      return 'file';
    case 'choices':
      return `choices:${v.values.join(' ')}`;
    case 'list':
      return `list:${v.values.join(' ')}`;
    case 'dynamic':
      return `dyn:${v.source}`;
  }
}
