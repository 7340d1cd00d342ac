/**
 * The fish completion script: `complete` rules conditioned on the command
 * path under the cursor (`__agentq_at "dlq list"`), which a small generated
 * function works out from the tokens typed so far.
 */
import { globalOptions, pathKey } from './sh-lookup.js';
import { type CommandSpec, type OptionSpec, type ValueSpec, flattenSpec, oneLine } from './spec.js';

/** fish single quotes: only `\` and `'` need escaping. */
function fq(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The `-a` argument for choices, comma lists and live values (unquoted). */
function candidatesArg(v: Extract<ValueSpec, { kind: 'choices' | 'list' | 'dynamic' }>): string {
  switch (v.kind) {
    case 'choices':
      return v.values.join(' ');
    case 'list':
      return `(__agentq_list ${v.values.join(' ')})`;
    case 'dynamic':
      return `(__agentq_dyn ${v.source})`;
  }
}

function valueArgs(v: ValueSpec): string {
  switch (v.kind) {
    case 'free':
      return '-x';
    case 'file':
      return '-r -F';
    default:
      return `-x -a ${fq(candidatesArg(v))}`;
  }
}

function optionRule(o: OptionSpec, condition: string | null): string {
  const parts = ['complete -c agentq'];
  if (condition) parts.push(`-n ${fq(condition)}`);
  if (o.short) parts.push(`-s ${o.short}`);
  if (o.long) parts.push(`-l ${o.long}`);
  if (o.value) parts.push(valueArgs(o.value));
  if (o.description) parts.push(`-d ${fq(oneLine(o.description))}`);
  return parts.join(' ');
}

export function renderFish(root: CommandSpec, header: string): string {
  const all = flattenSpec(root);
  const L: string[] = [];
  L.push(`# fish completion for ${root.name}`, ...header.split('\n').map((l) => `# ${l}`), '');

  // The lookups, as fish `switch` statements.
  L.push('function __agentq_sub --description "canonical subcommand WORD of PATH"', '    switch "$argv[1]|$argv[2]"');
  for (const c of all) {
    for (const s of c.subcommands) {
      for (const n of [s.name, ...s.aliases]) L.push(`        case ${fq(`${pathKey(c)}|${n}`)}`, `            echo ${fq(s.name)}`);
    }
  }
  L.push('    end', 'end', '');

  L.push('function __agentq_takes_value --description "does option OPT of PATH take a value"', '    switch "$argv[1]|$argv[2]"');
  for (const c of all) {
    for (const o of c.options) {
      if (!o.value) continue;
      for (const f of [o.short ? `-${o.short}` : null, o.long ? `--${o.long}` : null]) if (f) L.push(`        case ${fq(`${pathKey(c)}|${f}`)}`, '            return 0');
    }
  }
  for (const o of globalOptions(root)) {
    if (!o.value) continue;
    for (const f of [o.short ? `-${o.short}` : null, o.long ? `--${o.long}` : null]) if (f) L.push(`        case ${fq(`*|${f}`)}`, '            return 0');
  }
  L.push('    end', '    return 1', 'end', '');

  L.push(
    'function __agentq_state --description "command path and positional count of the tokens before the cursor"',
    '    set -l toks (commandline -opc)',
    '    set -e toks[1]',
    '    set -l p ""',
    '    set -l npos 0',
    '    set -l skip 0',
    '    for t in $toks',
    '        if test $skip = 1',
    '            set skip 0',
    '            continue',
    '        end',
    '        switch $t',
    "            case '--*=*'",
    "            case '-*'",
    '                if __agentq_takes_value "$p" $t',
    '                    set skip 1',
    '                end',
    "            case '*'",
    '                set -l s (__agentq_sub "$p" $t)',
    '                if test -n "$s" -a $npos = 0',
    '                    set p (string trim -- "$p $s")',
    '                else',
    '                    set npos (math $npos + 1)',
    '                end',
    '        end',
    '    end',
    '    echo $p',
    '    echo $npos',
    'end',
    '',
    'function __agentq_at --description "is the cursor at command PATH (before any positional)"',
    '    set -l st (__agentq_state)',
    '    test "$st[1]" = "$argv[1]" -a "$st[2]" = 0',
    'end',
    '',
    'function __agentq_arg --description "is the cursor on positional N of command PATH"',
    '    set -l st (__agentq_state)',
    '    test "$st[1]" = "$argv[1]"; or return 1',
    '    test "$argv[2]" = "*" -a "$st[2]" -ge "$argv[3]"; and return 0',
    '    test "$st[2]" = "$argv[2]"',
    'end',
    '',
    'function __agentq_within --description "is the cursor somewhere under command PATH"',
    '    set -l st (__agentq_state)',
    '    test "$st[1]" = "$argv[1]"',
    'end',
    '',
    '# Dynamic values: one short-lived call; `__complete` gives up after ~500 ms so a slow backend never hangs the shell.',
    'function __agentq_dyn',
    '    set -l toks (commandline -opc)',
    '    $toks[1] __complete $argv[1] -- $toks[2..-1] 2>/dev/null',
    'end',
    '',
    '# Comma-separated values (--state queued,<TAB>): what is typed up to the last comma, then each value.',
    'function __agentq_list',
    '    set -l pre (string replace -r -- \'^--[^=]*=\' \'\' (commandline -ct))',
    '    set pre (string replace -r -- \'[^,]*$\' \'\' $pre)',
    '    for v in $argv',
    '        echo $pre$v',
    '    end',
    'end',
    '',
    'complete -c agentq -f',
  );

  for (const o of globalOptions(root)) L.push(optionRule(o, null));
  for (const o of root.options.filter((x) => x.long === 'version')) L.push(optionRule(o, '__agentq_at ""'));

  for (const c of all) {
    const key = pathKey(c);
    for (const s of c.subcommands) {
      L.push(`complete -c agentq -n ${fq(`__agentq_at ${fq(key)}`)} -a ${fq(s.name)} -d ${fq(oneLine(s.description))}`);
    }
    if (c !== root) {
      // A global option is ruled once for every command; a command's own option of the same name only when it
      // takes other values there (stats' -o also takes prometheus: fish offers the union of matching rules).
      const globals = new Map(globalOptions(root).map((o) => [o.long, JSON.stringify(o.value)]));
      for (const o of c.options) if (globals.get(o.long) !== JSON.stringify(o.value)) L.push(optionRule(o, `__agentq_within ${fq(key)}`));
    }
    const last = c.args.length - 1;
    c.args.forEach((a, i) => {
      if (a.kind === 'free') return;
      const cond = c.variadic && i === last ? `__agentq_arg ${fq(key)} '*' ${i}` : `__agentq_arg ${fq(key)} ${i}`;
      const what = a.kind === 'file' ? '-F' : `-a ${fq(candidatesArg(a))}`;
      L.push(`complete -c agentq -n ${fq(cond)} ${what}`);
    });
  }
  L.push('');
  return L.join('\n');
}
