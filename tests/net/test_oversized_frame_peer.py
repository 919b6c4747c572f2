"""`amqp recv` against a peer whose frame header announces more than the client accepts:
512 bytes (MIN-MAX-FRAME-SIZE) during SASL, the client's max-frame-size after its open.
The client reads nothing more of that frame, drops the connection and says in one line
what the peer did; the peer's flood after that header does not get through."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, SASL_HEADER, Frame, FrameReader, encode_frame
from tests.net.clirun import amqp

pytestmark = pytest.mark.integration

_FLOOD_MB = 64
_HANG_GUARD = 60.0


class _Peer:
    """Answers one connection: after SASL's header (mode "sasl") or after the open and
    the client's begin (mode "open"), a frame header announcing `size` bytes, then up to
    _FLOOD_MB MB of them."""

    def __init__(self, mode: str, size: int) -> None:
        self.mode = mode
        self.size = size
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.srv.getsockname()[1])
        self.sent_mb = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn, _ = self.srv.accept()
        conn.settimeout(_HANG_GUARD)
        try:
            conn.recv(8)  # the client's protocol header
            announce = self.size.to_bytes(4, "big") + b"\x02"
            if self.mode == "sasl":
                conn.sendall(SASL_HEADER + announce + b"\x01\x00\x00")
            elif self.mode == "with-open":  # the bad frame in the same read as the open
                self._until(conn, FrameReader(), c.Open)
                conn.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="fake"))
                             + announce + b"\x00\x00\x00")
            else:
                reader = FrameReader()
                self._until(conn, reader, c.Open)
                conn.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="fake")))
                self._until(conn, reader, c.Begin)
                conn.sendall(announce + b"\x00\x00\x00")
            chunk = b"x" * (1 << 20)
            for _ in range(_FLOOD_MB):
                conn.sendall(chunk)
                self.sent_mb += 1
        except OSError:
            pass
        finally:
            conn.close()
            self.srv.close()

    @staticmethod
    def _until(conn: socket.socket, reader: FrameReader, body: type) -> None:
        while True:
            data = conn.recv(65536)
            if not data:
                raise OSError("the client went away")
            if any(isinstance(i, Frame) and isinstance(i.body, body) for i in reader.feed(data)):
                return


@pytest.fixture
def peer() -> Iterator[Any]:
    peers: list[_Peer] = []

    def start(mode: str, size: int) -> _Peer:
        p = _Peer(mode, size)
        peers.append(p)
        return p

    yield start
    for p in peers:
        p.thread.join(_HANG_GUARD)


@pytest.mark.parametrize(("mode", "size", "args", "said"), [
    ("sasl", 0x7FFFFFFF, (), "expected a frame size of at most 512 (MIN-MAX-FRAME-SIZE"),
    ("sasl", 513, (), "expected a frame size of at most 512 (MIN-MAX-FRAME-SIZE"),
    ("open", 0x7FFFFFFF, ("--sasl-mechanism", "none"),
     "expected a frame size of at most 65536 (max-frame-size), found size 2147483647"),
    ("open", 4097, ("--sasl-mechanism", "none", "--max-frame-size", "4096"),
     "expected a frame size of at most 4096 (max-frame-size), found size 4097"),
    ("with-open", 0x7FFFFFFF, ("--sasl-mechanism", "none"),
     "expected a frame size of at most 65536 (max-frame-size), found size 2147483647"),
], ids=["sasl-huge", "sasl-513", "open-huge", "open-over-max-frame-size", "with-the-open"])
def test_recv_fails_in_one_line_without_reading_the_frame(
        peer: Any, mode: str, size: int, args: tuple[str, ...], said: str) -> None:
    p = peer(mode, size)
    r = amqp("recv", f"amqp://127.0.0.1:{p.port}/q", "-c", "1", "-t", "30", *args,
             timeout=_HANG_GUARD * 2)
    p.thread.join(_HANG_GUARD)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"amqp: error: the peer at 127.0.0.1:{p.port} broke the "
                               "protocol: "), r.stderr
    assert said in lines[0], r.stderr
    assert p.sent_mb < _FLOOD_MB  # the client's end was gone before the flood got through
