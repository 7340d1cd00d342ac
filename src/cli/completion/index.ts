/**
 * `agentq completion bash|zsh|fish` and the committed `completions/` files
 * come from here: one function, so the two can never differ.
 */
import type { Command } from 'commander';
import { renderBash } from './bash.js';
import { renderFish } from './fish.js';
import { buildCompletionSpec } from './spec.js';
import { renderZsh } from './zsh.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Where each script lives in the repository and the package. */
export const COMPLETION_FILES: Record<Shell, string> = {
  bash: 'completions/agentq.bash',
  zsh: 'completions/_agentq',
  fish: 'completions/agentq.fish',
};

const HEADER = [
  'Generated from the agentq command tree (`agentq completion SHELL`, or',
  '`node scripts/gen-completions.mjs` for the committed copies). Do not edit.',
  'Install: see `agentq completion --help`.',
].join('\n');

export function renderCompletion(shell: Shell, program: Command): string {
  const spec = buildCompletionSpec(program);
  switch (shell) {
    case 'bash':
      return renderBash(spec, HEADER);
    case 'zsh':
      return renderZsh(spec, HEADER);
    case 'fish':
      return renderFish(spec, HEADER);
  }
}
