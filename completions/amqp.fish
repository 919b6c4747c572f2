# fish completion for amqp.
# Written by scripts/gen_docs.py from the CLI definition: edit the CLI, then rerun it.
# Install: copy to ~/.config/fish/completions/amqp.fish (see docs/config.md).

function __amqp_cmd --description 'The amqp subcommand on the command line, if any'
    set -l skip 0
    for tok in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $tok
            case '-*'
            case '*'
                echo $tok
                return 0
        end
    end
    return 1
end

function __amqp_is --description 'Is the amqp subcommand $argv[1]?'
    set -l cmd (__amqp_cmd)
    test "$cmd" = $argv[1]
end

function __amqp_files --description 'Directories, and files with one of these suffixes'
    set -l pattern '\.('(string join '|' -- $argv)')$'
    for f in (commandline -ct)*
        if test -d $f
            echo $f/
        else if string match -qr -- $pattern $f
            echo $f
        end
    end
end

function __amqp_profiles --description 'Named connections from the config file'
    command amqp --list-profiles 2>/dev/null
end

function __amqp_url --description '@NAME/ for a URL'
    string match -q -- '@*' (commandline -ct); or return
    string match -q -- '*/*' (commandline -ct); and return
    for name in (__amqp_profiles)
        echo @$name/
    end
end

complete -c amqp -f
complete -c amqp -n __fish_use_subcommand -l debug -d 'Show tracebacks for errors'
complete -c amqp -n __fish_use_subcommand -l version -d 'Print the version and exit'
complete -c amqp -n __fish_use_subcommand -l help -s h -d 'Show this message and exit'
complete -c amqp -n __fish_use_subcommand -a browse -d 'List what a node holds without consuming it: a copy link drained to the end'
complete -c amqp -n __fish_use_subcommand -a decode -d 'Decode AMQP bytes into a readable tree: a frame stream (with or without protocol header), a single frame, an encoded message, or any sequence of AMQP values'
complete -c amqp -n __fish_use_subcommand -a pcap-dump -d 'Rebuild conversations, deliveries and outcomes from captures (AMQP 1.0 and 0-10)'
complete -c amqp -n __fish_use_subcommand -a proxy -d 'Forward an application\'s AMQP connections to a broker and print every frame'
complete -c amqp -n __fish_use_subcommand -a recv -d 'Receive messages from a node'
complete -c amqp -n __fish_use_subcommand -a send -d 'Send messages to a node'
complete -c amqp -n __fish_use_subcommand -a serve -d 'Run a local AMQP 1.0 peer with in-memory queues (move and copy, selectors, dynamic nodes, durable subscriptions, transactions) and fault injection'
complete -c amqp -n __fish_use_subcommand -a tui -d 'Watch links, unsettled maps and deliveries live'

complete -c amqp -n '__amqp_is browse' -l selector -s s -x -d 'Only messages matching this JMS-style selector'
complete -c amqp -n '__amqp_is browse' -l count -s c -x -d 'At most N messages'
complete -c amqp -n '__amqp_is browse' -l credit -x -d 'Messages asked for at a time'
complete -c amqp -n '__amqp_is browse' -l timeout -s t -x -d 'Seconds to wait for the peer to answer a drain'
complete -c amqp -n '__amqp_is browse' -l json -d 'One JSON object per message, then a summary object on stderr'
complete -c amqp -n '__amqp_is browse' -l quiet -s q -d 'No summary'
complete -c amqp -n '__amqp_is browse' -l address -s a -x -d 'Node address, verbatim (wins over the URL path)'
complete -c amqp -n '__amqp_is browse' -l host -x -d 'Host (wins over the URL)'
complete -c amqp -n '__amqp_is browse' -l port -x -d 'Port (default 5672, amqps 5671)'
complete -c amqp -n '__amqp_is browse' -l user -s u -x -d 'SASL user (wins over the URL)'
complete -c amqp -n '__amqp_is browse' -l password -x -d 'SASL password (prefer $AMQP_PASSWORD or --password-file)'
complete -c amqp -n '__amqp_is browse' -l password-file -r -F -d 'Read the password from the first line of this file'
complete -c amqp -n '__amqp_is browse' -l sasl-mechanism -x -a 'ANONYMOUS PLAIN EXTERNAL NONE' -d 'ANONYMOUS, PLAIN, EXTERNAL, or NONE for no SASL layer (default: PLAIN with a user, EXTERNAL with a client certificate, else ANONYMOUS)'
complete -c amqp -n '__amqp_is browse' -l tls-upgrade -d 'With amqp://: negotiate TLS through the AMQP TLS header (protocol id 2)'
complete -c amqp -n '__amqp_is browse' -l ca-file -r -F -d 'CA certificates (PEM) to verify the peer'
complete -c amqp -n '__amqp_is browse' -l cert -r -F -d 'Client certificate (PEM)'
complete -c amqp -n '__amqp_is browse' -l key -r -F -d 'Client private key (PEM), if not in --cert'
complete -c amqp -n '__amqp_is browse' -l insecure -d 'Do not verify the peer\'s certificate or name'
complete -c amqp -n '__amqp_is browse' -l server-name -x -d 'TLS SNI and the name to verify (default: the host)'
complete -c amqp -n '__amqp_is browse' -l connect-timeout -x -d 'Seconds to connect, including TLS, SASL and open'
complete -c amqp -n '__amqp_is browse' -l idle-timeout -x -d 'Close the connection when the peer is silent this many seconds (the open asks it for heartbeats at half that)'
complete -c amqp -n '__amqp_is browse' -l container-id -x -d 'Our container-id (default: random; a subscription needs a stable one)'
complete -c amqp -n '__amqp_is browse' -l max-frame-size -x -d 'Largest frame we accept, in bytes (min 512)'
complete -c amqp -n '__amqp_is browse' -l reconnect -x -d 'Try up to N times in a row when connecting fails or the connection is lost (backoff 0.2 s doubling to 10 s)'
complete -c amqp -n '__amqp_is browse' -l trace -d 'Print every frame both ways on stderr as it happens, one line each (SASL passwords masked)'
complete -c amqp -n '__amqp_is browse' -l profile -x -a '(__amqp_profiles)' -d 'Use the named connection NAME from the config file (docs/config.md)'
complete -c amqp -n '__amqp_is browse' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is browse' -k -a '(__amqp_url)'

complete -c amqp -n '__amqp_is decode' -l file -s f -r -F -d 'Read the input from FILE (\'-\': stdin)'
complete -c amqp -n '__amqp_is decode' -l input -s i -x -a 'hex base64 raw' -d 'Input form: hex, base64 or raw (default: detected)'
complete -c amqp -n '__amqp_is decode' -l as -x -a 'frames message values frames-0-10' -d 'What the bytes are: frames, message, values, or frames-0-10 (AMQP 0-10 frames without their protocol header) (default: detected)'
complete -c amqp -n '__amqp_is decode' -l json -d 'One JSON object per item (lossless; see docs/message-format.md)'
complete -c amqp -n '__amqp_is decode' -l brief -d 'One line per frame instead of a tree'
complete -c amqp -n '__amqp_is decode' -l color -d 'Colour (default: on a terminal, unless NO_COLOR is set)'
complete -c amqp -n '__amqp_is decode' -l no-color -d 'Not --color'
complete -c amqp -n '__amqp_is decode' -l show-secrets -d 'Show SASL passwords and credentials (masked by default)'
complete -c amqp -n '__amqp_is decode' -l max-frame-size -x -d 'Report frames larger than this as errors'
complete -c amqp -n '__amqp_is decode' -l example -x -a 'list client-session client-session-hexdump message selector-filter' -d 'Decode a bundled example (client-session, message, …; \'list\' lists them)'
complete -c amqp -n '__amqp_is decode' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is decode' -F

complete -c amqp -n '__amqp_is pcap-dump' -l amqp-port -x -d 'Also read flows on this TCP port as AMQP 1.0 without a protocol header (5672 always is)'
complete -c amqp -n '__amqp_is pcap-dump' -l tls-keylog -r -F -d 'Decrypt TLS flows with the session keys in this key log file (SSLKEYLOGFILE format), through tshark'
complete -c amqp -n '__amqp_is pcap-dump' -l live -x -a '(__fish_print_interfaces)' -d 'Capture live on this interface (needs capture rights) and print as traffic flows'
complete -c amqp -n '__amqp_is pcap-dump' -l capture-filter -x -d 'With --live: BPF capture filter (default: the AMQP ports)'
complete -c amqp -n '__amqp_is pcap-dump' -l count -s c -x -d 'With --live: stop after this many packets'
complete -c amqp -n '__amqp_is pcap-dump' -l fast-capture -d 'With --live: dumpcap into our own reader instead of tshark\'s dissection (keeps up with busy links)'
complete -c amqp -n '__amqp_is pcap-dump' -l deliveries -s d -d 'One line per delivery: link, id, tag, size, outcome, who settled, latency'
complete -c amqp -n '__amqp_is pcap-dump' -l links -d 'Every link at the end: handles, termini, credit, outcomes, latency (AMQP 0-10: every destination, with its subscription and outcomes)'
complete -c amqp -n '__amqp_is pcap-dump' -l connections -d 'Every connection at the end: endpoints, open, SASL, close'
complete -c amqp -n '__amqp_is pcap-dump' -l summary -d 'Counts by performative and outcome, latency per link, credit stalls, violations'
complete -c amqp -n '__amqp_is pcap-dump' -l frames -d 'Frame lines too when another view is chosen (they are the default)'
complete -c amqp -n '__amqp_is pcap-dump' -l json -d 'One JSON object per line (lossless; messages as `recv --json` writes them)'
complete -c amqp -n '__amqp_is pcap-dump' -l frames-only -l brief -d 'Decode performatives only, not messages: frame lines without bodies'
complete -c amqp -n '__amqp_is pcap-dump' -l bodies -d 'Message bodies on delivery lines too'
complete -c amqp -n '__amqp_is pcap-dump' -l show-secrets -d 'Show SASL passwords and credentials (masked by default)'
complete -c amqp -n '__amqp_is pcap-dump' -l color -d 'Colour (default: on a terminal, unless NO_COLOR is set)'
complete -c amqp -n '__amqp_is pcap-dump' -l no-color -d 'Not --color'
complete -c amqp -n '__amqp_is pcap-dump' -l stall -x -d 'Seconds without credit, while the sender waits, that count as a credit stall'
complete -c amqp -n '__amqp_is pcap-dump' -l connection -s C -x -d 'Only this connection: c1, an IP address, ip:port, [ipv6]:port, :port or a network such as 10.0.0.0/24 (repeatable)'
complete -c amqp -n '__amqp_is pcap-dump' -l address -s a -x -d 'Only links to this node address (glob, repeatable)'
complete -c amqp -n '__amqp_is pcap-dump' -l link -x -d 'Only links with this name (glob, repeatable)'
complete -c amqp -n '__amqp_is pcap-dump' -l performative -x -a 'attach begin close connection.close connection.close-ok connection.heartbeat connection.open connection.open-ok connection.redirect connection.secure connection.secure-ok connection.start connection.start-ok connection.tune connection.tune-ok detach disposition dtx.commit dtx.end dtx.forget dtx.get-timeout dtx.prepare dtx.recover dtx.rollback dtx.select dtx.set-timeout dtx.start end error exchange.bind exchange.bound exchange.declare exchange.delete exchange.query exchange.unbind execution.exception execution.result execution.sync file.ack file.cancel file.consume file.consume-ok file.deliver file.open file.open-ok file.publish file.qos file.qos-ok file.reject file.return file.stage flow header heartbeat message.accept message.acquire message.cancel message.flow message.flush message.reject message.release message.resume message.set-flow-mode message.stop message.subscribe message.transfer open queue.declare queue.delete queue.purge queue.query sasl-challenge sasl-init sasl-mechanisms sasl-outcome sasl-response session.attach session.attached session.command-point session.completed session.confirmed session.detach session.detached session.expected session.flush session.gap session.known-completed session.request-timeout session.timeout stream.cancel stream.consume stream.consume-ok stream.deliver stream.publish stream.qos stream.qos-ok stream.return transfer tx.commit tx.rollback tx.select' -d 'Only these frames: transfer, flow, sasl-init, heartbeat, message.transfer, ..'
complete -c amqp -n '__amqp_is pcap-dump' -l state -x -a 'abandoned aborted accepted completed declared in-progress modified received rejected released settled transactional-state unsettled' -d 'Only deliveries with this outcome, frames carrying this state: accepted, rejected, released, modified, unsettled, ..'
complete -c amqp -n '__amqp_is pcap-dump' -l since -x -d 'From this time: seconds from the start, HH:MM:SS[.f] or ISO 8601 (UTC)'
complete -c amqp -n '__amqp_is pcap-dump' -l until -x -d 'Up to this time (same forms)'
complete -c amqp -n '__amqp_is pcap-dump' -l out -x -a '(__fish_complete_directories)' -d 'Write tables (connections, sessions, links, frames, deliveries, violations) of the whole capture set into this new folder'
complete -c amqp -n '__amqp_is pcap-dump' -l format -x -a 'parquet ndjson' -d 'Table format: parquet or ndjson'
complete -c amqp -n '__amqp_is pcap-dump' -l engine -x -a 'local spark' -d 'local (in-process) or spark'
complete -c amqp -n '__amqp_is pcap-dump' -l master -x -d 'Spark master URL for --engine spark'
complete -c amqp -n '__amqp_is pcap-dump' -l conf -x -d 'A Spark setting key=value (repeatable)'
complete -c amqp -n '__amqp_is pcap-dump' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is pcap-dump' -a '(__amqp_files pcap pcapng gz)'

complete -c amqp -n '__amqp_is proxy' -l listen -s l -x -d 'Where applications connect: PORT, HOST:PORT or [V6]:PORT'
complete -c amqp -n '__amqp_is proxy' -l record -s w -x -a '(__amqp_files pcap pcapng gz)' -d 'Also write the traffic to this pcapng file: raw, so a SASL PLAIN password is in it in clear'
complete -c amqp -n '__amqp_is proxy' -l tui -d 'Watch in the TUI instead of printing lines'
complete -c amqp -n '__amqp_is proxy' -l json -d 'One JSON object per frame (lossless)'
complete -c amqp -n '__amqp_is proxy' -l show-secrets -d 'Show SASL passwords and credentials (masked by default)'
complete -c amqp -n '__amqp_is proxy' -l ca-file -r -F -d 'CA certificates (PEM) to verify the broker'
complete -c amqp -n '__amqp_is proxy' -l cert -r -F -d 'Client certificate (PEM) for the broker'
complete -c amqp -n '__amqp_is proxy' -l key -r -F -d 'Its private key (PEM), if not in --cert'
complete -c amqp -n '__amqp_is proxy' -l insecure -d 'Do not verify the broker\'s certificate'
complete -c amqp -n '__amqp_is proxy' -l server-name -x -d 'TLS SNI and name to verify'
complete -c amqp -n '__amqp_is proxy' -l connect-timeout -x -d 'Seconds to reach the broker'
complete -c amqp -n '__amqp_is proxy' -l help -s h -d 'Show this message and exit'

complete -c amqp -n '__amqp_is recv' -l count -s c -x -d 'Stop after N messages'
complete -c amqp -n '__amqp_is recv' -l timeout -s t -x -d 'Stop when no message arrives for this many seconds (default: wait forever)'
complete -c amqp -n '__amqp_is recv' -l credit -x -d 'Link credit (prefetch)'
complete -c amqp -n '__amqp_is recv' -l drain -d 'Take what the node holds now, then stop'
complete -c amqp -n '__amqp_is recv' -l outcome -s o -x -a 'accept release reject modify modify:failed modify:undeliverable modify:failed:undeliverable' -d 'accept, release, reject[:CONDITION[=DESCRIPTION]], modify[:failed][:undeliverable]'
complete -c amqp -n '__amqp_is recv' -l presettled -d 'Ask the sender to settle before sending (at most once: a message lost in transit is lost)'
complete -c amqp -n '__amqp_is recv' -l settle-mode -x -a 'first second' -d 'Receiver settle mode: first (settle at once) or second (after the sender settles)'
complete -c amqp -n '__amqp_is recv' -l selector -s s -x -d 'JMS-style selector (apache.org:selector-filter:string under key jms-selector)'
complete -c amqp -n '__amqp_is recv' -l filter -x -d 'Source filter KEY=JSON, the value in the lossless JSON format (repeatable)'
complete -c amqp -n '__amqp_is recv' -l subscription -x -d 'Durable subscription NAME (the link name; keep --container-id stable)'
complete -c amqp -n '__amqp_is recv' -l unsubscribe -d 'With --subscription: remove it and exit'
complete -c amqp -n '__amqp_is recv' -l dynamic -d 'Ask the peer for a temporary node and print its address'
complete -c amqp -n '__amqp_is recv' -l copy -d 'distribution-mode copy: browse without consuming (held messages are released at the end)'
complete -c amqp -n '__amqp_is recv' -l json -d 'One JSON object per message (docs/message-format.md)'
complete -c amqp -n '__amqp_is recv' -l out -r -F -d 'Append messages to FILE as --json writes them, whole, to replay with send --from (fsync\'d before each settlement)'
complete -c amqp -n '__amqp_is recv' -l quiet -s q -d 'No summary on stderr'
complete -c amqp -n '__amqp_is recv' -l address -s a -x -d 'Node address, verbatim (wins over the URL path)'
complete -c amqp -n '__amqp_is recv' -l host -x -d 'Host (wins over the URL)'
complete -c amqp -n '__amqp_is recv' -l port -x -d 'Port (default 5672, amqps 5671)'
complete -c amqp -n '__amqp_is recv' -l user -s u -x -d 'SASL user (wins over the URL)'
complete -c amqp -n '__amqp_is recv' -l password -x -d 'SASL password (prefer $AMQP_PASSWORD or --password-file)'
complete -c amqp -n '__amqp_is recv' -l password-file -r -F -d 'Read the password from the first line of this file'
complete -c amqp -n '__amqp_is recv' -l sasl-mechanism -x -a 'ANONYMOUS PLAIN EXTERNAL NONE' -d 'ANONYMOUS, PLAIN, EXTERNAL, or NONE for no SASL layer (default: PLAIN with a user, EXTERNAL with a client certificate, else ANONYMOUS)'
complete -c amqp -n '__amqp_is recv' -l tls-upgrade -d 'With amqp://: negotiate TLS through the AMQP TLS header (protocol id 2)'
complete -c amqp -n '__amqp_is recv' -l ca-file -r -F -d 'CA certificates (PEM) to verify the peer'
complete -c amqp -n '__amqp_is recv' -l cert -r -F -d 'Client certificate (PEM)'
complete -c amqp -n '__amqp_is recv' -l key -r -F -d 'Client private key (PEM), if not in --cert'
complete -c amqp -n '__amqp_is recv' -l insecure -d 'Do not verify the peer\'s certificate or name'
complete -c amqp -n '__amqp_is recv' -l server-name -x -d 'TLS SNI and the name to verify (default: the host)'
complete -c amqp -n '__amqp_is recv' -l connect-timeout -x -d 'Seconds to connect, including TLS, SASL and open'
complete -c amqp -n '__amqp_is recv' -l idle-timeout -x -d 'Close the connection when the peer is silent this many seconds (the open asks it for heartbeats at half that)'
complete -c amqp -n '__amqp_is recv' -l container-id -x -d 'Our container-id (default: random; a subscription needs a stable one)'
complete -c amqp -n '__amqp_is recv' -l max-frame-size -x -d 'Largest frame we accept, in bytes (min 512)'
complete -c amqp -n '__amqp_is recv' -l reconnect -x -d 'Try up to N times in a row when connecting fails or the connection is lost (backoff 0.2 s doubling to 10 s)'
complete -c amqp -n '__amqp_is recv' -l trace -d 'Print every frame both ways on stderr as it happens, one line each (SASL passwords masked)'
complete -c amqp -n '__amqp_is recv' -l profile -x -a '(__amqp_profiles)' -d 'Use the named connection NAME from the config file (docs/config.md)'
complete -c amqp -n '__amqp_is recv' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is recv' -k -a '(__amqp_url)'

complete -c amqp -n '__amqp_is send' -l file -s f -r -F -d 'Read the body from FILE (\'-\': stdin)'
complete -c amqp -n '__amqp_is send' -l lines -d 'One message per line of the input'
complete -c amqp -n '__amqp_is send' -l body-type -s b -x -a 'data value sequence' -d 'Body section: data, value, sequence (default: data; value with --json-body)'
complete -c amqp -n '__amqp_is send' -l json-body -d 'The body is a value in the lossless JSON format (docs/message-format.md)'
complete -c amqp -n '__amqp_is send' -l from -r -F -d 'Replay the messages in FILE (\'-\': stdin): lines of \'amqp recv --json\', and the items of \'amqp decode --json\' and records of \'amqp pcap-dump --json\' that carry a whole message'
complete -c amqp -n '__amqp_is send' -l message-id -l id -x -d 'message-id'
complete -c amqp -n '__amqp_is send' -l user-id -x
complete -c amqp -n '__amqp_is send' -l to -x
complete -c amqp -n '__amqp_is send' -l subject -x
complete -c amqp -n '__amqp_is send' -l reply-to -x
complete -c amqp -n '__amqp_is send' -l correlation-id -x
complete -c amqp -n '__amqp_is send' -l content-type -x
complete -c amqp -n '__amqp_is send' -l content-encoding -x
complete -c amqp -n '__amqp_is send' -l absolute-expiry-time -x -d 'ms since the epoch, ISO 8601 or \'now\''
complete -c amqp -n '__amqp_is send' -l creation-time -x -d 'ms since the epoch, ISO 8601 or \'now\''
complete -c amqp -n '__amqp_is send' -l group-id -x
complete -c amqp -n '__amqp_is send' -l group-sequence -x
complete -c amqp -n '__amqp_is send' -l reply-to-group-id -x
complete -c amqp -n '__amqp_is send' -l property -s P -x -d 'Application property KEY=VALUE or KEY:TYPE=VALUE (repeatable)'
complete -c amqp -n '__amqp_is send' -l annotation -s A -x -d 'Message annotation KEY[:TYPE]=VALUE (key is a symbol; repeatable)'
complete -c amqp -n '__amqp_is send' -l delivery-annotation -x -d 'Delivery annotation KEY[:TYPE]=VALUE (repeatable)'
complete -c amqp -n '__amqp_is send' -l footer -x -d 'Footer entry KEY[:TYPE]=VALUE (repeatable)'
complete -c amqp -n '__amqp_is send' -l durable -d 'header.durable'
complete -c amqp -n '__amqp_is send' -l no-durable -d 'Not --durable'
complete -c amqp -n '__amqp_is send' -l priority -x -d 'header.priority (0-255)'
complete -c amqp -n '__amqp_is send' -l ttl -x -d 'header.ttl in milliseconds'
complete -c amqp -n '__amqp_is send' -l first-acquirer -d 'header.first-acquirer'
complete -c amqp -n '__amqp_is send' -l no-first-acquirer -d 'Not --first-acquirer'
complete -c amqp -n '__amqp_is send' -l count -s c -x -d 'Messages to send (default: 1, or every line / every message of --from)'
complete -c amqp -n '__amqp_is send' -l rate -x -d 'At most this many messages per second'
complete -c amqp -n '__amqp_is send' -l duration -x -d 'Keep sending the body for this many seconds'
complete -c amqp -n '__amqp_is send' -l presettled -d 'Send pre-settled (at most once: no outcomes)'
complete -c amqp -n '__amqp_is send' -l window -x -d 'Most unsettled messages in flight'
complete -c amqp -n '__amqp_is send' -l txn-size -x -d 'Send in transactions of N messages'
complete -c amqp -n '__amqp_is send' -l rollback -d 'With --txn-size: roll each transaction back instead of committing'
complete -c amqp -n '__amqp_is send' -l timeout -s t -x -d 'Seconds to wait for credit or outcomes before giving up'
complete -c amqp -n '__amqp_is send' -l json -d 'Print the summary as one JSON object'
complete -c amqp -n '__amqp_is send' -l progress -d 'Progress bar on stderr (default: on a terminal for long runs, without --trace)'
complete -c amqp -n '__amqp_is send' -l no-progress -d 'Not --progress'
complete -c amqp -n '__amqp_is send' -l quiet -s q -d 'No summary'
complete -c amqp -n '__amqp_is send' -l address -s a -x -d 'Node address, verbatim (wins over the URL path)'
complete -c amqp -n '__amqp_is send' -l host -x -d 'Host (wins over the URL)'
complete -c amqp -n '__amqp_is send' -l port -x -d 'Port (default 5672, amqps 5671)'
complete -c amqp -n '__amqp_is send' -l user -s u -x -d 'SASL user (wins over the URL)'
complete -c amqp -n '__amqp_is send' -l password -x -d 'SASL password (prefer $AMQP_PASSWORD or --password-file)'
complete -c amqp -n '__amqp_is send' -l password-file -r -F -d 'Read the password from the first line of this file'
complete -c amqp -n '__amqp_is send' -l sasl-mechanism -x -a 'ANONYMOUS PLAIN EXTERNAL NONE' -d 'ANONYMOUS, PLAIN, EXTERNAL, or NONE for no SASL layer (default: PLAIN with a user, EXTERNAL with a client certificate, else ANONYMOUS)'
complete -c amqp -n '__amqp_is send' -l tls-upgrade -d 'With amqp://: negotiate TLS through the AMQP TLS header (protocol id 2)'
complete -c amqp -n '__amqp_is send' -l ca-file -r -F -d 'CA certificates (PEM) to verify the peer'
complete -c amqp -n '__amqp_is send' -l cert -r -F -d 'Client certificate (PEM)'
complete -c amqp -n '__amqp_is send' -l key -r -F -d 'Client private key (PEM), if not in --cert'
complete -c amqp -n '__amqp_is send' -l insecure -d 'Do not verify the peer\'s certificate or name'
complete -c amqp -n '__amqp_is send' -l server-name -x -d 'TLS SNI and the name to verify (default: the host)'
complete -c amqp -n '__amqp_is send' -l connect-timeout -x -d 'Seconds to connect, including TLS, SASL and open'
complete -c amqp -n '__amqp_is send' -l idle-timeout -x -d 'Close the connection when the peer is silent this many seconds (the open asks it for heartbeats at half that)'
complete -c amqp -n '__amqp_is send' -l container-id -x -d 'Our container-id (default: random; a subscription needs a stable one)'
complete -c amqp -n '__amqp_is send' -l max-frame-size -x -d 'Largest frame we accept, in bytes (min 512)'
complete -c amqp -n '__amqp_is send' -l reconnect -x -d 'Try up to N times in a row when connecting fails or the connection is lost (backoff 0.2 s doubling to 10 s)'
complete -c amqp -n '__amqp_is send' -l trace -d 'Print every frame both ways on stderr as it happens, one line each (SASL passwords masked)'
complete -c amqp -n '__amqp_is send' -l profile -x -a '(__amqp_profiles)' -d 'Use the named connection NAME from the config file (docs/config.md)'
complete -c amqp -n '__amqp_is send' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is send' -k -a '(__amqp_url)'

complete -c amqp -n '__amqp_is serve' -l listen -s l -x -d 'PORT, HOST:PORT or [V6]:PORT'
complete -c amqp -n '__amqp_is serve' -l user -s u -x -d 'Require SASL PLAIN with this user (and --password)'
complete -c amqp -n '__amqp_is serve' -l password -x -d 'The password --user must give (or $AMQP_PASSWORD)'
complete -c amqp -n '__amqp_is serve' -l no-sasl -d 'Do not speak SASL (answer a SASL header with the AMQP one)'
complete -c amqp -n '__amqp_is serve' -l reject -x -d 'Reject messages from senders: a share (0.1) or a pattern: every:N, first:N, after:N, at:N,M…, all, none (counted per sender link)'
complete -c amqp -n '__amqp_is serve' -l release -x -d 'Release messages from senders (same forms as --reject)'
complete -c amqp -n '__amqp_is serve' -l modify -x -d 'Answer modified{delivery-failed} (same forms as --reject)'
complete -c amqp -n '__amqp_is serve' -l settle-delay -x -d 'Milliseconds before a sender hears its outcome'
complete -c amqp -n '__amqp_is serve' -l credit -x -d 'Credit window granted to senders (default 500, at most 2147483647; 0 never grants: senders stall)'
complete -c amqp -n '__amqp_is serve' -l detach-after -x -d 'Detach each link (amqp:link:detach-forced) after N deliveries on it'
complete -c amqp -n '__amqp_is serve' -l close-after -x -d 'Close each connection (amqp:connection:forced) after N deliveries on it'
complete -c amqp -n '__amqp_is serve' -l refuse -x -d 'Refuse links to addresses matching this glob with amqp:not-found (repeatable)'
complete -c amqp -n '__amqp_is serve' -l seed -x -d 'Seed for the share rules (repeatable runs)'
complete -c amqp -n '__amqp_is serve' -l max-frame-size -x -d 'Largest frame we accept, in bytes (512 to 4294967295)'
complete -c amqp -n '__amqp_is serve' -l idle-timeout -x -d 'Seconds of client silence before we close'
complete -c amqp -n '__amqp_is serve' -l trace -d 'Print every frame, one line each, on stdout'
complete -c amqp -n '__amqp_is serve' -l show-secrets -d 'Show SASL passwords and credentials in --trace (masked by default)'
complete -c amqp -n '__amqp_is serve' -l quiet -s q -d 'No log lines (the listening line stays)'
complete -c amqp -n '__amqp_is serve' -l help -s h -d 'Show this message and exit'

complete -c amqp -n '__amqp_is tui' -l pcap -x -a '(__amqp_files pcap pcapng gz)' -d 'Replay this capture file (pcap/pcapng), or a folder\'s capture files merged by time'
complete -c amqp -n '__amqp_is tui' -l proxy -x -d 'Proxy LISTEN (PORT or HOST:PORT, loopback by default) to the broker at URL'
complete -c amqp -n '__amqp_is tui' -l live -x -a '(__fish_print_interfaces)' -d 'Capture live on this interface (needs tshark)'
complete -c amqp -n '__amqp_is tui' -l recv -d 'Our own receiving link from URL\'s address'
complete -c amqp -n '__amqp_is tui' -l send -d 'Our own sending link to URL\'s address'
complete -c amqp -n '__amqp_is tui' -l serve -d 'Play the broker: every message an application sends waits for you to settle it'
complete -c amqp -n '__amqp_is tui' -l listen -s l -x -d 'With --serve: PORT, HOST:PORT or [V6]:PORT (loopback unless a host is given)'
complete -c amqp -n '__amqp_is tui' -l record -s w -x -a '(__amqp_files pcap pcapng gz)' -d 'With --proxy: also write the traffic to this pcapng file: raw, so a SASL PLAIN password is in it in clear'
complete -c amqp -n '__amqp_is tui' -l amqp-port -x -d 'With --pcap/--live: also treat this TCP port as AMQP (repeatable)'
complete -c amqp -n '__amqp_is tui' -l capture-filter -x -d 'With --live: BPF filter for the capture'
complete -c amqp -n '__amqp_is tui' -l fast-capture -d 'With --live: dumpcap into our own reader instead of tshark\'s dissection (keeps up with busy links)'
complete -c amqp -n '__amqp_is tui' -l speed -x -d 'Replay speed (1 = as recorded; 0 = as fast as possible)'
complete -c amqp -n '__amqp_is tui' -l play -d 'Start playing the replay at once'
complete -c amqp -n '__amqp_is tui' -l history -x -d 'Settled deliveries kept per connection for viewing (older ones are only counted)'
complete -c amqp -n '__amqp_is tui' -l frame-log -x -d 'Frames kept in the frame log of live sources'
complete -c amqp -n '__amqp_is tui' -l credit -x -d 'Credit granted by the c key (our receiving link)'
complete -c amqp -n '__amqp_is tui' -l refresh -x -d 'View updates per second'
complete -c amqp -n '__amqp_is tui' -l address -s a -x -d 'Node address, verbatim (wins over the URL path)'
complete -c amqp -n '__amqp_is tui' -l host -x -d 'Host (wins over the URL)'
complete -c amqp -n '__amqp_is tui' -l port -x -d 'Port (default 5672, amqps 5671)'
complete -c amqp -n '__amqp_is tui' -l user -s u -x -d 'SASL user (wins over the URL)'
complete -c amqp -n '__amqp_is tui' -l password -x -d 'SASL password (prefer $AMQP_PASSWORD or --password-file)'
complete -c amqp -n '__amqp_is tui' -l password-file -r -F -d 'Read the password from the first line of this file'
complete -c amqp -n '__amqp_is tui' -l sasl-mechanism -x -a 'ANONYMOUS PLAIN EXTERNAL NONE' -d 'ANONYMOUS, PLAIN, EXTERNAL, or NONE for no SASL layer (default: PLAIN with a user, EXTERNAL with a client certificate, else ANONYMOUS)'
complete -c amqp -n '__amqp_is tui' -l tls-upgrade -d 'With amqp://: negotiate TLS through the AMQP TLS header (protocol id 2)'
complete -c amqp -n '__amqp_is tui' -l ca-file -r -F -d 'CA certificates (PEM) to verify the peer'
complete -c amqp -n '__amqp_is tui' -l cert -r -F -d 'Client certificate (PEM)'
complete -c amqp -n '__amqp_is tui' -l key -r -F -d 'Client private key (PEM), if not in --cert'
complete -c amqp -n '__amqp_is tui' -l insecure -d 'Do not verify the peer\'s certificate or name'
complete -c amqp -n '__amqp_is tui' -l server-name -x -d 'TLS SNI and the name to verify (default: the host)'
complete -c amqp -n '__amqp_is tui' -l connect-timeout -x -d 'Seconds to connect, including TLS, SASL and open'
complete -c amqp -n '__amqp_is tui' -l idle-timeout -x -d 'Close the connection when the peer is silent this many seconds (the open asks it for heartbeats at half that)'
complete -c amqp -n '__amqp_is tui' -l container-id -x -d 'Our container-id (default: random; a subscription needs a stable one)'
complete -c amqp -n '__amqp_is tui' -l max-frame-size -x -d 'Largest frame we accept, in bytes (min 512)'
complete -c amqp -n '__amqp_is tui' -l profile -x -a '(__amqp_profiles)' -d 'Use the named connection NAME from the config file (docs/config.md)'
complete -c amqp -n '__amqp_is tui' -l help -s h -d 'Show this message and exit'
complete -c amqp -n '__amqp_is tui' -k -a '(__amqp_url)'
