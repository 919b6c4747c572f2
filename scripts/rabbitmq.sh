#!/usr/bin/env bash
# A private RabbitMQ node for the test suite: data under <repo>/.run/rabbitmq, AMQP 1.0
# plugin enabled, listening on 127.0.0.1 only.
#
#   scripts/rabbitmq.sh start    start the node, empty (no-op if it is running); prints its URL
#   scripts/rabbitmq.sh reset    empty the running node (no queues, exchanges or users but
#                                the defaults), as a start leaves it; prints its URL
#   scripts/rabbitmq.sh stop     stop it (no-op if it is not running)
#   scripts/rabbitmq.sh status   print its URL and exit 0 if it is running, else exit 1
#   scripts/rabbitmq.sh url      print the URL the node listens on (running or not)
#   scripts/rabbitmq.sh ctl ARGS rabbitmqctl ARGS against the node (its name and cookie
#                                are this script's: a bare rabbitmqctl does not reach it)
#
# Port: 5672, or the next free one if 5672 is taken (AMQP_TEST_RABBITMQ_PORT forces one).
# The chosen port is kept in .run/rabbitmq/port while the node runs.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$REPO/.run/rabbitmq"
RMQ_BIN=/usr/lib/rabbitmq/bin
# One node name per checkout, so two clones on one machine do not share a node.
NODE_TAG="$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)"

# Everything RabbitMQ reads comes from $RUN, never from /etc/rabbitmq.
export HOME="$RUN/home"
export RABBITMQ_NODENAME="amqpcli-$NODE_TAG@localhost"
export RABBITMQ_USE_LONGNAME=false
export RABBITMQ_CONF_ENV_FILE="$RUN/rabbitmq-env.conf"
export RABBITMQ_CONFIG_FILE="$RUN/rabbitmq.conf"
export RABBITMQ_ADVANCED_CONFIG_FILE="$RUN/advanced.config"
export RABBITMQ_ENABLED_PLUGINS_FILE="$RUN/enabled_plugins"
export RABBITMQ_MNESIA_BASE="$RUN/mnesia"
export RABBITMQ_LOG_BASE="$RUN/log"
export RABBITMQ_PID_FILE="$RUN/rabbitmq.pid"
export RABBITMQ_LOGS="$RUN/log/node.log"
export ERL_EPMD_ADDRESS=127.0.0.1
export ERL_CRASH_DUMP="$RUN/log/erl_crash.dump"

die() { echo "rabbitmq.sh: $*" >&2; exit 1; }

port_taken() {
    # Something accepts connections on 127.0.0.1:$1 (or the port is bound elsewhere).
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    if command -v ss >/dev/null 2>&1; then
        ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
    fi
    return 1
}

pick_port() {
    local p="${1}"
    while port_taken "$p"; do
        p=$((p + 1))
        [ "$p" -lt 65000 ] || die "no free port found"
    done
    echo "$p"
}

current_port() {
    if [ -f "$RUN/port" ]; then cat "$RUN/port"; else echo "${AMQP_TEST_RABBITMQ_PORT:-5672}"; fi
}

url() { echo "amqp://guest:guest@127.0.0.1:$(current_port)"; }

ctl() { "$RMQ_BIN/rabbitmqctl" -n "$RABBITMQ_NODENAME" "$@"; }

is_running() {
    [ -f "$RABBITMQ_PID_FILE" ] || return 1
    local pid
    pid="$(cat "$RABBITMQ_PID_FILE" 2>/dev/null || true)"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    ctl -q status >/dev/null 2>&1
}

write_config() {
    local port="$1" dist_port="$2"
    mkdir -p "$HOME" "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
    : >"$RABBITMQ_CONF_ENV_FILE"
    echo '[].' >"$RABBITMQ_ADVANCED_CONFIG_FILE"
    echo '[rabbitmq_amqp1_0].' >"$RABBITMQ_ENABLED_PLUGINS_FILE"
    cat >"$RABBITMQ_CONFIG_FILE" <<EOF
listeners.tcp.default = 127.0.0.1:$port
distribution.listener.interface = 127.0.0.1
distribution.listener.port_range.min = $dist_port
distribution.listener.port_range.max = $dist_port
loopback_users.guest = true
log.console = false
log.file.level = info
EOF
}

start() {
    command -v "$RMQ_BIN/rabbitmq-server" >/dev/null 2>&1 \
        || die "RabbitMQ is not installed ($RMQ_BIN/rabbitmq-server missing); run scripts/test.sh or apt-get install rabbitmq-server"
    if is_running; then
        url
        return 0
    fi
    # A stale pid file from a killed node would make 'rabbitmqctl wait' watch the wrong pid;
    # and every start begins with no queues, so no run sees what an earlier one left.
    rm -f "$RABBITMQ_PID_FILE" "$RUN/port"
    rm -rf "$RABBITMQ_MNESIA_BASE"
    mkdir -p "$RUN"
    local port dist_port
    port="$(pick_port "${AMQP_TEST_RABBITMQ_PORT:-5672}")"
    dist_port="$(pick_port $((port + 20000)))"
    write_config "$port" "$dist_port"
    # The node derives its distribution port from these, not from the config file.
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$port" RABBITMQ_DIST_PORT="$dist_port"
    # setsid: the node must not get the terminal's SIGINT meant for pytest.
    # (8: scripts/test.sh's hold on the node, 9: our lock; the node must keep neither.)
    setsid "$RMQ_BIN/rabbitmq-server" >"$RUN/log/stdout.log" 2>&1 </dev/null 8>&- 9>&- &
    local launcher=$!
    # 'wait' returns when the node has booted, or fails when the pid dies.
    local tries=0
    while [ ! -s "$RABBITMQ_PID_FILE" ]; do
        if ! kill -0 "$launcher" 2>/dev/null; then
            tail -n 30 "$RUN/log/stdout.log" >&2 || true
            die "RabbitMQ exited during start (log: $RUN/log/)"
        fi
        tries=$((tries + 1))
        [ "$tries" -lt 600 ] || die "RabbitMQ did not write its pid file"
        sleep 0.1
    done
    if ! ctl -q wait --timeout 120 "$RABBITMQ_PID_FILE" >/dev/null 2>&1; then
        tail -n 30 "$RUN/log/stdout.log" >&2 || true
        die "RabbitMQ did not start (log: $RUN/log/)"
    fi
    echo "$port" >"$RUN/port"
    # Boot is complete when 'wait' returns, but the listener may lag by a moment.
    wait_listening "$port"
    url
}

wait_listening() {
    local tries=0
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 300 ] || die "RabbitMQ is up but not listening on 127.0.0.1:$1"
        sleep 0.1
    done
}

reset() {
    # What a start does to the data (an empty database), without restarting the Erlang VM:
    # a few seconds less. The connections open on the node are closed.
    is_running || die "not running"
    { ctl -q stop_app && ctl -q reset && ctl -q start_app; } >/dev/null 2>&1 \
        || die "reset failed (log: $RUN/log/)"
    wait_listening "$(current_port)"
    url
}

stop() {
    if [ -f "$RABBITMQ_PID_FILE" ]; then
        local pid
        pid="$(cat "$RABBITMQ_PID_FILE" 2>/dev/null || true)"
        ctl -q stop "$RABBITMQ_PID_FILE" >/dev/null 2>&1 || true
        # 'stop PIDFILE' waits for the pid; make sure it is gone.
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$RABBITMQ_PID_FILE" "$RUN/port"
}

lock() {
    # Two test runs in one checkout must not start (or stop) the node at the same time.
    mkdir -p "$RUN"
    exec 9>"$RUN/.lock"
    flock -w 300 9 || die "timed out waiting for $RUN/.lock"
}

case "${1:-}" in
    start) lock; start ;;
    reset) lock; reset ;;
    stop) lock; stop ;;
    status)
        if is_running; then url; else echo "not running" >&2; exit 1; fi
        ;;
    url) url ;;
    ctl) shift; is_running || die "not running"; ctl "$@" ;;
    *) echo "usage: $0 start|reset|stop|status|url|ctl ARGS" >&2; exit 2 ;;
esac
