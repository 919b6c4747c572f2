"""--help shows help text as written: no Rich markup, so AMQP condition symbols are no
emoji codes and option syntax keeps its square brackets."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from amqpcli.cli.app import _register, app
from tests.paths import REPO_ROOT

_register()
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands
                  if c.callback is not None and not c.hidden)
# Pictographs and dingbats, which is what Rich's emoji codes turn into.
EMOJI = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff]")


def _help(*args: str) -> str:
    r = CliRunner().invoke(app, [*args, "--help"], prog_name="amqp",
                           env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    return r.output


def test_serve_help_shows_condition_symbols_literally() -> None:
    proc = subprocess.run([sys.executable, "-m", "amqpcli", "serve", "--help"], cwd=REPO_ROOT,
                          env={**os.environ, "COLUMNS": "200"}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "(amqp:link:detach-forced)" in proc.stdout
    assert "amqp:connection:forced" in proc.stdout
    assert not EMOJI.search(proc.stdout)


def test_square_brackets_are_kept() -> None:
    assert "reject[:CONDITION[=DESCRIPTION]]" in _help("recv")
    assert "modify[:failed][:undeliverable]" in _help("recv")
    assert "amqp[s]://[user[:password]@]host[:port][/address]" in _help("send")
    assert "KEY[:TYPE]=VALUE" in _help("send")


@pytest.mark.parametrize("command", COMMANDS)
def test_no_markup_escapes_or_emoji_in_any_help(command: str) -> None:
    text = _help(command)
    assert "\\[" not in text  # a Rich escape would now show as written
    assert not EMOJI.search(text), EMOJI.findall(text)


@pytest.mark.parametrize("command", COMMANDS)
def test_values_are_named_as_the_man_pages_name_them(command: str) -> None:
    """TEXT, INTEGER, PATH, a choice's values: not Python's type names (`--amqp-port
    <list[int]>`, `files... <list[str]>`, `--live <str>`)."""
    text = _help(command)
    assert not re.search(r"<(str|int|float|bool|list\[[^]]*\])>", text), text


@pytest.mark.parametrize("command", COMMANDS)
def test_examples_are_whole_lines_however_narrow(command: str) -> None:
    """An example command is one line at one indent, whatever the width (wrapped to the
    terminal it broke when copied: `... --json | jq` / `.body`)."""
    r = CliRunner().invoke(app, [command, "--help"], prog_name="amqp",
                           env={"COLUMNS": "50", "NO_COLOR": "1"}, terminal_width=50)
    text = r.output
    cmd = next(c for c in app.registered_commands if (c.name or c.callback.__name__) == command)
    epilog = cmd.epilog or ""
    for line in epilog.split("\n\n"):
        line = line.strip()
        if line.startswith("amqp ") and "\n" not in line:
            assert f"\n    {line}\n" in text, (line, text)


def test_top_level_help_lists_every_command() -> None:
    text = _help()
    for name in COMMANDS:
        assert name in text


def test_reconnect_is_offered_only_where_it_does_something() -> None:
    # The TUI shows a dropped connection as it is; an option it ignored was a lie.
    for command in ("send", "recv", "browse"):
        assert "--reconnect" in _help(command)
    assert "--reconnect" not in _help("tui")
    assert "--connect-timeout" in _help("tui")


@pytest.mark.parametrize(("args", "text"), [
    (["serve", "--seed", "x"], "Invalid value for '--seed'"),
    (["tui", "--reconnect", "2"], "No such option: --reconnect"),
    (["bogus"], "No such command 'bogus'"),
])
def test_usage_errors_are_one_line(args: list[str], text: str) -> None:
    r = subprocess.run([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=60, check=False,
                       env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("amqp: error: ")
    assert text in r.stderr and "--help)" in r.stderr
