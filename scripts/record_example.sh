#!/usr/bin/env bash
# Records amqpcli/examples/serve-session.pcapng from real traffic: `amqp send`/`recv`
# through `amqp proxy --record` to `amqp serve`, with faults injected so the capture holds
# every outcome (accepted, rejected, released, modified) and a consumer that stalls with
# unsettled deliveries. Rerun after a protocol-level change; the file is small (~20 KB).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$REPO/.venv/bin/activate"
out="$REPO/amqpcli/examples/serve-session.pcapng"
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_line() { for _ in $(seq 100); do grep -q "$2" "$1" && return 0; sleep 0.1; done; cat "$1" >&2; return 1; }

sport="$(free_port)"; pport="$(free_port)"
slog="$(mktemp)"; plog="$(mktemp)"
amqp serve --listen "127.0.0.1:$sport" --reject every:5 --release every:7 --modify every:9 --seed 1 >"$slog" 2>&1 &
spid=$!
amqp proxy "127.0.0.1:$pport" "amqp://127.0.0.1:$sport" --record "$out.tmp" >"$plog" 2>&1 &
ppid=$!
trap 'kill $ppid $spid 2>/dev/null; rm -f "$slog" "$plog"' EXIT
wait_line "$slog" 'listening on'
wait_line "$plog" 'listening on\|forwarding\|proxy'
url="amqp://127.0.0.1:$pport/orders"
amqp send "$url" 'order {n}' --count 20 --message-id 'order-{n}' --property 'region=eu' -q || true
amqp recv "$url" --count 5 --credit 5 -q >/dev/null
# A consumer that takes messages and never settles them: they stay unsettled at the end.
amqp recv "$url" --count 3 --credit 3 --settle-mode second --outcome release -q >/dev/null || true
kill "$ppid"; wait "$ppid" 2>/dev/null || true
mv "$out.tmp" "$out"
echo "wrote $out"
