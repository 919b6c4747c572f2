#!/usr/bin/env bash
# Quick start, first half: a virtualenv in .venv with amqpcli installed editable.
#
#   scripts/setup.sh            # the tool only
#   scripts/setup.sh test       # plus an optional-dependency group (comma-separated: test,spark)
#
# Then: source .venv/bin/activate && amqp --help
# Quick when nothing changed: the install is skipped while pyproject.toml and the extras
# match the last successful install.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
EXTRAS="${1:-}"
PYTHON="${PYTHON:-python3}"

die() { echo "setup.sh: $*" >&2; exit 1; }

python_ok() {
    command -v "$PYTHON" >/dev/null 2>&1 &&
        "$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}

if [ ! -x "$VENV/bin/python" ]; then
    if ! python_ok; then
        # Debian splits venv/ensurepip out of python3.
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq
            apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
        fi
        python_ok || die "need Python >= 3.11 with the venv module (set PYTHON=/path/to/python3.11)"
    fi
    echo "setup.sh: creating $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi

spec="."
[ -n "$EXTRAS" ] && spec=".[$EXTRAS]"
# One stamp per extras set, holding the checksum of the pyproject.toml it was installed from.
stamp="$VENV/.amqpcli-installed-${EXTRAS:-base}"
want="$(cksum <"$REPO/pyproject.toml" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
echo "setup.sh: pip install -e '$spec'" >&2
(cd "$REPO" && "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$spec")
echo "$want" >"$stamp"
