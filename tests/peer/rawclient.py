"""A raw AMQP 1.0 client for tests of `amqp serve`: frames written as they are given
(out of order, broken, cut short), and every frame serve sends kept."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, Frame, FrameReader, encode_frame

_HANG_GUARD = 30.0
SMALLEST = 512  # MIN-MAX-FRAME-SIZE (Part 2 §2.7.1)


class RawClient:
    """A raw client (no SASL; max-frame-size 512 unless told) of `amqp serve`: writes
    frame bodies on channel 0, keeps every frame serve sends."""

    def __init__(self, port: int, max_frame_size: int = SMALLEST) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD)
        self.reader = FrameReader()
        self.frames: list[Frame] = []
        self.sock.sendall(AMQP_HEADER)
        self.write(c.Open(container_id="small-frames", max_frame_size=max_frame_size),
                   c.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))

    @property
    def got(self) -> list[Any]:
        return [f.body for f in self.frames]

    def write(self, *bodies: Any, payload: bytes = b"") -> None:
        self.sock.sendall(b"".join(
            encode_frame(b, 0, payload if isinstance(b, c.Transfer) else b"") for b in bodies))

    def until(self, done: Callable[[], bool]) -> None:
        """Read until `done()`, or until serve closes the connection or the socket."""
        while not done() and not any(isinstance(b, c.Close) for b in self.got):
            data = self.sock.recv(65536)
            if not data:
                break
            self.frames += [i for i in self.reader.feed(data)
                            if isinstance(i, Frame) and i.body is not None]

    def attach_of(self, name: str) -> Any:
        """Serve's latest attach of link `name` (None while none has come)."""
        return next((b for b in reversed(self.got)
                     if isinstance(b, c.Attach) and str(b.name) == name), None)

    def detach_of(self, name: str) -> Any:
        """Serve's detach following its latest attach of link `name` (or None)."""
        ours = self.attach_of(name)
        if ours is None:
            return None
        after = self.got[len(self.got) - self.got[::-1].index(ours):]
        return next((b for b in after if isinstance(b, c.Detach) and b.handle == ours.handle),
                    None)

    def close(self) -> None:
        self.write(c.Close())
        self.until(lambda: False)
        self.sock.close()
