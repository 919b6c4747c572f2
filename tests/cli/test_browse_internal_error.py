"""An internal error (a step of ours that raises: a bug) ends `browse` with the line every
other command gives one, `amqp: internal error: TYPE: TEXT (rerun with --debug)`, exit 1
(`raise_exit`), not `amqp: error: internal error: …`. Nothing listens on port 1: the
connect step itself fails."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.net import client as client_module
from tests.net.clirun import amqp_in_process

BOOM = "a step of ours failed"
ONE_LINE = f"amqp: internal error: RuntimeError: {BOOM} (rerun with --debug)\n"


@pytest.mark.parametrize("command", [("browse",), ("recv", "-t", "1")])
def test_browse_says_an_internal_error_as_recv_does(monkeypatch: pytest.MonkeyPatch,
                                                    command: tuple[str, ...]) -> None:
    async def failing(_cfg: Any) -> Any:
        raise RuntimeError(BOOM)

    monkeypatch.setattr(client_module, "open_stream", failing)
    code, _out, err = amqp_in_process(command[0], "amqp://127.0.0.1:1/q", *command[1:])
    assert code == 1, err
    assert err == ONE_LINE, err
