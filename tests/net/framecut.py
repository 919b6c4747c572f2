"""A TCP proxy that cuts its first connection at a chosen AMQP frame: when the `nth` frame
of one performative (`DISPOSITION`, …) goes one way, both sockets are reset (RST), the
frame passed on first (`forward=True`) or not. Later connections pass everything.

Where `tests/net/cutproxy.py` cuts at a byte count, this cuts at a protocol step: "the
client's third disposition never reaches the broker" is the same bytes on every run.
"""

from __future__ import annotations

import socket
import struct
import threading
from types import TracebackType

DISPOSITION = 0x15

_PROTOCOL_HEADER = b"AMQP"


def _performative(frame: bytes) -> int | None:
    """The descriptor code of an AMQP frame's performative (None: empty, or not one)."""
    body = frame[frame[4] * 4:]
    if body[:2] == b"\x00\x53" and len(body) > 2:
        return body[2]
    if body[:2] == b"\x00\x80" and len(body) >= 10:
        return int.from_bytes(body[2:10], "big") & 0xFFFFFFFF
    return None


class FrameCut:
    def __init__(self, host: str, port: int, *, direction: str, nth: int,
                 performative: int = DISPOSITION, forward: bool = False) -> None:
        assert direction in ("up", "down")  # up: client to peer
        self.target = (host, port)
        self.direction, self.nth = direction, nth
        self.performative, self.forward = performative, forward
        self.cut = threading.Event()
        self._lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self._lsock.getsockname()[1]
        self._socks: list[socket.socket] = []
        self._first = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._lsock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._socks += [client, upstream]
            watched, self._first = self._first, False
            pair = (client, upstream)
            for src, dst, way in ((client, upstream, "up"), (upstream, client, "down")):
                counted = watched and way == self.direction
                threading.Thread(target=self._pipe, args=(src, dst, counted, pair),
                                 daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, counted: bool,
              pair: tuple[socket.socket, socket.socket]) -> None:
        buf, seen = b"", 0
        try:
            while data := src.recv(65536):
                if not counted:
                    dst.sendall(data)
                    continue
                buf += data
                out = b""
                while True:  # whole frames (and protocol headers) only
                    if buf[:4] == _PROTOCOL_HEADER:
                        if len(buf) < 8:
                            break
                        out, buf = out + buf[:8], buf[8:]
                        continue
                    if len(buf) < 8:
                        break
                    size = struct.unpack(">I", buf[:4])[0]
                    if len(buf) < size:
                        break
                    frame, buf = buf[:size], buf[size:]
                    if frame[5] == 0 and _performative(frame) == self.performative:
                        seen += 1
                        if seen == self.nth:
                            dst.sendall(out + (frame if self.forward else b""))
                            self.cut.set()
                            self._kill(pair)
                            return
                    out += frame
                dst.sendall(out)
        except OSError:
            pass
        self._kill(pair)

    @staticmethod
    def _kill(pair: tuple[socket.socket, socket.socket]) -> None:
        for s in pair:
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RD)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self._lsock.close()
        for s in self._socks:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> FrameCut:  # noqa: PYI034 - as CutProxy
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
