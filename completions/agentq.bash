# bash completion for agentq
# Generated from the agentq command tree (`agentq completion SHELL`, or
# `node scripts/gen-completions.mjs` for the committed copies). Do not edit.
# Install: see `agentq completion --help`.

# Subcommand (or alias) WORD of PATH -> its canonical name.
__agentq_sub() {
  __agentq_r=
  case "$1|$2" in
    '|submit') __agentq_r='submit' ;;
    '|inspect') __agentq_r='inspect' ;;
    '|list') __agentq_r='list' ;;
    '|ls') __agentq_r='list' ;;
    '|cancel') __agentq_r='cancel' ;;
    '|tail') __agentq_r='tail' ;;
    '|help') __agentq_r='help' ;;
    '|context') __agentq_r='context' ;;
    '|demo') __agentq_r='demo' ;;
    '|dlq') __agentq_r='dlq' ;;
    '|stats') __agentq_r='stats' ;;
    '|metrics') __agentq_r='metrics' ;;
    '|prune') __agentq_r='prune' ;;
    '|completion') __agentq_r='completion' ;;
    '|tui') __agentq_r='tui' ;;
    '|sqs') __agentq_r='sqs' ;;
    '|outbox') __agentq_r='outbox' ;;
    '|worker') __agentq_r='worker' ;;
    '|job') __agentq_r='job' ;;
    'context|list') __agentq_r='list' ;;
    'context|use') __agentq_r='use' ;;
    'context|show') __agentq_r='show' ;;
    'context|help') __agentq_r='help' ;;
    'dlq|list') __agentq_r='list' ;;
    'dlq|show') __agentq_r='show' ;;
    'dlq|summary') __agentq_r='summary' ;;
    'dlq|export') __agentq_r='export' ;;
    'dlq|redrive') __agentq_r='redrive' ;;
    'dlq|purge') __agentq_r='purge' ;;
    'dlq|expire') __agentq_r='expire' ;;
    'dlq|runs') __agentq_r='runs' ;;
    'dlq|check') __agentq_r='check' ;;
    'dlq|browse') __agentq_r='browse' ;;
    'dlq|help') __agentq_r='help' ;;
    'dlq runs|show') __agentq_r='show' ;;
    'dlq runs|help') __agentq_r='help' ;;
    'metrics|serve') __agentq_r='serve' ;;
    'metrics|help') __agentq_r='help' ;;
    'sqs|setup') __agentq_r='setup' ;;
    'sqs|sweep') __agentq_r='sweep' ;;
    'sqs|republish') __agentq_r='republish' ;;
    'sqs|custody') __agentq_r='custody' ;;
    'sqs|help') __agentq_r='help' ;;
    'outbox|relay') __agentq_r='relay' ;;
    'outbox|status') __agentq_r='status' ;;
    'outbox|help') __agentq_r='help' ;;
    'job|checkpoint') __agentq_r='checkpoint' ;;
    'job|usage') __agentq_r='usage' ;;
    'job|effect') __agentq_r='effect' ;;
    'job|error') __agentq_r='error' ;;
    'job|help') __agentq_r='help' ;;
  esac
}

# What option OPT of PATH takes: empty for a flag, else free / file / choices:... / dyn:...
__agentq_optval() {
  __agentq_r=
  case "$1|$2" in
    '|--url') __agentq_r='free' ;;
    '|--context') __agentq_r='dyn:contexts' ;;
    '|-o'|'|--output') __agentq_r='choices:table wide plain json ndjson' ;;
    '|--color') __agentq_r='choices:auto always never' ;;
    'submit|-f'|'submit|--file') __agentq_r='file' ;;
    'submit|-q'|'submit|--queue') __agentq_r='dyn:queues' ;;
    'submit|--tenant') __agentq_r='dyn:tenants' ;;
    'submit|--class') __agentq_r='choices:interactive batch maintenance' ;;
    'submit|--operation') __agentq_r='free' ;;
    'submit|--deadline') __agentq_r='free' ;;
    'submit|--idempotency-key') __agentq_r='free' ;;
    'submit|--input') __agentq_r='free' ;;
    'submit|--input-file') __agentq_r='file' ;;
    'submit|--input-ref') __agentq_r='free' ;;
    'submit|--input-sha256') __agentq_r='free' ;;
    'submit|--max-attempts') __agentq_r='free' ;;
    'submit|--trace-id') __agentq_r='free' ;;
    'submit|--budget-tokens') __agentq_r='free' ;;
    'submit|--budget-usd') __agentq_r='free' ;;
    'submit|--allowed-tool') __agentq_r='free' ;;
    'submit|--estimated-seconds') __agentq_r='free' ;;
    'submit|--run-at') __agentq_r='free' ;;
    'submit|--timeout') __agentq_r='free' ;;
    'inspect|--events') __agentq_r='free' ;;
    'list|-q'|'list|--queue') __agentq_r='dyn:queues' ;;
    'list|--state') __agentq_r='list:queued scheduled running succeeded dead cancelled expired' ;;
    'list|--tenant') __agentq_r='dyn:tenants' ;;
    'list|--class') __agentq_r='choices:interactive batch maintenance' ;;
    'list|--workflow') __agentq_r='free' ;;
    'list|--since') __agentq_r='free' ;;
    'list|--until') __agentq_r='free' ;;
    'list|--limit') __agentq_r='free' ;;
    'list|--cursor') __agentq_r='free' ;;
    'cancel|--reason') __agentq_r='free' ;;
    'tail|-q'|'tail|--queue') __agentq_r='dyn:queues' ;;
    'tail|--job') __agentq_r='free' ;;
    'tail|--since') __agentq_r='free' ;;
    'tail|-n'|'tail|--events') __agentq_r='free' ;;
    'demo|-q'|'demo|--queue') __agentq_r='dyn:queues' ;;
    'demo|--jobs') __agentq_r='free' ;;
    'dlq list|-q'|'dlq list|--queue') __agentq_r='dyn:queues' ;;
    'dlq list|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq list|--workflow') __agentq_r='free' ;;
    'dlq list|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq list|--reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq list|--since') __agentq_r='free' ;;
    'dlq list|--until') __agentq_r='free' ;;
    'dlq list|--min-attempts') __agentq_r='free' ;;
    'dlq list|--max-attempts') __agentq_r='free' ;;
    'dlq list|--min-remaining') __agentq_r='free' ;;
    'dlq list|--grep') __agentq_r='free' ;;
    'dlq list|--limit') __agentq_r='free' ;;
    'dlq list|--cursor') __agentq_r='free' ;;
    'dlq summary|-q'|'dlq summary|--queue') __agentq_r='dyn:queues' ;;
    'dlq summary|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq summary|--workflow') __agentq_r='free' ;;
    'dlq summary|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq summary|--reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq summary|--since') __agentq_r='free' ;;
    'dlq summary|--until') __agentq_r='free' ;;
    'dlq summary|--min-attempts') __agentq_r='free' ;;
    'dlq summary|--max-attempts') __agentq_r='free' ;;
    'dlq summary|--min-remaining') __agentq_r='free' ;;
    'dlq summary|--grep') __agentq_r='free' ;;
    'dlq summary|--by') __agentq_r='list:error_code workflow tenant queue reason worker_version class' ;;
    'dlq export|-q'|'dlq export|--queue') __agentq_r='dyn:queues' ;;
    'dlq export|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq export|--workflow') __agentq_r='free' ;;
    'dlq export|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq export|--reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq export|--since') __agentq_r='free' ;;
    'dlq export|--until') __agentq_r='free' ;;
    'dlq export|--min-attempts') __agentq_r='free' ;;
    'dlq export|--max-attempts') __agentq_r='free' ;;
    'dlq export|--min-remaining') __agentq_r='free' ;;
    'dlq export|--grep') __agentq_r='free' ;;
    'dlq redrive|-q'|'dlq redrive|--queue') __agentq_r='dyn:queues' ;;
    'dlq redrive|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq redrive|--workflow') __agentq_r='free' ;;
    'dlq redrive|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq redrive|--dead-reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq redrive|--since') __agentq_r='free' ;;
    'dlq redrive|--until') __agentq_r='free' ;;
    'dlq redrive|--min-attempts') __agentq_r='free' ;;
    'dlq redrive|--max-attempts') __agentq_r='free' ;;
    'dlq redrive|--min-remaining') __agentq_r='free' ;;
    'dlq redrive|--grep') __agentq_r='free' ;;
    'dlq redrive|--plan-out') __agentq_r='file' ;;
    'dlq redrive|--plan') __agentq_r='file' ;;
    'dlq redrive|--resume') __agentq_r='free' ;;
    'dlq redrive|--rate') __agentq_r='free' ;;
    'dlq redrive|--batch-size') __agentq_r='free' ;;
    'dlq redrive|--reason') __agentq_r='free' ;;
    'dlq redrive|--max-redrives') __agentq_r='free' ;;
    'dlq redrive|--extra-attempts') __agentq_r='free' ;;
    'dlq purge|-q'|'dlq purge|--queue') __agentq_r='dyn:queues' ;;
    'dlq purge|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq purge|--workflow') __agentq_r='free' ;;
    'dlq purge|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq purge|--dead-reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq purge|--since') __agentq_r='free' ;;
    'dlq purge|--until') __agentq_r='free' ;;
    'dlq purge|--min-attempts') __agentq_r='free' ;;
    'dlq purge|--max-attempts') __agentq_r='free' ;;
    'dlq purge|--min-remaining') __agentq_r='free' ;;
    'dlq purge|--grep') __agentq_r='free' ;;
    'dlq purge|--plan-out') __agentq_r='file' ;;
    'dlq purge|--plan') __agentq_r='file' ;;
    'dlq purge|--resume') __agentq_r='free' ;;
    'dlq purge|--rate') __agentq_r='free' ;;
    'dlq purge|--batch-size') __agentq_r='free' ;;
    'dlq purge|--reason') __agentq_r='free' ;;
    'dlq expire|-q'|'dlq expire|--queue') __agentq_r='dyn:queues' ;;
    'dlq expire|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq expire|--workflow') __agentq_r='free' ;;
    'dlq expire|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq expire|--dead-reason') __agentq_r='choices:exhausted permanent lease_lost custody' ;;
    'dlq expire|--since') __agentq_r='free' ;;
    'dlq expire|--until') __agentq_r='free' ;;
    'dlq expire|--min-attempts') __agentq_r='free' ;;
    'dlq expire|--max-attempts') __agentq_r='free' ;;
    'dlq expire|--min-remaining') __agentq_r='free' ;;
    'dlq expire|--grep') __agentq_r='free' ;;
    'dlq expire|--plan-out') __agentq_r='file' ;;
    'dlq expire|--plan') __agentq_r='file' ;;
    'dlq expire|--resume') __agentq_r='free' ;;
    'dlq expire|--rate') __agentq_r='free' ;;
    'dlq expire|--batch-size') __agentq_r='free' ;;
    'dlq expire|--reason') __agentq_r='free' ;;
    'dlq runs|-q'|'dlq runs|--queue') __agentq_r='dyn:queues' ;;
    'dlq runs|--limit') __agentq_r='free' ;;
    'dlq runs|--cursor') __agentq_r='free' ;;
    'dlq runs show|--status') __agentq_r='choices:planned moved skipped failed' ;;
    'dlq runs show|--limit') __agentq_r='free' ;;
    'dlq runs show|--cursor') __agentq_r='free' ;;
    'dlq check|-q'|'dlq check|--queue') __agentq_r='dyn:queues' ;;
    'dlq check|--max-size') __agentq_r='free' ;;
    'dlq check|--max-age') __agentq_r='free' ;;
    'dlq check|--max-rate') __agentq_r='free' ;;
    'dlq check|--window') __agentq_r='free' ;;
    'dlq check|--min-ended') __agentq_r='free' ;;
    'dlq browse|-q'|'dlq browse|--queue') __agentq_r='dyn:queues' ;;
    'dlq browse|--tenant') __agentq_r='dyn:tenants' ;;
    'dlq browse|--workflow') __agentq_r='free' ;;
    'dlq browse|--error-code') __agentq_r='dyn:error-codes' ;;
    'dlq browse|--since') __agentq_r='free' ;;
    'dlq browse|--until') __agentq_r='free' ;;
    'dlq browse|--grep') __agentq_r='free' ;;
    'dlq browse|--rate') __agentq_r='free' ;;
    'dlq browse|--batch-size') __agentq_r='free' ;;
    'dlq browse|--max-redrives') __agentq_r='free' ;;
    'stats|-q'|'stats|--queue') __agentq_r='dyn:queues' ;;
    'stats|--by') __agentq_r='choices:class tenant code' ;;
    'stats|--interval') __agentq_r='free' ;;
    'stats|-o'|'stats|--output') __agentq_r='choices:table wide plain json ndjson prometheus' ;;
    'metrics serve|--listen') __agentq_r='free' ;;
    'prune|--older-than') __agentq_r='free' ;;
    'prune|-q'|'prune|--queue') __agentq_r='dyn:queues' ;;
    'prune|--state') __agentq_r='list:queued scheduled running succeeded dead cancelled expired' ;;
    'prune|--max') __agentq_r='free' ;;
    'prune|--reason') __agentq_r='free' ;;
    'prune|--rate') __agentq_r='free' ;;
    'prune|--batch-size') __agentq_r='free' ;;
    'prune|--resume') __agentq_r='free' ;;
    'tui|-q'|'tui|--queue') __agentq_r='dyn:queues' ;;
    'tui|--tenant') __agentq_r='dyn:tenants' ;;
    'tui|--workflow') __agentq_r='free' ;;
    'tui|--error-code') __agentq_r='dyn:error-codes' ;;
    'tui|--since') __agentq_r='free' ;;
    'tui|--until') __agentq_r='free' ;;
    'tui|--grep') __agentq_r='free' ;;
    'tui|--rate') __agentq_r='free' ;;
    'tui|--batch-size') __agentq_r='free' ;;
    'tui|--max-redrives') __agentq_r='free' ;;
    'sqs setup|-q'|'sqs setup|--queue') __agentq_r='dyn:queues' ;;
    'sqs sweep|-q'|'sqs sweep|--queue') __agentq_r='dyn:queues' ;;
    'sqs sweep|--max') __agentq_r='free' ;;
    'sqs republish|-q'|'sqs republish|--queue') __agentq_r='dyn:queues' ;;
    'sqs republish|--job') __agentq_r='free' ;;
    'sqs republish|--older-than') __agentq_r='free' ;;
    'sqs custody|-q'|'sqs custody|--queue') __agentq_r='dyn:queues' ;;
    'sqs custody|--limit') __agentq_r='free' ;;
    'sqs custody|--after') __agentq_r='free' ;;
    'worker|-q'|'worker|--queue') __agentq_r='dyn:queues' ;;
    'worker|-c'|'worker|--concurrency') __agentq_r='free' ;;
    'worker|--lease') __agentq_r='free' ;;
    'worker|--heartbeat') __agentq_r='free' ;;
    'worker|--classes') __agentq_r='list:interactive batch maintenance' ;;
    'worker|--tenant-concurrency') __agentq_r='free' ;;
    'worker|--tenant-cap') __agentq_r='free' ;;
    'worker|--worker-version') __agentq_r='free' ;;
    'worker|--grace') __agentq_r='free' ;;
    'worker|--kill-grace') __agentq_r='free' ;;
    'worker|--max-result-bytes') __agentq_r='free' ;;
    'job checkpoint|--file') __agentq_r='file' ;;
    'job usage|--tokens') __agentq_r='free' ;;
    'job usage|--cost-usd') __agentq_r='free' ;;
    *'|--url') __agentq_r='free' ;;
    *'|--context') __agentq_r='dyn:contexts' ;;
    *'|-o'|*'|--output') __agentq_r='choices:table wide plain json ndjson' ;;
    *'|--color') __agentq_r='choices:auto always never' ;;
  esac
}

# What the Nth positional argument of PATH takes.
__agentq_argval() {
  __agentq_r=
  case "$1" in
    'submit') case "$2" in 0) __agentq_r='free' ;; esac ;;
    'inspect') case "$2" in 0) __agentq_r='free' ;; esac ;;
    'cancel') case "$2" in *) __agentq_r='free' ;; esac ;;
    'help') case "$2" in 0) __agentq_r='choices:submit inspect list cancel tail context demo dlq stats metrics prune completion tui sqs outbox worker job exit-codes' ;; esac ;;
    'context use') case "$2" in 0) __agentq_r='dyn:contexts' ;; esac ;;
    'context help') case "$2" in 0) __agentq_r='choices:list use show' ;; esac ;;
    'dlq show') case "$2" in 0) __agentq_r='dyn:dlq-jobs' ;; esac ;;
    'dlq runs show') case "$2" in 0) __agentq_r='free' ;; esac ;;
    'dlq runs help') case "$2" in 0) __agentq_r='choices:show' ;; esac ;;
    'dlq help') case "$2" in 0) __agentq_r='choices:list show summary export redrive purge expire runs check browse' ;; esac ;;
    'metrics help') case "$2" in 0) __agentq_r='choices:serve' ;; esac ;;
    'completion') case "$2" in 0) __agentq_r='choices:bash zsh fish' ;; esac ;;
    'sqs help') case "$2" in 0) __agentq_r='choices:setup sweep republish custody' ;; esac ;;
    'outbox help') case "$2" in 0) __agentq_r='choices:relay status' ;; esac ;;
    'worker') case "$2" in *) __agentq_r='free' ;; esac ;;
    'job checkpoint') case "$2" in 0) __agentq_r='free' ;; esac ;;
    'job effect') case "$2" in 0) __agentq_r='free' ;; *) __agentq_r='free' ;; esac ;;
    'job error') case "$2" in 0) __agentq_r='free' ;; *) __agentq_r='free' ;; esac ;;
    'job help') case "$2" in 0) __agentq_r='choices:checkpoint usage effect error' ;; esac ;;
  esac
}

__agentq_cmds() {
  __agentq_r=
  case "$1" in
    '') __agentq_r='submit inspect list cancel tail help context demo dlq stats metrics prune completion tui sqs outbox worker job' ;;
    'context') __agentq_r='list use show help' ;;
    'dlq') __agentq_r='list show summary export redrive purge expire runs check browse help' ;;
    'dlq runs') __agentq_r='show help' ;;
    'metrics') __agentq_r='serve help' ;;
    'sqs') __agentq_r='setup sweep republish custody help' ;;
    'outbox') __agentq_r='relay status help' ;;
    'job') __agentq_r='checkpoint usage effect error help' ;;
  esac
}

__agentq_opts() {
  __agentq_r=
  case "$1" in
    '') __agentq_r='-V --version --url --context -o --output --json --color --no-input --debug -h --help' ;;
    'submit') __agentq_r='-f --file -q --queue --tenant --class --operation --deadline --idempotency-key --input --input-file --input-ref --input-sha256 --max-attempts --trace-id --budget-tokens --budget-usd --allowed-tool --estimated-seconds --run-at --wait --timeout -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'inspect') __agentq_r='--events -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'list') __agentq_r='-q --queue -A --all-queues --state --tenant --class --workflow --since --until --limit --cursor --all -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'cancel') __agentq_r='--reason -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'tail') __agentq_r='-q --queue -A --all-queues --job --since -n --events -f --follow -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'help') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'context') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'context list') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'context use') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'context show') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'context help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'demo') __agentq_r='-q --queue --jobs --no-worker -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq list') __agentq_r='-q --queue -A --all-queues --tenant --workflow --error-code --reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep --limit --cursor --all -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq show') __agentq_r='--raw --force -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq summary') __agentq_r='-q --queue -A --all-queues --tenant --workflow --error-code --reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep --by -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq export') __agentq_r='-q --queue -A --all-queues --tenant --workflow --error-code --reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq redrive') __agentq_r='-q --queue --tenant --workflow --error-code --dead-reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep --all --dry-run --plan-out --plan --resume -y --yes --rate --batch-size --break-lock --force --reason --include-partial --max-redrives --reset-attempts --extra-attempts --no-sweep -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq purge') __agentq_r='-q --queue --tenant --workflow --error-code --dead-reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep --all --dry-run --plan-out --plan --resume -y --yes --rate --batch-size --break-lock --force --reason -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq expire') __agentq_r='-q --queue --tenant --workflow --error-code --dead-reason --since --until --min-attempts --max-attempts --expired --not-expired --min-remaining --partial --no-partial --grep --all --dry-run --plan-out --plan --resume -y --yes --rate --batch-size --break-lock --force --reason -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq runs') __agentq_r='-q --queue -A --all-queues --limit --cursor -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq runs show') __agentq_r='--status --limit --cursor -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq runs help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'dlq check') __agentq_r='-q --queue -A --all-queues --max-size --max-age --max-rate --window --min-ended -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq browse') __agentq_r='-q --queue -A --all-queues --tenant --workflow --error-code --since --until --grep --rate --batch-size --max-redrives -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'dlq help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'stats') __agentq_r='-q --queue -A --all-queues --by -w --watch --interval -h --help -o --output --url --context --json --color --no-input --debug' ;;
    'metrics') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'metrics serve') __agentq_r='--listen -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'metrics help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'prune') __agentq_r='--older-than -q --queue -A --all-queues --state --max --dry-run -y --yes --reason --rate --batch-size --resume --break-lock --force -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'completion') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'tui') __agentq_r='-q --queue -A --all-queues --tenant --workflow --error-code --since --until --grep --rate --batch-size --max-redrives -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs setup') __agentq_r='-q --queue -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs sweep') __agentq_r='-q --queue --max --leave-foreign -y --yes -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs republish') __agentq_r='-q --queue --job --older-than --dry-run -y --yes -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs custody') __agentq_r='-q --queue --limit --after -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'sqs help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'outbox') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'outbox relay') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'outbox status') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'outbox help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
    'worker') __agentq_r='-q --queue -c --concurrency --lease --heartbeat --classes --tenant-concurrency --tenant-cap --worker-version --grace --kill-grace --max-result-bytes --drain --quiet -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job checkpoint') __agentq_r='--file -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job usage') __agentq_r='--tokens --cost-usd -h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job effect') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job error') __agentq_r='-h --help --url --context -o --output --json --color --no-input --debug' ;;
    'job help') __agentq_r='--url --context -o --output --json --color --no-input --debug -h --help' ;;
  esac
}

# The words typed before the cursor, split at unquoted blanks, with quotes and backslashes removed the way
# the shell will remove them (`--context "staging"` is staging) and nothing expanded: a typed $(...) stays text.
# (COMP_WORDS keeps the quotes and is also split at ":" and "=".) Sets the array __agentq_typed.
__agentq_split() {
  local s="$1" w="" c q="" have=0
  __agentq_typed=()
  while [ -n "$s" ]; do
    c="${s:0:1}"; s="${s:1}"
    if [ -n "$q" ]; then
      if [ "$c" = "$q" ]; then q=""
      elif [ "$q" = '"' ] && [ "$c" = "\\" ] && [ -n "$s" ]; then
        case "${s:0:1}" in '"'|"\\"|'$'|'`') w="$w${s:0:1}"; s="${s:1}" ;; *) w="$w$c" ;; esac
      else w="$w$c"; fi
    else
      case "$c" in
        " "|$'\t') if [ "$have" = 1 ]; then __agentq_typed+=("$w"); fi; w=""; have=0 ;;
        "'"|'"') q="$c"; have=1 ;;
        "\\") w="$w${s:0:1}"; s="${s:1}"; have=1 ;;
        *) w="$w$c"; have=1 ;;
      esac
    fi
  done
  if [ "$have" = 1 ]; then __agentq_typed+=("$w"); fi
}

# Candidates for a value spec, filtered by the word being completed.
__agentq_values() {
  local spec="$1" cur="$2" line
  case "$spec" in
    choices:*) COMPREPLY=($(compgen -W "${spec#choices:}" -- "$cur")) ;;
    # Comma-separated: complete the item after the last comma, keeping what is before it.
    list:*) local pre=""; case "$cur" in *,*) pre="${cur%,*}," ;; esac
      COMPREPLY=($(compgen -P "$pre" -W "${spec#list:}" -- "${cur##*,}")) ;;
    file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
    dyn:*)
      # One short-lived call; `__complete` gives up after ~500 ms so a slow backend never hangs the shell.
      # Its lines are store and config data: each is taken as one literal word and prefix-matched here,
      # never handed to `compgen -W`, which would expand $(...) and backticks in them.
      local -a __agentq_typed
      __agentq_split "${COMP_LINE:0:COMP_POINT}"
      COMPREPLY=()
      while IFS= read -r line; do
        case "$line" in "$cur"*) COMPREPLY+=("$line") ;; esac
      done < <("${COMP_WORDS[0]}" __complete "${spec#dyn:}" -- "${__agentq_typed[@]:1}" 2>/dev/null) ;;
    *) COMPREPLY=() ;;
  esac
}

_agentq() {
  local cur="${COMP_WORDS[COMP_CWORD]:-}" prev="" path="" npos=0 i=1 w eq=0
  # bash splits `--queue=re` into `--queue` `=` `re`: complete the value part.
  if [ "$cur" = "=" ]; then cur=""; prev="${COMP_WORDS[COMP_CWORD-1]}"; eq=1
  elif [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[COMP_CWORD-1]}" = "=" ]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; eq=1
  elif [ "$COMP_CWORD" -ge 1 ]; then prev="${COMP_WORDS[COMP_CWORD-1]}"; fi
  # Only a long option takes "=value": commander reads -o=json as the value "=json", so offer nothing there.
  case "$prev" in --*) ;; -*) if [ "$eq" = 1 ]; then COMPREPLY=(); return 0; fi ;; esac
  while [ "$i" -lt "$COMP_CWORD" ]; do
    w="${COMP_WORDS[i]}"
    case "$w" in
      --) break ;;
      -*)
        __agentq_optval "$path" "$w"
        if [ -n "$__agentq_r" ]; then
          if [ "${COMP_WORDS[i+1]:-}" = "=" ]; then i=$((i+2)); else i=$((i+1)); fi
          # bash splits a value at ":" (COMP_WORDBREAKS): sqlite:/x arrives as sqlite : /x
          while [ "${COMP_WORDS[i+1]:-}" = ":" ]; do i=$((i+2)); done
        fi ;;
      *)
        __agentq_sub "$path" "$w"
        if [ -n "$__agentq_r" ] && [ "$npos" -eq 0 ]; then path="${path:+$path }$__agentq_r"; else npos=$((npos+1)); fi ;;
    esac
    i=$((i+1))
  done
  case "$prev" in
    -*)
      __agentq_optval "$path" "$prev"
      if [ -n "$__agentq_r" ]; then __agentq_values "$__agentq_r" "$cur"; return 0; fi ;;
  esac
  if [ "${cur#-}" != "$cur" ]; then
    __agentq_opts "$path"
    COMPREPLY=($(compgen -W "$__agentq_r" -- "$cur"))
    return 0
  fi
  __agentq_cmds "$path"
  if [ -n "$__agentq_r" ] && [ "$npos" -eq 0 ]; then
    COMPREPLY=($(compgen -W "$__agentq_r" -- "$cur"))
    return 0
  fi
  __agentq_argval "$path" "$npos"
  __agentq_values "$__agentq_r" "$cur"
}

complete -F _agentq agentq
