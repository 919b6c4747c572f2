"""`--sasl-mechanism ''` (or blank) asks for no mechanism: a usage error (exit 2), as an
unknown one is, not the default mechanism chosen unasked. Nothing listens on port 1."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.config import choose_mechanism
from tests.net.clirun import amqp


@pytest.mark.parametrize("mechanism", ["", "  "])
def test_an_empty_mechanism_is_refused(mechanism: str) -> None:
    with pytest.raises(UserError) as ei:
        choose_mechanism(mechanism, None, False)
    assert ei.value.code == Exit.USAGE
    assert str(ei.value) == ("--sasl-mechanism needs a name: one of ANONYMOUS, PLAIN, "
                             "EXTERNAL, NONE")


def test_none_given_is_the_default() -> None:
    assert choose_mechanism(None, None, False) == "ANONYMOUS"
    assert choose_mechanism(None, "u", False) == "PLAIN"


@pytest.mark.parametrize("args", [
    ("send", "amqp://127.0.0.1:1/q", "hi"), ("recv", "amqp://127.0.0.1:1/q", "-t", "1"),
])
def test_the_cli_refuses_it_before_connecting(args: tuple[str, ...]) -> None:
    r = amqp(*args, "--sasl-mechanism", "")
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == ("amqp: error: --sasl-mechanism needs a name: one of ANONYMOUS, PLAIN, "
                        "EXTERNAL, NONE\n")
