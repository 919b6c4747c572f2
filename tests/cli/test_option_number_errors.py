"""A number option given something that is not one (`--priority abc`, `--timeout x`) is a
one-line usage error that quotes the value and says what it is not, as the errors of the
other options do. Typer converts through pydantic, whose own text ("Input should be a
valid integer, unable to parse string as an integer") used to reach the user, without
the value."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from amqpcli.cli.app import _register, app
from tests.net.clirun import amqp_in_process


def _number_options() -> list[tuple[str, str, str]]:
    """(command, option, words) for every option of every command that takes a number."""
    _register()
    group: Any = typer.main.get_command(app)
    out = []
    for name, cmd in group.commands.items():
        for param in cmd.params:
            annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            words = {int: "is not an integer", list[int]: "is not an integer",
                     float: "is not a number"}.get(annotation)
            if words is not None and param.opts[0].startswith("--"):
                out.append((name, param.opts[0], words))
    return out


OPTIONS = _number_options()


def test_the_options_are_found() -> None:
    assert len(OPTIONS) > 50
    assert ("send", "--priority", "is not an integer") in OPTIONS
    assert ("tui", "--speed", "is not a number") in OPTIONS


@pytest.mark.parametrize(("command", "option", "words"), OPTIONS)
def test_every_number_option_quotes_what_it_was_given(command: str, option: str,
                                                      words: str) -> None:
    code, out, err = amqp_in_process(command, option, "abc")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert f"Invalid value for '{option}'" in err
    assert f"'abc' {words}" in err
    assert "Input should be" not in err and "pydantic" not in err


@pytest.mark.parametrize(("value", "shown"), [
    ("1.5", "'1.5' is not an integer"),
    ("", "'' is not an integer"),
    ("9" * 200 + "x", "'" + "9" * 50 + "…(101 characters)…" + "9" * 49 + "x' is not an integer"),
])
def test_the_value_is_quoted_as_given_and_a_long_one_cut(value: str, shown: str) -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "--priority", value)
    assert code == 2
    assert f"Invalid value for '--priority': {shown} (amqp send --help)" in err


def test_a_number_that_is_one_still_goes_through() -> None:
    # (converted, then refused by the option's own check: the value was taken)
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "--priority", "300")
    assert code == 2
    assert "--priority must be 0-255" in err
