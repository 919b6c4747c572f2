"""A source that failed (a URL that refuses, a port taken) ends the command with its error:
one line on stderr once the screen has closed, and its exit status, however the user quit
after it (q, or Ctrl-C: the run ended at the failure). It exited 0 before, the error only
in the title."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.app import AmqpTui
from tests.tui.waiting import until


def quit_once_failed(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """The app runs headless until its source has failed, then `key` quits it."""
    async def headless(app: AmqpTui) -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(app, pilot, lambda: app.failed is not None)
            await pilot.press(key)

    monkeypatch.setattr(AmqpTui, "run", lambda app, *a, **kw: asyncio.run(headless(app)))


@pytest.fixture
def listening() -> Iterator[int]:
    """A port something listens on already."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.fixture
def refusing() -> int:
    """A port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _exit(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code, capsys.readouterr().err


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
def test_a_url_that_refuses_exits_3_with_its_error(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], refusing: int,
        key: str) -> None:
    quit_once_failed(monkeypatch, key)
    code, err = _exit(["tui", f"amqp://127.0.0.1:{refusing}/q", "--recv"], capsys)
    assert code == 3
    assert err.startswith(f"amqp: error: cannot connect to 127.0.0.1:{refusing}")
    assert err.count("\n") == 1  # one line


def test_a_port_taken_exits_3_as_amqp_serve_does(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        listening: int) -> None:
    quit_once_failed(monkeypatch, "q")
    code, err = _exit(["tui", "--serve", "--listen", f"127.0.0.1:{listening}"], capsys)
    assert code == 3
    assert err == f"amqp: error: cannot listen on 127.0.0.1:{listening}: address already in use\n"
