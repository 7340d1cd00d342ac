/**
 * Lookup functions shared by the bash and zsh scripts (both read POSIX
 * `case`): each sets the global `__agentq_r` instead of printing, so walking
 * the command line costs no subshells.
 */
import { type CommandSpec, type OptionSpec, flattenSpec, shQuote, valueWord } from './spec.js';

export const pathKey = (c: CommandSpec): string => c.path.join(' ');

export const optionFlags = (o: OptionSpec): string[] =>
  [o.short ? `-${o.short}` : null, o.long ? `--${o.long}` : null].filter((x): x is string => x !== null);

/** Root options that make sense after a subcommand (all but --version). */
export function globalOptions(root: CommandSpec): OptionSpec[] {
  return root.options.filter((o) => o.long !== 'version');
}

export function renderShLookups(root: CommandSpec): string[] {
  const all = flattenSpec(root);
  const L: string[] = [];

  L.push('# Subcommand (or alias) WORD of PATH -> its canonical name.', '__agentq_sub() {', '  __agentq_r=', '  case "$1|$2" in');
  for (const c of all) {
    for (const s of c.subcommands) {
      for (const n of [s.name, ...s.aliases]) L.push(`    ${shQuote(`${pathKey(c)}|${n}`)}) __agentq_r=${shQuote(s.name)} ;;`);
    }
  }
  L.push('  esac', '}', '');

  L.push('# What option OPT of PATH takes: empty for a flag, else free / file / choices:... / dyn:...', '__agentq_optval() {', '  __agentq_r=', '  case "$1|$2" in');
  for (const c of all) {
    for (const o of c.options) {
      if (!o.value) continue;
      L.push(`    ${optionFlags(o).map((p) => shQuote(`${pathKey(c)}|${p}`)).join('|')}) __agentq_r=${shQuote(valueWord(o.value))} ;;`);
    }
  }
  for (const o of globalOptions(root)) {
    if (!o.value) continue;
    // Global options are accepted after any subcommand.
    L.push(`    ${optionFlags(o).map((p) => `*${shQuote(`|${p}`)}`).join('|')}) __agentq_r=${shQuote(valueWord(o.value))} ;;`);
  }
  L.push('  esac', '}', '');

  L.push('# What the Nth positional argument of PATH takes.', '__agentq_argval() {', '  __agentq_r=', '  case "$1" in');
  for (const c of all) {
    if (!c.args.length) continue;
    const last = c.args.length - 1;
    const arms = c.args.map((a, i) => `${i === last && c.variadic ? '*' : String(i)}) __agentq_r=${shQuote(valueWord(a))} ;;`);
    L.push(`    ${shQuote(pathKey(c))}) case "$2" in ${arms.join(' ')} esac ;;`);
  }
  L.push('  esac', '}', '');
  return L;
}
