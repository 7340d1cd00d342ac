/**
 * `agentq completion bash|zsh|fish` prints the completion script generated
 * from the live command tree (byte-identical to the committed `completions/`
 * files, which the drift test checks), and the hidden `agentq __complete
 * KIND` prints live candidates for those scripts, one per line.
 */
import type { Command } from 'commander';
import { ValidationError } from '../../core/errors.js';
import { completionCandidates } from '../completion/dynamic.js';
import { renderCompletion, SHELLS, type Shell } from '../completion/index.js';
import type { CommandContext } from '../context.js';

export async function run(opts: { shell: string; program: Command }, ctx: CommandContext): Promise<void> {
  if (!(SHELLS as readonly string[]).includes(opts.shell)) {
    throw new ValidationError(`shell ${JSON.stringify(opts.shell)} is not one of ${SHELLS.join(', ')}`, 'See `agentq completion --help` for how to install each.');
  }
  ctx.io.stdout.write(renderCompletion(opts.shell as Shell, rootOf(opts.program)));
}

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

export async function complete(opts: { kind: string; words?: string[] }, ctx: CommandContext): Promise<void> {
  const candidates = await completionCandidates(opts.kind, opts.words ?? [], {
    backend: () => ctx.openBackend(),
    contexts: () => Object.keys(ctx.config().contexts),
  });
  if (candidates.length) ctx.io.stdout.write(candidates.join('\n') + '\n');
}
