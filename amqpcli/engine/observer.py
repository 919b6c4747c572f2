"""The observer role: one model fed by both directions of a conversation.

Used by `pcap-dump`, the proxy and the TUI. It never produces frames. Feed it decoded
items (`feed`) or raw bytes per direction (`feed_bytes`, which runs one frame reader per
side; `read` also hands back each item with its events); each call returns the events the
input caused.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.frames import Frame, FrameError, FrameReader, ProtocolHeader

from .connection import Connection
from .events import Event

# Violations that frames a capture lost (a TCP gap) can explain: the frames that would
# have made them right (an attach, a flow, a transfer) may be the ones lost.
GAP_KINDS = frozenset(("unknown-delivery", "unknown-handle", "unknown-channel",
                       "transfer-mismatch", "delivery-id-in-use", "transfer-beyond-window",
                       "transfer-beyond-credit", "already-settled", "out-of-order"))


def explained_by_gap(kind: str, gaps: int) -> bool:
    """Whether a violation of `kind` on a connection whose capture has lost bytes `gaps`
    times so far (either direction) is one the lost frames can explain: then it is an
    `after-gap` notice, not a violation. The one rule for every view of a capture
    (`pcap-dump`, the TUI)."""
    return gaps > 0 and kind in GAP_KINDS


class Observer:
    """Watches one connection from the outside: `feed(side, item, time) -> events`."""

    def __init__(self, sides: tuple[str, str] = ("client", "server"), *,
                 keep_payload: bool = True, midstream: bool = False,
                 updates: bool = True, settled: bool = True) -> None:
        self.connection = Connection(sides, keep_payload=keep_payload, midstream=midstream)
        # updates=False: no DeliveryUpdated events (each step of a delivery), for callers
        # that look at deliveries only when they settle (DeliverySettled, the timeline);
        # settled=False: no DeliverySettled events either, for callers that only count
        # deliveries (DeliveryStarted) and read the model
        self.connection.updates = updates
        self.connection.settled_events = settled
        self._readers: dict[str, FrameReader] = {s: FrameReader() for s in sides}

    @property
    def sides(self) -> tuple[str, str]:
        return self.connection.sides

    def feed(self, side: str, item: Any, time: float) -> list[Event]:
        """One item from the frame reader: a `Frame`, `ProtocolHeader` or `FrameError`."""
        conn = self.connection
        if isinstance(item, Frame):
            return conn.on_frame(side, item, time)
        if isinstance(item, ProtocolHeader):
            return conn.on_header(side, item, time)
        if isinstance(item, FrameError):
            return conn.on_frame_error(side, str(item), time)
        raise TypeError(f"cannot feed {type(item).__name__} to the observer")

    def feed_bytes(self, side: str, data: bytes | bytearray | memoryview,
                   time: float) -> list[Event]:
        """Raw bytes from one direction (any split); returns the events they caused."""
        out: list[Event] = []
        for item in self._readers[side].feed(data):
            out.extend(self.feed(side, item, time))
        return out

    def read(self, side: str, data: bytes | bytearray | memoryview,
             time: float) -> list[tuple[Any, list[Event]]]:
        """As `feed_bytes`, keeping each item of the frame reader with the events it
        caused: for callers that show frames as well as the model (the proxy)."""
        feed = self.feed
        return [(item, feed(side, item, time)) for item in self._readers[side].feed(data)]

    def read_tail(self, side: str, time: float) -> list[tuple[Any, list[Event]]]:
        """The stream from `side` ended: what its frame reader still held (a truncated
        frame), each item with its events. `transport_closed` then reports the end."""
        feed = self.feed
        return [(item, feed(side, item, time)) for item in self._readers[side].close()]

    def transport_closed(self, side: str, time: float) -> list[Event]:
        """The stream from `side` ended: report a truncated tail, then `TransportClosed`
        (deliveries still unsettled if no close was exchanged are abandoned)."""
        out: list[Event] = []
        for item in self._readers[side].close():
            out.extend(self.feed(side, item, time))
        out.extend(self.connection.on_transport_closed(side, time))
        return out

    def close(self, time: float) -> list[Event]:
        """End of both streams (end of a capture)."""
        out: list[Event] = []
        for side in self.sides:
            out.extend(self.transport_closed(side, time))
        return out
