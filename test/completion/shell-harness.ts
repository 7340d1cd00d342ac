/**
 * Drives each committed completion script in its real shell and returns the
 * candidates it offers for a command line.
 *
 * - bash: the script is sourced and `_agentq` called the way bash's
 *   programmable completion calls it (COMP_WORDS / COMP_CWORD set), then
 *   COMPREPLY is printed.
 * - zsh: compinit runs, the script is sourced (or autoloaded from fpath),
 *   and `compadd` is replaced by a capture that keeps candidates matching
 *   PREFIX the way zsh's own matcher would, with IPREFIX in front as zsh
 *   inserts it; `_files` is recorded as `<files>`.
 * - fish: `complete -C "LINE"`, fish's own API for "what would TAB offer".
 *
 * `agentq` on PATH is a wrapper around the built CLI, so dynamic values come
 * from a real `agentq __complete` call against the test's store.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AGENTQ_BIN, REPO_ROOT } from '../support/cli.js';

const run = promisify(execFile);

export const SCRIPTS = {
  bash: join(REPO_ROOT, 'completions', 'agentq.bash'),
  zsh: join(REPO_ROOT, 'completions', '_agentq'),
  fish: join(REPO_ROOT, 'completions', 'agentq.fish'),
} as const;

/** A bin dir holding an `agentq` that runs the built CLI (what `npm install -g` would put on PATH). */
export function makeAgentqOnPath(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const wrapper = join(bin, 'agentq');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENTQ_BIN)} "$@"\n`);
  chmodSync(wrapper, 0o755);
  return bin;
}

// COMP_WORDS as bash builds it: words split at blanks and at the COMP_WORDBREAKS characters ":" and
// "=", each of which becomes a word of its own (so "--url sqlite:/x" is "--url" "sqlite" ":" "/x").
const BASH_DRIVER = `
source "$1"; shift
COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}
COMP_WORDS=()
for w in "$@"; do
  while [[ "$w" =~ ^([^:=]*)([:=])(.*)$ ]]; do
    [[ -n "\${BASH_REMATCH[1]}" ]] && COMP_WORDS+=("\${BASH_REMATCH[1]}")
    COMP_WORDS+=("\${BASH_REMATCH[2]}")
    w="\${BASH_REMATCH[3]}"
  done
  COMP_WORDS+=("$w")
done
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
_agentq agentq "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;

const ZSH_DRIVER = `
mode="$1"; script="$2"; shift 2
if [[ $mode == fpath ]]; then fpath=("\${script:h}" $fpath); fi
autoload -U compinit && compinit -u -D
[[ $mode == source ]] && source "$script"
typeset -ga __captured
compadd() {
  local -a cands; local seen=0 a
  for a in "$@"; do
    if (( seen )); then cands+=("$a"); elif [[ "$a" == -- ]]; then seen=1; fi
  done
  # what zsh inserts: the ignored prefix (IPREFIX, e.g. "--state=" of --state=value) and the match
  for a in $cands; do [[ "$a" == "$PREFIX"* ]] && __captured+=("$IPREFIX$a"); done
  return 0
}
_files() { __captured+=("<files>"); }
words=("$@"); CURRENT=$#; PREFIX="\${words[CURRENT]}"
_agentq
print -l -- $__captured
`;

export type ShellName = keyof typeof SCRIPTS;

/**
 * Candidates offered for `line`; a trailing space means "complete a new
 * word". Candidates only (fish's descriptions after the tab are dropped).
 */
export async function candidates(shell: ShellName, line: string, env: Record<string, string>, opts: { zshMode?: 'source' | 'fpath' } = {}): Promise<string[]> {
  const words = line.split(' ');
  let stdout: string;
  switch (shell) {
    case 'bash':
      ({ stdout } = await run('bash', ['--norc', '--noprofile', '-c', BASH_DRIVER, 'driver', SCRIPTS.bash, ...words], { env, timeout: 30_000 }));
      break;
    case 'zsh':
      ({ stdout } = await run('zsh', ['-f', '-c', ZSH_DRIVER, 'driver', opts.zshMode ?? 'source', SCRIPTS.zsh, ...words], { env, timeout: 30_000 }));
      break;
    case 'fish':
      ({ stdout } = await run('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', SCRIPTS.fish, line], { env, timeout: 30_000 }));
      break;
  }
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t')[0]!)
    .sort();
}
