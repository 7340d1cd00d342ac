/**
 * The zsh completion script (`_agentq`). Works both ways zsh loads
 * completions: autoloaded from a directory in `fpath` (the `#compdef` line)
 * and sourced directly (it then registers itself with `compdef`). It walks
 * the command line with the same generated lookups as the bash script and
 * offers candidates through `compadd`, with descriptions for commands and
 * options.
 */
import { globalOptions, optionFlags, pathKey, renderShLookups } from './sh-lookup.js';
import { type CommandSpec, type OptionSpec, flattenSpec, oneLine, shQuote } from './spec.js';

export function renderZsh(root: CommandSpec, header: string): string {
  const all = flattenSpec(root);
  const L: string[] = [];
  L.push(`#compdef ${root.name}`, `# zsh completion for ${root.name}`, ...header.split('\n').map((l) => `# ${l}`), '');
  L.push(...renderShLookups(root));

  // Subcommands of PATH with a display line each.
  L.push('# Subcommands of PATH: names in __agentq_names, display lines in __agentq_disp.', '__agentq_cmds() {', '  __agentq_names=() __agentq_disp=()', '  case "$1" in');
  for (const c of all) {
    if (!c.subcommands.length) continue;
    const width = Math.max(...c.subcommands.map((s) => s.name.length));
    const names = c.subcommands.map((s) => shQuote(s.name)).join(' ');
    const disp = c.subcommands.map((s) => shQuote(`${s.name.padEnd(width)}  -- ${oneLine(s.description)}`)).join(' ');
    L.push(`    ${shQuote(pathKey(c))}) __agentq_names=(${names}) __agentq_disp=(${disp}) ;;`);
  }
  L.push('  esac', '}', '');

  L.push('# Options valid at PATH (its own, then the global ones), with display lines.', '__agentq_opts() {', '  __agentq_names=() __agentq_disp=()', '  case "$1" in');
  for (const c of all) {
    const own = c.options;
    const ownFlags = own.flatMap(optionFlags);
    const globals = c === root ? [] : globalOptions(root).filter((o) => !optionFlags(o).some((f) => ownFlags.includes(f)));
    const opts: OptionSpec[] = [...own, ...globals];
    const pairs = opts.flatMap((o) => optionFlags(o).map((f) => [f, oneLine(o.description)] as const));
    if (!pairs.length) continue;
    const width = Math.max(...pairs.map(([f]) => f.length));
    L.push(
      `    ${shQuote(pathKey(c))}) __agentq_names=(${pairs.map(([f]) => shQuote(f)).join(' ')}) __agentq_disp=(${pairs
        .map(([f, d]) => shQuote(`${f.padEnd(width)}  -- ${d}`))
        .join(' ')}) ;;`,
    );
  }
  L.push('  esac', '}', '');

  L.push(
    '# Offers the candidates of a value spec.',
    '__agentq_values() {',
    '  local spec="$1"',
    '  case "$spec" in',
    '    choices:*) compadd -- ${=${spec#choices:}} ;;',
    '    # Comma-separated: what is typed up to the last comma goes to IPREFIX (what `compset -P "*,"` does).',
    '    list:*) [[ "$PREFIX" == *,* ]] && IPREFIX="$IPREFIX${PREFIX%,*}," PREFIX="${PREFIX##*,}"',
    '      compadd -- ${=${spec#list:}} ;;',
    '    file) _files ;;',
    '    dyn:*)',
    '      # One short-lived call; `__complete` gives up after ~500 ms so a slow backend never hangs the shell.',
    '      local -a vals',
    '      # words[] keeps the quotes as typed: (Q) removes them (`--context "staging"` is staging), expanding nothing.',
    '      # Each output line is one literal word: ${(f)...} splits at newlines only, and compadd quotes on insertion.',
    '      vals=(${(f)"$(${words[1]} __complete ${spec#dyn:} -- ${(Q)words[2,CURRENT-1]} 2>/dev/null)"})',
    '      (( ${#vals} )) && compadd -- $vals ;;',
    '  esac',
    '}',
    '',
    '_agentq() {',
    '  local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" cmdpath="" w',
    '  local -i npos=0 i=2',
    '  local -a __agentq_names __agentq_disp',
    '  while (( i < CURRENT )); do',
    '    w="${words[i]}"',
    '    case "$w" in',
    '      --) break ;;',
    '      --*=*) ;;',
    '      -*) __agentq_optval "$cmdpath" "$w"; [[ -n "$__agentq_r" ]] && (( i++ )) ;;',
    '      *)',
    '        __agentq_sub "$cmdpath" "$w"',
    '        if [[ -n "$__agentq_r" ]] && (( npos == 0 )); then cmdpath="${cmdpath:+$cmdpath }$__agentq_r"; else (( npos++ )); fi ;;',
    '    esac',
    '    (( i++ ))',
    '  done',
    '  # --opt=value: complete the value part as for `--opt value`. Moving `--opt=` into IPREFIX is what',
    '  # `compset -P "*="` does; zsh then inserts it before the chosen value.',
    '  if [[ "$cur" == --*=* ]]; then',
    '    __agentq_optval "$cmdpath" "${cur%%=*}"',
    '    if [[ -n "$__agentq_r" ]]; then',
    '      IPREFIX="$IPREFIX${cur%%=*}=" PREFIX="${cur#*=}"',
    '      __agentq_values "$__agentq_r"',
    '      return',
    '    fi',
    '  fi',
    '  if [[ "$prev" == -* ]] && (( CURRENT > 2 )); then',
    '    __agentq_optval "$cmdpath" "$prev"',
    '    if [[ -n "$__agentq_r" ]]; then __agentq_values "$__agentq_r"; return; fi',
    '  fi',
    '  if [[ "$cur" == -* ]]; then',
    '    __agentq_opts "$cmdpath"',
    '    (( ${#__agentq_names} )) && compadd -l -d __agentq_disp -- $__agentq_names',
    '    return',
    '  fi',
    '  __agentq_cmds "$cmdpath"',
    '  if (( ${#__agentq_names} )) && (( npos == 0 )); then',
    '    compadd -l -d __agentq_disp -- $__agentq_names',
    '    return',
    '  fi',
    '  __agentq_argval "$cmdpath" "$npos"',
    '  __agentq_values "$__agentq_r"',
    '}',
    '',
    '# Autoloaded from fpath: this file is the body of _agentq, so run it. Sourced: register it.',
    'if [[ "${funcstack[1]}" == "_agentq" ]]; then',
    '  _agentq "$@"',
    'else',
    '  compdef _agentq agentq',
    'fi',
    '',
  );
  return L.join('\n');
}
