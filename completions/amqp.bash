# bash completion for amqp.
# Written by scripts/gen_docs.py from the CLI definition: edit the CLI, then rerun it.
# Install: see docs/config.md (or: source completions/amqp.bash).

_amqp_files() {
    # $1: suffixes to offer (pcap|pcapng); empty: any file. Directories always.
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    if [[ -n $1 ]]; then
        COMPREPLY=($(compgen -d -- "$cur"; shopt -s extglob; compgen -f -X "!*.@($1)" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_amqp_profile_names() {
    # One name a line, each as typed on a command line (a space escaped: printf %q),
    # those that begin with $1.
    local name q
    while IFS= read -r name; do
        q=$(printf '%q' "$name")
        [[ $q == "$1"* ]] && printf '%s\n' "$q"
    done < <(command amqp --list-profiles 2>/dev/null)
}

_amqp_profiles() {
    local IFS=$'\n'
    COMPREPLY=($(_amqp_profile_names "$cur"))
}

_amqp_url() {
    # @NAME/ from the config file's profiles; the rest of a URL is free text.
    [[ $cur == @* && $cur != */* ]] || return 0
    local IFS=$'\n' name
    COMPREPLY=()
    for name in $(_amqp_profile_names "${cur#@}"); do
        COMPREPLY+=("@$name/")
    done
    compopt -o nospace 2>/dev/null
}

_amqp() {
    local cur prev cword
    local -a words
    COMPREPLY=()
    _amqp_complete
    # bash replaces only what follows the word's last ':' (COMP_WORDBREAKS), so the
    # candidates lose what comes before it too.
    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local head=${cur%"${cur##*:}"} i
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$head"}; done
    fi
}

_amqp_complete() {
    # Words from the line itself, not COMP_WORDS: bash splits those at ':' and '='.
    local line=${COMP_LINE:0:COMP_POINT} i cmd='' cmd_at=0
    read -ra words <<< "$line"
    [[ -z $line || $line == *[[:space:]] ]] && words+=('')
    cword=$(( ${#words[@]} - 1 ))
    cur=${words[cword]}
    prev=${words[cword-1]}
    if [[ $cur == --*=* ]]; then prev=${cur%%=*}; cur=${cur#*=}; fi
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            -*) ;;
            *) cmd=${words[i]}; cmd_at=$i; break ;;
        esac
    done
    case $cmd in
    '')
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--debug --version --help -h" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "browse decode pcap-dump proxy recv request respond send serve tui" -- "$cur"))
        fi
        ;;
    browse)
        case $prev in
        --selector|-s|--count|-c|--credit|--capability|--timeout|-t|--duration|--save-bodies|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect) :; return ;;
        --out|--password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--selector -s --count -c --credit --capability --timeout -t --duration --json --bodies-only --save-bodies --out --json-summary --quiet -q --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --max-message-size --reconnect --trace --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --selector|-s|--count|-c|--credit|--capability|--timeout|-t|--duration|--save-bodies|--out|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        esac
        ;;
    decode)
        case $prev in
        --file|-f) _amqp_files ""; return ;;
        --input|-i) COMPREPLY=($(compgen -W "hex base64 raw" -- "$cur")); return ;;
        --as) COMPREPLY=($(compgen -W "frames message values frames-0-10" -- "$cur")); return ;;
        --max-frame-size) :; return ;;
        --example) COMPREPLY=($(compgen -W "list client-session client-session-hexdump message selector-filter" -- "$cur")); return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--file -f --input -i --as --json --brief --color --no-color --show-secrets --max-frame-size --example --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --file|-f|--input|-i|--as|--max-frame-size|--example) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        *) _amqp_files "" ;;
        esac
        ;;
    pcap-dump)
        case $prev in
        --amqp-port|--capture-filter|--count|-c|--stall|--connection|-C|--address|-a|--link|--selector|-s|--since|--until|--master|--conf) :; return ;;
        --tls-keylog) _amqp_files ""; return ;;
        --live) COMPREPLY=($(compgen -W "$(command ls /sys/class/net 2>/dev/null)" -- "$cur")); return ;;
        --performative) COMPREPLY=($(compgen -W "attach begin close connection.close connection.close-ok connection.heartbeat connection.open connection.open-ok connection.redirect connection.secure connection.secure-ok connection.start connection.start-ok connection.tune connection.tune-ok detach disposition dtx.commit dtx.end dtx.forget dtx.get-timeout dtx.prepare dtx.recover dtx.rollback dtx.select dtx.set-timeout dtx.start end error exchange.bind exchange.bound exchange.declare exchange.delete exchange.query exchange.unbind execution.exception execution.result execution.sync file.ack file.cancel file.consume file.consume-ok file.deliver file.open file.open-ok file.publish file.qos file.qos-ok file.reject file.return file.stage flow header heartbeat message.accept message.acquire message.cancel message.flow message.flush message.reject message.release message.resume message.set-flow-mode message.stop message.subscribe message.transfer open queue.declare queue.delete queue.purge queue.query sasl-challenge sasl-init sasl-mechanisms sasl-outcome sasl-response session.attach session.attached session.command-point session.completed session.confirmed session.detach session.detached session.expected session.flush session.gap session.known-completed session.request-timeout session.timeout stream.cancel stream.consume stream.consume-ok stream.deliver stream.publish stream.qos stream.qos-ok stream.return transfer tx.commit tx.rollback tx.select" -- "$cur")); return ;;
        --state) COMPREPLY=($(compgen -W "abandoned aborted accepted completed declared in-progress modified received rejected released rolled-back settled transactional-state undecided unsettled" -- "$cur")); return ;;
        --out) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "parquet ndjson" -- "$cur")); return ;;
        --engine) COMPREPLY=($(compgen -W "local spark" -- "$cur")); return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--amqp-port --tls-keylog --live --capture-filter --count -c --fast-capture --deliveries -d --messages -m --links --connections --summary --frames --json --frames-only --brief --bodies --show-secrets --color --no-color --stall --connection -C --address -a --link --performative --state --selector -s --since --until --out --format --engine --master --conf --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --amqp-port|--tls-keylog|--live|--capture-filter|--count|-c|--stall|--connection|-C|--address|-a|--link|--performative|--state|--selector|-s|--since|--until|--out|--format|--engine|--master|--conf) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        *) _amqp_files "pcap|pcapng|gz|log|txt|trace" ;;
        esac
        ;;
    proxy)
        case $prev in
        --listen|-l|--server-name|--connect-timeout|--half-close-timeout) :; return ;;
        --record|-w) _amqp_files "pcap|pcapng|gz"; return ;;
        --ca-file|--cert|--key) _amqp_files ""; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--listen -l --record -w --tui --json --show-secrets --ca-file --cert --key --insecure --server-name --connect-timeout --half-close-timeout --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --listen|-l|--record|-w|--ca-file|--cert|--key|--server-name|--connect-timeout|--half-close-timeout) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) : ;;
        1) : ;;
        esac
        ;;
    recv)
        case $prev in
        --count|-c|--timeout|-t|--duration|--credit|--txn-size|--rate|--selector|-s|--filter|--subscription|--capability|--link-name|--sequence-key|--sequence-start|--save-bodies|--report-every|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect) :; return ;;
        --outcome|-o) COMPREPLY=($(compgen -W "accept release reject modify modify:failed modify:undeliverable modify:failed:undeliverable" -- "$cur")); return ;;
        --settle-mode) COMPREPLY=($(compgen -W "first second" -- "$cur")); return ;;
        --out|--password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--count -c --timeout -t --duration --credit --drain --outcome -o --presettled --settle-mode --txn-size --rollback --rate --selector -s --filter --subscription --unsubscribe --dynamic --capability --link-name --copy --verify-sequence --sequence-key --sequence-start --no-duplicates --json --bodies-only --save-bodies --json-summary --report-every --out --quiet -q --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --max-message-size --reconnect --trace --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --count|-c|--timeout|-t|--duration|--credit|--outcome|-o|--settle-mode|--txn-size|--rate|--selector|-s|--filter|--subscription|--capability|--link-name|--sequence-key|--sequence-start|--save-bodies|--report-every|--out|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        esac
        ;;
    request)
        case $prev in
        --file|-f|--password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --size|--message-id|--id|--user-id|--to|--subject|--correlation-id|--content-type|--content-encoding|--absolute-expiry-time|--creation-time|--group-id|--group-sequence|--reply-to-group-id|--property|-P|--annotation|-A|--delivery-annotation|--footer|--priority|--ttl|--reply-to|--count|-c|--concurrency|--timeout|-t|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect) :; return ;;
        --body-type|-b) COMPREPLY=($(compgen -W "data value sequence map" -- "$cur")); return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--file -f --lines --size --body-type -b --json-body --message-id --id --user-id --to --subject --correlation-id --content-type --content-encoding --absolute-expiry-time --creation-time --group-id --group-sequence --reply-to-group-id --property -P --annotation -A --delivery-annotation --footer --durable --no-durable --priority --ttl --first-acquirer --no-first-acquirer --reply-to --count -c --concurrency --timeout -t --json --quiet -q --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --max-message-size --reconnect --trace --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --file|-f|--size|--body-type|-b|--message-id|--id|--user-id|--to|--subject|--correlation-id|--content-type|--content-encoding|--absolute-expiry-time|--creation-time|--group-id|--group-sequence|--reply-to-group-id|--property|-P|--annotation|-A|--delivery-annotation|--footer|--priority|--ttl|--reply-to|--count|-c|--concurrency|--timeout|-t|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        *) : ;;
        esac
        ;;
    respond)
        case $prev in
        --body|--count|-c|--timeout|-t|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect) :; return ;;
        --body-type|-b) COMPREPLY=($(compgen -W "data value sequence map" -- "$cur")); return ;;
        --password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--body --body-type -b --json-body --count -c --timeout -t --json --quiet -q --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --max-message-size --reconnect --trace --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --body|--body-type|-b|--count|-c|--timeout|-t|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--reconnect|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        esac
        ;;
    send)
        case $prev in
        --file|-f|--from|--password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --size|--message-id|--id|--user-id|--to|--subject|--reply-to|--correlation-id|--content-type|--content-encoding|--absolute-expiry-time|--creation-time|--group-id|--group-sequence|--reply-to-group-id|--property|-P|--annotation|-A|--delivery-annotation|--footer|--sequence-key|--priority|--ttl|--count|-c|--rate|--duration|--window|--txn-size|--timeout|-t|--capability|--link-name|--report-every|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--reconnect) :; return ;;
        --body-type|-b) COMPREPLY=($(compgen -W "data value sequence map" -- "$cur")); return ;;
        --on-release) COMPREPLY=($(compgen -W "fail retry" -- "$cur")); return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--file -f --lines --size --body-type -b --json-body --from --expand --message-id --id --user-id --to --subject --reply-to --correlation-id --content-type --content-encoding --absolute-expiry-time --creation-time --group-id --group-sequence --reply-to-group-id --property -P --annotation -A --delivery-annotation --footer --sequence --sequence-key --timestamp --durable --no-durable --priority --ttl --first-acquirer --no-first-acquirer --count -c --rate --duration --presettled --window --txn-size --rollback --on-release --force-relay --timeout -t --capability --link-name --json --progress --no-progress --report-every --quiet -q --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --reconnect --trace --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --file|-f|--size|--body-type|-b|--from|--message-id|--id|--user-id|--to|--subject|--reply-to|--correlation-id|--content-type|--content-encoding|--absolute-expiry-time|--creation-time|--group-id|--group-sequence|--reply-to-group-id|--property|-P|--annotation|-A|--delivery-annotation|--footer|--sequence-key|--priority|--ttl|--count|-c|--rate|--duration|--window|--txn-size|--on-release|--timeout|-t|--capability|--link-name|--report-every|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--reconnect|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        1) : ;;
        esac
        ;;
    serve)
        case $prev in
        --listen|-l|--user|-u|--password|--reject|--release|--modify|--settle-delay|--credit|--detach-after|--close-after|--refuse|--seed|--max-frame-size|--idle-timeout) :; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--listen -l --user -u --password --no-sasl --reject --release --modify --settle-delay --credit --detach-after --close-after --refuse --seed --max-frame-size --idle-timeout --trace --show-secrets --quiet -q --help -h" -- "$cur"))
            return
        fi
        ;;
    tui)
        case $prev in
        --pcap) _amqp_files "pcap|pcapng|gz|log|txt|trace"; return ;;
        --proxy|--listen|-l|--half-close-timeout|--amqp-port|--capture-filter|--speed|--history|--frame-log|--keep-ended|--credit|--refresh|--address|-a|--host|--port|--user|-u|--password|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size) :; return ;;
        --live) COMPREPLY=($(compgen -W "$(command ls /sys/class/net 2>/dev/null)" -- "$cur")); return ;;
        --record|-w) _amqp_files "pcap|pcapng|gz"; return ;;
        --password-file|--ca-file|--cert|--key) _amqp_files ""; return ;;
        --sasl-mechanism) COMPREPLY=($(compgen -W "ANONYMOUS PLAIN EXTERNAL NONE" -- "$cur")); return ;;
        --profile) _amqp_profiles; return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--pcap --proxy --live --recv --send --serve --listen -l --record -w --half-close-timeout --amqp-port --capture-filter --fast-capture --speed --play --history --frame-log --keep-ended --credit --refresh --address -a --host --port --user -u --password --password-file --sasl-mechanism --tls-upgrade --ca-file --cert --key --insecure --server-name --open-hostname --connect-timeout --idle-timeout --container-id --max-frame-size --max-message-size --profile --help -h" -- "$cur"))
            return
        fi
        # Which positional argument this word is: count the others.
        local n=0
        for ((i = cmd_at + 1; i < cword; i++)); do
            case ${words[i]} in
            --pcap|--proxy|--live|--listen|-l|--record|-w|--half-close-timeout|--amqp-port|--capture-filter|--speed|--history|--frame-log|--keep-ended|--credit|--refresh|--address|-a|--host|--port|--user|-u|--password|--password-file|--sasl-mechanism|--ca-file|--cert|--key|--server-name|--open-hostname|--connect-timeout|--idle-timeout|--container-id|--max-frame-size|--max-message-size|--profile) ((i++)) ;;
            -*) ;;
            *) ((n++)) ;;
            esac
        done
        case $n in
        0) _amqp_url ;;
        esac
        ;;
    esac
}

complete -F _amqp amqp
