"""A step of ours that raises while the client's transport drives the connection (the
engine taking the peer's bytes, a handler of its events) is an internal error: exit 1,
the CLI's one line for a bug, its traceback under --debug. It used to read as the
network failing ("cannot keep the connection to ...", exit 3). A connection the peer
really drops still says so, with exit 3."""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from amqpcli.engine import events as ev
from amqpcli.engine.endpoint import Endpoint
from amqpcli.net import client as client_module
from tests.net.clirun import amqp, amqp_in_process
from tests.net.cutproxy import CutProxy
from tests.net.servepeer import ServePeers

BOOM = "a step of ours failed"
ONE_LINE = f"amqp: internal error: RuntimeError: {BOOM} (rerun with --debug)\n"


def _engine_fails_once_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's engine raises on the peer's bytes once the peer's open is in."""
    take = Endpoint.receive_data

    def receive_data(self: Endpoint, data: bytes, time: float) -> Any:
        if "server" in self.connection.open:
            raise RuntimeError(BOOM)
        return take(self, data, time)

    monkeypatch.setattr(Endpoint, "receive_data", receive_data)


def _handler_fails(monkeypatch: pytest.MonkeyPatch, event: type) -> None:
    def handler(client: Any, e: Any) -> None:
        raise RuntimeError(BOOM)

    monkeypatch.setitem(client_module._HANDLERS, event, handler)


@pytest.mark.integration
@pytest.mark.parametrize("command", [["recv", "-t", "20", "-c", "1"], ["send", "hello"]])
def test_the_engine_failing_on_the_peers_bytes_is_an_internal_error(
        serve: ServePeers, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    url = serve()
    _engine_fails_once_open(monkeypatch)
    code, _out, err = amqp_in_process(command[0], f"{url}/q", *command[1:])
    assert (code, err) == (1, ONE_LINE)


@pytest.mark.integration
@pytest.mark.parametrize("command", [["recv", "-t", "20", "-c", "1"], ["send", "hello"]])
def test_a_handler_failing_is_an_internal_error(
        serve: ServePeers, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    url = serve()
    _handler_fails(monkeypatch, ev.LinkAttached)  # the peer's answer to our attach
    code, _out, err = amqp_in_process(command[0], f"{url}/q", *command[1:])
    assert (code, err) == (1, ONE_LINE)


@pytest.mark.integration
def test_debug_raises_the_steps_own_exception(serve: ServePeers,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    url = serve()
    _engine_fails_once_open(monkeypatch)
    with pytest.raises(RuntimeError, match=BOOM) as caught:
        amqp_in_process("--debug", "recv", f"{url}/q", "-t", "20", "-c", "1")
    shown = "".join(traceback.format_exception(caught.value))
    # the traceback --debug prints goes down to where the step raised
    assert "in receive_data\n    raise RuntimeError(BOOM)" in shown, shown


@pytest.mark.integration
def test_a_password_in_the_steps_text_is_not_shown(serve: ServePeers,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    url = serve()
    response = b"\0me\0s3cret-pw"  # a SASL PLAIN response, as the engine may quote it

    def receive_data(self: Endpoint, data: bytes, time: float) -> Any:
        assert self.sasl is not None
        raise RuntimeError(f"cannot take {self.sasl.password!r} {response!r}")

    monkeypatch.setattr(Endpoint, "receive_data", receive_data)
    code, _out, err = amqp_in_process("recv", url.replace("//", "//me:s3cret-pw@") + "/q",
                                      "-t", "20", "-c", "1")
    assert code == 1, err
    assert "s3cret" not in err and "cannot take '***' b'\\x00me\\x00***'" in err, err


@pytest.mark.integration
def test_a_peer_that_drops_the_connection_is_still_a_lost_connection(serve: ServePeers) -> None:
    url = serve()
    port = int(url.rsplit(":", 1)[1])
    r = amqp("send", f"{url}/q", "x" * 100, "--count", "2000")
    assert r.returncode == 0, r.stderr
    # the peer's socket is reset once 20 kB of its messages came through
    with CutProxy("127.0.0.1", port, cuts=[20_000], direction="down") as proxy:
        r = amqp("recv", f"amqp://127.0.0.1:{proxy.port}/q", "-c", "2000", "-t", "20", "-q")
        assert proxy.cut_count == 1
    assert r.returncode == 3, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("amqp: ")]
    assert len(errors) == 1 and errors[0].startswith(
        f"amqp: error: cannot keep the connection to 127.0.0.1:{proxy.port}: "), r.stderr
    assert "internal error" not in r.stderr
