"""`amqp` starts without the heavy stacks: registering every subcommand, `amqp --help`,
`amqp COMMAND --help` and `amqp decode` import typer and option declarations, not the
engine, the net layer, the dissect pipeline, textual, pyspark or pyarrow.

A command module imports those inside its command function (or a helper it calls); a
top-level import of one of them fails here, naming the module and who imported it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from tests.paths import REPO_ROOT

# Packages (and their submodules) that must not be loaded at start.
HEAVY = (
    "textual",
    "pyspark",
    "pyarrow",
    "proton",
    "asyncio",
    "amqpcli.engine",
    "amqpcli.net",
    "amqpcli.dissect",
    "amqpcli.pipeline",
    "amqpcli.capture",
    "amqpcli.amqp010",
    "amqpcli.peer",
    "amqpcli.proxy",
    "amqpcli.tui",
)

REGISTER = (
    "import sys; import amqpcli.cli.app as a; a._register(); "
    "print(sorted(m for m in sys.modules))"
)

# Runs main() with ARGV, then prints the loaded modules as JSON on stderr (stdout is the
# command's own output).
RUN_MAIN = """
import json, sys
from amqpcli.cli.app import main
try:
    main(ARGV)
except SystemExit as e:
    if e.code not in (0, None):
        raise
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def heavy_in(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def _run(code: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_heavy_in_matches_packages_and_submodules_only() -> None:
    assert heavy_in(["amqpcli.net", "amqpcli.net.client", "asyncio.events", "typer",
                     "amqpcli.network", "amqpcli.cli.tui", "textual"]) == [
        "amqpcli.net", "amqpcli.net.client", "asyncio.events", "textual"]


def test_registering_every_subcommand_loads_no_heavy_module() -> None:
    proc = _run(REGISTER)
    modules = ast.literal_eval(proc.stdout.strip())
    assert "amqpcli.cli.pcap_dump" in modules and "amqpcli.cli.tui" in modules  # registered
    assert heavy_in(modules) == [], (
        "imported when amqp starts; import these inside the command function instead")


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["send", "--help"],
    ["pcap-dump", "--help"],
    ["decode", "--example", "message"],
], ids=" ".join)
def test_command_loads_no_heavy_module(argv: list[str]) -> None:
    proc = _run(RUN_MAIN.replace("ARGV", repr(argv)))
    assert proc.stdout  # help or the decoded tree was printed
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    assert heavy_in(modules) == []
