"""`amqp proxy` options that cannot work together are usage errors in one line, not
quietly ignored; the help says what `--record` does to an existing file."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from amqpcli.cli.app import _register, app
from tests.paths import REPO_ROOT


@pytest.mark.parametrize(("args", "named"), [
    (["--tui", "--json"], "--json"),
    (["--json", "--tui"], "--json"),
    (["--tui", "--show-secrets"], "--show-secrets"),
    (["--tui", "--json", "--show-secrets"], "--json, --show-secrets"),
])
def test_options_for_the_printed_lines_are_refused_with_the_tui(
        args: list[str], named: str) -> None:
    # --json with --tui started the TUI, the option quietly ignored
    r = subprocess.run([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                        "amqp://127.0.0.1:1", *args], cwd=REPO_ROOT, capture_output=True,
                       text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        f"amqp: error: {named}: not with --tui, which prints no lines"]


def test_record_help_says_an_existing_file_is_replaced() -> None:
    _register()
    r = CliRunner().invoke(app, ["proxy", "--help"], prog_name="amqp",
                           env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    assert "An existing file is replaced." in " ".join(r.output.split())
