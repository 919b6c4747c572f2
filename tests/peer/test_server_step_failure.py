"""A connection whose answer the server cannot build (here our open: a max-frame-size
beyond a uint, which only the Python API lets through now that `amqp serve` refuses it)
ends at once, and the log says why. The engine's error used to end only the task reading
the socket: the connection hung, silent, until the client gave up waiting for an open."""

from __future__ import annotations

from amqpcli.peer import Broker, Server
from tests.peer.serverlog import internal_error_on_connect


def test_an_open_that_cannot_be_built_is_logged() -> None:
    lines: list[str] = []
    server = Server(("127.0.0.1", 0), Broker(log=lines.append), max_frame_size=2**32)
    error, logged = internal_error_on_connect(server, lines)
    assert "connection closed by peer" in str(error)
    assert logged.endswith(": internal error: EncodeError: 4294967296 is out of range for uint")
