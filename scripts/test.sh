#!/usr/bin/env bash
# The test command: installs what the suite needs, starts a private RabbitMQ node, runs
# pytest over the whole suite (extra arguments go to pytest), stops the node, and exits
# with pytest's status.
#
#   scripts/test.sh                  # everything
#   scripts/test.sh tests/codec -x   # a subset; arguments are passed to pytest
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
# Otherwise start the node unless it is running; stop it at exit only if we started it.
if [ -z "${AMQP_TEST_RABBITMQ_URL:-}" ]; then
    if ! AMQP_TEST_RABBITMQ_URL="$("$REPO/scripts/rabbitmq.sh" status 2>/dev/null)"; then
        trap '"$REPO/scripts/rabbitmq.sh" stop' EXIT
        AMQP_TEST_RABBITMQ_URL="$("$REPO/scripts/rabbitmq.sh" start)"
    fi
fi
export AMQP_TEST_RABBITMQ_URL
echo "test.sh: RabbitMQ at ${AMQP_TEST_RABBITMQ_URL/guest:guest@/}" >&2

set +e
"$REPO/.venv/bin/python" -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests (exit 5): that is a failure" >&2
fi
exit "$status"
