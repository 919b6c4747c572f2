#!/usr/bin/env bash
# The test command: installs what the suite needs, starts a private RabbitMQ node (or
# empties the one running), runs pytest over the whole suite (extra arguments go to
# pytest), stops the node if it started it, and exits with pytest's status.
#
#   scripts/test.sh                  # everything
#   scripts/test.sh tests/codec -x   # a subset; arguments are passed to pytest
#   AMQP_TEST_WORKERS=0 scripts/test.sh   # in one process (see the workers below)
#
# Safe to run again: packages, the venv and the install are only touched when missing or
# when pyproject.toml changed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

DEBIAN_PACKAGES=(rabbitmq-server tshark zsh fish man-db openssl)

missing_packages() {
    local pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
            echo "$pkg"
    done
}

install_packages() {
    local missing=()
    mapfile -t missing < <(missing_packages "${DEBIAN_PACKAGES[@]}")
    # Spark (the pipeline tests) needs a Java runtime.
    command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "test.sh: missing Debian packages (run as root to install): ${missing[*]}" >&2
        exit 1
    fi
    echo "test.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Installing rabbitmq-server must not start the system-wide node on 0.0.0.0:5672:
    # policy-rc.d exit 101 tells invoke-rc.d not to start services.
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
    fi
    local rc=0
    { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } || rc=$?
    if [ -n "$made_policy" ]; then rm -f "$policy"; fi
    [ "$rc" -eq 0 ] || { echo "test.sh: apt-get failed ($rc)" >&2; exit "$rc"; }
}

install_packages
"$REPO/scripts/setup.sh" test

# AMQP_TEST_RABBITMQ_URL, if set, names a broker to use instead of the private node.
# Otherwise the run starts on an empty node: started if it is not running (and stopped at
# exit), emptied if it is (`rabbitmq.sh reset`, quicker than a restart), so that no run
# sees the queues an earlier one left. A run holds .run/rabbitmq/in-use (shared, on fd 8)
# while it uses the node, as a pytest session that starts the node itself does
# (tests/conftest.py); the node is emptied, or stopped at exit, only when no other run
# holds it.
if [ -z "${AMQP_TEST_RABBITMQ_URL:-}" ]; then
    IN_USE="$REPO/.run/rabbitmq/in-use"
    mkdir -p "${IN_USE%/*}"
    exec 8>>"$IN_USE"  # (closed for what we start: nothing else must keep it)
    if AMQP_TEST_RABBITMQ_URL="$("$REPO/scripts/rabbitmq.sh" status 2>/dev/null 8>&-)"; then
        if flock -n -x 8; then
            AMQP_TEST_RABBITMQ_URL="$("$REPO/scripts/rabbitmq.sh" reset 8>&-)"
        else
            echo "test.sh: another run is using the RabbitMQ node: not emptied" >&2
        fi
    else
        trap 'if flock -n -x 8; then "$REPO/scripts/rabbitmq.sh" stop 8>&-; else
              echo "test.sh: another run is using the RabbitMQ node: left running" >&2; fi' EXIT
        AMQP_TEST_RABBITMQ_URL="$("$REPO/scripts/rabbitmq.sh" start 8>&-)"
    fi
    flock -s 8
fi
export AMQP_TEST_RABBITMQ_URL
echo "test.sh: RabbitMQ at ${AMQP_TEST_RABBITMQ_URL/guest:guest@/}" >&2

# The suite runs in worker processes (pytest-xdist), one per CPU, two at least and four at
# most: most tests wait on peers, processes and timers rather than compute, so two workers
# on two CPUs take about two thirds of the time of one. The tests are written for it:
# each uses queues, vhosts, ports, capture filters and nodes of its own. AMQP_TEST_WORKERS
# sets the number (0: all in this one process); a -n among the arguments wins.
workers="${AMQP_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}"
if [ -z "${AMQP_TEST_WORKERS:-}" ]; then
    [ "$workers" -ge 2 ] || workers=2
    [ "$workers" -le 4 ] || workers=4
fi

set +e
"$REPO/.venv/bin/python" -m pytest -n "$workers" "$@" 8>&-
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests (exit 5): that is a failure" >&2
fi
exit "$status"
