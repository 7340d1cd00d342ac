# fish completion for agentq
# Generated from the agentq command tree (`agentq completion SHELL`, or
# `node scripts/gen-completions.mjs` for the committed copies). Do not edit.
# Install: see `agentq completion --help`.

function __agentq_sub --description "canonical subcommand WORD of PATH"
    switch "$argv[1]|$argv[2]"
        case '|submit'
            echo 'submit'
        case '|inspect'
            echo 'inspect'
        case '|list'
            echo 'list'
        case '|ls'
            echo 'list'
        case '|cancel'
            echo 'cancel'
        case '|tail'
            echo 'tail'
        case '|help'
            echo 'help'
        case '|context'
            echo 'context'
        case '|demo'
            echo 'demo'
        case '|dlq'
            echo 'dlq'
        case '|stats'
            echo 'stats'
        case '|metrics'
            echo 'metrics'
        case '|prune'
            echo 'prune'
        case '|completion'
            echo 'completion'
        case '|tui'
            echo 'tui'
        case '|sqs'
            echo 'sqs'
        case '|outbox'
            echo 'outbox'
        case '|worker'
            echo 'worker'
        case '|job'
            echo 'job'
        case 'context|list'
            echo 'list'
        case 'context|use'
            echo 'use'
        case 'context|show'
            echo 'show'
        case 'context|help'
            echo 'help'
        case 'dlq|list'
            echo 'list'
        case 'dlq|show'
            echo 'show'
        case 'dlq|summary'
            echo 'summary'
        case 'dlq|export'
            echo 'export'
        case 'dlq|redrive'
            echo 'redrive'
        case 'dlq|purge'
            echo 'purge'
        case 'dlq|expire'
            echo 'expire'
        case 'dlq|runs'
            echo 'runs'
        case 'dlq|check'
            echo 'check'
        case 'dlq|browse'
            echo 'browse'
        case 'dlq|help'
            echo 'help'
        case 'dlq runs|show'
            echo 'show'
        case 'dlq runs|help'
            echo 'help'
        case 'metrics|serve'
            echo 'serve'
        case 'metrics|help'
            echo 'help'
        case 'sqs|setup'
            echo 'setup'
        case 'sqs|sweep'
            echo 'sweep'
        case 'sqs|republish'
            echo 'republish'
        case 'sqs|custody'
            echo 'custody'
        case 'sqs|help'
            echo 'help'
        case 'outbox|relay'
            echo 'relay'
        case 'outbox|status'
            echo 'status'
        case 'outbox|help'
            echo 'help'
        case 'job|checkpoint'
            echo 'checkpoint'
        case 'job|usage'
            echo 'usage'
        case 'job|effect'
            echo 'effect'
        case 'job|error'
            echo 'error'
        case 'job|help'
            echo 'help'
    end
end

function __agentq_takes_value --description "does option OPT of PATH take a value"
    switch "$argv[1]|$argv[2]"
        case '|--url'
            return 0
        case '|--context'
            return 0
        case '|-o'
            return 0
        case '|--output'
            return 0
        case '|--color'
            return 0
        case 'submit|-f'
            return 0
        case 'submit|--file'
            return 0
        case 'submit|-q'
            return 0
        case 'submit|--queue'
            return 0
        case 'submit|--tenant'
            return 0
        case 'submit|--class'
            return 0
        case 'submit|--operation'
            return 0
        case 'submit|--deadline'
            return 0
        case 'submit|--idempotency-key'
            return 0
        case 'submit|--input'
            return 0
        case 'submit|--input-file'
            return 0
        case 'submit|--input-ref'
            return 0
        case 'submit|--input-sha256'
            return 0
        case 'submit|--max-attempts'
            return 0
        case 'submit|--trace-id'
            return 0
        case 'submit|--budget-tokens'
            return 0
        case 'submit|--budget-usd'
            return 0
        case 'submit|--allowed-tool'
            return 0
        case 'submit|--estimated-seconds'
            return 0
        case 'submit|--run-at'
            return 0
        case 'submit|--timeout'
            return 0
        case 'inspect|--events'
            return 0
        case 'list|-q'
            return 0
        case 'list|--queue'
            return 0
        case 'list|--state'
            return 0
        case 'list|--tenant'
            return 0
        case 'list|--class'
            return 0
        case 'list|--workflow'
            return 0
        case 'list|--since'
            return 0
        case 'list|--until'
            return 0
        case 'list|--limit'
            return 0
        case 'list|--cursor'
            return 0
        case 'cancel|--reason'
            return 0
        case 'tail|-q'
            return 0
        case 'tail|--queue'
            return 0
        case 'tail|--job'
            return 0
        case 'tail|--since'
            return 0
        case 'tail|-n'
            return 0
        case 'tail|--events'
            return 0
        case 'demo|-q'
            return 0
        case 'demo|--queue'
            return 0
        case 'demo|--jobs'
            return 0
        case 'dlq list|-q'
            return 0
        case 'dlq list|--queue'
            return 0
        case 'dlq list|--tenant'
            return 0
        case 'dlq list|--workflow'
            return 0
        case 'dlq list|--error-code'
            return 0
        case 'dlq list|--reason'
            return 0
        case 'dlq list|--since'
            return 0
        case 'dlq list|--until'
            return 0
        case 'dlq list|--min-attempts'
            return 0
        case 'dlq list|--max-attempts'
            return 0
        case 'dlq list|--min-remaining'
            return 0
        case 'dlq list|--grep'
            return 0
        case 'dlq list|--limit'
            return 0
        case 'dlq list|--cursor'
            return 0
        case 'dlq summary|-q'
            return 0
        case 'dlq summary|--queue'
            return 0
        case 'dlq summary|--tenant'
            return 0
        case 'dlq summary|--workflow'
            return 0
        case 'dlq summary|--error-code'
            return 0
        case 'dlq summary|--reason'
            return 0
        case 'dlq summary|--since'
            return 0
        case 'dlq summary|--until'
            return 0
        case 'dlq summary|--min-attempts'
            return 0
        case 'dlq summary|--max-attempts'
            return 0
        case 'dlq summary|--min-remaining'
            return 0
        case 'dlq summary|--grep'
            return 0
        case 'dlq summary|--by'
            return 0
        case 'dlq export|-q'
            return 0
        case 'dlq export|--queue'
            return 0
        case 'dlq export|--tenant'
            return 0
        case 'dlq export|--workflow'
            return 0
        case 'dlq export|--error-code'
            return 0
        case 'dlq export|--reason'
            return 0
        case 'dlq export|--since'
            return 0
        case 'dlq export|--until'
            return 0
        case 'dlq export|--min-attempts'
            return 0
        case 'dlq export|--max-attempts'
            return 0
        case 'dlq export|--min-remaining'
            return 0
        case 'dlq export|--grep'
            return 0
        case 'dlq redrive|-q'
            return 0
        case 'dlq redrive|--queue'
            return 0
        case 'dlq redrive|--tenant'
            return 0
        case 'dlq redrive|--workflow'
            return 0
        case 'dlq redrive|--error-code'
            return 0
        case 'dlq redrive|--dead-reason'
            return 0
        case 'dlq redrive|--since'
            return 0
        case 'dlq redrive|--until'
            return 0
        case 'dlq redrive|--min-attempts'
            return 0
        case 'dlq redrive|--max-attempts'
            return 0
        case 'dlq redrive|--min-remaining'
            return 0
        case 'dlq redrive|--grep'
            return 0
        case 'dlq redrive|--plan-out'
            return 0
        case 'dlq redrive|--plan'
            return 0
        case 'dlq redrive|--resume'
            return 0
        case 'dlq redrive|--rate'
            return 0
        case 'dlq redrive|--batch-size'
            return 0
        case 'dlq redrive|--reason'
            return 0
        case 'dlq redrive|--max-redrives'
            return 0
        case 'dlq redrive|--extra-attempts'
            return 0
        case 'dlq purge|-q'
            return 0
        case 'dlq purge|--queue'
            return 0
        case 'dlq purge|--tenant'
            return 0
        case 'dlq purge|--workflow'
            return 0
        case 'dlq purge|--error-code'
            return 0
        case 'dlq purge|--dead-reason'
            return 0
        case 'dlq purge|--since'
            return 0
        case 'dlq purge|--until'
            return 0
        case 'dlq purge|--min-attempts'
            return 0
        case 'dlq purge|--max-attempts'
            return 0
        case 'dlq purge|--min-remaining'
            return 0
        case 'dlq purge|--grep'
            return 0
        case 'dlq purge|--plan-out'
            return 0
        case 'dlq purge|--plan'
            return 0
        case 'dlq purge|--resume'
            return 0
        case 'dlq purge|--rate'
            return 0
        case 'dlq purge|--batch-size'
            return 0
        case 'dlq purge|--reason'
            return 0
        case 'dlq expire|-q'
            return 0
        case 'dlq expire|--queue'
            return 0
        case 'dlq expire|--tenant'
            return 0
        case 'dlq expire|--workflow'
            return 0
        case 'dlq expire|--error-code'
            return 0
        case 'dlq expire|--dead-reason'
            return 0
        case 'dlq expire|--since'
            return 0
        case 'dlq expire|--until'
            return 0
        case 'dlq expire|--min-attempts'
            return 0
        case 'dlq expire|--max-attempts'
            return 0
        case 'dlq expire|--min-remaining'
            return 0
        case 'dlq expire|--grep'
            return 0
        case 'dlq expire|--plan-out'
            return 0
        case 'dlq expire|--plan'
            return 0
        case 'dlq expire|--resume'
            return 0
        case 'dlq expire|--rate'
            return 0
        case 'dlq expire|--batch-size'
            return 0
        case 'dlq expire|--reason'
            return 0
        case 'dlq runs|-q'
            return 0
        case 'dlq runs|--queue'
            return 0
        case 'dlq runs|--limit'
            return 0
        case 'dlq runs|--cursor'
            return 0
        case 'dlq runs show|--status'
            return 0
        case 'dlq runs show|--limit'
            return 0
        case 'dlq runs show|--cursor'
            return 0
        case 'dlq check|-q'
            return 0
        case 'dlq check|--queue'
            return 0
        case 'dlq check|--max-size'
            return 0
        case 'dlq check|--max-age'
            return 0
        case 'dlq check|--max-rate'
            return 0
        case 'dlq check|--window'
            return 0
        case 'dlq check|--min-ended'
            return 0
        case 'dlq browse|-q'
            return 0
        case 'dlq browse|--queue'
            return 0
        case 'dlq browse|--tenant'
            return 0
        case 'dlq browse|--workflow'
            return 0
        case 'dlq browse|--error-code'
            return 0
        case 'dlq browse|--since'
            return 0
        case 'dlq browse|--until'
            return 0
        case 'dlq browse|--grep'
            return 0
        case 'dlq browse|--rate'
            return 0
        case 'dlq browse|--batch-size'
            return 0
        case 'dlq browse|--max-redrives'
            return 0
        case 'stats|-q'
            return 0
        case 'stats|--queue'
            return 0
        case 'stats|--by'
            return 0
        case 'stats|--interval'
            return 0
        case 'stats|-o'
            return 0
        case 'stats|--output'
            return 0
        case 'metrics serve|--listen'
            return 0
        case 'prune|--older-than'
            return 0
        case 'prune|-q'
            return 0
        case 'prune|--queue'
            return 0
        case 'prune|--state'
            return 0
        case 'prune|--max'
            return 0
        case 'prune|--reason'
            return 0
        case 'prune|--rate'
            return 0
        case 'prune|--batch-size'
            return 0
        case 'prune|--resume'
            return 0
        case 'tui|-q'
            return 0
        case 'tui|--queue'
            return 0
        case 'tui|--tenant'
            return 0
        case 'tui|--workflow'
            return 0
        case 'tui|--error-code'
            return 0
        case 'tui|--since'
            return 0
        case 'tui|--until'
            return 0
        case 'tui|--grep'
            return 0
        case 'tui|--rate'
            return 0
        case 'tui|--batch-size'
            return 0
        case 'tui|--max-redrives'
            return 0
        case 'sqs setup|-q'
            return 0
        case 'sqs setup|--queue'
            return 0
        case 'sqs sweep|-q'
            return 0
        case 'sqs sweep|--queue'
            return 0
        case 'sqs sweep|--max'
            return 0
        case 'sqs republish|-q'
            return 0
        case 'sqs republish|--queue'
            return 0
        case 'sqs republish|--job'
            return 0
        case 'sqs republish|--older-than'
            return 0
        case 'sqs custody|-q'
            return 0
        case 'sqs custody|--queue'
            return 0
        case 'sqs custody|--limit'
            return 0
        case 'sqs custody|--after'
            return 0
        case 'worker|-q'
            return 0
        case 'worker|--queue'
            return 0
        case 'worker|-c'
            return 0
        case 'worker|--concurrency'
            return 0
        case 'worker|--lease'
            return 0
        case 'worker|--heartbeat'
            return 0
        case 'worker|--classes'
            return 0
        case 'worker|--tenant-concurrency'
            return 0
        case 'worker|--tenant-cap'
            return 0
        case 'worker|--worker-version'
            return 0
        case 'worker|--grace'
            return 0
        case 'worker|--kill-grace'
            return 0
        case 'worker|--max-result-bytes'
            return 0
        case 'job checkpoint|--file'
            return 0
        case 'job usage|--tokens'
            return 0
        case 'job usage|--cost-usd'
            return 0
        case '*|--url'
            return 0
        case '*|--context'
            return 0
        case '*|-o'
            return 0
        case '*|--output'
            return 0
        case '*|--color'
            return 0
    end
    return 1
end

function __agentq_state --description "command path and positional count of the tokens before the cursor"
    set -l toks (commandline -opc)
    set -e toks[1]
    set -l p ""
    set -l npos 0
    set -l skip 0
    for t in $toks
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case '--*=*'
            case '-*'
                if __agentq_takes_value "$p" $t
                    set skip 1
                end
            case '*'
                set -l s (__agentq_sub "$p" $t)
                if test -n "$s" -a $npos = 0
                    set p (string trim -- "$p $s")
                else
                    set npos (math $npos + 1)
                end
        end
    end
    echo $p
    echo $npos
end

function __agentq_at --description "is the cursor at command PATH (before any positional)"
    set -l st (__agentq_state)
    test "$st[1]" = "$argv[1]" -a "$st[2]" = 0
end

function __agentq_arg --description "is the cursor on positional N of command PATH"
    set -l st (__agentq_state)
    test "$st[1]" = "$argv[1]"; or return 1
    test "$argv[2]" = "*" -a "$st[2]" -ge "$argv[3]"; and return 0
    test "$st[2]" = "$argv[2]"
end

function __agentq_within --description "is the cursor somewhere under command PATH"
    set -l st (__agentq_state)
    test "$st[1]" = "$argv[1]"
end

# Dynamic values: one short-lived call; `__complete` gives up after ~500 ms so a slow backend never hangs the shell.
function __agentq_dyn
    set -l toks (commandline -opc)
    $toks[1] __complete $argv[1] -- $toks[2..-1] 2>/dev/null
end

# Comma-separated values (--state queued,<TAB>): what is typed up to the last comma, then each value.
function __agentq_list
    set -l pre (string replace -r -- '^--[^=]*=' '' (commandline -ct))
    set pre (string replace -r -- '[^,]*$' '' $pre)
    for v in $argv
        echo $pre$v
    end
end

complete -c agentq -f
complete -c agentq -l url -x -d 'backend URL (sqlite:PATH, redis://..., ...); overrides AGENTQ_URL and contexts'
complete -c agentq -l context -x -a '(__agentq_dyn contexts)' -d 'use this context from the config file'
complete -c agentq -s o -l output -x -a 'table wide plain json ndjson' -d 'output format: table, wide, plain, json, ndjson; prometheus with stats only (default: table on a te…'
complete -c agentq -l json -d 'same as -o json'
complete -c agentq -l color -x -a 'auto always never' -d 'colour: auto, always or never (a bare --color means always)'
complete -c agentq -l no-input -d 'never prompt (mutations then need --yes)'
complete -c agentq -l debug -d 'print stack traces for errors (also AGENTQ_DEBUG=1)'
complete -c agentq -s h -l help -d 'display help for command'
complete -c agentq -n '__agentq_at ""' -s V -l version -d 'show the agentq and Node versions'
complete -c agentq -n '__agentq_at \'\'' -a 'submit' -d 'submit a job and print its id (validates, persists, returns at once); --file F: a job a line'
complete -c agentq -n '__agentq_at \'\'' -a 'inspect' -d 'show one job: state, outcome, attempts, lease, deadline, checkpoint, effects, errors, events'
complete -c agentq -n '__agentq_at \'\'' -a 'list' -d 'list jobs in creation order (oldest first), a page at a time'
complete -c agentq -n '__agentq_at \'\'' -a 'cancel' -d 'cancel jobs: a queued job ends at once, a running job is asked to stop at its next heartbeat'
complete -c agentq -n '__agentq_at \'\'' -a 'tail' -d 'print job events (submitted, claimed, retries, outcomes); --follow keeps waiting for new ones'
complete -c agentq -n '__agentq_at \'\'' -a 'help' -d 'show help for a command, or a topic: exit-codes'
complete -c agentq -n '__agentq_at \'\'' -a 'context' -d 'show and switch configuration contexts (kubectl-style)'
complete -c agentq -n '__agentq_at \'\'' -a 'demo' -d 'try agentq: create a local queue on the embedded default, submit sample jobs and show them'
complete -c agentq -n '__agentq_at \'\'' -a 'dlq' -d 'triage the dead-letter queue and redrive it safely (plan, dry run, confirm, ledger, resume, audit)'
complete -c agentq -n '__agentq_at \'\'' -a 'stats' -d 'queue health: depth, oldest age, time in queue and execution p50/p95, retry and DLQ rates, backlog,…'
complete -c agentq -n '__agentq_at \'\'' -a 'metrics' -d 'expose queue statistics to Prometheus'
complete -c agentq -n '__agentq_at \'\'' -a 'prune' -d 'delete finished jobs (succeeded, cancelled, expired) that ended longer ago than --older-than: plan,…'
complete -c agentq -n '__agentq_at \'\'' -a 'completion' -d 'print the shell completion script for bash, zsh or fish'
complete -c agentq -n '__agentq_at \'\'' -a 'tui' -d 'interactive DLQ triage (full-screen): browse, filter, group by error, inspect, select and redrive s…'
complete -c agentq -n '__agentq_at \'\'' -a 'sqs' -d 'the AWS SQS backend: create its queues, take its DLQ into custody'
complete -c agentq -n '__agentq_at \'\'' -a 'outbox' -d 'the SQS backend\'s transactional outbox'
complete -c agentq -n '__agentq_at \'\'' -a 'worker' -d 'run a handler command once per job: claims, heartbeats, graceful stop on SIGTERM/SIGINT/SIGHUP'
complete -c agentq -n '__agentq_at \'\'' -a 'job' -d 'inside a handler run by agentq worker: checkpoint, report usage, record an effect, report an error …'
complete -c agentq -n '__agentq_within \'submit\'' -s f -l file -r -F -d 'submit the jobs of an NDJSON file (- for stdin), one object a line with the submit request\'s fields…'
complete -c agentq -n '__agentq_within \'submit\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'queue name (default: the context\'s queue, else "default")'
complete -c agentq -n '__agentq_within \'submit\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'tenant id'
complete -c agentq -n '__agentq_within \'submit\'' -l class -x -a 'interactive batch maintenance' -d 'service class'
complete -c agentq -n '__agentq_within \'submit\'' -l operation -x -d 'operation within the workflow'
complete -c agentq -n '__agentq_within \'submit\'' -l deadline -x -d 'deadline: a duration from now (90s, 2h, 1d) or an ISO-8601 time with zone'
complete -c agentq -n '__agentq_within \'submit\'' -l idempotency-key -x -d 'the same key returns the same job instead of a duplicate'
complete -c agentq -n '__agentq_within \'submit\'' -l input -x -d 'inline input (at most 64 KiB; use --input-ref for documents)'
complete -c agentq -n '__agentq_within \'submit\'' -l input-file -r -F -d 'inline input read from a file (at most 64 KiB); with --input-ref, the local copy its sha256 is comp…'
complete -c agentq -n '__agentq_within \'submit\'' -l input-ref -x -d 'reference to the input (s3://..., https://...), with --input-sha256'
complete -c agentq -n '__agentq_within \'submit\'' -l input-sha256 -x -d 'sha256 of what --input-ref points to (64 hex digits)'
complete -c agentq -n '__agentq_within \'submit\'' -l max-attempts -x -d 'attempts before the job goes to the DLQ (1-100)'
complete -c agentq -n '__agentq_within \'submit\'' -l trace-id -x -d 'trace id to correlate logs and spans'
complete -c agentq -n '__agentq_within \'submit\'' -l budget-tokens -x -d 'token ceiling for the job, over all its attempts (held against what its handler reports: beyond it,…'
complete -c agentq -n '__agentq_within \'submit\'' -l budget-usd -x -d 'cost ceiling for the job in USD, as --budget-tokens'
complete -c agentq -n '__agentq_within \'submit\'' -l allowed-tool -x -d 'a tool the agent may call (repeatable)'
complete -c agentq -n '__agentq_within \'submit\'' -l estimated-seconds -x -d 'estimated seconds of work (for admission control)'
complete -c agentq -n '__agentq_within \'submit\'' -l run-at -x -d 'do not start before this time (duration from now or ISO-8601)'
complete -c agentq -n '__agentq_within \'submit\'' -l wait -d 'follow the job until it ends; exit 0 succeeded, 1 ended otherwise, 124 timed out'
complete -c agentq -n '__agentq_within \'submit\'' -l timeout -x -d 'with --wait: stop waiting after this long (the job is left as it is)'
complete -c agentq -n '__agentq_within \'inspect\'' -l events -x -d 'how many recent events to show'
complete -c agentq -n '__agentq_within \'list\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'list\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'list\'' -l state -x -a '(__agentq_list queued scheduled running succeeded dead cancelled expired)' -d 'only these states (comma-separated: queued,scheduled,running,succeeded,dead,cancelled,expired)'
complete -c agentq -n '__agentq_within \'list\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'list\'' -l class -x -a 'interactive batch maintenance' -d 'only this class'
complete -c agentq -n '__agentq_within \'list\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'list\'' -l since -x -d 'created at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'list\'' -l until -x -d 'created before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'list\'' -l limit -x -d 'jobs per page (1-1000)'
complete -c agentq -n '__agentq_within \'list\'' -l cursor -x -d 'continue from the cursor printed by the previous page'
complete -c agentq -n '__agentq_within \'list\'' -l all -d 'stream every page (bounded memory)'
complete -c agentq -n '__agentq_within \'cancel\'' -l reason -x -d 'why (recorded on the job)'
complete -c agentq -n '__agentq_within \'tail\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only events of this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'tail\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'tail\'' -l job -x -d 'only events of this job'
complete -c agentq -n '__agentq_within \'tail\'' -l since -x -d 'events at or after (duration ago or ISO-8601); without it a queue tail starts with the last 20 even…'
complete -c agentq -n '__agentq_within \'tail\'' -s n -l events -x -d 'how many past events to show: a number, or "all" (default: 20; all with --since or --job)'
complete -c agentq -n '__agentq_within \'tail\'' -s f -l follow -d 'keep printing new events until Ctrl-C (which exits 0); with --job, until the job ends'
complete -c agentq -n '__agentq_arg \'help\' 0' -a 'submit inspect list cancel tail context demo dlq stats metrics prune completion tui sqs outbox worker job exit-codes'
complete -c agentq -n '__agentq_at \'context\'' -a 'list' -d 'list contexts from the user and project config files'
complete -c agentq -n '__agentq_at \'context\'' -a 'use' -d 'make a context current (written to the user config file)'
complete -c agentq -n '__agentq_at \'context\'' -a 'show' -d 'show the active context, backend URL (redacted) and where each setting comes from'
complete -c agentq -n '__agentq_at \'context\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_arg \'context use\' 0' -a '(__agentq_dyn contexts)'
complete -c agentq -n '__agentq_arg \'context help\' 0' -a 'list use show'
complete -c agentq -n '__agentq_within \'demo\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'queue for the sample jobs'
complete -c agentq -n '__agentq_within \'demo\'' -l jobs -x -d 'how many sample jobs'
complete -c agentq -n '__agentq_within \'demo\'' -l no-worker -d 'only submit the sample jobs; do not process them with the demo worker'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'list' -d 'list DLQ entries, a page at a time; --all streams them all (NDJSON)'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'show' -d 'everything in one DLQ entry: error, attempts, effects, checkpoint, payload preview (sanitised)'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'summary' -d 'counts per group, oldest/newest, and how many are expired or partial: triage by error'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'export' -d 'write the selection as NDJSON (archives, hand-off); -o json: one JSON array'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'redrive' -d 'move DLQ entries back to their queue, safely: expired, partial and quarantined jobs are skipped'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'purge' -d 'delete DLQ entries for good (malformed entries are never deleted)'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'expire' -d 'move DLQ entries whose deadline passed to state expired (out of the DLQ)'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'runs' -d 'the audit trail of bulk actions: who, when, why, filters, counts'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'check' -d 'alert check for cron and CI: exit 0 when the DLQ is within limits, 1 with a one-line reason when not'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'browse' -d 'interactive DLQ triage (full-screen): browse, filter, group by error, inspect, select and redrive s…'
complete -c agentq -n '__agentq_at \'dlq\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_within \'dlq list\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'dlq list\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq list\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq list\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq list\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq list\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq list\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq list\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq list\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq list\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq list\'' -l limit -x -d 'entries per page (1-1000)'
complete -c agentq -n '__agentq_within \'dlq list\'' -l cursor -x -d 'continue from the cursor printed by the previous page'
complete -c agentq -n '__agentq_within \'dlq list\'' -l all -d 'stream every matching entry in bounded memory (NDJSON unless -o names another format)'
complete -c agentq -n '__agentq_within \'dlq show\'' -l raw -d 'write the exact stored bytes (refused on a terminal unless --force)'
complete -c agentq -n '__agentq_within \'dlq show\'' -l force -d 'with --raw: write to a terminal anyway'
complete -c agentq -n '__agentq_arg \'dlq show\' 0' -a '(__agentq_dyn dlq-jobs)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq summary\'' -l by -x -a '(__agentq_list error_code workflow tenant queue reason worker_version class)' -d 'group by: error_code, workflow, tenant, queue, reason, worker_version, class (comma-separated)'
complete -c agentq -n '__agentq_within \'dlq export\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'dlq export\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq export\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq export\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq export\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq export\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq export\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq export\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq export\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq export\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq export\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l dead-reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l all -d 'act on the whole DLQ (required when no selector is given)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l dry-run -d 'print the plan (verdict per job, totals) and change nothing'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l plan-out -r -F -d 'save the frozen plan to a file for review (- : to stdout, with --dry-run; the table then goes nowhe…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l plan -r -F -d 'apply exactly this saved plan (every job is re-checked; selectors and plan options are refused; - :…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l resume -x -d 'continue an interrupted run from its ledger, with the options recorded when it was created (only --…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -s y -l yes -d 'do not ask for confirmation (required without a terminal)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l rate -x -d 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: 50/s; on --resume: the run\'s recorded ra…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l batch-size -x -d 'jobs per batch (1-1000; default: one second of work at --rate, at most 100; never more than one sec…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l break-lock -d 'break the queue\'s bulk-action lock of a dead process (checked by pid and its start time on this hos…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l force -d 'apply --include-partial, or a --plan with partial jobs; --break-lock of a holder on another host, o…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l reason -x -d 'why: recorded in the audit record (agentq dlq runs)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l include-partial -d 'also redrive jobs that started an external effect (applying needs --force, a --dry-run does not; th…'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l max-redrives -x -d 'quarantine jobs already redriven this many times (default: 3)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l reset-attempts -d 'give redriven jobs their full max_attempts again'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l extra-attempts -x -d 'give redriven jobs N more attempts (default: 1)'
complete -c agentq -n '__agentq_within \'dlq redrive\'' -l no-sweep -d 'SQS: do not receive from the SQS DLQ after the moves (the moved jobs\' copies stay there until `agen…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l dead-reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l all -d 'act on the whole DLQ (required when no selector is given)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l dry-run -d 'print the plan (verdict per job, totals) and change nothing'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l plan-out -r -F -d 'save the frozen plan to a file for review (- : to stdout, with --dry-run; the table then goes nowhe…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l plan -r -F -d 'apply exactly this saved plan (every job is re-checked; selectors and plan options are refused; - :…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l resume -x -d 'continue an interrupted run from its ledger, with the options recorded when it was created (only --…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -s y -l yes -d 'do not ask for confirmation (required without a terminal)'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l rate -x -d 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: 50/s; on --resume: the run\'s recorded ra…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l batch-size -x -d 'jobs per batch (1-1000; default: one second of work at --rate, at most 100; never more than one sec…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l break-lock -d 'break the queue\'s bulk-action lock of a dead process (checked by pid and its start time on this hos…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l force -d 'apply --include-partial, or a --plan with partial jobs; --break-lock of a holder on another host, o…'
complete -c agentq -n '__agentq_within \'dlq purge\'' -l reason -x -d 'why: recorded in the audit record (agentq dlq runs)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l dead-reason -x -a 'exhausted permanent lease_lost custody' -d 'only this dead reason: exhausted, permanent, lease_lost, custody'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l min-attempts -x -d 'at least this many attempts made'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l max-attempts -x -d 'at most this many attempts made'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l expired -d 'only entries whose deadline passed (or has less than --min-remaining left)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l not-expired -d 'only entries that can still finish before their deadline'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l min-remaining -x -d 'less time than this before the deadline counts as expired (e.g. 30m)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l partial -d 'only entries whose effect ledger shows an external effect started'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l no-partial -d 'only entries without started effects'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l all -d 'act on the whole DLQ (required when no selector is given)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l dry-run -d 'print the plan (verdict per job, totals) and change nothing'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l plan-out -r -F -d 'save the frozen plan to a file for review (- : to stdout, with --dry-run; the table then goes nowhe…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l plan -r -F -d 'apply exactly this saved plan (every job is re-checked; selectors and plan options are refused; - :…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l resume -x -d 'continue an interrupted run from its ledger, with the options recorded when it was created (only --…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -s y -l yes -d 'do not ask for confirmation (required without a terminal)'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l rate -x -d 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: 50/s; on --resume: the run\'s recorded ra…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l batch-size -x -d 'jobs per batch (1-1000; default: one second of work at --rate, at most 100; never more than one sec…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l break-lock -d 'break the queue\'s bulk-action lock of a dead process (checked by pid and its start time on this hos…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l force -d 'apply --include-partial, or a --plan with partial jobs; --break-lock of a holder on another host, o…'
complete -c agentq -n '__agentq_within \'dlq expire\'' -l reason -x -d 'why: recorded in the audit record (agentq dlq runs)'
complete -c agentq -n '__agentq_at \'dlq runs\'' -a 'show' -d 'one run: its audit record and the ledger (one line per job)'
complete -c agentq -n '__agentq_at \'dlq runs\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_within \'dlq runs\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only runs on this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'dlq runs\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq runs\'' -l limit -x -d 'runs per page (1-1000)'
complete -c agentq -n '__agentq_within \'dlq runs\'' -l cursor -x -d 'continue from the cursor printed by the previous page'
complete -c agentq -n '__agentq_within \'dlq runs show\'' -l status -x -a 'planned moved skipped failed' -d 'only ledger items in this status'
complete -c agentq -n '__agentq_within \'dlq runs show\'' -l limit -x -d 'ledger items to print (1-1000), then the cursor to continue from; default: all'
complete -c agentq -n '__agentq_within \'dlq runs show\'' -l cursor -x -d 'continue the ledger from the cursor printed by the previous page'
complete -c agentq -n '__agentq_arg \'dlq runs help\' 0' -a 'show'
complete -c agentq -n '__agentq_within \'dlq check\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'dlq check\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq check\'' -l max-size -x -d 'at most this many jobs in the DLQ'
complete -c agentq -n '__agentq_within \'dlq check\'' -l max-age -x -d 'no DLQ entry older than this (e.g. 1h, 2d)'
complete -c agentq -n '__agentq_within \'dlq check\'' -l max-rate -x -d 'at most this share of the jobs that ended over --window went to the DLQ (0.05 or 5%): clearing the …'
complete -c agentq -n '__agentq_within \'dlq check\'' -l window -x -d 'what --max-rate (and dlq_rate in -o json) is over: 1m to 24h, or all for the queue\'s whole life (de…'
complete -c agentq -n '__agentq_within \'dlq check\'' -l min-ended -x -d 'judge --max-rate only when at least this many jobs ended over --window (a quiet queue does not page…'
complete -c agentq -n '__agentq_within \'dlq browse\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue); a redrive …'
complete -c agentq -n '__agentq_within \'dlq browse\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l rate -x -d 'redrive pace: 50, 20/s, 300/m, or 0/unlimited (default: 50/s)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l batch-size -x -d 'redrive jobs per batch (1-1000)'
complete -c agentq -n '__agentq_within \'dlq browse\'' -l max-redrives -x -d 'jobs redriven this many times already are quarantined (default: 3)'
complete -c agentq -n '__agentq_arg \'dlq help\' 0' -a 'list show summary export redrive purge expire runs check browse'
complete -c agentq -n '__agentq_within \'stats\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'stats\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'stats\'' -l by -x -a 'class tenant code' -d 'break the figures down by service class or tenant, or list failed attempts by error code'
complete -c agentq -n '__agentq_within \'stats\'' -s w -l watch -d 'refresh on a terminal, with sparklines of depth and oldest age'
complete -c agentq -n '__agentq_within \'stats\'' -l interval -x -d 'with --watch: time between refreshes'
complete -c agentq -n '__agentq_within \'stats\'' -s o -l output -x -a 'table wide plain json ndjson prometheus' -d 'output format: table, wide, plain, json, ndjson; prometheus with stats only (default: table on a te…'
complete -c agentq -n '__agentq_at \'metrics\'' -a 'serve' -d 'serve /metrics in the Prometheus text format (loopback only unless --listen says otherwise)'
complete -c agentq -n '__agentq_at \'metrics\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_within \'metrics serve\'' -l listen -x -d 'address to listen on'
complete -c agentq -n '__agentq_arg \'metrics help\' 0' -a 'serve'
complete -c agentq -n '__agentq_within \'prune\'' -l older-than -x -d 'required: only jobs that ended longer ago than this, e.g. 7d, 36h'
complete -c agentq -n '__agentq_within \'prune\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue)'
complete -c agentq -n '__agentq_within \'prune\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'prune\'' -l state -x -a '(__agentq_list queued scheduled running succeeded dead cancelled expired)' -d 'comma-separated: succeeded, cancelled, expired (default: all three; dead jobs are DLQ entries: dlq …'
complete -c agentq -n '__agentq_within \'prune\'' -l max -x -d 'at most N jobs this time (those that ended longest ago, across the queues covered); run again for t…'
complete -c agentq -n '__agentq_within \'prune\'' -l dry-run -d 'print the plan (jobs per queue and state, oldest and newest end) and change nothing'
complete -c agentq -n '__agentq_within \'prune\'' -s y -l yes -d 'do not ask for confirmation (required without a terminal)'
complete -c agentq -n '__agentq_within \'prune\'' -l reason -x -d 'why: recorded in the audit record of each run (agentq dlq runs)'
complete -c agentq -n '__agentq_within \'prune\'' -l rate -x -d 'jobs per second: 50, 20/s, 300/m, or 0/unlimited (default: unlimited, in batches)'
complete -c agentq -n '__agentq_within \'prune\'' -l batch-size -x -d 'jobs per batch, each deleted in one short step (1-1000; default: 100)'
complete -c agentq -n '__agentq_within \'prune\'' -l resume -x -d 'continue an interrupted prune run from its ledger (only --rate, --batch-size and the lock options m…'
complete -c agentq -n '__agentq_within \'prune\'' -l break-lock -d 'break the queue\'s bulk-action lock of a dead process (checked by pid and its start time on this hos…'
complete -c agentq -n '__agentq_within \'prune\'' -l force -d '--break-lock of a holder on another host, or (with a warning) of a running pid'
complete -c agentq -n '__agentq_arg \'completion\' 0' -a 'bash zsh fish'
complete -c agentq -n '__agentq_within \'tui\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only this queue (default: the context\'s queue; else, or with --all-queues, every queue); a redrive …'
complete -c agentq -n '__agentq_within \'tui\'' -s A -l all-queues -d 'every queue, even when the context names one'
complete -c agentq -n '__agentq_within \'tui\'' -l tenant -x -a '(__agentq_dyn tenants)' -d 'only this tenant'
complete -c agentq -n '__agentq_within \'tui\'' -l workflow -x -d 'only this workflow (name:vN)'
complete -c agentq -n '__agentq_within \'tui\'' -l error-code -x -a '(__agentq_dyn error-codes)' -d 'only this error code (repeatable: any of them)'
complete -c agentq -n '__agentq_within \'tui\'' -l since -x -d 'dead at or after (duration ago, e.g. 6h, or ISO-8601)'
complete -c agentq -n '__agentq_within \'tui\'' -l until -x -d 'dead before (duration ago or ISO-8601)'
complete -c agentq -n '__agentq_within \'tui\'' -l grep -x -d 'case-insensitive text in error code/message, workflow, tenant or job id'
complete -c agentq -n '__agentq_within \'tui\'' -l rate -x -d 'redrive pace: 50, 20/s, 300/m, or 0/unlimited (default: 50/s)'
complete -c agentq -n '__agentq_within \'tui\'' -l batch-size -x -d 'redrive jobs per batch (1-1000)'
complete -c agentq -n '__agentq_within \'tui\'' -l max-redrives -x -d 'jobs redriven this many times already are quarantined (default: 3)'
complete -c agentq -n '__agentq_at \'sqs\'' -a 'setup' -d 'create or check the SQS queues agentq needs (one per class, the DLQ, RedrivePolicy) and print what …'
complete -c agentq -n '__agentq_at \'sqs\'' -a 'sweep' -d 'receive the SQS DLQ and take what is there into custody (persisted byte-exact, then deleted from SQ…'
complete -c agentq -n '__agentq_at \'sqs\'' -a 'republish' -d 'give waiting jobs a new SQS message when theirs was lost (SQS restarted empty, a queue purged or ma…'
complete -c agentq -n '__agentq_at \'sqs\'' -a 'custody' -d 'list the messages taken out of SQS DLQs (kind, source queue, receive count, body)'
complete -c agentq -n '__agentq_at \'sqs\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_within \'sqs setup\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'agentq queue to set up (repeatable; default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'sqs sweep\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'agentq queue whose DLQ to sweep (default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'sqs sweep\'' -l max -x -d 'receive at most this many messages'
complete -c agentq -n '__agentq_within \'sqs sweep\'' -l leave-foreign -d 'record foreign and malformed messages but leave them in SQS'
complete -c agentq -n '__agentq_within \'sqs sweep\'' -s y -l yes -d 'do not ask for confirmation'
complete -c agentq -n '__agentq_within \'sqs republish\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'agentq queue whose waiting jobs to republish (default: the context\'s queue)'
complete -c agentq -n '__agentq_within \'sqs republish\'' -l job -x -d 'only this job (repeatable)'
complete -c agentq -n '__agentq_within \'sqs republish\'' -l older-than -x -d 'only jobs last changed longer ago than this (e.g. 15m, 2h)'
complete -c agentq -n '__agentq_within \'sqs republish\'' -l dry-run -d 'print the plan and change nothing'
complete -c agentq -n '__agentq_within \'sqs republish\'' -s y -l yes -d 'do not ask for confirmation'
complete -c agentq -n '__agentq_within \'sqs custody\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'only what was taken from this agentq queue\'s SQS DLQ (default: every queue)'
complete -c agentq -n '__agentq_within \'sqs custody\'' -l limit -x -d 'at most this many (1-1000)'
complete -c agentq -n '__agentq_within \'sqs custody\'' -l after -x -d 'continue after this job id'
complete -c agentq -n '__agentq_arg \'sqs help\' 0' -a 'setup sweep republish custody'
complete -c agentq -n '__agentq_at \'outbox\'' -a 'relay' -d 'publish outbox rows a crash or a failed publish left unpublished, now (workers also do this before …'
complete -c agentq -n '__agentq_at \'outbox\'' -a 'status' -d 'how many outbox rows are waiting, since when, when the next try is due and why the last one failed'
complete -c agentq -n '__agentq_at \'outbox\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_arg \'outbox help\' 0' -a 'relay status'
complete -c agentq -n '__agentq_within \'worker\'' -s q -l queue -x -a '(__agentq_dyn queues)' -d 'queue to work on (default: the context\'s queue, else "default")'
complete -c agentq -n '__agentq_within \'worker\'' -s c -l concurrency -x -d 'jobs in flight at once'
complete -c agentq -n '__agentq_within \'worker\'' -l lease -x -d 'lease per claim and heartbeat (never past a job\'s deadline)'
complete -c agentq -n '__agentq_within \'worker\'' -l heartbeat -x -d 'how often all leases are extended (default: a quarter of --lease)'
complete -c agentq -n '__agentq_within \'worker\'' -l classes -x -a '(__agentq_list interactive batch maintenance)' -d 'only these classes, comma-separated (interactive,batch,maintenance)'
complete -c agentq -n '__agentq_within \'worker\'' -l tenant-concurrency -x -d 'jobs one tenant may have running at once in the queue, across all workers (default: the context\'s f…'
complete -c agentq -n '__agentq_within \'worker\'' -l tenant-cap -x -d 'a cap for one tenant, over --tenant-concurrency (repeatable)'
complete -c agentq -n '__agentq_within \'worker\'' -l worker-version -x -d 'recorded on every attempt and DLQ entry (default: $AGENTQ_WORKER_VERSION)'
complete -c agentq -n '__agentq_within \'worker\'' -l grace -x -d 'on SIGTERM/SIGINT/SIGHUP: time for running jobs to finish before they are stopped and released'
complete -c agentq -n '__agentq_within \'worker\'' -l kill-grace -x -d 'a stopped handler gets SIGTERM, then SIGKILL after this long'
complete -c agentq -n '__agentq_within \'worker\'' -l max-result-bytes -x -d 'stdout kept as the job result; the rest is cut with a marker'
complete -c agentq -n '__agentq_within \'worker\'' -l drain -d 'exit once nothing is claimable and no job is running (CI, batch runs)'
complete -c agentq -n '__agentq_within \'worker\'' -l quiet -d 'no per-job lines on stderr'
complete -c agentq -n '__agentq_at \'job\'' -a 'checkpoint' -d 'save resumable progress for the current job (JSON if it parses, else text)'
complete -c agentq -n '__agentq_at \'job\'' -a 'usage' -d 'add what this attempt spent (tokens, US dollars) to its record and its queue\'s totals: cost per job'
complete -c agentq -n '__agentq_at \'job\'' -a 'effect' -d 'run CMD as effect KEY unless already done; CMD gets AGENTQ_IDEMPOTENCY_KEY; its stdout is the recor…'
complete -c agentq -n '__agentq_at \'job\'' -a 'error' -d 'report the error code (and message) recorded when this handler exits non-zero'
complete -c agentq -n '__agentq_at \'job\'' -a 'help' -d 'display help for command'
complete -c agentq -n '__agentq_within \'job checkpoint\'' -l file -r -F -d 'read the checkpoint from a file'
complete -c agentq -n '__agentq_within \'job usage\'' -l tokens -x -d 'tokens used since the last report (a whole number)'
complete -c agentq -n '__agentq_within \'job usage\'' -l cost-usd -x -d 'US dollars spent since the last report (e.g. 0.042)'
complete -c agentq -n '__agentq_arg \'job help\' 0' -a 'checkpoint usage effect error'
