"""`FrameTap`: an endpoint's byte tap (`Endpoint.set_tap`) that cuts the bytes each way
into frame reader items (protocol headers, frames, frame errors) and hands each on.

It is how an endpoint is watched from outside: `amqp serve --trace`, the `--trace` of
send, recv and browse, and the TUI's frame log all take their frames from one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from amqpcli.codec.frames import FrameReader

__all__ = ["FrameTap", "OnItem"]

# (side, frame reader item, time): side is the caller's name for the direction
OnItem = Callable[[str, Any, float], None]


class FrameTap:
    """Hands `on_item` every item both ways: side `incoming` for bytes received (stamped
    with their receive time), `outgoing` for bytes sent (stamped with `endpoint.now`, the
    time the endpoint stamped its frames with). It runs where the endpoint is driven."""

    def __init__(self, endpoint: Any, on_item: OnItem, *, incoming: str,
                 outgoing: str) -> None:
        self.endpoint = endpoint
        self.on_item = on_item
        self.incoming = incoming
        self.outgoing = outgoing
        self._in = FrameReader()
        self._out = FrameReader()

    def received(self, data: bytes, time: float) -> None:
        on_item, side = self.on_item, self.incoming
        # the endpoint's limits (they change at the opens): a frame it refuses for its
        # size is an error line here too, not bytes waited for
        self._in.hold_to(self.endpoint.reader)
        for item in self._in.feed(data):
            on_item(side, item, time)

    def sent(self, data: bytes) -> None:
        on_item, side, t = self.on_item, self.outgoing, self.endpoint.now
        for item in self._out.feed(data):
            on_item(side, item, t)
