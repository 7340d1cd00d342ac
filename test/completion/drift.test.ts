/**
 * The committed completions/ must be exactly what the live command tree
 * generates: a command, option or choice added without regenerating fails
 * here. Fix: `npm run build && node scripts/gen-completions.mjs`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPLETION_FILES, renderCompletion, SHELLS } from '../../src/cli/completion/index.js';
import { buildProgram } from '../../src/cli/program.js';
import { makeCliHome, REPO_ROOT, runCliOk } from '../support/cli.js';

const program = buildProgram({
  run: async () => {
    throw new Error('the tree only: nothing runs');
  },
});

describe.each(SHELLS)('completions for %s', (shell) => {
  it('match the committed script (regenerate with: npm run build && node scripts/gen-completions.mjs)', () => {
    const committed = readFileSync(join(REPO_ROOT, COMPLETION_FILES[shell]), 'utf8');
    expect(renderCompletion(shell, program) === committed, `${COMPLETION_FILES[shell]} has drifted from the command tree`).toBe(true);
  });

  it('`agentq completion` prints the committed script byte for byte', async () => {
    const home = makeCliHome('agentq-completion-cmd-');
    try {
      const r = await runCliOk(home, ['completion', shell]);
      expect(r.stdout).toBe(readFileSync(join(REPO_ROOT, COMPLETION_FILES[shell]), 'utf8'));
    } finally {
      home.cleanup();
    }
  });
});

describe('completion command', () => {
  it('documents how to install each shell in --help', async () => {
    const r = await runCliOk(null, ['completion', '--help']);
    for (const s of ['bash', 'zsh', 'fish']) expect(r.stdout).toContain(`agentq completion ${s}`);
    expect(r.stdout).toContain('fpath');
    expect(r.stdout).toContain('~/.config/fish/completions/agentq.fish');
  });

  it('refuses an unknown shell with a usage error', async () => {
    const r = await runCliOk(null, ['completion', 'powershell'], { expectCode: 2 });
    expect(r.stderr).toContain('powershell');
  });

  it('keeps hidden commands out of every script', () => {
    for (const shell of SHELLS) expect(renderCompletion(shell, program)).not.toMatch(/'__complete'|-a '__complete'/);
  });
});
