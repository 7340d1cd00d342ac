/**
 * The bash completion script. Plain bash (no bash-completion helpers needed,
 * works on bash 3.2 too): lookup functions generated from the command tree
 * set one global each instead of printing, so a TAB costs no subshells except
 * the one `agentq __complete` call for dynamic values.
 */
import { globalOptions, optionFlags, pathKey as key, renderShLookups } from './sh-lookup.js';
import { type CommandSpec, type OptionSpec, flattenSpec, shQuote } from './spec.js';

export function renderBash(root: CommandSpec, header: string): string {
  const all = flattenSpec(root);
  const L: string[] = [];
  L.push(`# bash completion for ${root.name}`, ...header.split('\n').map((l) => `# ${l}`), '');

  L.push(...renderShLookups(root));

  // Candidate words for subcommands of PATH.
  L.push('__agentq_cmds() {', '  __agentq_r=', '  case "$1" in');
  for (const c of all) {
    if (c.subcommands.length) L.push(`    ${shQuote(key(c))}) __agentq_r=${shQuote(c.subcommands.map((s) => s.name).join(' '))} ;;`);
  }
  L.push('  esac', '}', '');

  // Option flags valid at PATH: its own, then the root's (global) ones.
  const flags = (os: OptionSpec[]): string[] => os.flatMap(optionFlags);
  L.push('__agentq_opts() {', '  __agentq_r=', '  case "$1" in');
  for (const c of all) {
    const own = flags(c.options);
    const globals = c === root ? [] : flags(globalOptions(root)).filter((f) => !own.includes(f));
    L.push(`    ${shQuote(key(c))}) __agentq_r=${shQuote([...own, ...globals].join(' '))} ;;`);
  }
  L.push('  esac', '}', '');

  L.push(
    '# The words typed before the cursor, split at unquoted blanks, with quotes and backslashes removed the way',
    '# the shell will remove them (`--context "staging"` is staging) and nothing expanded: a typed $(...) stays text.',
    '# (COMP_WORDS keeps the quotes and is also split at ":" and "=".) Sets the array __agentq_typed.',
    '__agentq_split() {',
    '  local s="$1" w="" c q="" have=0',
    '  __agentq_typed=()',
    '  while [ -n "$s" ]; do',
    '    c="${s:0:1}"; s="${s:1}"',
    '    if [ -n "$q" ]; then',
    '      if [ "$c" = "$q" ]; then q=""',
    '      elif [ "$q" = \'"\' ] && [ "$c" = "\\\\" ] && [ -n "$s" ]; then',
    '        case "${s:0:1}" in \'"\'|"\\\\"|\'$\'|\'`\') w="$w${s:0:1}"; s="${s:1}" ;; *) w="$w$c" ;; esac',
    '      else w="$w$c"; fi',
    '    else',
    '      case "$c" in',
    '        " "|$\'\\t\') if [ "$have" = 1 ]; then __agentq_typed+=("$w"); fi; w=""; have=0 ;;',
    '        "\'"|\'"\') q="$c"; have=1 ;;',
    '        "\\\\") w="$w${s:0:1}"; s="${s:1}"; have=1 ;;',
    '        *) w="$w$c"; have=1 ;;',
    '      esac',
    '    fi',
    '  done',
    '  if [ "$have" = 1 ]; then __agentq_typed+=("$w"); fi',
    '}',
    '',
    '# Candidates for a value spec, filtered by the word being completed.',
    '__agentq_values() {',
    '  local spec="$1" cur="$2" line',
    '  case "$spec" in',
    "    choices:*) COMPREPLY=($(compgen -W \"${spec#choices:}\" -- \"$cur\")) ;;",
    '    # Comma-separated: complete the item after the last comma, keeping what is before it.',
    '    list:*) local pre=""; case "$cur" in *,*) pre="${cur%,*}," ;; esac',
    "      COMPREPLY=($(compgen -P \"$pre\" -W \"${spec#list:}\" -- \"${cur##*,}\")) ;;",
    '    file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;',
    '    dyn:*)',
    '      # One short-lived call; `__complete` gives up after ~500 ms so a slow backend never hangs the shell.',
    '      # Its lines are store and config data: each is taken as one literal word and prefix-matched here,',
    '      # never handed to `compgen -W`, which would expand $(...) and backticks in them.',
    '      local -a __agentq_typed',
    '      __agentq_split "${COMP_LINE:0:COMP_POINT}"',
    '      COMPREPLY=()',
    '      while IFS= read -r line; do',
    '        case "$line" in "$cur"*) COMPREPLY+=("$line") ;; esac',
    '      done < <("${COMP_WORDS[0]}" __complete "${spec#dyn:}" -- "${__agentq_typed[@]:1}" 2>/dev/null) ;;',
    '    *) COMPREPLY=() ;;',
    '  esac',
    '}',
    '',
  );

  L.push(
    '_agentq() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]:-}" prev="" path="" npos=0 i=1 w eq=0',
    '  # bash splits `--queue=re` into `--queue` `=` `re`: complete the value part.',
    '  if [ "$cur" = "=" ]; then cur=""; prev="${COMP_WORDS[COMP_CWORD-1]}"; eq=1',
    '  elif [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[COMP_CWORD-1]}" = "=" ]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; eq=1',
    '  elif [ "$COMP_CWORD" -ge 1 ]; then prev="${COMP_WORDS[COMP_CWORD-1]}"; fi',
    '  # Only a long option takes "=value": commander reads -o=json as the value "=json", so offer nothing there.',
    '  case "$prev" in --*) ;; -*) if [ "$eq" = 1 ]; then COMPREPLY=(); return 0; fi ;; esac',
    '  while [ "$i" -lt "$COMP_CWORD" ]; do',
    '    w="${COMP_WORDS[i]}"',
    '    case "$w" in',
    '      --) break ;;',
    '      -*)',
    '        __agentq_optval "$path" "$w"',
    '        if [ -n "$__agentq_r" ]; then',
    '          if [ "${COMP_WORDS[i+1]:-}" = "=" ]; then i=$((i+2)); else i=$((i+1)); fi',
    '          # bash splits a value at ":" (COMP_WORDBREAKS): sqlite:/x arrives as sqlite : /x',
    '          while [ "${COMP_WORDS[i+1]:-}" = ":" ]; do i=$((i+2)); done',
    '        fi ;;',
    '      *)',
    '        __agentq_sub "$path" "$w"',
    '        if [ -n "$__agentq_r" ] && [ "$npos" -eq 0 ]; then path="${path:+$path }$__agentq_r"; else npos=$((npos+1)); fi ;;',
    '    esac',
    '    i=$((i+1))',
    '  done',
    '  case "$prev" in',
    '    -*)',
    '      __agentq_optval "$path" "$prev"',
    '      if [ -n "$__agentq_r" ]; then __agentq_values "$__agentq_r" "$cur"; return 0; fi ;;',
    '  esac',
    '  if [ "${cur#-}" != "$cur" ]; then',
    '    __agentq_opts "$path"',
    '    COMPREPLY=($(compgen -W "$__agentq_r" -- "$cur"))',
    '    return 0',
    '  fi',
    '  __agentq_cmds "$path"',
    '  if [ -n "$__agentq_r" ] && [ "$npos" -eq 0 ]; then',
    '    COMPREPLY=($(compgen -W "$__agentq_r" -- "$cur"))',
    '    return 0',
    '  fi',
    '  __agentq_argval "$path" "$npos"',
    '  __agentq_values "$__agentq_r" "$cur"',
    '}',
    '',
    'complete -F _agentq agentq',
    '',
  );
  return L.join('\n');
}
