"""Talking to something that is not AMQP: `amqp send` to a port where SSH, HTTP or TLS
answers fails at once with what the peer sent (not after the connect timeout), and
`amqp serve` answers a client that sends no AMQP header (TLS to a plain port) with its
own header and closes, instead of leaving it hanging."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.net.clirun import amqp

pytestmark = pytest.mark.integration


@pytest.fixture
def speaks() -> Iterator[Callable[[bytes], int]]:
    """A listener that answers every connection with the given bytes and holds it open
    until the test ends (as a server of another protocol waiting for more)."""
    stop = threading.Event()
    threads: list[threading.Thread] = []
    socks: list[socket.socket] = []

    def start(banner: bytes) -> int:
        srv = socket.create_server(("127.0.0.1", 0))
        socks.append(srv)

        def serve() -> None:
            conn, _ = srv.accept()
            socks.append(conn)
            conn.recv(64)
            conn.sendall(banner)
            stop.wait(120)

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        threads.append(t)
        return int(srv.getsockname()[1])

    yield start
    stop.set()
    for s in socks:
        s.close()


@pytest.mark.parametrize(("banner", "said"), [
    (b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", "it sent 'SSH-2.0-OpenSSH_9.2p1 Debian-2'"),
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "it sent 'HTTP/1.1 400 Bad Request'"),
    (b"\x15\x03\x03\x00\x02\x02\x46", "it answered with TLS (an amqps:// port?)"),
])
def test_send_to_a_peer_that_is_not_amqp_fails_at_once(speaks: Callable[[bytes], int],
                                                       banner: bytes, said: str) -> None:
    port = speaks(banner)
    # the connect timeout is far longer than the test is given: failing at once is the point
    r = amqp("send", f"amqp://127.0.0.1:{port}/q", "hi", "--connect-timeout", "600",
             timeout=60)
    assert r.returncode == 3
    assert r.stderr == (f"amqp: error: cannot connect to 127.0.0.1:{port}: "
                        f"amqp:not-implemented: the peer does not speak AMQP: {said}\n")


def test_serve_answers_a_client_without_a_header_and_closes(serve: Any) -> None:
    port = int(serve().rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"x" * 100)
        got = b""
        while chunk := sock.recv(100):  # until the server closes
            got += chunk
    assert got == b"AMQP\x00\x01\x00\x00"
