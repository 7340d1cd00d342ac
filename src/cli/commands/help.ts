/**
 * `agentq help [command...]` and `agentq help exit-codes`. Commander's own
 * help command is switched off so topics can live next to command help.
 */
import type { Command } from 'commander';
import { EXIT_CODE_DOCS, ValidationError } from '../../core/errors.js';
import type { CommandContext } from '../context.js';
import { printRecords } from '../output/format.js';

export interface HelpOptions {
  topic: string[];
  program: Command;
}

export const HELP_TOPICS = ['exit-codes'] as const;

export async function run(opts: HelpOptions, ctx: CommandContext): Promise<void> {
  const [first] = opts.topic;
  if (first === undefined) {
    opts.program.outputHelp();
    return;
  }
  if (first === 'exit-codes') {
    await printExitCodes(ctx);
    return;
  }
  let cmd: Command = opts.program;
  for (const name of opts.topic) {
    const sub = cmd.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (!sub) {
      // (not the shell completion's own helper, __complete)
      const known = cmd.commands.map((c) => c.name()).filter((n) => n !== 'help' && !n.startsWith('__'));
      throw new ValidationError(
        `no help for ${JSON.stringify(opts.topic.join(' '))}: not a command or topic`,
        `Commands: ${known.join(', ')}; topics: ${HELP_TOPICS.join(', ')}.`,
      );
    }
    cmd = sub;
  }
  cmd.outputHelp();
}

async function printExitCodes(ctx: CommandContext): Promise<void> {
  if (ctx.format === 'table' || ctx.format === 'wide') {
    ctx.out.write('Exit codes (stable: scripts may rely on them)\n\n');
  }
  await printRecords(
    ctx.out,
    {
      empty: 'No exit codes.',
      columns: [
        { header: 'code', get: (r) => r.code },
        { header: 'name', get: (r) => r.name },
        { header: 'meaning', get: (r) => r.meaning, flexible: true },
      ],
    },
    EXIT_CODE_DOCS,
  );
}
