#!/usr/bin/env bash
# Quick start: set up the tool, start a local AMQP 1.0 peer (`amqp serve`), send, browse
# and receive a few messages through it, then take apart a bundled capture.
#
#   scripts/quickstart.sh
#
# Needs only Python >= 3.11; everything else comes with `scripts/setup.sh`. The peer
# listens on a free loopback port and is stopped at the end.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$REPO/scripts/setup.sh"
# shellcheck disable=SC1091
source "$REPO/.venv/bin/activate"

# (bold on a terminal; plain when stderr is a file or a pipe, or NO_COLOR is set)
if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD= PLAIN=; fi
step() { printf '\n%s$ %s%s\n' "$BOLD" "$*" "$PLAIN" >&2; "$@"; }

port="$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log="$(mktemp)"
amqp serve --listen "127.0.0.1:$port" >"$log" 2>&1 &
serve_pid=$!
# (the peer's own exit status, 130 once stopped, is not the script's)
trap 'kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; rm -f "$log"' EXIT
# Wait for the listening line rather than sleeping a fixed time.
for _ in $(seq 100); do
    grep -q 'listening on' "$log" && break
    kill -0 "$serve_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
url="amqp://127.0.0.1:$port/quickstart"

step amqp send "$url" 'hello, AMQP' --count 3 --message-id 'qs-{n}' --property 'attempt:int=1'
step amqp browse "$url"
step amqp recv "$url" --count 3 --json
step amqp pcap-dump --summary "$REPO/amqpcli/examples/serve-session.pcapng"
step amqp pcap-dump --deliveries "$REPO/amqpcli/examples/serve-session.pcapng"
printf '\nThe local peer logged:\n' >&2
cat "$log" >&2
